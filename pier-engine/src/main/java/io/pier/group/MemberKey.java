package io.pier.group;

/** Identifies a member across groups, for example one whose session expired. */
public record MemberKey(String groupId, String memberId) {}
