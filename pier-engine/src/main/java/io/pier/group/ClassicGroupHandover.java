package io.pier.group;

import java.util.List;

/** A group with members passing between the classic and consumer protocols: its generation (epoch) and members. */
public record ClassicGroupHandover(int generationId, List<ClassicMemberState> members) {
    public ClassicGroupHandover {
        members = List.copyOf(members);
    }
}
