package kao.plugin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The group coordinator's task assignor for streams groups (KIP-1071; custom assignors KIP-1357)
 * that asks {@code kafka-assign serve} (docs/service-protocol.md, kind {@code streams_group}) and
 * falls back to Kafka's streams-group {@link StickyTaskAssignor}.
 *
 * <p>Broker: put kao-plugins.jar in the broker's {@code libs/}, and in server.properties
 * {@code group.streams.assignors=sticky,kao.plugin.OptimizerStreamsGroupAssignor} with
 * {@code kao.service.url=...}; the broker calls {@link #configure} with server.properties'
 * originals. The KRaft controllers need the jar and the same {@code group.streams.assignors} line
 * too: they validate group configs against their own. A group uses it with the group config
 * {@code streams.assignor.name=optimizer}
 * ({@code kafka-configs --alter --entity-type groups --entity-name APP --add-config
 * streams.assignor.name=optimizer}).
 *
 * <p>The coordinator must never be held longer than {@code kao.budget.ms} (default 500 ms): an
 * answer not back by then is Kafka's default now, and the service's answer is kept for the next
 * computation with the same inputs ({@link Exchange}). Kafka 4.4 runs assignors off the
 * coordinator's event loop by default ({@code group.streams.assignor.offload.enable=true}, a
 * background thread of the group coordinator); with offloading disabled the budget is time the
 * coordinator's thread spends waiting. Thread-safe: one instance serves every group.
 *
 * <p>Kafka 4.4's {@link MemberAssignment} has active and standby tasks only: an answer with
 * warm-up tasks is not applied. The spec has no group id: the request's {@code group} is null.
 */
public final class OptimizerStreamsGroupAssignor extends Plugin implements TaskAssignor, Configurable {
    static final String KIND = "streams_group";
    private static final Logger LOG = LoggerFactory.getLogger(OptimizerStreamsGroupAssignor.class);

    private final StickyTaskAssignor fallback = new StickyTaskAssignor();

    public OptimizerStreamsGroupAssignor() {
        super(KIND, "streams-group StickyTaskAssignor", LOG, true);
    }

    @Override
    public GroupAssignment assign(GroupSpec groupSpec, TopologyDescriber topology) throws TaskAssignorException {
        long started = System.nanoTime();
        String label = "streams group";
        try {
            label = "streams group of " + groupSpec.memberIds().size() + " members";
        } catch (RuntimeException unusual) {
            // the generic label stays
        }
        return exchange.assign(null, label, started, () -> new Request(groupSpec, topology), () -> fallback.assign(groupSpec, topology));
    }

    private static List<String> tasks(Map<String, Set<Integer>> bySubtopology) {
        List<String> tasks = new ArrayList<>();
        if (bySubtopology != null) {
            new TreeMap<>(bySubtopology).forEach((subtopology, partitions) ->
                new java.util.TreeSet<>(partitions).forEach(p -> tasks.add(subtopology + "_" + p)));
        }
        return tasks;
    }

    private static Map<String, Object> offsets(Map<String, Map<Integer, Long>> bySubtopology) {
        Map<String, Object> offsets = new LinkedHashMap<>();
        if (bySubtopology != null) {
            new TreeMap<>(bySubtopology).forEach((subtopology, partitions) ->
                new TreeMap<>(partitions).forEach((p, offset) -> offsets.put(subtopology + "_" + p, offset)));
        }
        return offsets;
    }

    /** The request's {@code kafka} object, and what its answer is checked against. */
    private static final class Request extends Exchange.Request<GroupAssignment> {
        final Answers.TaskRequest check = new Answers.TaskRequest("member", false);

        Request(GroupSpec spec, TopologyDescriber topology) {
            kafka.put("num_standby_replicas", spec.configs().numStandbyReplicas());
            kafka.put("rack_aware_assignment_tags", new ArrayList<>(spec.configs().rackAwareAssignmentTags()));
            List<Object> subtopologies = new ArrayList<>();
            for (String id : topology.subtopologies()) {
                int partitions = topology.maxNumInputPartitions(id);
                boolean stateful = topology.isStateful(id);
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("id", id);
                described.put("partitions", partitions);
                described.put("stateful", stateful);
                subtopologies.add(described);
                for (int p = 0; p < partitions; p++) {
                    check.tasks.add(id + "_" + p);
                    if (stateful) {
                        check.stateful.add(id + "_" + p);
                    }
                }
            }
            kafka.put("subtopologies", subtopologies);
            List<Object> members = new ArrayList<>();
            for (String member : spec.memberIds()) {  // Kafka's order (its HashMap's): it breaks the assignor's ties
                MemberAssignmentMetadata metadata = spec.memberMetadata(member);
                MemberAssignmentState state = spec.memberAssignmentState(member);
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("member_id", member);
                described.put("process_id", metadata.processId());
                described.put("instance_id", metadata.instanceId().orElse(null));
                described.put("rack", metadata.rackId().orElse(null));
                described.put("client_tags", new TreeMap<>(metadata.clientTags()));
                described.put("active", tasks(state.activeTasks()));
                described.put("standby", tasks(state.standbyTasks()));
                described.put("warmup", tasks(state.warmupTasks()));
                described.put("task_offsets", offsets(state.taskOffsets()));
                described.put("task_end_offsets", offsets(state.taskEndOffsets()));
                members.add(described);
                check.processOf.put(member, metadata.processId());
            }
            kafka.put("members", members);
        }

        @Override
        public GroupAssignment read(Map<String, Object> assignment) throws Exchange.InvalidAnswer {
            Map<String, Answers.Tasks> tasks = Answers.tasks(Answers.object(assignment.get("members"), "members"), check);
            Map<String, MemberAssignment> members = new HashMap<>();
            for (Map.Entry<String, Answers.Tasks> member : tasks.entrySet()) {
                members.put(member.getKey(), new MemberAssignment(bySubtopology(member.getValue().active), bySubtopology(member.getValue().standby)));
            }
            return new GroupAssignment(members);
        }

        private static Map<String, Set<Integer>> bySubtopology(List<String> tasks) {
            Map<String, Set<Integer>> result = new HashMap<>();
            for (String task : tasks) {
                int cut = task.lastIndexOf('_');
                result.computeIfAbsent(task.substring(0, cut), k -> new HashSet<>()).add(Integer.parseInt(task.substring(cut + 1)));
            }
            return result;
        }
    }
}
