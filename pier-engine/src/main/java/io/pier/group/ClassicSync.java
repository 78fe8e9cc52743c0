package io.pier.group;

import java.util.Map;

/** A SyncGroup request, decoded; {@code assignments} (member id to bytes) only from the leader. */
public record ClassicSync(String groupId, int generationId, String memberId, String groupInstanceId,
        String protocolType, String protocolName, Map<String, byte[]> assignments) {}
