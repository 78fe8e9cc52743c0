package io.pier.service;

import io.pier.group.TopicInfo;
import io.pier.group.TopicLookup;
import io.pier.state.TopicMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.Uuid;

/** The group coordinators' view of the topics: {@link TopicService}'s published image, read without blocking. */
final class TopicLookups implements TopicLookup {
    private final TopicService topics;

    TopicLookups(TopicService topics) {
        this.topics = topics;
    }

    static TopicInfo info(TopicMetadata t) {
        return new TopicInfo(t.name(), t.id(), t.partitionCount());
    }

    @Override
    public Optional<TopicInfo> byName(String name) {
        return Optional.ofNullable(topics.topic(name)).map(TopicLookups::info);
    }

    @Override
    public Optional<TopicInfo> byId(Uuid id) {
        return Optional.ofNullable(topics.topic(id)).map(TopicLookups::info);
    }

    @Override
    public List<TopicInfo> all() {
        List<TopicInfo> all = new ArrayList<>();
        topics.topics().forEach(t -> all.add(info(t)));
        return all;
    }
}
