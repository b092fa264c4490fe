package kao.jvm;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Kafka's own classic consumer assignors (the client's RangeAssignor, RoundRobinAssignor,
 * StickyAssignor and CooperativeStickyAssignor) on a batch of groups: the live oracle for
 * `--solver kafka`. A thin adapter: it builds Kafka's inputs from the project's problem fields
 * the way the group leader's ConsumerCoordinator has them, calls the assignor, and prints what it
 * answered. Input on stdin, output on stdout, both JSON:
 *
 * <pre>
 * in:  {"cases": [{"assignor": "range" | "roundrobin" | "sticky" | "cooperative-sticky",
 *                  "topics": [{"name", "partitions", "replica_racks": [[rack, ...] per partition] | null}],
 *                  "members": [{"id", "rack" | null, "subscriptions": [topic], "owned": [[topic, p]], "generation",
 *                               "instance_id" (optional: group.instance.id)}]}]}
 * out: {"answers": [{"assignment": {member: [[topic, p], ...]}} | {"error": "..."}]}
 * </pre>
 *
 * Members enter the group's subscription map in the order given, as the leader's HashMap gets
 * them. A partition's replicas are brokers in the racks listed (one broker per rack and position).
 */
public final class ConsumerAssignors {
    private static final ObjectMapper JSON = Batch.JSON;

    private ConsumerAssignors() {
    }

    public static void main(String[] args) throws Exception {
        Batch.run(ConsumerAssignors::assign);
    }

    private static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range": return new RangeAssignor();
            case "roundrobin": return new RoundRobinAssignor();
            case "sticky": return new StickyAssignor();
            case "cooperative-sticky": return new CooperativeStickyAssignor();
            default: throw new IllegalArgumentException("no classic assignor " + name);
        }
    }

    private static ObjectNode assign(JsonNode group) {
        String name = group.get("assignor").asText();
        Cluster cluster = cluster(group.get("topics"));
        Map<String, Subscription> subscriptions = new HashMap<>();
        for (JsonNode member : group.get("members")) {
            subscriptions.put(member.get("id").asText(), subscription(name, member));
        }
        Map<String, Assignment> assigned = assignor(name).assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
        ObjectNode result = JSON.createObjectNode();
        for (String member : new TreeSet<>(assigned.keySet())) {
            ArrayNode partitions = result.putArray(member);
            for (TopicPartition tp : assigned.get(member).partitions()) {
                partitions.addArray().add(tp.topic()).add(tp.partition());
            }
        }
        return result;
    }

    /** What a member's consumer sends when it joins: its subscription, the assignor's user data, what it owns. */
    static Subscription subscription(String assignor, JsonNode member) {
        List<String> topics = new ArrayList<>();
        member.get("subscriptions").forEach(topic -> topics.add(topic.asText()));
        List<TopicPartition> owned = new ArrayList<>();
        member.get("owned").forEach(tp -> owned.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt())));
        int generation = member.get("generation").asInt();
        Optional<String> rack = member.hasNonNull("rack") ? Optional.of(member.get("rack").asText()) : Optional.empty();
        ByteBuffer userData = null;
        if (assignor.equals("sticky") && (!owned.isEmpty() || generation >= 0)) {
            // the eager StickyAssignor remembers its last assignment and generation, and sends them as user data
            StickyAssignor own = new StickyAssignor();
            own.onAssignment(new Assignment(owned), new ConsumerGroupMetadata("group", generation, member.get("id").asText(), Optional.empty()));
            userData = own.subscriptionUserData(Set.copyOf(topics));
        }
        Subscription subscription = new Subscription(topics, userData, owned, generation, rack);
        if (member.hasNonNull("instance_id")) {  // a static member (group.instance.id): range and round-robin put these first
            subscription.setGroupInstanceId(Optional.of(member.get("instance_id").asText()));
        }
        return subscription;
    }

    static Cluster cluster(JsonNode topics) {
        Map<String, Node> brokers = new LinkedHashMap<>();
        List<PartitionInfo> partitions = new ArrayList<>();
        for (JsonNode topic : topics) {
            String name = topic.get("name").asText();
            JsonNode racks = topic.get("replica_racks");
            for (int p = 0; p < topic.get("partitions").asInt(); p++) {
                List<Node> replicas = new ArrayList<>();
                if (racks != null && !racks.isNull()) {
                    Map<String, Integer> seen = new HashMap<>();
                    for (JsonNode rack : racks.get(p)) {
                        int index = seen.merge(rack.asText(), 1, Integer::sum);
                        String key = rack.asText() + "#" + index;
                        replicas.add(brokers.computeIfAbsent(key, k -> new Node(brokers.size(), "broker-" + k, 9092, rack.asText())));
                    }
                }
                Node[] nodes = replicas.toArray(new Node[0]);
                partitions.add(new PartitionInfo(name, p, nodes.length > 0 ? nodes[0] : null, nodes, nodes));
            }
        }
        return new Cluster("cluster", brokers.values(), partitions, Set.of(), Set.of());
    }
}
