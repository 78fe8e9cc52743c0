package io.pier.group.consumer;

/** A consumer-protocol group as ListGroups shows it. */
public record ConsumerGroupListing(String groupId, ConsumerGroupState state) {}
