package kao.plugin;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Kafka Streams task assignor (KIP-924, the classic rebalance protocol) that asks
 * {@code kafka-assign serve} (docs/service-protocol.md, kind {@code streams_task_assignor}) and
 * falls back to KIP-924's public {@link StickyTaskAssignor}. Streams cannot go back to its
 * internal HighAvailabilityTaskAssignor once a custom assignor is configured
 * (StreamsPartitionAssignor uses one or the other), so the public sticky assignor is the
 * fallback.
 *
 * <p>Application: kao-plugins.jar on the classpath and, in the Streams configs,
 * {@code task.assignor.class=kao.plugin.OptimizerTaskAssignor} and {@code kao.service.url=...}
 * (Streams passes its custom configs through to the assignor). The group leader's
 * StreamsPartitionAssignor makes a new instance at each rebalance and calls {@link #configure}
 * with its StreamsConfig's originals; {@code application.id} is the request's group. The leader
 * waits up to {@code kao.budget.ms} (default {@code kao.deadline.ms} + 1000 ms).
 *
 * <p>A follow-up rebalance the service asks for ({@code followup_rebalance_ms}) is set on every
 * client's assignment; the first to come triggers the rebalance.
 */
public final class OptimizerTaskAssignor extends Plugin implements TaskAssignor {
    static final String KIND = "streams_task_assignor";
    private static final Logger LOG = LoggerFactory.getLogger(OptimizerTaskAssignor.class);

    private final StickyTaskAssignor fallback = new StickyTaskAssignor();
    private volatile String applicationId;
    private volatile boolean fellBack;

    public OptimizerTaskAssignor() {
        super(KIND, "StickyTaskAssignor", LOG, false);
    }

    @Override
    public void configure(Map<String, ?> configs) {
        applicationId = PluginConfig.text(configs, StreamsConfig.APPLICATION_ID_CONFIG);
        exchange.configure(configs);
        fallback.configure(configs);
    }

    @Override
    public TaskAssignment assign(ApplicationState applicationState) {
        long started = System.nanoTime();
        String group = applicationId;
        String label = group == null ? "streams application" : "group " + group;
        fellBack = false;
        return exchange.assign(group, label, started, () -> new Request(applicationState), () -> {
            fellBack = true;  // onAssignmentComputed goes to the assignor that assigned
            return fallback.assign(applicationState);
        });
    }

    @Override
    public void onAssignmentComputed(GroupAssignment assignment, GroupSubscription subscription, AssignmentError error) {
        if (fellBack) {
            fallback.onAssignmentComputed(assignment, subscription, error);
        }
    }

    private static List<Object> partitions(TaskInfo task, boolean changelog) {
        Map<String, Map<Integer, TaskTopicPartition>> sorted = new TreeMap<>();
        for (TaskTopicPartition partition : task.topicPartitions()) {
            if (changelog ? partition.isChangelog() : partition.isSource()) {
                sorted.computeIfAbsent(partition.topicPartition().topic(), k -> new TreeMap<>()).put(partition.topicPartition().partition(), partition);
            }
        }
        List<Object> listed = new ArrayList<>();
        sorted.forEach((topic, byPartition) -> byPartition.forEach((p, partition) -> {
            Map<String, Object> described = new LinkedHashMap<>();
            described.put("topic", topic);
            described.put("partition", p);
            described.put("racks", partition.rackIds().map(Answers::sorted).orElse(null));
            listed.add(described);
        }));
        return listed;
    }

    /** The request's {@code kafka} object, and what its answer is checked against. */
    private static final class Request extends Exchange.Request<TaskAssignment> {
        final Answers.TaskRequest check = new Answers.TaskRequest("client", true);
        final Map<String, TaskId> taskIds = new HashMap<>();
        final Map<String, ProcessId> processIds = new HashMap<>();

        Request(ApplicationState state) {
            AssignmentConfigs configs = state.assignmentConfigs();
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("num_standby_replicas", configs.numStandbyReplicas());
            c.put("acceptable_recovery_lag", configs.acceptableRecoveryLag());
            c.put("max_warmup_replicas", configs.maxWarmupReplicas());
            c.put("probing_rebalance_interval_ms", configs.probingRebalanceIntervalMs());
            c.put("rack_aware_assignment_tags", new ArrayList<>(configs.rackAwareAssignmentTags()));
            c.put("rack_aware_assignment_strategy", configs.rackAwareAssignmentStrategy());
            c.put("rack_aware_assignment_traffic_cost", configs.rackAwareTrafficCost().isPresent() ? configs.rackAwareTrafficCost().getAsInt() : null);
            c.put("rack_aware_assignment_non_overlap_cost",
                configs.rackAwareNonOverlapCost().isPresent() ? configs.rackAwareNonOverlapCost().getAsInt() : null);
            kafka.put("configs", c);

            Map<TaskId, TaskInfo> all = new TreeMap<>(state.allTasks());
            List<Object> tasks = new ArrayList<>();
            for (TaskInfo task : all.values()) {
                String id = task.id().toString();
                taskIds.put(id, task.id());
                check.tasks.add(id);
                if (task.isStateful()) {
                    check.stateful.add(id);
                }
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("id", id);
                described.put("stateful", task.isStateful());
                described.put("source", partitions(task, false));
                described.put("changelog", partitions(task, true));
                tasks.add(described);
            }
            kafka.put("tasks", tasks);

            List<Object> clients = new ArrayList<>();
            for (KafkaStreamsState client : new TreeMap<>(state.kafkaStreamsStates(true)).values()) {
                String process = client.processId().id().toString();
                processIds.put(process, client.processId());
                check.processOf.put(process, process);
                Map<String, Object> lags = new LinkedHashMap<>();
                new TreeMap<>(client.statefulTasksToLagSums()).forEach((task, lag) -> lags.put(task.toString(), lag));
                Map<String, Object> described = new LinkedHashMap<>();
                described.put("process_id", process);
                described.put("rack", client.rackId().orElse(null));
                described.put("threads", client.numProcessingThreads());
                described.put("consumers", new ArrayList<>(client.consumerClientIds()));
                described.put("tags", new TreeMap<>(client.clientTags()));
                described.put("previous_active", taskStrings(client.previousActiveTasks()));
                described.put("previous_standby", taskStrings(client.previousStandbyTasks()));
                described.put("lags", lags);
                clients.add(described);
            }
            kafka.put("clients", clients);
        }

        private static List<Object> taskStrings(Set<TaskId> tasks) {
            List<Object> listed = new ArrayList<>();
            new java.util.TreeSet<>(tasks).forEach(task -> listed.add(task.toString()));
            return listed;
        }

        @Override
        public TaskAssignment read(Map<String, Object> assignment) throws Exchange.InvalidAnswer {
            Map<String, Answers.Tasks> tasks = Answers.tasks(Answers.object(assignment.get("clients"), "clients"), check);
            Object followup = assignment.get("followup_rebalance_ms");
            if (followup != null && (!(followup instanceof Long) || (Long) followup < 0)) {
                throw new Exchange.InvalidAnswer("followup_rebalance_ms: expected a number of milliseconds or null, got " + Exchange.clip(Json.write(followup)));
            }
            Instant deadline = followup == null ? null : Instant.now().plusMillis((Long) followup);
            List<KafkaStreamsAssignment> clients = new ArrayList<>();
            for (Map.Entry<String, Answers.Tasks> client : tasks.entrySet()) {
                Set<AssignedTask> assigned = new HashSet<>();
                client.getValue().active.forEach(task -> assigned.add(new AssignedTask(taskIds.get(task), AssignedTask.Type.ACTIVE)));
                client.getValue().standby.forEach(task -> assigned.add(new AssignedTask(taskIds.get(task), AssignedTask.Type.STANDBY)));
                KafkaStreamsAssignment one = KafkaStreamsAssignment.of(processIds.get(client.getKey()), assigned);
                clients.add(deadline == null ? one : one.withFollowupRebalance(deadline));
            }
            return new TaskAssignment(clients);
        }
    }
}
