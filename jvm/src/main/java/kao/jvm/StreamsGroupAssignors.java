package kao.jvm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;

import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.AssignmentConfigsImpl;
import org.apache.kafka.coordinator.group.streams.assignor.GroupSpecImpl;
import org.apache.kafka.coordinator.group.streams.assignor.MemberMetadataAndStateImpl;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Kafka's own KIP-1071 streams-group task assignor (the group coordinator's `sticky`) on a batch
 * of streams groups: the live oracle for `--solver kafka` under `group.protocol=streams`. A thin
 * adapter on the 4.4 API: each member becomes Kafka's MemberMetadataAndStateImpl (its current
 * assignment and reported offsets as given), the members go into a HashMap in the order listed
 * (as the coordinator's TargetAssignmentBuilder fills one), and the topology describer lists the
 * subtopologies in the order given.
 *
 * <pre>
 * in:  {"cases": [{"assignor": "sticky", "num_standby_replicas": n, "rack_aware_assignment_tags": [tag],
 *                  "subtopologies": [{"id", "partitions", "stateful"}],
 *                  "members": [{"member_id", "process_id", "rack" | null, "client_tags": {k: v},
 *                               "active": [task], "standby": [task], "warmup": [task],
 *                               "task_offsets": {task: n}, "task_end_offsets": {task: n}}]}]}
 * out: {"answers": [{"assignment": {member: {"active": [task], "standby": [task]}}} | {"error": "..."}]}
 * </pre>
 *
 * A task is `subtopology_partition`; the answer lists them sorted by subtopology (as a Java
 * String), then partition.
 */
public final class StreamsGroupAssignors {

    private StreamsGroupAssignors() {
    }

    public static void main(String[] args) throws Exception {
        Batch.run(StreamsGroupAssignors::assign);
    }

    private static TaskAssignor assignor(String name) {
        if ("sticky".equals(name)) {
            return new StickyTaskAssignor();
        }
        throw new IllegalArgumentException("no streams-group assignor " + name);
    }

    static TopologyDescriber topology(JsonNode group) {
        List<String> ids = new ArrayList<>();
        Map<String, Integer> partitions = new HashMap<>();
        Map<String, Boolean> stateful = new HashMap<>();
        for (JsonNode subtopology : group.get("subtopologies")) {
            String id = subtopology.get("id").asText();
            ids.add(id);
            partitions.put(id, subtopology.get("partitions").asInt());
            stateful.put(id, subtopology.get("stateful").asBoolean());
        }
        return new TopologyDescriber() {
            @Override
            public List<String> subtopologies() {
                return ids;
            }

            @Override
            public int maxNumInputPartitions(String subtopologyId) {
                Integer count = partitions.get(subtopologyId);
                if (count == null) {
                    throw new NoSuchElementException(subtopologyId);
                }
                return count;
            }

            @Override
            public boolean isStateful(String subtopologyId) {
                Boolean known = stateful.get(subtopologyId);
                if (known == null) {
                    throw new NoSuchElementException(subtopologyId);
                }
                return known;
            }
        };
    }

    private static ObjectNode assign(JsonNode group) {
        String name = group.has("assignor") ? group.get("assignor").asText() : "sticky";
        GroupAssignment assignment = assignor(name).assign(spec(group), topology(group));
        Map<String, List<String>> active = new HashMap<>();
        Map<String, List<String>> standby = new HashMap<>();
        for (Map.Entry<String, MemberAssignment> member : assignment.members().entrySet()) {
            List<String> a = StreamsGroupJson.taskList(member.getValue().activeTasks());
            List<String> s = StreamsGroupJson.taskList(member.getValue().standbyTasks());
            if (!a.isEmpty()) {
                active.put(member.getKey(), a);
            }
            if (!s.isEmpty()) {
                standby.put(member.getKey(), s);
            }
        }
        return StreamsGroupJson.answer(active, standby);
    }

    /** Kafka's GroupSpecImpl for a case: the members in the order listed, the assignment configs. */
    static GroupSpecImpl spec(JsonNode group) {
        Map<String, MemberMetadataAndStateImpl> members = new HashMap<>();
        for (JsonNode member : group.get("members")) {
            Optional<String> rack = member.hasNonNull("rack") ? Optional.of(member.get("rack").asText()) : Optional.empty();
            members.put(member.get("member_id").asText(), new MemberMetadataAndStateImpl(
                Optional.empty(), rack, member.get("process_id").asText(), StreamsGroupJson.tags(member.get("client_tags")),
                StreamsGroupJson.tasks(member.get("active")), StreamsGroupJson.tasks(member.get("standby")), StreamsGroupJson.tasks(member.get("warmup")),
                StreamsGroupJson.offsets(member.get("task_offsets")), StreamsGroupJson.offsets(member.get("task_end_offsets"))));
        }
        List<String> tagKeys = new ArrayList<>();
        if (group.has("rack_aware_assignment_tags")) {
            group.get("rack_aware_assignment_tags").forEach(tag -> tagKeys.add(tag.asText()));
        }
        AssignmentConfigsImpl configs = new AssignmentConfigsImpl(group.get("num_standby_replicas").asInt(), tagKeys);
        return new GroupSpecImpl(members, configs);
    }
}
