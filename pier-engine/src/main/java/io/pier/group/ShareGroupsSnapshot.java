package io.pier.group;

import java.util.List;
import java.util.Map;

/**
 * What the coordinator needs to survive a restart: the share-group ids with their group epochs,
 * and the config overrides stored per group id (which may exist for ids with no group yet).
 * Members are not part of it: after a restart they rejoin (their next heartbeat gets
 * UNKNOWN_MEMBER_ID). A plain value; the server decides how and when to write it.
 */
public record ShareGroupsSnapshot(List<Group> groups, Map<String, Map<String, String>> configOverrides) {

    public static final ShareGroupsSnapshot EMPTY = new ShareGroupsSnapshot(List.of(), Map.of());

    public ShareGroupsSnapshot {
        groups = List.copyOf(groups);
        configOverrides = Map.copyOf(configOverrides);
    }

    /** One share group id and the epoch it had reached. */
    public record Group(String groupId, int groupEpoch) {}
}
