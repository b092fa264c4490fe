package kao.plugin;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A classic consumer group's assignor (the group leader's, client side) that asks
 * {@code kafka-assign serve} (docs/service-protocol.md, kind {@code classic_consumer}) and falls
 * back to Kafka's {@link CooperativeStickyAssignor} under the cooperative protocol, or to its
 * {@link RangeAssignor} under the eager one (the first of Kafka's default
 * {@code partition.assignment.strategy}, what an eager group runs by default, and what the
 * service reproduces for it). It leaves the subscription's user data and {@link #onAssignment} to
 * the cooperative sticky assignor (its generation bookkeeping stays right whoever assigned; the
 * range assignor reads neither).
 *
 * <p>Application: kao-plugins.jar on the classpath and, in the consumer's configs,
 * {@code partition.assignment.strategy=kao.plugin.OptimizerConsumerAssignor} and
 * {@code kao.service.url=...}; the consumer calls {@link #configure} with its configs;
 * {@code group.id} is the request's group. Its name is {@value #NAME}; it supports the
 * cooperative and the eager protocol. The protocol in use is the highest all the consumer's
 * configured assignors support (as the ConsumerCoordinator chooses it): sent as
 * {@code rebalance_protocol}, and under {@code cooperative} an answer that moves a partition from
 * its owner to another member in one rebalance is not applied. The leader waits up to
 * {@code kao.budget.ms} (default {@code kao.deadline.ms} + 1000 ms).
 */
public final class OptimizerConsumerAssignor extends Plugin implements ConsumerPartitionAssignor, Configurable {
    static final String KIND = "classic_consumer";
    private static final Logger LOG = LoggerFactory.getLogger(OptimizerConsumerAssignor.class);

    private final CooperativeStickyAssignor fallback = new CooperativeStickyAssignor();
    private final RangeAssignor eagerFallback = new RangeAssignor();
    private volatile String groupId;
    private volatile RebalanceProtocol protocol = RebalanceProtocol.COOPERATIVE;

    public OptimizerConsumerAssignor() {
        super(KIND, "CooperativeStickyAssignor", LOG, false);
    }

    @Override
    public List<RebalanceProtocol> supportedProtocols() {
        return List.of(RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER);
    }

    @Override
    public void configure(Map<String, ?> configs) {
        groupId = PluginConfig.text(configs, ConsumerConfig.GROUP_ID_CONFIG);
        protocol = protocolOf(configs);
        exchange.fallbackName(protocol == RebalanceProtocol.EAGER ? "RangeAssignor" : "CooperativeStickyAssignor");
        exchange.configure(configs);
    }

    @Override
    public ByteBuffer subscriptionUserData(Set<String> topics) {
        return fallback.subscriptionUserData(topics);
    }

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        fallback.onAssignment(assignment, metadata);
    }

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
        long started = System.nanoTime();
        String group = groupId;
        String label = group == null ? "consumer group" : "group " + group;
        RebalanceProtocol inUse = protocol;
        ConsumerPartitionAssignor kafkas = inUse == RebalanceProtocol.EAGER ? eagerFallback : fallback;
        return exchange.assign(group, label, started, () -> new Request(metadata, groupSubscription, inUse), () -> kafkas.assign(metadata, groupSubscription));
    }

    /**
     * The protocol the ConsumerCoordinator will use: the highest that every configured assignor
     * supports. This one supports both; Kafka's classic assignors other than the cooperative
     * sticky one only eager; another class is asked (made, not configured).
     */
    static RebalanceProtocol protocolOf(Map<String, ?> configs) {
        Object strategies = configs == null ? null : configs.get(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG);
        List<Object> listed = new ArrayList<>();
        if (strategies instanceof Collection) {
            listed.addAll((Collection<?>) strategies);
        } else if (strategies instanceof String) {
            for (String name : ((String) strategies).split(",")) {
                if (!name.isBlank()) {
                    listed.add(name.trim());
                }
            }
        } else if (strategies instanceof Class) {
            listed.add(strategies);
        }
        for (Object strategy : listed) {
            String name = strategy instanceof Class ? ((Class<?>) strategy).getName() : String.valueOf(strategy).trim();
            if (name.equals(OptimizerConsumerAssignor.class.getName()) || name.equals(CooperativeStickyAssignor.class.getName())) {
                continue;
            }
            if (name.startsWith("org.apache.kafka.clients.consumer.")) {
                return RebalanceProtocol.EAGER;  // RangeAssignor, RoundRobinAssignor, StickyAssignor
            }
            try {
                Class<?> type = strategy instanceof Class ? (Class<?>) strategy : Utils.loadClass(name, Object.class);
                Object other = Utils.newInstance(type);
                if (!(other instanceof ConsumerPartitionAssignor)
                    || !((ConsumerPartitionAssignor) other).supportedProtocols().contains(RebalanceProtocol.COOPERATIVE)) {
                    return RebalanceProtocol.EAGER;
                }
            } catch (Exception | LinkageError unknown) {
                return RebalanceProtocol.EAGER;
            }
        }
        return RebalanceProtocol.COOPERATIVE;
    }

    /** The request's {@code kafka} object, and what its answer is checked against. */
    private static final class Request extends Exchange.Request<GroupAssignment> {
        final Answers.PartitionRequest check = new Answers.PartitionRequest();

        Request(Cluster cluster, GroupSubscription group, RebalanceProtocol protocol) {
            boolean cooperative = protocol == RebalanceProtocol.COOPERATIVE;
            kafka.put("rebalance_protocol", cooperative ? "cooperative" : "eager");
            // members, their subscriptions and owned partitions in Kafka's order (the leader's
            // HashMap, the consumers' lists): the service's reproduction breaks ties as Kafka does
            Map<String, Subscription> subscriptions = group.groupSubscription();
            Set<String> subscribed = new TreeSet<>();
            subscriptions.values().forEach(s -> subscribed.addAll(s.topics()));
            List<Object> topics = new ArrayList<>();
            for (String topic : subscribed) {
                Integer count = cluster.partitionCountForTopic(topic);
                if (count == null) {
                    continue;
                }
                check.topics.put(topic, count);
                Map<Integer, PartitionInfo> byPartition = new HashMap<>();
                cluster.partitionsForTopic(topic).forEach(info -> byPartition.put(info.partition(), info));
                List<Object> replicaRacks = new ArrayList<>();
                List<Object> leaderRacks = new ArrayList<>();
                for (int p = 0; p < count; p++) {
                    PartitionInfo info = byPartition.get(p);
                    List<Object> racks = new ArrayList<>();
                    if (info != null && info.replicas() != null) {
                        for (Node replica : info.replicas()) {
                            if (replica != null && replica.hasRack()) {
                                racks.add(replica.rack());
                            }
                        }
                    }
                    replicaRacks.add(racks);
                    Node leader = info == null ? null : info.leader();
                    leaderRacks.add(leader != null && leader.hasRack() ? leader.rack() : null);
                }
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("name", topic);
                described.put("partitions", count);
                described.put("replica_racks", replicaRacks);
                described.put("leader_racks", leaderRacks);
                topics.add(described);
            }
            kafka.put("topics", topics);
            if (cooperative) {
                check.owners = new HashMap<>();
            }
            List<Object> members = new ArrayList<>();
            for (Map.Entry<String, Subscription> entry : subscriptions.entrySet()) {
                Subscription subscription = entry.getValue();
                List<Object> ownedList = new ArrayList<>();
                for (TopicPartition tp : subscription.ownedPartitions() == null ? List.<TopicPartition>of() : subscription.ownedPartitions()) {
                    ownedList.add(List.of(tp.topic(), tp.partition()));
                    if (check.owners != null) {
                        check.owners.computeIfAbsent(new Answers.Part(tp.topic(), tp.partition()), k -> new HashSet<>()).add(entry.getKey());
                    }
                }
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("id", entry.getKey());
                described.put("instance_id", subscription.groupInstanceId().orElse(null));
                described.put("rack", subscription.rackId().orElse(null));
                described.put("subscriptions", new ArrayList<>(subscription.topics()));
                described.put("owned", ownedList);
                described.put("generation", subscription.generationId().orElse(null));
                members.add(described);
                check.members.add(entry.getKey());
                check.subscribed.put(entry.getKey(), new HashSet<>(subscription.topics()));
            }
            kafka.put("members", members);
        }

        @Override
        public GroupAssignment read(Map<String, Object> assignment) throws Exchange.InvalidAnswer {
            Map<String, List<Answers.Part>> parts = Answers.partitions(assignment, check);
            Map<String, Assignment> members = new HashMap<>();
            for (Map.Entry<String, List<Answers.Part>> member : parts.entrySet()) {
                List<TopicPartition> partitions = new ArrayList<>();
                member.getValue().forEach(part -> partitions.add(new TopicPartition(part.topic(), part.partition())));
                members.put(member.getKey(), new Assignment(partitions));
            }
            return new GroupAssignment(members);
        }
    }
}
