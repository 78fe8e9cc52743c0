package io.pier.state;

import org.apache.kafka.common.Uuid;

/**
 * One committed offset of a consumer group on one partition, as OffsetCommit stored it.
 *
 * @param topicId the id of the topic when the offset was committed: an offset of a deleted (and
 *     perhaps re-created) topic never applies to the new one
 * @param leaderEpoch the client's committed leader epoch, -1 when it sent none
 * @param metadata the client's metadata string, possibly null
 * @param commitTimestampMs wall time of the commit
 */
public record CommittedOffset(Uuid topicId, long offset, int leaderEpoch, String metadata, long commitTimestampMs) {}
