package kao.plugin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group coordinator's assignor for consumer groups (KIP-848) that asks
 * {@code kafka-assign serve} (docs/service-protocol.md, kind {@code consumer_group}) and falls
 * back to Kafka's {@link UniformAssignor}.
 *
 * <p>Broker: put kao-plugins.jar in the broker's {@code libs/}, and in server.properties
 * {@code group.consumer.assignors=uniform,range,kao.plugin.OptimizerConsumerGroupAssignor} (the
 * first is the default for consumers that name none) with {@code kao.service.url=...}; the broker
 * calls {@link #configure} with server.properties' originals. A consumer chooses it with
 * {@code group.protocol=consumer} and {@code group.remote.assignor=optimizer}.
 *
 * <p>The coordinator must never be held longer than {@code kao.budget.ms} (default 500 ms): an
 * answer not back by then is Kafka's default now, and the service's answer is kept for the next
 * computation with the same inputs ({@link Exchange}). Kafka 4.4 runs assignors off the
 * coordinator's event loop by default ({@code group.consumer.assignor.offload.enable=true}, a
 * background thread of the group coordinator); with offloading disabled the budget is time the
 * coordinator's thread spends waiting. Thread-safe: one instance serves every group.
 *
 * <p>The coordinator gives topics by id and no group id: the request's topics are Uuids (as
 * strings) and its {@code group} is null.
 */
public final class OptimizerConsumerGroupAssignor extends Plugin implements ConsumerGroupPartitionAssignor, Configurable {
    static final String KIND = "consumer_group";
    private static final Logger LOG = LoggerFactory.getLogger(OptimizerConsumerGroupAssignor.class);

    private final UniformAssignor fallback = new UniformAssignor();

    public OptimizerConsumerGroupAssignor() {
        super(KIND, "UniformAssignor", LOG, true);
    }

    @Override
    public GroupAssignment assign(GroupSpec groupSpec, SubscribedTopicDescriber describer) throws PartitionAssignorException {
        long started = System.nanoTime();
        String label = "consumer group";
        try {
            label = "consumer group of " + groupSpec.memberIds().size() + " members";
        } catch (RuntimeException unusual) {
            // the generic label stays
        }
        return exchange.assign(null, label, started, () -> new Request(groupSpec, describer), () -> fallback.assign(groupSpec, describer));
    }

    /** The request's {@code kafka} object, and what its answer is checked against. */
    private static final class Request extends Exchange.Request<GroupAssignment> {
        final Answers.PartitionRequest check = new Answers.PartitionRequest();
        final Map<String, Uuid> ids = new HashMap<>();

        Request(GroupSpec spec, SubscribedTopicDescriber describer) {
            kafka.put("subscription_type", spec.subscriptionType() == SubscriptionType.HOMOGENEOUS ? "homogeneous" : "heterogeneous");
            // members, their subscriptions and assignments in the order Kafka iterates them (its
            // HashMaps and HashSets): the service's reproduction breaks ties as Kafka's assignor does
            List<String> memberIds = new ArrayList<>(spec.memberIds());
            Set<Uuid> subscribedIds = new HashSet<>();
            for (String member : memberIds) {
                subscribedIds.addAll(spec.memberSubscription(member).subscribedTopicIds());
            }
            Map<String, Uuid> byId = new TreeMap<>();
            subscribedIds.forEach(id -> byId.put(id.toString(), id));
            List<Object> topics = new ArrayList<>();
            for (Map.Entry<String, Uuid> topic : byId.entrySet()) {
                int partitions = describer.numPartitions(topic.getValue());
                if (partitions < 0) {
                    continue;
                }
                ids.put(topic.getKey(), topic.getValue());
                check.topics.put(topic.getKey(), partitions);
                List<Object> racks = new ArrayList<>();
                for (int p = 0; p < partitions; p++) {
                    Set<String> partitionRacks = describer.racksForPartition(topic.getValue(), p);
                    racks.add(partitionRacks == null ? List.of() : Answers.sorted(partitionRacks));
                }
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("id", topic.getKey());
                described.put("partitions", partitions);
                described.put("racks", racks);
                topics.add(described);
            }
            kafka.put("topics", topics);
            List<Object> members = new ArrayList<>();
            for (String member : memberIds) {
                MemberSubscription subscription = spec.memberSubscription(member);
                Set<String> subscribed = new LinkedHashSet<>();
                subscription.subscribedTopicIds().forEach(id -> subscribed.add(id.toString()));
                List<Object> assigned = new ArrayList<>();
                MemberAssignment current = spec.memberAssignment(member);
                if (current != null) {
                    current.partitions().forEach((id, parts) -> assigned.add(List.of(id.toString(), new ArrayList<>(parts))));
                }
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("id", member);
                described.put("instance_id", subscription.instanceId().orElse(null));
                described.put("rack", subscription.rackId().orElse(null));
                described.put("subscribed", new ArrayList<>(subscribed));
                described.put("assigned", assigned);
                members.add(described);
                check.members.add(member);
                check.subscribed.put(member, subscribed);
            }
            kafka.put("members", members);
        }

        @Override
        public GroupAssignment read(Map<String, Object> assignment) throws Exchange.InvalidAnswer {
            Map<String, List<Answers.Part>> parts = Answers.partitions(assignment, check);
            Map<String, MemberAssignment> members = new HashMap<>();
            for (Map.Entry<String, List<Answers.Part>> member : parts.entrySet()) {
                Map<Uuid, Set<Integer>> partitions = new HashMap<>();
                for (Answers.Part part : member.getValue()) {
                    partitions.computeIfAbsent(ids.get(part.topic()), k -> new HashSet<>()).add(part.partition());
                }
                members.put(member.getKey(), new Assigned(partitions));
            }
            return new GroupAssignment(members);
        }
    }

    /** A member's partitions, as Kafka's MemberAssignment. */
    private record Assigned(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {
    }
}
