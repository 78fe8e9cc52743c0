package io.pier.group;

/** One protocol a member supports (an assignor's name) with its metadata (the subscription). */
public record ClassicProtocol(String name, byte[] metadata) {}
