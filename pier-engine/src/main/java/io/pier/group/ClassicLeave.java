package io.pier.group;

import java.util.List;
import org.apache.kafka.common.protocol.Errors;

/** LeaveGroup's members (v3+ batch) and the answer for each. */
public final class ClassicLeave {
    private ClassicLeave() {}

    /** One member to remove: by member id, or by instance id alone ({@code memberId} ""). */
    public record Member(String memberId, String groupInstanceId) {}

    public record MemberResult(String memberId, String groupInstanceId, Errors error) {}

    /** A top-level error, else one result per member. */
    public record Result(Errors error, List<MemberResult> members) {}
}
