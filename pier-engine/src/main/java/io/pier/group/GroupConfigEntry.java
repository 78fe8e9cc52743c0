package io.pier.group;

/**
 * One group config as DescribeConfigs reports it: its effective value, and whether that value is
 * the broker default (no override stored for the group).
 */
public record GroupConfigEntry(String name, String value, boolean isDefault) {}
