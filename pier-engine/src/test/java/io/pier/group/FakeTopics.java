package io.pier.group;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.common.Uuid;

/** An in-memory {@link TopicLookup} whose topics tests create, grow and delete. */
public final class FakeTopics implements TopicLookup {
    private final Map<String, TopicInfo> byName = new HashMap<>();

    public TopicInfo create(String name, int partitions) {
        TopicInfo topic = new TopicInfo(name, Uuid.randomUuid(), partitions);
        byName.put(name, topic);
        return topic;
    }

    public TopicInfo grow(String name, int partitions) {
        TopicInfo old = byName.get(name);
        TopicInfo topic = new TopicInfo(name, old.id(), partitions);
        byName.put(name, topic);
        return topic;
    }

    public void delete(String name) {
        byName.remove(name);
    }

    @Override
    public Optional<TopicInfo> byName(String name) {
        return Optional.ofNullable(byName.get(name));
    }

    @Override
    public Optional<TopicInfo> byId(Uuid id) {
        return byName.values().stream().filter(t -> t.id().equals(id)).findFirst();
    }

    @Override
    public List<TopicInfo> all() {
        return List.copyOf(byName.values());
    }
}
