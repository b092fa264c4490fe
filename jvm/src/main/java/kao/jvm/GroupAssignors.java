package kao.jvm;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Kafka's own KIP-848 broker-side assignors (the group coordinator's `uniform` and `range`) on a
 * batch of consumer groups: the live oracle for `--solver kafka` under `group.protocol=consumer`.
 * A thin adapter: Kafka's GroupSpecImpl is filled from the JSON as given (maps filled in the
 * order listed), the topics described by their partition counts and replicas' racks.
 *
 * <pre>
 * in:  {"cases": [{"assignor": "uniform" | "range", "homogeneous": bool,
 *                  "topics": [{"name", "id" (optional: Kafka's Uuid), "partitions", "racks": [[rack, ...] per partition]}],
 *                  "members": [{"id", "rack" | null, "subscribed": [topic], "assigned": [[topic, [p, ...]]]}]}]}
 * out: {"answers": [{"assignment": {member: [[topic, p], ...]}} | {"error": "..."}]}
 * </pre>
 *
 * Topic ids are a topic's "id" when given, else `Uuid(UUID.nameUUIDFromBytes("topic:" + name))`, as the
 * parity cases were made.
 */
public final class GroupAssignors {
    private static final ObjectMapper JSON = Batch.JSON;

    private GroupAssignors() {
    }

    public static void main(String[] args) throws Exception {
        Batch.run(GroupAssignors::assign);
    }

    static Uuid topicId(String name) {
        UUID uuid = UUID.nameUUIDFromBytes(("topic:" + name).getBytes(StandardCharsets.UTF_8));
        return new Uuid(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
    }

    private static ConsumerGroupPartitionAssignor assignor(String name) {
        switch (name) {
            case "uniform": return new UniformAssignor();
            case "range": return new RangeAssignor();
            default: throw new IllegalArgumentException("no KIP-848 assignor " + name);
        }
    }

    /** Kafka's inputs for a case: the GroupSpecImpl, the topics' describer, and the topics' names by id. */
    record Inputs(GroupSpecImpl spec, SubscribedTopicDescriber describer, Map<Uuid, String> names) {
    }

    private static ObjectNode assign(JsonNode group) {
        Inputs inputs = inputs(group);
        Map<Uuid, String> names = inputs.names();
        GroupAssignment answer = assignor(group.get("assignor").asText()).assign(inputs.spec(), inputs.describer());
        ObjectNode result = JSON.createObjectNode();
        for (Map.Entry<String, MemberAssignment> member : new TreeMap<>(answer.members()).entrySet()) {
            ArrayNode partitions = result.putArray(member.getKey());
            for (Map.Entry<Uuid, Set<Integer>> topic : member.getValue().partitions().entrySet()) {
                for (int partition : new TreeSet<>(topic.getValue())) {
                    partitions.addArray().add(names.get(topic.getKey())).add(partition);
                }
            }
        }
        return result;
    }

    static Inputs inputs(JsonNode group) {
        Map<Uuid, String> names = new HashMap<>();
        Map<Uuid, Integer> counts = new HashMap<>();
        Map<Uuid, List<Set<String>>> racks = new HashMap<>();
        Map<String, Uuid> ids = new HashMap<>();
        for (JsonNode topic : group.get("topics")) {
            // Kafka's own id when the case gives it (a problem's topic_id), else derived from the name
            Uuid id = topic.hasNonNull("id") ? Uuid.fromString(topic.get("id").asText()) : topicId(topic.get("name").asText());
            ids.put(topic.get("name").asText(), id);
            names.put(id, topic.get("name").asText());
            counts.put(id, topic.get("partitions").asInt());
            List<Set<String>> perPartition = new java.util.ArrayList<>();
            for (JsonNode partition : topic.get("racks")) {
                Set<String> set = new HashSet<>();
                partition.forEach(rack -> set.add(rack.asText()));
                perPartition.add(set);
            }
            racks.put(id, perPartition);
        }
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        for (JsonNode member : group.get("members")) {
            String memberId = member.get("id").asText();
            Set<Uuid> subscribed = new HashSet<>();
            member.get("subscribed").forEach(topic -> subscribed.add(ids.getOrDefault(topic.asText(), topicId(topic.asText()))));
            Map<Uuid, Set<Integer>> assigned = new HashMap<>();
            for (JsonNode entry : member.get("assigned")) {
                Uuid id = ids.getOrDefault(entry.get(0).asText(), topicId(entry.get(0).asText()));
                List<Integer> listed = new java.util.ArrayList<>();
                for (JsonNode partition : entry.get(1)) {
                    listed.add(partition.asInt());
                    inverted.computeIfAbsent(id, k -> new HashMap<>()).put(partition.asInt(), memberId);
                }
                // as the coordinator holds a member's target: Assignment.fromRecord copies the record's list into a HashSet
                assigned.put(id, new HashSet<>(listed));
            }
            Optional<String> rack = member.hasNonNull("rack") ? Optional.of(member.get("rack").asText()) : Optional.empty();
            // a static member's group.instance.id, as the coordinator hands it (the range assignor orders by it)
            Optional<String> instance = member.hasNonNull("instance_id") ? Optional.of(member.get("instance_id").asText()) : Optional.empty();
            members.put(memberId, new MemberSubscriptionAndAssignmentImpl(rack, instance, subscribed, new Assignment(assigned)));
        }
        SubscriptionType type = group.get("homogeneous").asBoolean() ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                return counts.getOrDefault(topicId, -1);
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                List<Set<String>> known = racks.get(topicId);
                return known == null || partition >= known.size() ? Set.of() : known.get(partition);
            }
        };
        return new Inputs(new GroupSpecImpl(members, type, inverted), describer, names);
    }
}
