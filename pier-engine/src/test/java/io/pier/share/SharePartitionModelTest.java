package io.pier.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.pier.state.InMemorySharePersister;
import io.pier.state.PersistedBatch;
import io.pier.state.SharePartitionKey;
import io.pier.state.ShareStateWrite;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;

/**
 * Seeded random sequences of acquire / acknowledge / renew / release member / lock expiry /
 * log-start moves / commit-or-rollback, checked after every step against a per-offset reference
 * model. Acquisition choices are checked for legality (and for progress) rather than replayed, so
 * the model stays tiny; everything else is replayed exactly.
 *
 * <p>Odd seeds run with a dead-letter queue (KIP-1191): what dies goes to ARCHIVING, and further
 * steps take dead-letter batches and later commit or roll them back. Each dead record's life is
 * followed across the run: it leaves ARCHIVING only through a committed batch (or when the log
 * start passes it), sits in at most one batch at a time, and is committed at most once; a restart
 * loses the batches in flight and brings their records back ARCHIVING, marked recovered. At the
 * end of a run every record still dead is taken and committed, so each one that died (and was
 * neither forgotten below the log start nor revived by a restart that lost its death) is
 * committed exactly once.
 */
class SharePartitionModelTest {
    private static final int SEEDS = 200;
    private static final int STEPS = 300;
    private static final int LOG_END = 700;
    private static final long LOCK_MS = 100;
    private static final int MAX_BATCH = 6;
    private static final String[] MEMBERS = {"m0", "m1", "m2", "m3"};
    private static final AcknowledgeType[] SETTLE = {
        AcknowledgeType.GAP, AcknowledgeType.ACCEPT, AcknowledgeType.RELEASE, AcknowledgeType.REJECT
    };

    /** Outcome tallies over all seeds, so a generator that stopped reaching a path fails loudly. */
    private static final class Tally {
        long acquisitions;
        long recordsAcquired;
        long redeliveries;
        long acksAccepted;
        long acksRefused;
        long commits;
        long rollbacks;
        long expiries;
        long archivedAtLimit;
        long restarts;
        long deaths;
        long deadLetterBatches;
        long lettersTaken;
        long deadLetterCommits;
        long partlyWritten;
        long deadLetterRollbacks;
        long lettersLostAtRestart;
        long recoveredLettersCommitted;
        long deadForgottenBelowLogStart;
        long deathsUndoneByRestart;
        long lettersDrained;
        long limitsLowered;
        long spentOverLoweredLimit;
        long spentToArchiving;

        @Override
        public String toString() {
            return "acquisitions=" + acquisitions + " records=" + recordsAcquired + " redeliveries=" + redeliveries
                    + " acksAccepted=" + acksAccepted + " acksRefused=" + acksRefused + " commits=" + commits
                    + " rollbacks=" + rollbacks + " expiries=" + expiries + " archivedAtLimit=" + archivedAtLimit + " restarts=" + restarts
                    + " deaths=" + deaths + " deadLetterBatches=" + deadLetterBatches + " lettersTaken=" + lettersTaken
                    + " deadLetterCommits=" + deadLetterCommits + " partlyWritten=" + partlyWritten
                    + " deadLetterRollbacks=" + deadLetterRollbacks + " lettersLostAtRestart=" + lettersLostAtRestart
                    + " recoveredLettersCommitted=" + recoveredLettersCommitted
                    + " deadForgottenBelowLogStart=" + deadForgottenBelowLogStart
                    + " deathsUndoneByRestart=" + deathsUndoneByRestart + " lettersDrained=" + lettersDrained
                    + " limitsLowered=" + limitsLowered + " spentOverLoweredLimit=" + spentOverLoweredLimit
                    + " spentToArchiving=" + spentToArchiving;
        }
    }

    @Test
    void shouldMatchReferenceModelOnRandomSequences() {
        Tally tally = new Tally();
        for (int seed = 0; seed < SEEDS; seed++) {
            try {
                new Run(seed, tally).run();
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("model test failed for seed " + seed + ": " + e.getMessage(), e);
            }
        }
        String seen = tally.toString();
        assertThat(tally.acquisitions).as(seen).isGreaterThan(6_000);
        assertThat(tally.redeliveries).as(seen).isGreaterThan(4_000);
        assertThat(tally.acksAccepted).as(seen).isGreaterThan(3_500);
        assertThat(tally.acksRefused).as(seen).isGreaterThan(5_000);
        assertThat(tally.commits).as(seen).isGreaterThan(3_500);
        assertThat(tally.rollbacks).as(seen).isGreaterThan(1_000);
        assertThat(tally.expiries).as(seen).isGreaterThan(8_000);
        assertThat(tally.archivedAtLimit).as(seen).isGreaterThan(5_000);
        assertThat(tally.restarts).as(seen).isGreaterThan(500);
        assertThat(tally.deaths).as(seen).isGreaterThan(2_000);
        assertThat(tally.deadLetterBatches).as(seen).isGreaterThan(900);
        assertThat(tally.lettersTaken).as(seen).isGreaterThan(3_000);
        assertThat(tally.deadLetterCommits).as(seen).isGreaterThan(500);
        assertThat(tally.partlyWritten).as(seen).isGreaterThan(100);
        assertThat(tally.deadLetterRollbacks).as(seen).isGreaterThan(150);
        assertThat(tally.lettersLostAtRestart).as(seen).isGreaterThan(700);
        assertThat(tally.recoveredLettersCommitted).as(seen).isGreaterThan(1_000);
        assertThat(tally.deadForgottenBelowLogStart).as(seen).isGreaterThan(300);
        assertThat(tally.deathsUndoneByRestart).as(seen).isGreaterThan(60);
        assertThat(tally.lettersDrained).as(seen).isGreaterThan(250);
        assertThat(tally.limitsLowered).as(seen).isGreaterThan(80);
        assertThat(tally.spentOverLoweredLimit).as(seen).isGreaterThan(300);
        assertThat(tally.spentToArchiving).as(seen).isGreaterThan(150);
    }

    private static final class Run {
        final int seed;
        final Random random;
        int limit;
        /** The highest delivery limit in force so far: a record keeps the count it had when the limit was lowered. */
        int maxLimit;
        ShareConfig config;
        final List<LogBatch> log = new ArrayList<>();
        final SharePartitionKey key;
        final InMemorySharePersister persister = new InMemorySharePersister();
        SharePartition sp;
        long lastSeenStartOffset;

        // Reference model, per offset.
        final RecordState[] state = new RecordState[LOG_END + 1];
        final short[] count = new short[LOG_END + 1];
        final String[] owner = new String[LOG_END + 1];
        final long[] deadline = new long[LOG_END + 1];
        final int[] pending = new int[LOG_END + 1];
        final RecordState[] target = new RecordState[LOG_END + 1];
        final boolean[] lockLost = new boolean[LOG_END + 1];
        // What the persister should hold: null = never written.
        final RecordState[] durable = new RecordState[LOG_END + 1];
        final short[] durableCount = new short[LOG_END + 1];
        long durableStart;
        long spso;
        long end;
        long lso;
        long now;
        int nextPendingId = 1;
        final List<Outstanding> outstanding = new ArrayList<>();
        int step;
        final Tally tally;

        // Dead letters (odd seeds), per offset over the whole run. life: what became of a record
        // that died; takenBy: the pending id of the dead-letter batch holding it, 0 if none.
        final boolean deadLetters;
        final Life[] life = new Life[LOG_END + 1];
        final DeadLetterBatch.Reason[] reason = new DeadLetterBatch.Reason[LOG_END + 1];
        final DeadLetterBatch.Reason[] targetReason = new DeadLetterBatch.Reason[LOG_END + 1];
        final boolean[] recovered = new boolean[LOG_END + 1];
        final int[] takenBy = new int[LOG_END + 1];
        final int[] committed = new int[LOG_END + 1];
        final List<Letters> letters = new ArrayList<>();

        Run(int seed, Tally tally) {
            this.seed = seed;
            this.tally = tally;
            this.random = new Random(seed);
            this.limit = 1 + random.nextInt(5);
            this.maxLimit = limit;
            this.deadLetters = seed % 2 == 1;
            this.config = new ShareConfig(LOCK_MS, limit, 5 + random.nextInt(40), random.nextInt(4) != 0, deadLetters);
            long o = 0;
            while (o < LOG_END) {
                if (random.nextInt(8) == 0) {
                    o += 1 + random.nextInt(3);
                    continue;
                }
                long last = Math.min(LOG_END - 1, o + random.nextInt(MAX_BATCH));
                log.add(new LogBatch(o, last));
                o = last + 1;
            }
            Arrays.fill(state, RecordState.AVAILABLE);
            Arrays.fill(life, Life.NONE);
            this.key = new SharePartitionKey("g", new Uuid(seed, 1), 0);
            persister.initialize(key, 0).join();
            this.sp = SharePartition.fresh(key, 0, 0, () -> config);
        }

        void run() {
            for (step = 0; step < STEPS; step++) {
                int kind = random.nextInt(100);
                if (deadLetters && random.nextInt(8) == 0) {
                    deadLetterStep();
                } else if (kind < 35) {
                    acquire();
                } else if (kind < 70) {
                    acknowledge();
                } else if (kind < 80) {
                    now += random.nextInt((int) LOCK_MS);
                    expire();
                } else if (kind < 86) {
                    releaseMember(MEMBERS[random.nextInt(MEMBERS.length)]);
                } else if (kind < 90) {
                    if (random.nextInt(5) == 0) {
                        changeLimit();
                    } else {
                        moveLogStart();
                    }
                } else if (kind < 93) {
                    restart();
                } else {
                    resolveOutstanding();
                }
                check();
            }
            if (deadLetters) {
                drainDeadLetters();
            }
        }

        // Steps --------------------------------------------------------------------------

        void acquire() {
            String member = MEMBERS[random.nextInt(MEMBERS.length)];
            long fetchOffset = sp.nextFetchOffset();
            if (fetchOffset < lso) {
                sp.onLogStartOffsetMoved(lso);
                modelLogStart();
                check();
                fetchOffset = sp.nextFetchOffset();
            }
            List<LogBatch> read = read(fetchOffset, 1 + random.nextInt(5));
            AcquireLimits limits = new AcquireLimits(
                    1 + random.nextInt(12), 1 + random.nextInt(MAX_BATCH),
                    random.nextBoolean() ? AcquireMode.BATCH_OPTIMIZED : AcquireMode.RECORD_LIMIT);

            if (!read.isEmpty()) {
                modelArchiveMissing(fetchOffset, read.get(0).firstOffset() - 1);
            }
            long endBefore = end;
            long inFlightBefore = end - spso - settlingFront();
            // Cached records that already had their deliveries under a lowered limit: acquisition
            // may find them, and then they die instead (which ones depends on how far it reads).
            List<Long> spendable = new ArrayList<>();
            for (long o = spso; o < end; o++) {
                if (state[(int) o] == RecordState.AVAILABLE && pending[(int) o] == 0 && count[(int) o] >= limit) {
                    spendable.add(o);
                }
            }
            List<AcquiredRange> got = sp.acquire(member, fetchOffset, read, limits, now);
            int spent = 0;
            for (long o : spendable) {
                RecordState after = o < sp.startOffset() ? RecordState.ARCHIVED : sp.stateOf(o);
                if (after != RecordState.AVAILABLE) {
                    assertThat(after).as(ctx("record " + o + " over a lowered limit dies")).isEqualTo(config.deadState());
                    state[(int) o] = after;
                    died((int) o, DeadLetterBatch.Reason.DELIVERY_LIMIT);
                    spent++;
                    tally.spentOverLoweredLimit++;
                    if (after == RecordState.ARCHIVING) {
                        tally.spentToArchiving++;
                    }
                }
            }
            if (!got.isEmpty()) {
                tally.acquisitions++;
            }

            long previousLast = -1;
            long newRecords = 0;
            long total = got.stream().mapToLong(AcquiredRange::recordCount).sum();
            boolean first = true;
            for (AcquiredRange r : got) {
                if (limit > 2 && r.deliveryCount() == limit) {
                    assertThat(total).as(ctx("last delivery attempt goes alone")).isEqualTo(1);
                }
                if (first && r.deliveryCount() <= config.throttleThreshold()) {
                    assertThat(got).as(ctx("throttled records are never behind fresher ones"))
                            .allMatch(x -> x.deliveryCount() <= config.throttleThreshold());
                }
                first = false;
                tally.recordsAcquired += r.recordCount();
                if (r.deliveryCount() > 1) {
                    tally.redeliveries++;
                }
                assertThat(r.firstOffset()).as(ctx("ranges ascending, disjoint")).isGreaterThan(previousLast);
                assertThat(r.lastOffset()).isGreaterThanOrEqualTo(r.firstOffset());
                previousLast = r.lastOffset();
                for (long o = r.firstOffset(); o <= r.lastOffset(); o++) {
                    int i = (int) o;
                    assertThat(o).as(ctx("acquired at or above SPSO")).isGreaterThanOrEqualTo(spso);
                    assertThat(state[i]).as(ctx("acquired offset " + o + " was available")).isEqualTo(RecordState.AVAILABLE);
                    assertThat(pending[i]).as(ctx("acquired offset " + o + " not in transition")).isZero();
                    assertThat((int) r.deliveryCount()).as(ctx("delivery count of " + o)).isEqualTo(count[i] + 1);
                    assertThat((int) r.deliveryCount()).as(ctx("delivery limit")).isLessThanOrEqualTo(limit);
                    state[i] = RecordState.ACQUIRED;
                    count[i]++;
                    owner[i] = member;
                    deadline[i] = now + LOCK_MS;
                    lockLost[i] = false;
                    if (o >= endBefore) {
                        newRecords++;
                    }
                }
                end = Math.max(end, r.lastOffset() + 1);
            }
            if (inFlightBefore >= config.maxInFlightRecords()) {
                assertThat(newRecords).as(ctx("no new records past the in-flight cap")).isZero();
            } else {
                assertThat(newRecords).as(ctx("new records within cap plus one batch"))
                        .isLessThanOrEqualTo(config.maxInFlightRecords() - inFlightBefore + MAX_BATCH - 1);
            }
            if (limits.mode() == AcquireMode.RECORD_LIMIT) {
                assertThat(total).as(ctx("record_limit bound")).isLessThanOrEqualTo(limits.maxRecords());
                if (!got.isEmpty() && previousLast >= endBefore) {
                    for (LogBatch b : read) {
                        if (b.firstOffset() <= previousLast && previousLast <= b.lastOffset()) {
                            end = Math.max(end, b.lastOffset() + 1);
                        }
                    }
                }
            }
            boolean readCoversFetch = !read.isEmpty() && read.get(0).firstOffset() <= fetchOffset;
            boolean room = fetchOffset < endBefore || inFlightBefore < config.maxInFlightRecords();
            if (readCoversFetch && fetchOffset >= spso && room && spent == 0) {
                assertThat(got).as(ctx("progress: something acquirable at " + fetchOffset)).isNotEmpty();
            }
            advance();
        }

        void acknowledge() {
            String member = pickAckMember();
            List<AckBatch> batches = new ArrayList<>();
            long from = pickAckStart(member);
            boolean aimValid = random.nextInt(3) != 0;
            int nBatches = 1 + random.nextInt(2);
            for (int b = 0; b < nBatches; b++) {
                long last = from + random.nextInt(6);
                if (aimValid) {
                    long l = from;
                    while (l < last && l + 1 < end && heldFree(member, l + 1)) {
                        l++;
                    }
                    last = l;
                }
                List<AcknowledgeType> types = new ArrayList<>();
                if (random.nextBoolean()) {
                    types.add(randomType());
                } else {
                    for (long o = from; o <= last; o++) {
                        types.add(randomType());
                    }
                }
                if (random.nextInt(40) == 0) {
                    types.add(AcknowledgeType.ACCEPT);
                }
                batches.add(new AckBatch(from, last, types));
                from = last + 1 + random.nextInt(3);
            }
            Errors expected = modelValidate(member, batches);
            AckResult result = sp.acknowledge(member, batches, now);
            assertThat(result.error()).as(ctx("ack " + member + " " + batches)).isEqualTo(expected);
            if (result.isError()) {
                tally.acksRefused++;
                return;
            }
            tally.acksAccepted++;
            int id = nextPendingId++;
            long lastSeen = -1;
            List<Long> moved = new ArrayList<>();
            for (AckBatch b : batches) {
                for (long o = Math.max(b.firstOffset(), Math.max(spso, lastSeen + 1)); o <= b.lastOffset(); o++) {
                    lastSeen = o;
                    int i = (int) o;
                    AcknowledgeType type = b.typeAt(o);
                    if (type == AcknowledgeType.RENEW) {
                        deadline[i] = now + LOCK_MS;
                        continue;
                    }
                    pending[i] = id;
                    target[i] = targetOf(type, count[i]);
                    targetReason[i] = type == AcknowledgeType.REJECT
                            ? DeadLetterBatch.Reason.REJECTED : DeadLetterBatch.Reason.DELIVERY_LIMIT;
                    moved.add(o);
                }
            }
            resolve(result.pending(), id, moved);
        }

        void expire() {
            boolean anySettled = false;
            long startBefore = spso;
            for (long o = spso; o < end; o++) {
                int i = (int) o;
                if (state[i] != RecordState.ACQUIRED || lockLost[i] || deadline[i] > now) {
                    continue;
                }
                if (pending[i] != 0) {
                    lockLost[i] = true;
                } else {
                    state[i] = released(count[i]);
                    owner[i] = null;
                    died(i, DeadLetterBatch.Reason.DELIVERY_LIMIT);
                    anySettled = true;
                    tally.expiries++;
                    durable[i] = state[i];
                    durableCount[i] = count[i];
                }
            }
            Optional<ShareStateWrite> write = sp.expireLocks(now);
            assertThat(write.isPresent()).as(ctx("expiry write present")).isEqualTo(anySettled);
            if (write.isPresent()) {
                assertThat(write.get().startOffset()).as(ctx("expiry write start offset")).isEqualTo(startBefore);
                assertThat(persister.write(write.get()).isCompletedExceptionally()).isFalse();
                durableStart = startBefore;
            }
            advance();
        }

        void releaseMember(String member) {
            int id = nextPendingId++;
            boolean any = false;
            List<Long> moved = new ArrayList<>();
            for (long o = spso; o < end; o++) {
                int i = (int) o;
                if (state[i] != RecordState.ACQUIRED || !member.equals(owner[i])) {
                    continue;
                }
                if (pending[i] != 0) {
                    lockLost[i] = true;
                } else {
                    pending[i] = id;
                    target[i] = released(count[i]);
                    targetReason[i] = DeadLetterBatch.Reason.DELIVERY_LIMIT;
                    any = true;
                    moved.add(o);
                }
            }
            Optional<PendingChange> change = sp.releaseMember(member, now);
            assertThat(change.isPresent()).as(ctx("release of " + member)).isEqualTo(any);
            change.ifPresent(c -> resolve(c, id, moved));
        }

        /** The group's delivery limit is altered at runtime; raised or lowered, it applies from the next operation. */
        void changeLimit() {
            int newLimit = 1 + random.nextInt(5);
            if (newLimit < limit) {
                tally.limitsLowered++;
            }
            limit = newLimit;
            maxLimit = Math.max(maxLimit, limit);
            config = new ShareConfig(LOCK_MS, limit, config.maxInFlightRecords(), config.renewEnabled(), deadLetters);
        }

        void moveLogStart() {
            lso = Math.min(LOG_END, lso + random.nextInt(12));
            if (random.nextBoolean()) {
                sp.onLogStartOffsetMoved(lso);
                modelLogStart();
            }
        }

        void resolveOutstanding() {
            if (outstanding.isEmpty()) {
                now += random.nextInt(20);
                return;
            }
            Outstanding o = outstanding.remove(random.nextInt(outstanding.size()));
            finish(o.change, o.id, o.commit);
        }

        void deadLetterStep() {
            if (!letters.isEmpty() && random.nextInt(3) == 0) {
                Letters l = letters.remove(random.nextInt(letters.size()));
                finishLetters(l, random.nextInt(4) != 0);
            } else {
                takeDeadLetters(1 + random.nextInt(8), false);
            }
        }

        /**
         * Takes a dead-letter batch of at most {@code max}: exactly the lowest ARCHIVING records
         * not in a batch. Committed or rolled back now, or (as a slow dead-letter write) later.
         */
        void takeDeadLetters(int max, boolean commitNow) {
            List<Long> expected = new ArrayList<>();
            for (long o = spso; o < end && expected.size() < max; o++) {
                if (state[(int) o] == RecordState.ARCHIVING && pending[(int) o] == 0) {
                    expected.add(o);
                }
            }
            Optional<DeadLetterBatch> taken = sp.takeDeadLetters(max);
            assertThat(taken.isPresent()).as(ctx("dead letters taken (max " + max + ")")).isEqualTo(!expected.isEmpty());
            if (taken.isEmpty()) {
                return;
            }
            DeadLetterBatch batch = taken.get();
            tally.deadLetterBatches++;
            tally.lettersTaken += batch.letters().size();
            assertThat(batch.letters()).extracting(DeadLetterBatch.Letter::offset).as(ctx("letters taken"))
                    .isEqualTo(expected);
            int id = nextPendingId++;
            for (DeadLetterBatch.Letter letter : batch.letters()) {
                int i = (int) letter.offset();
                String what = ctx("letter " + letter);
                assertThat(life[i]).as(what + " is dead").isEqualTo(Life.WAITING);
                assertThat(takenBy[i]).as(what + " in one batch at a time").isZero();
                assertThat(committed[i]).as(what + " never taken once committed").isZero();
                assertThat((int) letter.deliveryCount()).as(what + " delivery count").isEqualTo(count[i]);
                // A record loaded ARCHIVING no longer knows why it died: one at the limit counts as having reached it.
                DeadLetterBatch.Reason why = recovered[i]
                        ? (count[i] < limit ? DeadLetterBatch.Reason.REJECTED : DeadLetterBatch.Reason.DELIVERY_LIMIT)
                        : reason[i];
                assertThat(letter.reason()).as(what + " reason").isEqualTo(why);
                assertThat(letter.recovered()).as(what + " recovered").isEqualTo(recovered[i]);
                takenBy[i] = id;
                pending[i] = id;
                target[i] = RecordState.ARCHIVED;
            }
            ShareStateWrite write = batch.change().write().orElseThrow();
            assertThat(write.startOffset()).as(ctx("dead-letter write start offset")).isEqualTo(spso);
            long archived = 0;
            for (PersistedBatch b : write.batches()) {
                assertThat(b.state()).as(ctx("dead-letter write " + b)).isEqualTo(PersistedBatch.ARCHIVED);
                for (long o = b.firstOffset(); o <= b.lastOffset(); o++) {
                    assertThat(takenBy[(int) o]).as(ctx("written offset " + o + " is a letter")).isEqualTo(id);
                    assertThat(b.deliveryCount()).as(ctx("written count of " + o)).isEqualTo(count[(int) o]);
                    archived++;
                }
            }
            assertThat(archived).as(ctx("dead-letter write covers the letters")).isEqualTo(batch.letters().size());
            Letters l = new Letters(batch, id);
            if (commitNow) {
                finishLetters(l, true);
            } else if (random.nextInt(3) != 0 && letters.size() < 3) {
                letters.add(l);
            } else {
                finishLetters(l, random.nextInt(4) != 0);
            }
        }

        /**
         * The batch's dead letters were produced and its ARCHIVED write persisted (commit), or
         * either failed (rollback): the records stay ARCHIVING, to be taken again.
         */
        void finishLetters(Letters l, boolean commit) {
            DeadLetterBatch batch = l.batch;
            ShareStateWrite write = batch.change().write().orElseThrow();
            if (commit) {
                assertThat(persister.write(write).isCompletedExceptionally()).isFalse();
                durableStart = Math.max(durableStart, write.startOffset());
                for (DeadLetterBatch.Letter letter : batch.letters()) {
                    durable[(int) letter.offset()] = RecordState.ARCHIVED;
                    durableCount[(int) letter.offset()] = letter.deliveryCount();
                }
                int size = batch.letters().size();
                int written = random.nextInt(3) == 0 ? random.nextInt(size + 1) : size;
                if (written < size) {
                    tally.partlyWritten++;
                }
                tally.deadLetterCommits++;
                sp.commitDeadLetters(batch, written);
            } else {
                if (random.nextBoolean()) {
                    // The dead letters were written, their ARCHIVED state was not.
                    persister.failNextWrites(1);
                    assertThat(persister.write(write).isCompletedExceptionally()).isTrue();
                }
                tally.deadLetterRollbacks++;
                sp.rollback(batch.change());
            }
            for (DeadLetterBatch.Letter letter : batch.letters()) {
                int i = (int) letter.offset();
                String what = ctx("letter " + letter + (commit ? " committed" : " rolled back"));
                assertThat(takenBy[i]).as(what + ": still in its batch").isEqualTo(l.id);
                takenBy[i] = 0;
                if (pending[i] == l.id) {
                    pending[i] = 0;
                }
                if (commit) {
                    assertThat(committed[i]).as(what + " once").isZero();
                    committed[i]++;
                    if (letter.recovered()) {
                        tally.recoveredLettersCommitted++;
                    }
                    if (life[i] == Life.WAITING) {
                        state[i] = RecordState.ARCHIVED;
                    }
                    life[i] = Life.DONE;
                }
            }
            advance();
        }

        /** End of a run: every dead record still in the window is taken and committed. */
        void drainDeadLetters() {
            while (!letters.isEmpty()) {
                finishLetters(letters.remove(0), true);
                check();
            }
            long before = tally.lettersTaken;
            takeDeadLetters(Integer.MAX_VALUE, true);
            check();
            tally.lettersDrained += tally.lettersTaken - before;
            assertThat(sp.deadLettersWaiting()).as(ctx("drained")).isZero();
            for (int i = 0; i <= LOG_END; i++) {
                assertThat(life[i]).as(ctx("dead record " + i + " drained")).isNotEqualTo(Life.WAITING);
                assertThat(committed[i]).as(ctx("dead letters of " + i + " committed"))
                        .isEqualTo(life[i] == Life.DONE ? 1 : 0);
            }
        }

        // Model operations -----------------------------------------------------------------

        /** Follows offset {@code i} into ARCHIVING, if that is where it just went. */
        void died(int i, DeadLetterBatch.Reason why) {
            if (state[i] != RecordState.ARCHIVING) {
                return;
            }
            assertThat(life[i]).as(ctx("offset " + i + " dies once")).isEqualTo(Life.NONE);
            life[i] = Life.WAITING;
            reason[i] = why;
            recovered[i] = false;
            tally.deaths++;
        }

        /** Issues the change's write now (its outcome decided now); commit or roll back now or later. */
        void resolve(PendingChange change, int id, List<Long> moved) {
            boolean commit = random.nextInt(4) != 0;
            assertThat(change.write().isPresent()).as(ctx("write present iff records moved")).isEqualTo(!moved.isEmpty());
            if (change.write().isPresent()) {
                assertThat(change.write().get().startOffset()).as(ctx("write start offset")).isEqualTo(spso);
                if (!commit) {
                    persister.failNextWrites(1);
                }
                boolean failed = persister.write(change.write().get()).isCompletedExceptionally();
                assertThat(failed).isEqualTo(!commit);
                if (commit) {
                    for (long o : moved) {
                        durable[(int) o] = target[(int) o];
                        durableCount[(int) o] = count[(int) o];
                    }
                    durableStart = spso;
                }
            }
            if (random.nextInt(5) == 0 && outstanding.size() < 3) {
                outstanding.add(new Outstanding(change, id, commit));
                return;
            }
            finish(change, id, commit);
        }

        /** The broker restarts: reload from the persister; only durable state survives. */
        void restart() {
            tally.restarts++;
            assertThat(persister.read(key).startOffset()).as(ctx("persisted start offset")).isEqualTo(durableStart);
            sp = SharePartition.load(key, persister.read(key), () -> config);
            outstanding.clear();
            // Dead-letter batches in flight are lost: nothing of them was persisted.
            for (Letters l : letters) {
                tally.lettersLostAtRestart += l.batch.letters().size();
            }
            letters.clear();
            Arrays.fill(takenBy, 0);
            long newStart = durableStart;
            while (durable[(int) newStart] != null && durable[(int) newStart].isTerminal()) {
                newStart++;
            }
            for (long o = 0; o < newStart; o++) {
                assertThat(life[(int) o]).as(ctx("dead record " + o + " below the reloaded start offset " + newStart))
                        .isNotEqualTo(Life.WAITING);
            }
            long newEnd = newStart;
            for (long o = newStart; o < LOG_END; o++) {
                if (durable[(int) o] != null) {
                    newEnd = o + 1;
                }
            }
            for (long o = newStart; o <= LOG_END; o++) {
                int i = (int) o;
                boolean known = o < newEnd && durable[i] != null;
                state[i] = known ? durable[i] : RecordState.AVAILABLE;
                count[i] = known ? durableCount[i] : 0;
                owner[i] = null;
                pending[i] = 0;
                lockLost[i] = false;
                if (state[i] == RecordState.ARCHIVING) {
                    // NONE: the change that killed it was written but had not committed.
                    assertThat(life[i]).as(ctx("durably dead " + o)).isNotEqualTo(Life.DONE);
                    life[i] = Life.WAITING;
                    recovered[i] = true;
                    // Loaded ARCHIVING, the record no longer knows why it died.
                    reason[i] = null; // judged by the limit in force when it is taken
                } else if (life[i] == Life.WAITING || life[i] == Life.FORGOTTEN) {
                    // Died only in memory (a rollback after its lock went, at its last delivery).
                    life[i] = Life.NONE;
                    tally.deathsUndoneByRestart++;
                } else if (life[i] == Life.DONE) {
                    assertThat(state[i]).as(ctx("dead-lettered " + o + " reloads archived")).isEqualTo(RecordState.ARCHIVED);
                }
            }
            spso = newStart;
            end = newEnd;
            lastSeenStartOffset = spso;
        }

        void finish(PendingChange change, int id, boolean commit) {
            for (long o = spso; o < end; o++) {
                int i = (int) o;
                if (pending[i] != id) {
                    continue;
                }
                pending[i] = 0;
                if (commit) {
                    state[i] = target[i];
                    owner[i] = null;
                    died(i, targetReason[i]);
                } else if (lockLost[i]) {
                    // Only in memory: the record's death is not durable, a restart undoes it.
                    state[i] = released(count[i]);
                    owner[i] = null;
                    died(i, DeadLetterBatch.Reason.DELIVERY_LIMIT);
                }
                lockLost[i] = false;
            }
            if (commit) {
                tally.commits++;
                sp.commit(change);
            } else {
                tally.rollbacks++;
                sp.rollback(change);
            }
            advance();
        }

        void modelArchiveMissing(long fetchOffset, long lastMissing) {
            long from = Math.max(fetchOffset, spso);
            if (from > lastMissing) {
                return;
            }
            for (long o = from; o <= lastMissing; o++) {
                int i = (int) o;
                if (state[i] == RecordState.AVAILABLE && pending[i] == 0) {
                    state[i] = RecordState.ARCHIVED;
                }
            }
            end = Math.max(end, lastMissing + 1);
            advance();
        }

        void modelLogStart() {
            if (lso <= spso) {
                return;
            }
            for (long o = spso; o < lso; o++) {
                int i = (int) o;
                pending[i] = 0;
                if (life[i] == Life.WAITING) {
                    // Gone with the log: no dead letter (one in a batch in flight may still be written).
                    life[i] = Life.FORGOTTEN;
                    tally.deadForgottenBelowLogStart++;
                }
            }
            spso = lso;
            end = Math.max(end, lso);
            advance();
        }

        /** Offsets from the SPSO that are terminal, or whose pending change makes them so: they do not count as in flight. */
        long settlingFront() {
            long o = spso;
            while (o < end && (pending[(int) o] == 0 ? state[(int) o].isTerminal() : target[(int) o].isTerminal())) {
                o++;
            }
            return o - spso;
        }

        void advance() {
            while (spso < end && state[(int) spso].isTerminal() && pending[(int) spso] == 0) {
                spso++;
            }
        }

        Errors modelValidate(String member, List<AckBatch> batches) {
            long previousLast = -1;
            for (AckBatch b : batches) {
                if (!b.wellFormed() || b.firstOffset() < previousLast) {
                    return Errors.INVALID_REQUEST;
                }
                previousLast = b.lastOffset();
            }
            long lastChecked = -1;
            for (AckBatch b : batches) {
                if (b.firstOffset() < spso) {
                    return Errors.INVALID_RECORD_STATE;
                }
                if (end == spso) {
                    return Errors.INVALID_RECORD_STATE;
                }
                if (b.lastOffset() >= end) {
                    return Errors.INVALID_REQUEST;
                }
                for (long o = Math.max(b.firstOffset(), spso); o <= b.lastOffset(); o++) {
                    int i = (int) o;
                    if (o <= lastChecked) {
                        return Errors.INVALID_RECORD_STATE;
                    }
                    lastChecked = o;
                    boolean renewRefused = b.typeAt(o) == AcknowledgeType.RENEW && !config.renewEnabled();
                    if (state[i] != RecordState.ACQUIRED || !member.equals(owner[i]) || pending[i] != 0 || renewRefused) {
                        return Errors.INVALID_RECORD_STATE;
                    }
                }
            }
            return Errors.NONE;
        }

        RecordState targetOf(AcknowledgeType type, short deliveryCount) {
            switch (type) {
                case ACCEPT:
                    return RecordState.ACKNOWLEDGED;
                case RELEASE:
                    return released(deliveryCount);
                case REJECT:
                    return config.deadState();
                default:
                    return RecordState.ARCHIVED;
            }
        }

        RecordState released(short deliveryCount) {
            if (deliveryCount >= limit) {
                tally.archivedAtLimit++;
                return config.deadState();
            }
            return RecordState.AVAILABLE;
        }

        // Checks ---------------------------------------------------------------------------

        void check() {
            assertThat(sp.startOffset()).as(ctx("SPSO")).isEqualTo(spso);
            assertThat(sp.startOffset()).as(ctx("SPSO only increases")).isGreaterThanOrEqualTo(lastSeenStartOffset);
            lastSeenStartOffset = sp.startOffset();
            long spEnd = sp.inFlightRecords() == 0 ? sp.startOffset() : sp.endOffset() + 1;
            assertThat(spEnd).as(ctx("end of window")).isEqualTo(end);
            int acquired = 0;
            int available = 0;
            int archiving = 0;
            long firstAvailable = end;
            long earliestDeadline = Long.MAX_VALUE;
            for (long o = spso; o < end; o++) {
                int i = (int) o;
                assertThat(sp.stateOf(o)).as(ctx("state of " + o)).isEqualTo(state[i]);
                assertThat(sp.deliveryCountOf(o)).as(ctx("count of " + o)).isEqualTo(count[i]);
                assertThat((int) count[i]).as(ctx("count within limit at " + o)).isLessThanOrEqualTo(maxLimit);
                assertThat(sp.inTransition(o)).as(ctx("in transition " + o)).isEqualTo(pending[i] != 0);
                if (state[i] == RecordState.ACQUIRED) {
                    acquired++;
                    assertThat(sp.ownerOf(o)).as(ctx("owner of " + o)).isEqualTo(owner[i]);
                    if (!lockLost[i]) {
                        earliestDeadline = Math.min(earliestDeadline, deadline[i]);
                    }
                } else if (state[i] == RecordState.AVAILABLE) {
                    available++;
                    firstAvailable = Math.min(firstAvailable, o);
                } else if (state[i] == RecordState.ARCHIVING) {
                    archiving++;
                }
            }
            assertThat(sp.recordCount(RecordState.ARCHIVING)).as(ctx("archiving count")).isEqualTo(archiving);
            assertThat(sp.deadLettersWaiting()).as(ctx("dead letters waiting")).isEqualTo(archiving);
            if (!deadLetters) {
                assertThat(archiving).as(ctx("no ARCHIVING without a dead-letter queue")).isZero();
            }
            if (deadLetters) {
                checkDeadRecords();
            }
            assertThat(sp.recordCount(RecordState.ACQUIRED)).as(ctx("acquired count")).isEqualTo(acquired);
            assertThat(sp.recordCount(RecordState.AVAILABLE)).as(ctx("available count")).isEqualTo(available);
            assertThat(sp.nextFetchOffset()).as(ctx("next fetch offset")).isEqualTo(firstAvailable);
            assertThat(sp.nextDeadlineMs()).as(ctx("next deadline")).isEqualTo(earliestDeadline);
        }

        /** Every record dead and not yet dead-lettered is still ARCHIVING, and the SPSO has not passed it. */
        void checkDeadRecords() {
            for (int i = 0; i <= LOG_END; i++) {
                if (life[i] == Life.WAITING) {
                    long o = i;
                    if (sp.startOffset() > o || sp.stateOf(o) != RecordState.ARCHIVING
                            || sp.inTransition(o) != (takenBy[i] != 0)) {
                        assertThat(sp.startOffset()).as(ctx("SPSO at most dead record " + o)).isLessThanOrEqualTo(o);
                        assertThat(sp.stateOf(o)).as(ctx("dead record " + o + " waits")).isEqualTo(RecordState.ARCHIVING);
                        assertThat(sp.inTransition(o)).as(ctx("dead record " + o + " taken")).isEqualTo(takenBy[i] != 0);
                    }
                } else if (life[i] != Life.FORGOTTEN && takenBy[i] != 0) {
                    throw new AssertionError(ctx("only dead records are taken: " + i));
                }
            }
        }

        // Inputs ---------------------------------------------------------------------------

        List<LogBatch> read(long fetchOffset, int maxBatches) {
            List<LogBatch> out = new ArrayList<>();
            for (LogBatch b : log) {
                if (b.lastOffset() >= fetchOffset && b.lastOffset() >= lso && out.size() < maxBatches) {
                    out.add(b);
                }
            }
            return out;
        }

        String pickAckMember() {
            for (int attempt = 0; attempt < 5; attempt++) {
                long o = spso + (end > spso ? random.nextInt((int) (end - spso)) : 0);
                if (o < end && state[(int) o] == RecordState.ACQUIRED && random.nextInt(6) != 0) {
                    return owner[(int) o];
                }
            }
            return MEMBERS[random.nextInt(MEMBERS.length)];
        }

        long pickAckStart(String member) {
            List<Long> held = new ArrayList<>();
            for (long o = Math.max(0, spso - 3); o < end; o++) {
                if (o >= spso && heldFree(member, o)) {
                    held.add(o);
                }
            }
            if (!held.isEmpty() && random.nextInt(8) != 0) {
                return held.get(random.nextInt(held.size()));
            }
            return Math.max(0, spso - 4 + random.nextInt(Math.max(1, (int) (end - spso) + 8)));
        }

        boolean heldFree(String member, long o) {
            int i = (int) o;
            return state[i] == RecordState.ACQUIRED && member.equals(owner[i]) && pending[i] == 0;
        }

        AcknowledgeType randomType() {
            return random.nextInt(8) == 0 ? AcknowledgeType.RENEW : SETTLE[random.nextInt(SETTLE.length)];
        }

        String ctx(String what) {
            return "seed " + seed + " step " + step + ": " + what;
        }
    }

    private record Outstanding(PendingChange change, int id, boolean commit) {}

    /** A dead-letter batch taken and not yet committed or rolled back; {@code id} is its pending id. */
    private record Letters(DeadLetterBatch batch, int id) {}

    /** What became of a record that died (went ARCHIVING). */
    private enum Life {
        /** Never died (or its death, only in memory, was undone by a restart). */
        NONE,
        /** ARCHIVING, in a dead-letter batch or not. */
        WAITING,
        /** Dead, then forgotten when the log start passed it before its dead letter was committed. */
        FORGOTTEN,
        /** Its dead-letter batch committed. */
        DONE
    }
}
