package io.pier.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteGroupsResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;

import io.pier.gateway.KeyedForwarding.Shape;

/** The {@link Shape} of each batched group or transactional-id API. */
final class KeyShapes {
    private KeyShapes() {}

    static final Shape<DescribeGroupsRequestData, DescribeGroupsResponseData> DESCRIBE_GROUPS = new Shape<>() {
        @Override
        public List<String> keys(DescribeGroupsRequestData request) {
            return request.groups();
        }

        @Override
        public void retain(DescribeGroupsRequestData copy, Predicate<String> keep) {
            copy.groups().removeIf(keep.negate());
        }

        @Override
        public void join(DescribeGroupsResponseData into, DescribeGroupsResponseData part) {
            into.groups().addAll(part.groups());
        }
    };

    static final Shape<ConsumerGroupDescribeRequestData, ConsumerGroupDescribeResponseData> CONSUMER_GROUP_DESCRIBE =
            new Shape<>() {
        @Override
        public List<String> keys(ConsumerGroupDescribeRequestData request) {
            return request.groupIds();
        }

        @Override
        public void retain(ConsumerGroupDescribeRequestData copy, Predicate<String> keep) {
            copy.groupIds().removeIf(keep.negate());
        }

        @Override
        public void join(ConsumerGroupDescribeResponseData into, ConsumerGroupDescribeResponseData part) {
            into.groups().addAll(part.groups());
        }
    };

    static final Shape<DeleteGroupsRequestData, DeleteGroupsResponseData> DELETE_GROUPS = new Shape<>() {
        @Override
        public List<String> keys(DeleteGroupsRequestData request) {
            return request.groupsNames();
        }

        @Override
        public void retain(DeleteGroupsRequestData copy, Predicate<String> keep) {
            copy.groupsNames().removeIf(keep.negate());
        }

        @Override
        public void join(DeleteGroupsResponseData into, DeleteGroupsResponseData part) {
            part.results().forEach(r -> into.results().add(r.duplicate()));
        }
    };

    /** OffsetFetch from v8, which batches groups (before v8 it has one group and goes whole). */
    static final Shape<OffsetFetchRequestData, OffsetFetchResponseData> OFFSET_FETCH = new Shape<>() {
        @Override
        public List<String> keys(OffsetFetchRequestData request) {
            List<String> out = new ArrayList<>();
            request.groups().forEach(g -> out.add(g.groupId()));
            return out;
        }

        @Override
        public void retain(OffsetFetchRequestData copy, Predicate<String> keep) {
            copy.groups().removeIf(g -> !keep.test(g.groupId()));
        }

        @Override
        public void join(OffsetFetchResponseData into, OffsetFetchResponseData part) {
            into.groups().addAll(part.groups());
        }
    };

    static final Shape<DescribeTransactionsRequestData, DescribeTransactionsResponseData> DESCRIBE_TRANSACTIONS =
            new Shape<>() {
        @Override
        public List<String> keys(DescribeTransactionsRequestData request) {
            return request.transactionalIds();
        }

        @Override
        public void retain(DescribeTransactionsRequestData copy, Predicate<String> keep) {
            copy.transactionalIds().removeIf(keep.negate());
        }

        @Override
        public void join(DescribeTransactionsResponseData into, DescribeTransactionsResponseData part) {
            into.transactionStates().addAll(part.transactionStates());
        }
    };
}
