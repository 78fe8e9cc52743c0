// kafkajs consumer group against a broker: two members of one group subscribe to a 4-partition
// topic and share its partitions, consume every record once, commit each batch, and disconnect; a
// third member of the group then gets all four partitions and reads from the committed offsets:
// the first records it gets are one marker per partition, produced after it joined.
//
// Usage: node kafkajs_group.js BOOTSTRAP TOPIC COUNT
// Prints one JSON line; exits non-zero on the first failure.
'use strict'
const { Kafka, logLevel } = require('kafkajs')

const CLIENT = 'kafkajs ' + require('kafkajs/package.json').version
const PARTITIONS = 4
const key = i => 'k' + i
const value = i => 'value-' + i + '-' + 'x'.repeat(i % 50)
const report = fields => console.log(JSON.stringify({ client: CLIENT, ...fields }))
const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function member(kafka, group, topic, onBatch, onCommit = () => {}) {
  // A short fetch wait: kafkajs heartbeats (and so learns of a rebalance) and disconnects only
  // between fetches, and an idle fetch otherwise waits 5 s.
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 500,
    maxWaitTimeInMs: 200 })
  let assigned = 0
  consumer.on(consumer.events.GROUP_JOIN, e => {
    assigned = (e.payload.memberAssignment[topic] || []).length
  })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch, heartbeat }) => {
      if (batch.messages.length === 0) return
      onBatch(batch)
      const last = batch.messages[batch.messages.length - 1]
      await consumer.commitOffsets([{ topic, partition: batch.partition, offset: (Number(last.offset) + 1).toString() }])
      onCommit(batch.messages.length)
      await heartbeat()
    },
  })
  return { consumer, assigned: () => assigned }
}

async function main() {
  const [bootstrap, topic, countArg] = process.argv.slice(2)
  const count = Number(countArg)
  const group = topic + '-group'
  const kafka = new Kafka({ clientId: 'kafkajs-group', brokers: [bootstrap], logLevel: logLevel.NOTHING })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true })
  const seen = new Map()
  const owners = [new Set(), new Set()]
  const members = []
  let commitsDone = 0
  for (let n = 0; n < 2; n++) {
    members.push(await member(kafka, group, topic, batch => {
      owners[n].add(batch.partition)
      for (const m of batch.messages) seen.set(m.key.toString(), (seen.get(m.key.toString()) || 0) + 1)
    }, records => { commitsDone += records }))
  }
  // The records come once both members share the partitions, so each has some to read.
  const joined = Date.now() + 60000
  while (!members.every(m => m.assigned() === PARTITIONS / 2) && Date.now() < joined) await sleep(100)
  const producer = kafka.producer()
  await producer.connect()
  const messages = []
  for (let i = 0; i < count; i++) messages.push({ key: key(i), value: value(i), partition: i % PARTITIONS })
  await producer.send({ topic, acks: -1, messages })
  await producer.disconnect()
  const deadline = Date.now() + 90000
  // Until every batch read has been committed (a batch is counted in seen before its commit).
  while ((seen.size < count || commitsDone < count) && Date.now() < deadline) await sleep(50)
  const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] })
  const committed = offsets[0].partitions.reduce((sum, p) => sum + Math.max(Number(p.offset), 0), 0)
  for (const m of members) await m.consumer.disconnect()

  // The late member gets every partition; once it has, one marker record goes to each. It reads
  // from the committed offsets, so the markers are all it may get: any other record read before
  // them (or instead of them) is leftover. Getting all four markers shows that it did fetch every
  // partition, so a leftover of 0 means something.
  let leftover = 0
  const markers = new Set()
  const late = await member(kafka, group, topic, batch => {
    for (const m of batch.messages) {
      if (m.key.toString() === 'marker') markers.add(batch.partition)
      else leftover++
    }
  })
  const lateJoined = Date.now() + 60000
  while (late.assigned() < PARTITIONS && Date.now() < lateJoined) await sleep(50)
  const lateAssigned = late.assigned()
  const markerProducer = kafka.producer()
  await markerProducer.connect()
  await markerProducer.send({ topic, acks: -1, messages: [...Array(PARTITIONS).keys()].map(p =>
    ({ key: 'marker', value: 'marker', partition: p })) })
  await markerProducer.disconnect()
  const lateDeadline = Date.now() + 60000
  while (markers.size < PARTITIONS && Date.now() < lateDeadline) await sleep(50)
  if (markers.size < PARTITIONS) throw new Error('late member read the marker of only ' + markers.size + ' partitions')
  await late.consumer.disconnect()
  await admin.disconnect()
  let duplicates = 0
  for (const c of seen.values()) duplicates += c - 1
  report({ step: 'group', consumed: seen.size, duplicates, committed, both_members_read: owners.every(o => o.size > 0),
    leftover, late_assigned: lateAssigned })
}

main().catch(e => {
  console.error(e)
  process.exit(1)
})
