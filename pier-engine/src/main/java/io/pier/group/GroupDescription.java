package io.pier.group;

import java.util.List;

/** A share group as ShareGroupDescribe reports it; members sorted by member id. */
public record GroupDescription(
        String groupId,
        ShareGroupState state,
        int groupEpoch,
        int assignmentEpoch,
        String assignorName,
        List<MemberDescription> members) {}
