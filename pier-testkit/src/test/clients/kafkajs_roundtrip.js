// kafkajs against a broker: admin create/list/delete, then per codec produce COUNT records with
// keys, values and headers, and read them back without a consumer group.
//
// Usage: node kafkajs_roundtrip.js BOOTSTRAP TOPIC_PREFIX COUNT CODEC...
// Prints one JSON line per step; exits non-zero on the first failure. Leaves each codec's topic
// (TOPIC_PREFIX-CODEC) in place so the caller can inspect how its batches were stored.
//
// kafkajs has no assign(): its consumer always joins a classic consumer group. So the records are
// read with the cluster and broker objects that consumer uses underneath (kafkajs' own Metadata,
// ListOffsets and Fetch code), from the beginning of partition 0, as assign + seek would.
'use strict'
const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require('kafkajs')

const CLIENT = 'kafkajs ' + require('kafkajs/package.json').version
const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
}

/**
 * LZ4 frames in pure JavaScript (kafkajs-lz4 needs a native build), in kafkajs' codec contract.
 * lz4js marks its frames block-dependent, which Kafka's own LZ4 reader refuses; a frame of one
 * block (up to 4 MiB, far more than a batch here) is independent anyway, so the flag is set and
 * the header checksum written again.
 */
function lz4Codec() {
  const lz4js = require('lz4js')
  const xxh32 = require('lz4js/xxh32')
  const MAX_BLOCK_BYTES = 4 * 1024 * 1024
  const FLG = 4
  const BLOCK_INDEPENDENCE = 0x20
  return () => ({
    compress: async encoder => {
      if (encoder.buffer.length > MAX_BLOCK_BYTES) throw new Error('batch too large for a one-block LZ4 frame')
      const frame = Buffer.from(lz4js.compress(encoder.buffer))
      frame[FLG] |= BLOCK_INDEPENDENCE
      frame[FLG + 2] = (xxh32.hash(0, frame, FLG, 2) >> 8) & 0xff
      return frame
    },
    decompress: async buffer => Buffer.from(lz4js.decompress(buffer)),
  })
}

function installCodec(codec) {
  // kafkajs ships gzip only; the others are plugins.
  if (codec === 'snappy') CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')
  if (codec === 'lz4') CompressionCodecs[CompressionTypes.LZ4] = lz4Codec()
  if (codec === 'zstd') CompressionCodecs[CompressionTypes.ZSTD] = require('@kafkajs/zstd')()
}

const key = i => 'k' + i
const value = i => 'value-' + i + '-' + 'x'.repeat(i % 50)
const headers = (i, codec) => ({ idx: String(i), codec })
const report = fields => console.log(JSON.stringify({ client: CLIENT, ...fields }))

async function waitUntil(what, condition, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await condition()) return
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  throw new Error('timed out waiting for ' + what)
}

async function create(admin, topic) {
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true })
  await waitUntil(topic + ' listed', async () => (await admin.listTopics()).includes(topic))
}

async function adminRound(admin, prefix) {
  const topic = prefix + '-admin'
  await create(admin, topic)
  await admin.deleteTopics({ topics: [topic], timeout: 10000 })
  await waitUntil(topic + ' gone', async () => !(await admin.listTopics()).includes(topic))
  report({ step: 'admin', created: topic, listed: true, deleted: true })
}

async function produce(kafka, topic, count, codec) {
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  try {
    for (let first = 0; first < count; first += 100) {
      const messages = []
      for (let i = first; i < Math.min(count, first + 100); i++) {
        messages.push({ key: key(i), value: value(i), headers: headers(i, codec), partition: 0 })
      }
      await producer.send({ topic, acks: -1, compression: CODECS[codec], messages })
    }
  } finally {
    await producer.disconnect()
  }
}

/** Reads partition 0 from its beginning with kafkajs' Fetch, as a consumer with assign() would. */
async function consume(kafka, topic, count) {
  const createCluster = Object.getOwnPropertySymbols(kafka)
    .find(s => s.toString() === 'Symbol(private:Kafka:createCluster)')
  const cluster = kafka[createCluster]({})
  await cluster.connect()
  try {
    await cluster.addTargetTopic(topic)
    const [offsets] = await cluster.fetchTopicsOffset([{ topic, fromBeginning: true, partitions: [{ partition: 0 }] }])
    const [latest] = await cluster.fetchTopicsOffset([{ topic, fromBeginning: false, partitions: [{ partition: 0 }] }])
    const watermarks = [Number(offsets.partitions[0].offset), Number(latest.partitions[0].offset)]
    const leader = cluster.findTopicPartitionMetadata(topic).find(p => p.partitionId === 0).leader
    const broker = await cluster.findBroker({ nodeId: String(leader) })
    const records = []
    let next = watermarks[0]
    const deadline = Date.now() + 60000
    while (records.length < count && Date.now() < deadline) {
      const response = await broker.fetch({
        replicaId: -1, isolationLevel: 1, maxWaitTime: 500, minBytes: 1, maxBytes: 10485760,
        topics: [{ topic, partitions: [{ partition: 0, fetchOffset: String(next), maxBytes: 1048576 }] }],
      })
      const partition = response.responses[0].partitions[0]
      if (partition.errorCode !== 0) throw new Error('fetch error code ' + partition.errorCode)
      for (const m of partition.messages) {
        if (Number(m.offset) < next) continue // a compressed batch may start before the offset asked for
        records.push(m)
        next = Number(m.offset) + 1
      }
    }
    return { records, watermarks }
  } finally {
    await cluster.disconnect()
  }
}

function check(records, count, codec) {
  if (records.length !== count) throw new Error(`${codec}: consumed ${records.length} records, expected ${count}`)
  records.forEach((m, i) => {
    const got = { key: m.key && m.key.toString(), value: m.value && m.value.toString() }
    if (got.key !== key(i) || got.value !== value(i)) throw new Error(`${codec}: record ${i} is ${JSON.stringify(got)}`)
    const h = Object.fromEntries(Object.entries(m.headers || {}).map(([n, v]) => [n, v.toString()]))
    if (JSON.stringify(h) !== JSON.stringify(headers(i, codec))) {
      throw new Error(`${codec}: record ${i} headers ${JSON.stringify(h)}`)
    }
  })
}

async function main() {
  const [bootstrap, prefix, countArg, ...codecs] = process.argv.slice(2)
  if (!codecs.length) throw new Error('usage: kafkajs_roundtrip.js BOOTSTRAP TOPIC_PREFIX COUNT CODEC...')
  const count = Number(countArg)
  const kafka = new Kafka({ clientId: 'pier-kafkajs', brokers: [bootstrap], logLevel: logLevel.WARN,
    retry: { retries: 3 } })
  const admin = kafka.admin()
  await admin.connect()
  try {
    await adminRound(admin, prefix)
    for (const codec of codecs) {
      installCodec(codec)
      const topic = `${prefix}-${codec}`
      await create(admin, topic)
      await produce(kafka, topic, count, codec)
      const { records, watermarks } = await consume(kafka, topic, count)
      check(records, count, codec)
      if (watermarks[0] !== 0 || watermarks[1] !== count) throw new Error(`${codec}: watermarks ${watermarks}`)
      report({ step: 'roundtrip', codec, topic, produced: count, consumed: records.length, watermarks })
    }
  } finally {
    await admin.disconnect()
  }
}

main().catch(e => {
  console.error(e && e.stack ? e.stack : e)
  process.exit(1)
})
