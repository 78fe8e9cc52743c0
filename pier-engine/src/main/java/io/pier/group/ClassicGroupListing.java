package io.pier.group;

/** One classic group as ListGroups reports it; {@code protocolType} "" for a group that only commits. */
public record ClassicGroupListing(String groupId, ClassicGroupState state, String protocolType) {}
