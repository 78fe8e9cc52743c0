package io.pier.group;

/** One share group as ListGroups reports it (group type and protocol type are {@code share}). */
public record GroupListing(String groupId, ShareGroupState state) {}
