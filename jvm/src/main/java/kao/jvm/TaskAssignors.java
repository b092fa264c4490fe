package kao.jvm;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.InternalTopicManager;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultKafkaStreamsState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskInfo;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskTopicPartition;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackUtils;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Kafka Streams' own classic task assignors on a batch of applications: the internal
 * HighAvailabilityTaskAssignor (with RackAwareTaskAssignor for `rack.aware.assignment.strategy`
 * and client tags) and LegacyStickyTaskAssignor on ClientStates, and KIP-924's public
 * StickyTaskAssignor on an ApplicationState. A thin adapter: it builds the inputs the group
 * leader's StreamsPartitionAssignor builds from a rebalance and prints what the assignor answered.
 *
 * <pre>
 * in:  {"cases": [{"assignor": "high_availability" | "sticky" | "kip924_sticky", "task_sets": "grouper" | "sorted",
 *                  "configs": {"acceptable_recovery_lag", "max_warmup_replicas", "num_standby_replicas",
 *                              "probing_rebalance_interval_ms", "tags": [key], "strategy",
 *                              "traffic_cost": int | null, "non_overlap_cost": int | null},
 *                  "tasks": [{"subtopology", "partition", "stateful",
 *                             "source": [[topic, p, [rack, ...]]], "changelog": [[topic, p, [rack, ...]]],
 *                             "end_offset_sum": long (stateful tasks)}],
 *                  "clients": [{"process": uuid, "rack" | null, "threads", "tags": {key: value},
 *                               "owned": [[topic, p]], "offset_sums": [[subtopology, partition, sum]]}]}]}
 * out: {"answers": [{"assignment": {"clients": {process: {"active": [[s, p]], "standby": [[s, p]]}},
 *                                   "followup": bool, "standby_order": [[s, p]] (KIP-924 only)}} | {"error"}]}
 * </pre>
 *
 * Each client is a ClientState(processId, clientTags) with one consumer per thread (capacity =
 * threads), its owned partitions (the previous actives' source partitions) and the task offset
 * sums its threads report; initializePrevTasks and computeTaskLags then give Kafka's previous
 * tasks and lags. Clients enter the leader's HashMap in the order given; tasks are made
 * subtopology by subtopology (a HashMap of Subtopology), partitions in order, as the
 * PartitionGrouper makes them; the sets of all and of stateful tasks the internal assignors get are
 * filled as StreamsPartitionAssignor fills them (`task_sets: grouper`: partitionsForTask's key set;
 * ChangelogTopics' map, subtopology by subtopology) or in task order (`sorted`, as the harness of the
 * frozen parity sets did). Source partitions are in the Cluster metadata with one broker per
 * replica rack; changelog topics (and sources without replicas) are described through an
 * InternalTopicManager that answers from the same data. Warm-ups come back as standbys, as Kafka
 * sends them. For KIP-924, `standby_order` is the iteration order of the HashSet of TaskInfo that
 * StickyTaskAssignor places standbys in: TaskInfo has no hashCode, so that order is this JVM's
 * identity hashes, reported so that the reproduction can be run in the same order.
 */
public final class TaskAssignors {
    private TaskAssignors() {
    }

    public static void main(String[] args) throws Exception {
        Batch.run(TaskAssignors::assign);
    }

    /** One application's inputs, as StreamsPartitionAssignor has them before it calls the assignor. */
    private static final class Application {
        final AssignmentConfigs configs;
        final Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
        final Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask = new HashMap<>();
        final Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
        final Map<TopicPartition, TaskId> taskForPartition = new HashMap<>();
        final Map<TaskId, Long> endOffsetSums = new HashMap<>();
        final Set<TaskId> statefulTasks = new HashSet<>();
        final Map<TopicPartition, List<String>> replicaRacks = new HashMap<>();
        final Map<ProcessId, ClientState> clientStates = new HashMap<>();
        final Map<ProcessId, String> racks = new HashMap<>();
        final Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer = new HashMap<>();
        final Map<String, Node> brokers = new LinkedHashMap<>();
        final Cluster cluster;
        final InternalTopicManager topicManager;
        final Set<TaskId> allTasks;
        /** Tasks with state stores (KIP-924's TaskInfo.isStateful), logged or not. */
        final Set<TaskId> storeTasks;

        Application(JsonNode input) {
            configs = configs(input.get("configs"));
            Set<TaskId> stateful = new HashSet<>();
            Map<Integer, List<JsonNode>> bySubtopology = new TreeMap<>();
            for (JsonNode task : input.get("tasks")) {
                bySubtopology.computeIfAbsent(task.get("subtopology").asInt(), k -> new ArrayList<>()).add(task);
            }
            Map<Subtopology, List<JsonNode>> groups = new HashMap<>();
            bySubtopology.forEach((s, tasks) -> groups.put(new Subtopology(s, null), tasks));
            List<PartitionInfo> metadata = new ArrayList<>();
            for (Map.Entry<Subtopology, List<JsonNode>> group : groups.entrySet()) {
                for (JsonNode task : group.getValue()) {
                    TaskId id = new TaskId(task.get("subtopology").asInt(), task.get("partition").asInt());
                    Set<TopicPartition> source = partitions(task.get("source"));
                    partitionsForTask.put(id, source);
                    changelogPartitionsForTask.put(id, partitions(task.get("changelog")));
                    source.forEach(tp -> taskForPartition.put(tp, id));
                    for (JsonNode p : task.get("source")) {
                        Node[] replicas = replicas(p.get(2)).toArray(new Node[0]);
                        metadata.add(new PartitionInfo(p.get(0).asText(), p.get(1).asInt(), replicas.length > 0 ? replicas[0] : null, replicas, replicas));
                    }
                    if (task.get("stateful").asBoolean()) {
                        stateful.add(id);
                        endOffsetSums.put(id, task.get("end_offset_sum").asLong());
                    }
                }
            }
            // StreamsPartitionAssignor.populateTasksForMaps: the subtopologies' tasks from partitionsForTask
            partitionsForTask.keySet().forEach(id -> tasksForTopicGroup.computeIfAbsent(new Subtopology(id.subtopology(), null), k -> new HashSet<>()).add(id));
            // ChangelogTopics.setup: the stateful tasks subtopology by subtopology, then copied into the assignor's set;
            // only a task with a changelog is stateful there (stores that log nothing are not)
            Map<TaskId, Boolean> changelogPartitionsForStatefulTask = new HashMap<>();
            Set<TaskId> logged = new HashSet<>();
            for (Subtopology group : groups.keySet()) {
                for (TaskId id : tasksForTopicGroup.get(group)) {
                    if (stateful.contains(id) && !changelogPartitionsForTask.get(id).isEmpty()) {
                        changelogPartitionsForStatefulTask.put(id, true);
                        logged.add(id);
                    }
                }
            }
            storeTasks = stateful;
            if (input.path("task_sets").asText("grouper").equals("sorted")) {
                // the frozen parity sets' harness: both sets filled in task order
                statefulTasks.addAll(new TreeSet<>(logged));
                allTasks = new HashSet<>();
                allTasks.addAll(new TreeSet<>(partitionsForTask.keySet()));
            } else {
                statefulTasks.addAll(changelogPartitionsForStatefulTask.keySet());
                allTasks = partitionsForTask.keySet();
            }
            cluster = new Cluster("cluster", brokers.values(), metadata, Set.of(), Set.of());
            topicManager = new DescribedTopics(replicaRacks, brokers);
            for (JsonNode client : input.get("clients")) {
                ProcessId process = new ProcessId(UUID.fromString(client.get("process").asText()));
                Map<String, String> tags = new HashMap<>();
                client.get("tags").fields().forEachRemaining(e -> tags.put(e.getKey(), e.getValue().asText()));
                Optional<String> rack = client.hasNonNull("rack") ? Optional.of(client.get("rack").asText()) : Optional.empty();
                List<TopicPartition> owned = new ArrayList<>();
                client.get("owned").forEach(tp -> owned.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt())));
                Map<TaskId, Long> offsetSums = new HashMap<>();
                client.get("offset_sums").forEach(t -> offsetSums.put(new TaskId(t.get(0).asInt(), t.get(1).asInt()), t.get(2).asLong()));
                ClientState state = new ClientState(process, tags);
                Map<String, Optional<String>> consumerRacks = new TreeMap<>();
                for (int thread = 0; thread < client.get("threads").asInt(); thread++) {
                    String consumer = process.id() + "-consumer-" + thread;
                    // ClientMetadata.addConsumer: one more thread, and its owned partitions (all on the first)
                    state.incrementCapacity();
                    state.addOwnedPartitions(thread == 0 ? owned : List.of(), consumer);
                    // every thread of a process reports the process's task offset sums
                    state.addPreviousTasksAndOffsetSums(consumer, offsetSums);
                    consumerRacks.put(consumer, rack);
                }
                state.initializePrevTasks(taskForPartition, false);
                state.computeTaskLags(process, endOffsetSums);
                clientStates.put(process, state);
                rack.ifPresent(r -> racks.put(process, r));
                racksForProcessConsumer.put(process, consumerRacks);
            }
        }

        private Set<TopicPartition> partitions(JsonNode listed) {
            Set<TopicPartition> result = new HashSet<>();
            for (JsonNode p : listed) {
                TopicPartition tp = new TopicPartition(p.get(0).asText(), p.get(1).asInt());
                result.add(tp);
                List<String> racks = new ArrayList<>();
                p.get(2).forEach(r -> racks.add(r.asText()));
                replicaRacks.put(tp, racks);
            }
            return result;
        }

        private List<Node> replicas(JsonNode racks) {
            return brokersIn(racks, brokers);
        }
    }

    /** One broker per rack and position in a partition's replica list (rack#1, rack#2, ...). */
    static List<Node> brokersIn(JsonNode racks, Map<String, Node> brokers) {
        List<String> names = new ArrayList<>();
        racks.forEach(r -> names.add(r.asText()));
        return brokersIn(names, brokers);
    }

    static List<Node> brokersIn(List<String> racks, Map<String, Node> brokers) {
        List<Node> replicas = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String rack : racks) {
            int index = seen.merge(rack, 1, Integer::sum);
            replicas.add(brokers.computeIfAbsent(rack + "#" + index, k -> new Node(brokers.size(), "broker-" + k, 9092, rack)));
        }
        return replicas;
    }

    /** The Admin client's describeTopics, answered from the application's partitions (changelogs included). */
    private static final class DescribedTopics extends InternalTopicManager {
        private final Map<TopicPartition, List<String>> replicaRacks;
        private final Map<String, Node> brokers;

        DescribedTopics(Map<TopicPartition, List<String>> replicaRacks, Map<String, Node> brokers) {
            super(Time.SYSTEM, null, new StreamsConfig(Map.of(StreamsConfig.APPLICATION_ID_CONFIG, "app", StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9")));
            this.replicaRacks = replicaRacks;
            this.brokers = brokers;
        }

        @Override
        public Map<String, List<TopicPartitionInfo>> getTopicPartitionInfo(Set<String> topics) {
            Map<String, List<TopicPartitionInfo>> described = new HashMap<>();
            Map<TopicPartition, List<String>> sorted = new TreeMap<>(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
            sorted.putAll(replicaRacks);
            sorted.forEach((tp, racks) -> {
                if (topics.contains(tp.topic())) {
                    List<Node> replicas = brokersIn(racks, brokers);
                    described.computeIfAbsent(tp.topic(), k -> new ArrayList<>())
                        .add(new TopicPartitionInfo(tp.partition(), replicas.isEmpty() ? null : replicas.get(0), replicas, replicas));
                }
            });
            return described;
        }
    }

    private static AssignmentConfigs configs(JsonNode c) {
        List<String> tags = new ArrayList<>();
        c.get("tags").forEach(t -> tags.add(t.asText()));
        return new AssignmentConfigs(
            c.get("acceptable_recovery_lag").asLong(),
            c.get("max_warmup_replicas").asInt(),
            c.get("num_standby_replicas").asInt(),
            c.get("probing_rebalance_interval_ms").asLong(),
            tags,
            c.hasNonNull("traffic_cost") ? OptionalInt.of(c.get("traffic_cost").asInt()) : OptionalInt.empty(),
            c.hasNonNull("non_overlap_cost") ? OptionalInt.of(c.get("non_overlap_cost").asInt()) : OptionalInt.empty(),
            c.get("strategy").asText());
    }

    private static ObjectNode assign(JsonNode input) {
        Application app = new Application(input);
        String name = input.get("assignor").asText();
        if (name.equals("kip924_sticky")) {
            return kip924(app);
        }
        LegacyTaskAssignor assignor;
        switch (name) {
            case "high_availability": assignor = new HighAvailabilityTaskAssignor(); break;
            case "sticky": assignor = new LegacyStickyTaskAssignor(); break;
            default: throw new IllegalArgumentException("no task assignor " + name);
        }
        RackAwareTaskAssignor rackAware = new RackAwareTaskAssignor(app.cluster, app.partitionsForTask, app.changelogPartitionsForTask,
            app.tasksForTopicGroup, app.racksForProcessConsumer, app.topicManager, app.configs, Time.SYSTEM);
        boolean followup = assignor.assign(app.clientStates, app.allTasks, app.statefulTasks, rackAware, app.configs);
        ObjectNode result = Batch.JSON.createObjectNode();
        ObjectNode clients = result.putObject("clients");
        for (Map.Entry<ProcessId, ClientState> entry : new TreeMap<>(app.clientStates).entrySet()) {
            ObjectNode client = clients.putObject(entry.getKey().id().toString());
            tasks(client.putArray("active"), entry.getValue().activeTasks());
            tasks(client.putArray("standby"), entry.getValue().standbyTasks());
        }
        result.put("followup", followup);
        return result;
    }

    private static void tasks(ArrayNode into, Iterable<TaskId> tasks) {
        for (TaskId task : new TreeSet<>(toSet(tasks))) {
            into.addArray().add(task.subtopology()).add(task.partition());
        }
    }

    private static Set<TaskId> toSet(Iterable<TaskId> tasks) {
        Set<TaskId> set = new HashSet<>();
        tasks.forEach(set::add);
        return set;
    }

    /** KIP-924: the ApplicationState StreamsPartitionAssignor.buildApplicationState makes, then the public StickyTaskAssignor. */
    private static ObjectNode kip924(Application app) {
        ApplicationState state = kip924State(app);
        Map<TaskId, TaskInfo> tasks = state.allTasks();
        Set<TaskInfo> standbyOrder = tasks.values().stream()
            .filter(info -> info.topicPartitions().stream().anyMatch(TaskTopicPartition::isChangelog))
            .collect(Collectors.toSet());
        ObjectNode result = Batch.JSON.createObjectNode();
        ObjectNode clients = result.putObject("clients");
        Map<ProcessId, KafkaStreamsAssignment> byProcess = new TreeMap<>();
        for (KafkaStreamsAssignment assignment : new StickyTaskAssignor().assign(state).assignment()) {
            byProcess.put(assignment.processId(), assignment);
        }
        for (Map.Entry<ProcessId, KafkaStreamsAssignment> entry : byProcess.entrySet()) {
            ObjectNode client = clients.putObject(entry.getKey().id().toString());
            List<TaskId> active = new ArrayList<>();
            List<TaskId> standby = new ArrayList<>();
            for (AssignedTask task : entry.getValue().tasks().values()) {
                (task.type() == AssignedTask.Type.ACTIVE ? active : standby).add(task.id());
            }
            tasks(client.putArray("active"), active);
            tasks(client.putArray("standby"), standby);
        }
        result.put("followup", false);
        ArrayNode order = result.putArray("standby_order");
        for (TaskInfo info : standbyOrder) {
            order.addArray().add(info.id().subtopology()).add(info.id().partition());
        }
        return result;
    }

    /** The ApplicationState a case's KIP-924 assignor gets (StreamsPartitionAssignor.buildApplicationState's). */
    static ApplicationState kip924State(JsonNode input) {
        return kip924State(new Application(input));
    }

    private static ApplicationState kip924State(Application app) {
        Set<DefaultTaskTopicPartition> requiringRacks = new HashSet<>();
        boolean[] fetched = {false};
        Runnable fetchRacks = () -> {
            if (!fetched[0]) {
                RackUtils.annotateTopicPartitionsWithRackInfo(app.cluster, app.topicManager, requiringRacks);
                fetched[0] = true;
            }
        };
        Map<TaskId, TaskInfo> tasks = new HashMap<>();
        for (TaskId id : app.partitionsForTask.keySet()) {
            Set<TaskTopicPartition> partitions = new HashSet<>();
            Set<TopicPartition> source = app.partitionsForTask.get(id);
            Set<TopicPartition> changelog = app.changelogPartitionsForTask.get(id);
            for (TopicPartition tp : source) {
                DefaultTaskTopicPartition p = new DefaultTaskTopicPartition(tp, true, changelog.contains(tp), fetchRacks);
                requiringRacks.add(p);
                partitions.add(p);
            }
            for (TopicPartition tp : changelog) {
                DefaultTaskTopicPartition p = new DefaultTaskTopicPartition(tp, source.contains(tp), true, fetchRacks);
                requiringRacks.add(p);
                partitions.add(p);
            }
            boolean stateful = app.storeTasks.contains(id);
            tasks.put(id, new DefaultTaskInfo(id, stateful, stateful ? Set.of("store") : Set.of(), partitions));
        }
        return new Kip924State(app, tasks);
    }

    /** DefaultApplicationState's behaviour on the adapter's ClientStates (its constructor needs the leader's ClientMetadata). */
    private static final class Kip924State implements ApplicationState {
        private final Application app;
        private final Map<TaskId, TaskInfo> tasks;
        private final Map<Boolean, Map<ProcessId, KafkaStreamsState>> cached = new HashMap<>();

        Kip924State(Application app, Map<TaskId, TaskInfo> tasks) {
            this.app = app;
            this.tasks = java.util.Collections.unmodifiableMap(tasks);
        }

        @Override
        public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(boolean computeTaskLags) {
            return cached.computeIfAbsent(computeTaskLags, lags -> {
                Map<ProcessId, KafkaStreamsState> states = new HashMap<>();
                for (Map.Entry<ProcessId, ClientState> entry : app.clientStates.entrySet()) {
                    ClientState state = entry.getValue();
                    states.put(entry.getKey(), new DefaultKafkaStreamsState(
                        entry.getKey(), state.capacity(), state.clientTags(), state.previousActiveTasks(), state.previousStandbyTasks(),
                        state.taskIdsByPreviousConsumer(), Optional.empty(), lags ? Optional.of(state.taskLagTotals()) : Optional.empty(),
                        Optional.ofNullable(app.racks.get(entry.getKey()))));
                }
                return states;
            });
        }

        @Override
        public AssignmentConfigs assignmentConfigs() {
            return app.configs;
        }

        @Override
        public Map<TaskId, TaskInfo> allTasks() {
            return tasks;
        }
    }
}
