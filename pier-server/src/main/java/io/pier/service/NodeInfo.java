package io.pier.service;

/** This broker as clients see it: its node id and the address it serves on. */
public record NodeInfo(int nodeId, String host, int port, String clusterId) {}
