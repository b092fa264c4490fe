package kao.jvm;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListStreamsGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.LagInfo;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A test workload: one Kafka Streams application, several instances (KafkaStreams clients) in this JVM, each with
 * its own state directory, rack ({@code client.rack}), client tags and thread count. The topology is
 * {@code selectKey -> groupByKey -> count()}: two subtopologies, a repartition topic and the store {@code counts}
 * with its changelog.
 *
 * <p>Reads a JSON spec on stdin's first line: {"bootstrap", "application_id", "protocol" ("classic"|"streams"),
 * "input_topic", "partitions", "replication_factor" (the input topic is created with Kafka's Admin client unless it
 * exists; Streams' internal topics get the same replication factor), "state_dir", "num_standby_replicas",
 * "rack_aware_assignment_tags": [...], "task_offset_interval_ms" (streams only, optional: the broker's
 * group.streams.task.offset.interval.ms otherwise), "records", "keys",
 * "instances": [{"rack", "tags": {key: value}, "threads"}], and optionally "configs": {key: value} (put into every
 * instance's StreamsConfig after the runner's own settings, so they win: e.g. {@code task.assignor.class},
 * {@code kao.service.url} for the KIP-924 plug-in) and "group_configs": {key: value} (the GROUP resource's, below, e.g.
 * {@code streams.assignor.name}). Under the classic protocol the standby count and the tags are StreamsConfig settings;
 * under the streams protocol they are the group's configs (streams.num.standby.replicas,
 * streams.rack.aware.assignment.tags, streams.task.offset.interval.ms). The group's configs, with "group_configs" on
 * top, are set with incrementalAlterConfigs on the GROUP resource before any instance starts (under the classic
 * protocol only "group_configs", when given). "records" keyed records ("k<i>" with value "g<i % keys>", the key the
 * count groups by) are produced into the input topic once the instances run.
 *
 * <p>Once the group is stable, every instance RUNNING and agreeing with the group's view, every record processed
 * (committed offsets at the end offsets) and every local store caught up (these two only unless the spec says
 * "await_processing": false, for applications whose input other producers keep writing) (and, under the streams protocol, the
 * offsets the members report for their standbys equal their stores' positions), prints one JSON line (the state,
 * below). Then it reads commands, one JSON object a line, and answers each with the state once settled again:
 * {"command": "stop", "instance": i} (close it, leaving the group), {"command": "start", "instance": i} (start it
 * again on its state directory: the same process id; with "configs": {key: value}, these override the spec's
 * "configs" for this instance from now on, e.g. a rolling switch to a plug-in: stop i, start i with other configs),
 * {"command": "produce", "records": n} (n more records, answered once every record is processed),
 * {"command": "drain"} (answered once every record is processed, whatever "await_processing" says),
 * {"command": "state"}. A settle that does not happen within 120 s is answered {"error": why} (the runner goes on
 * reading commands), as is a command it cannot carry out. {"command": "metrics"} is answered at once with
 * {"metrics": {index: {broker id: bytes}}}: per instance, the sum over its consumers (each thread's main consumer,
 * the KIP-1071 one under the streams protocol, and its restore consumer: the metric group
 * {@code consumer-node-metrics} in {@link KafkaStreams#metrics()}) of Kafka's own {@code incoming-byte-total} by
 * the broker at the other end of each connection ({@link ConsumerGroupRunner#incomingBytesByBroker}); an instance
 * that was stopped counts what it received before (its figures at each stop are added to its later runs'). Ends
 * when stdin closes, closing each instance with a timeout and exiting.
 *
 * <p>The state: {"event", "instances": [{"index", "running", "process_id", "state", "rack", "tags", "configs" (what
 * its last "start" command gave, over the spec's "configs"), "rebalances" (times the instance entered REBALANCING),
 * "restored_records" and "restore_seconds" (its active stores' restoration, a StateRestoreListener's count), "threads", "active", "standby" (the tasks as Streams
 * reports them, metadataForLocalThreads), "thread_tasks": [{"thread", "consumer_client_id", "active", "standby"}],
 * "positions": {task: changelog offset sum of its local store}}],
 * "positions_at_stop": {index: positions when it was stopped}, "positions_before_start": {index: positions of the
 * running instances just before the last start}, "members" (the group's view: streams, each member's id, process id,
 * client id, current assignment and reported task offsets; classic, member id, client id, assigned partitions),
 * "changelog_end_offsets": {topic: [offset per partition]}, "topics": {"input", "repartition", "changelog"},
 * "partitions": {topic: [{"replica_racks", "leader_rack"} per partition]} (Admin describeTopics),
 * "configs": the settings applied}. Exit 1 when the application does not settle within 120 s.
 */
public final class StreamsAppRunner {
    private StreamsAppRunner() {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String STORE = "counts";
    private static final long SETTLE_MS = 120_000;

    private static JsonNode spec;
    private static String bootstrap;
    private static String application;
    private static String protocol;
    private static String input;
    private static String repartition;
    private static String changelog;
    private static int storeSubtopology;
    private static Admin admin;
    private static KafkaProducer<String, String> producer;
    private static final Map<Integer, KafkaStreams> instances = new TreeMap<>();
    private static final Map<Integer, String> processIds = new TreeMap<>();
    private static final Map<String, Object> positionsAtStop = new TreeMap<>();
    private static final Map<String, Object> positionsBeforeStart = new TreeMap<>();
    private static final Map<String, Object> applied = new LinkedHashMap<>();
    /** Per instance, the configs its last "start" command gave (over the spec's "configs"). */
    private static final Map<Integer, Map<String, String>> instanceConfigs = new TreeMap<>();
    /** Per instance, its incoming bytes by broker over its earlier runs (taken at each stop). */
    private static final Map<Integer, Map<String, Long>> bytesBefore = new TreeMap<>();
    private static long produced = 0;

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        spec = JSON.readTree(in.readLine());
        bootstrap = spec.get("bootstrap").asText();
        application = spec.get("application_id").asText();
        protocol = spec.get("protocol").asText();
        input = spec.get("input_topic").asText();
        repartition = application + "-" + STORE + "-repartition";
        changelog = application + "-" + STORE + "-changelog";
        Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(adminConfig);
        int status = 0;
        try {
            createInputTopic();
            if (protocol.equals("streams") || spec.hasNonNull("group_configs")) {
                setGroupConfigs();
            }
            storeSubtopology = subtopologyOfStore(topology());
            producer = new KafkaProducer<>(Workloads.producerConfig(bootstrap, StringSerializer.class));
            for (int i = 0; i < spec.get("instances").size(); i++) {
                start(i);
            }
            settle();
            produce(spec.get("records").asInt());
            print("ready");
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                String name = "";
                try {
                    JsonNode command = JSON.readTree(line);
                    name = command.path("command").asText("");
                    switch (name) {
                        case "stop" -> {
                            int index = command.path("instance").asInt(-1);
                            if (!instances.containsKey(index)) {
                                throw new IllegalArgumentException("no running instance " + command.path("instance"));
                            }
                            positionsAtStop.put(String.valueOf(index), positions(instances.get(index)));
                            bytesBefore.put(index, incomingBytes(index));
                            instances.remove(index).close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                                    .withTimeout(Duration.ofSeconds(30)));
                        }
                        case "start" -> {
                            int index = command.path("instance").asInt(-1);
                            if (index < 0 || index >= spec.get("instances").size() || instances.containsKey(index)) {
                                throw new IllegalArgumentException("no stopped instance " + command.path("instance"));
                            }
                            if (command.hasNonNull("configs")) {
                                Map<String, String> configs = new LinkedHashMap<>();
                                command.get("configs").fields().forEachRemaining(c -> configs.put(c.getKey(), c.getValue().asText()));
                                instanceConfigs.put(index, configs);
                            }
                            positionsBeforeStart.clear();
                            for (Map.Entry<Integer, KafkaStreams> running : instances.entrySet()) {
                                positionsBeforeStart.put(String.valueOf(running.getKey()), positions(running.getValue()));
                            }
                            start(index);
                        }
                        case "produce" -> produce(command.path("records").asInt());
                        case "state" -> {
                        }
                        case "drain" -> {
                            settle(true);
                            print("drain");
                            continue;
                        }
                        case "metrics" -> {
                            Map<String, Object> metrics = new TreeMap<>();
                            for (int i = 0; i < spec.get("instances").size(); i++) {
                                if (instances.containsKey(i) || bytesBefore.containsKey(i)) {
                                    metrics.put(String.valueOf(i), incomingBytes(i));
                                }
                            }
                            System.out.println(JSON.writeValueAsString(Map.of("metrics", metrics)));
                            System.out.flush();
                            continue;
                        }
                        default -> throw new IllegalArgumentException("unknown command " + JSON.writeValueAsString(command.path("command"))
                                + ": expected stop, start, produce, state, drain or metrics");
                    }
                    settle();
                    print(name);
                } catch (Exception failed) {
                    String why = failed instanceof SettleTimeout ? failed.getMessage() : "after " + name + ": " + failed;
                    System.out.println(JSON.writeValueAsString(Map.of("error", why)));
                    System.out.flush();
                }
            }
        } catch (SettleTimeout timeout) {
            System.err.println(timeout.getMessage());
            status = 1;
        } finally {
            for (KafkaStreams streams : instances.values()) {
                streams.close(Duration.ofSeconds(20));
            }
            if (producer != null) {
                producer.close(Duration.ofSeconds(10));
            }
            admin.close(Duration.ofSeconds(10));
        }
        System.exit(status);
    }

    private static final class SettleTimeout extends Exception {
        private static final long serialVersionUID = 1L;

        SettleTimeout(String message) {
            super(message);
        }
    }

    private static void createInputTopic() throws Exception {
        Workloads.createTopics(admin, List.of(new NewTopic(input, spec.get("partitions").asInt(), (short) spec.get("replication_factor").asInt())));
    }

    private static String tags() {
        List<String> tags = new ArrayList<>();
        spec.get("rack_aware_assignment_tags").forEach(t -> tags.add(t.asText()));
        return String.join(",", tags);
    }

    /** The group's configs, before any member joins (the GROUP resource takes them before the group exists). */
    private static void setGroupConfigs() throws Exception {
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, application);
        Map<String, String> configs = new LinkedHashMap<>();
        if (protocol.equals("streams")) {
            configs.put("streams.num.standby.replicas", spec.get("num_standby_replicas").asText());
            configs.put("streams.rack.aware.assignment.tags", tags());
            if (spec.hasNonNull("task_offset_interval_ms")) {
                configs.put("streams.task.offset.interval.ms", spec.get("task_offset_interval_ms").asText());
            }
        }
        if (spec.hasNonNull("group_configs")) {
            spec.get("group_configs").fields().forEachRemaining(c -> configs.put(c.getKey(), c.getValue().asText()));
        }
        List<AlterConfigOp> ops = new ArrayList<>();
        configs.forEach((key, value) -> ops.add(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET)));
        admin.incrementalAlterConfigs(Map.of(group, ops)).all().get(30, TimeUnit.SECONDS);
        applied.putAll(configs);
    }

    private static Topology topology() {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .selectKey((key, value) -> value)
                .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
                .count(Materialized.as(STORE));
        return builder.build();
    }

    private static int subtopologyOfStore(Topology topology) {
        for (TopologyDescription.Subtopology subtopology : topology.describe().subtopologies()) {
            for (TopologyDescription.Node node : subtopology.nodes()) {
                if (node instanceof TopologyDescription.Processor processor && processor.stores().contains(STORE)) {
                    return subtopology.id();
                }
            }
        }
        throw new IllegalStateException("no subtopology has the store " + STORE);
    }

    private static Properties streamsConfig(int index) {
        JsonNode instance = spec.get("instances").get(index);
        Properties config = new Properties();
        config.put(StreamsConfig.APPLICATION_ID_CONFIG, application);
        config.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        config.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, instance.get("threads").asInt());
        config.put(StreamsConfig.STATE_DIR_CONFIG, new File(spec.get("state_dir").asText(), "instance-" + index).getPath());
        config.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        config.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 500);
        config.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, spec.get("replication_factor").asInt());
        config.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        config.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        config.put("client.rack", instance.get("rack").asText());
        instance.get("tags").fields().forEachRemaining(tag -> config.put(StreamsConfig.CLIENT_TAG_PREFIX + tag.getKey(), tag.getValue().asText()));
        if (protocol.equals("classic")) {
            config.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, spec.get("num_standby_replicas").asInt());
            config.put(StreamsConfig.RACK_AWARE_ASSIGNMENT_TAGS_CONFIG, tags());
            config.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 500);
            applied.put("num.standby.replicas", spec.get("num_standby_replicas").asInt());
            applied.put("rack.aware.assignment.tags", tags());
        }
        applied.put("statestore.cache.max.bytes", 0);
        applied.put("commit.interval.ms", 500);
        Map<String, String> extra = new LinkedHashMap<>();
        if (spec.hasNonNull("configs")) {
            spec.get("configs").fields().forEachRemaining(c -> extra.put(c.getKey(), c.getValue().asText()));
            applied.putAll(extra);
        }
        extra.putAll(instanceConfigs.getOrDefault(index, Map.of()));
        config.putAll(extra);
        return config;
    }

    /** The instance's consumers' incoming bytes by broker: the running instance's, plus its earlier runs'. */
    private static Map<String, Long> incomingBytes(int index) {
        Map<String, Long> out = new TreeMap<>(bytesBefore.getOrDefault(index, Map.of()));
        KafkaStreams streams = instances.get(index);
        if (streams != null) {
            ConsumerGroupRunner.incomingBytesByBroker(streams.metrics(), ConsumerGroupRunner.brokers(admin, bootstrap))
                .forEach((broker, bytes) -> out.merge(broker, bytes, Long::sum));
        }
        return out;
    }

    private static void start(int index) {
        KafkaStreams streams = new KafkaStreams(topology(), streamsConfig(index));
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.REBALANCING) {
                REBALANCES.computeIfAbsent(index, i -> new AtomicLong()).incrementAndGet();
            }
        });
        streams.setGlobalStateRestoreListener(new RestoreCounter(index));
        streams.setUncaughtExceptionHandler(error -> {
            error.printStackTrace();
            Runtime.getRuntime().halt(1);
            return null;
        });
        streams.start();
        instances.put(index, streams);
    }

    /** Per instance: the times it entered REBALANCING (a rebalance seen by that instance). */
    private static final Map<Integer, AtomicLong> REBALANCES = new java.util.concurrent.ConcurrentHashMap<>();
    /** Per instance: records restored into its active stores (not standby updates), and the nanoseconds spent. */
    private static final Map<Integer, long[]> RESTORED = new java.util.concurrent.ConcurrentHashMap<>();

    /** Counts what an instance restores: records, and the time from each store partition's start to its end. */
    private static final class RestoreCounter implements org.apache.kafka.streams.processor.StateRestoreListener {
        private final int index;
        private final Map<TopicPartition, Long> started = new java.util.concurrent.ConcurrentHashMap<>();

        RestoreCounter(int index) {
            this.index = index;
        }

        @Override
        public void onRestoreStart(TopicPartition partition, String store, long startingOffset, long endingOffset) {
            started.put(partition, System.nanoTime());
        }

        @Override
        public void onBatchRestored(TopicPartition partition, String store, long batchEndOffset, long numRestored) {
            synchronized (RESTORED) {
                RESTORED.computeIfAbsent(index, i -> new long[2])[0] += numRestored;
            }
        }

        @Override
        public void onRestoreEnd(TopicPartition partition, String store, long totalRestored) {
            Long begun = started.remove(partition);
            if (begun != null) {
                synchronized (RESTORED) {
                    RESTORED.computeIfAbsent(index, i -> new long[2])[1] += System.nanoTime() - begun;
                }
            }
        }
    }

    private static void produce(int records) throws Exception {
        int keys = spec.get("keys").asInt();
        for (int i = 0; i < records; i++) {
            long n = produced++;
            producer.send(new ProducerRecord<>(input, "k" + n, "g" + (n % keys)));
        }
        producer.flush();
        settle();
    }

    // ---- what the instances and the group say ----

    /** The process id of an instance, from its threads' client ids: "<application id>-<process id>-StreamThread-N". */
    private static String processId(KafkaStreams streams) {
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            String name = thread.threadName();
            int at = name.indexOf("-StreamThread-");
            if (at > application.length() + 1) {
                return name.substring(application.length() + 1, at);
            }
        }
        return null;
    }

    private static String task(org.apache.kafka.streams.processor.TaskId id) {
        return id.subtopology() + "_" + id.partition();
    }

    private static TreeSet<String> tasks(Collection<TaskMetadata> metadata) {
        TreeSet<String> out = new TreeSet<>(java.util.Comparator.comparing((String t) -> Integer.parseInt(t.split("_")[0]))
                .thenComparingInt(t -> Integer.parseInt(t.split("_")[1])));
        metadata.forEach(t -> out.add(task(t.taskId())));
        return out;
    }

    /** Each local store partition's changelog position, by task (the offset sums Streams reports come from the same place). */
    private static Map<String, Long> positions(KafkaStreams streams) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<String, Map<Integer, LagInfo>> store : streams.allLocalStorePartitionLags().entrySet()) {
            for (Map.Entry<Integer, LagInfo> partition : store.getValue().entrySet()) {
                out.merge(storeSubtopology + "_" + partition.getKey(), partition.getValue().currentOffsetPosition(), Long::sum);
            }
        }
        return out;
    }

    private static long lagOf(KafkaStreams streams) {
        long lag = 0;
        for (Map<Integer, LagInfo> store : streams.allLocalStorePartitionLags().values()) {
            for (LagInfo info : store.values()) {
                lag += info.offsetLag();
            }
        }
        return lag;
    }

    private static Map<String, Object> instanceState(int index) {
        JsonNode instance = spec.get("instances").get(index);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("index", index);
        KafkaStreams streams = instances.get(index);
        out.put("running", streams != null);
        out.put("process_id", processIds.get(index));
        out.put("state", streams == null ? null : streams.state().name());
        out.put("rack", instance.get("rack").asText());
        out.put("tags", JSON.convertValue(instance.get("tags"), Map.class));
        out.put("configs", instanceConfigs.getOrDefault(index, Map.of()));
        out.put("rebalances", REBALANCES.getOrDefault(index, new AtomicLong()).get());
        long[] restored = RESTORED.getOrDefault(index, new long[2]);
        out.put("restored_records", restored[0]);
        out.put("restore_seconds", restored[1] / 1e9);
        out.put("threads", instance.get("threads").asInt());
        TreeSet<String> active = tasks(List.of());
        TreeSet<String> standby = tasks(List.of());
        List<Map<String, Object>> threads = new ArrayList<>();
        if (streams != null) {
            List<ThreadMetadata> sorted = new ArrayList<>(streams.metadataForLocalThreads());
            sorted.sort(java.util.Comparator.comparing(ThreadMetadata::threadName));
            for (ThreadMetadata thread : sorted) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("thread", thread.threadName());
                entry.put("consumer_client_id", thread.consumerClientId());
                entry.put("active", tasks(thread.activeTasks()));
                entry.put("standby", tasks(thread.standbyTasks()));
                active.addAll(tasks(thread.activeTasks()));
                standby.addAll(tasks(thread.standbyTasks()));
                threads.add(entry);
            }
            out.put("positions", positions(streams));
        }
        out.put("active", active);
        out.put("standby", standby);
        out.put("thread_tasks", threads);
        return out;
    }

    private static List<Map<String, Object>> members() throws Exception {
        List<Map<String, Object>> out = new ArrayList<>();
        if (protocol.equals("streams")) {
            StreamsGroupDescription group = admin.describeStreamsGroups(List.of(application)).all().get(10, TimeUnit.SECONDS).get(application);
            for (StreamsGroupMemberDescription member : group.members()) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("member_id", member.memberId());
                entry.put("process_id", member.processId());
                entry.put("client_id", member.clientId());
                entry.put("active", taskIds(member.assignment().activeTasks()));
                entry.put("standby", taskIds(member.assignment().standbyTasks()));
                entry.put("warmup", taskIds(member.assignment().warmupTasks()));
                Map<String, Long> offsets = new TreeMap<>();
                member.taskOffsets().forEach(o -> offsets.put(o.subtopologyId() + "_" + o.partition(), o.offset()));
                entry.put("task_offsets", offsets);
                out.add(entry);
            }
            out.sort(java.util.Comparator.comparing((Map<String, Object> m) -> (String) m.get("member_id")));
            return out;
        }
        ConsumerGroupDescription group = admin.describeConsumerGroups(List.of(application)).all().get(10, TimeUnit.SECONDS).get(application);
        group.members().forEach(member -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("member_id", member.consumerId());
            entry.put("client_id", member.clientId());
            entry.put("assignment", Describe.partitions(new ArrayList<>(member.assignment().topicPartitions())));
            out.add(entry);
        });
        out.sort(java.util.Comparator.comparing((Map<String, Object> m) -> (String) m.get("member_id")));
        return out;
    }

    private static List<String> taskIds(List<StreamsGroupMemberAssignment.TaskIds> tasks) {
        List<String> out = new ArrayList<>();
        for (StreamsGroupMemberAssignment.TaskIds subtopology : tasks) {
            for (int partition : subtopology.partitions()) {
                out.add(subtopology.subtopologyId() + "_" + partition);
            }
        }
        out.sort(java.util.Comparator.comparing((String t) -> Integer.parseInt(t.split("_")[0])).thenComparingInt(t -> Integer.parseInt(t.split("_")[1])));
        return out;
    }

    private static Map<String, Object> endOffsets(List<String> topics) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (String topic : topics) {
            int partitions = admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).partitions().size();
            Map<TopicPartition, OffsetSpec> wanted = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                wanted.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            var found = admin.listOffsets(wanted).all().get(10, TimeUnit.SECONDS);
            List<Long> offsets = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                offsets.add(found.get(new TopicPartition(topic, p)).offset());
            }
            out.put(topic, offsets);
        }
        return out;
    }

    /** Each partition's replicas' racks and its leader's rack, in partition order: {topic: [{"replica_racks", "leader_rack"}]}. */
    private static Map<String, Object> partitions(List<String> topics) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (var topic : admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS).entrySet()) {
            List<Map<String, Object>> partitions = new ArrayList<>();
            List<org.apache.kafka.common.TopicPartitionInfo> infos = new ArrayList<>(topic.getValue().partitions());
            infos.sort(java.util.Comparator.comparingInt(org.apache.kafka.common.TopicPartitionInfo::partition));
            for (var info : infos) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("replica_racks", info.replicas().stream().map(org.apache.kafka.common.Node::rack).toList());
                entry.put("leader_rack", info.leader() == null ? null : info.leader().rack());
                partitions.add(entry);
            }
            out.put(topic.getKey(), partitions);
        }
        return out;
    }

    private static Map<TopicPartition, OffsetAndMetadata> committed() throws Exception {
        if (protocol.equals("streams")) {
            return admin.listStreamsGroupOffsets(Map.of(application, new ListStreamsGroupOffsetsSpec())).partitionsToOffsetAndMetadata(application)
                    .get(10, TimeUnit.SECONDS);
        }
        return admin.listConsumerGroupOffsets(application).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
    }

    // ---- settling ----

    private static void settle() throws Exception {
        settle(spec.path("await_processing").asBoolean(true));
    }

    /** Until settled; with {@code processing}, every record processed and every store caught up as well. */
    private static void settle(boolean processing) throws Exception {
        long deadline = System.currentTimeMillis() + SETTLE_MS;
        String why = "";
        while (System.currentTimeMillis() < deadline) {
            Thread.sleep(300);
            try {
                why = unsettled(processing);
            } catch (ExecutionException | org.apache.kafka.common.errors.TimeoutException notYet) {
                why = "Kafka answered " + notYet;
            }
            if (why == null) {
                return;
            }
        }
        throw new SettleTimeout("the application " + application + " did not settle within " + SETTLE_MS / 1000 + " s: " + why);
    }

    /** Why the application is not settled, or null. */
    private static String unsettled(boolean processing) throws Exception {
        int threads = 0;
        Map<String, TreeSet<String>> activeByProcess = new HashMap<>();
        Map<String, TreeSet<String>> standbyByProcess = new HashMap<>();
        Map<String, Set<TopicPartition>> partitionsByClient = new HashMap<>();
        Map<String, Map<String, Long>> positionsByProcess = new HashMap<>();
        List<String> activeTasks = new ArrayList<>();
        for (Map.Entry<Integer, KafkaStreams> entry : instances.entrySet()) {
            KafkaStreams streams = entry.getValue();
            if (streams.state() != KafkaStreams.State.RUNNING) {
                return "instance " + entry.getKey() + " is " + streams.state();
            }
            String process = processId(streams);
            if (process == null) {
                return "instance " + entry.getKey() + " has no stream thread";
            }
            processIds.put(entry.getKey(), process);
            threads += spec.get("instances").get(entry.getKey()).get("threads").asInt();
            TreeSet<String> active = activeByProcess.computeIfAbsent(process, p -> new TreeSet<>());
            TreeSet<String> standby = standbyByProcess.computeIfAbsent(process, p -> new TreeSet<>());
            for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
                Set<TopicPartition> partitions = new java.util.HashSet<>();
                for (TaskMetadata task : thread.activeTasks()) {
                    active.add(task(task.taskId()));
                    activeTasks.add(task(task.taskId()));
                    partitions.addAll(task.topicPartitions());
                }
                thread.standbyTasks().forEach(t -> standby.add(task(t.taskId())));
                partitionsByClient.put(thread.consumerClientId(), partitions);
            }
            if (processing && lagOf(streams) != 0) {
                return "instance " + entry.getKey() + " has store partitions behind their changelog";
            }
            positionsByProcess.put(process, positions(streams));
        }
        int partitions = spec.get("partitions").asInt();
        if (activeTasks.size() != 2 * partitions || new TreeSet<>(activeTasks).size() != 2 * partitions) {
            return "the instances run " + activeTasks.size() + " active tasks, not each of the " + 2 * partitions + " once";
        }
        if (protocol.equals("streams")) {
            StreamsGroupDescription group = admin.describeStreamsGroups(List.of(application)).all().get(10, TimeUnit.SECONDS).get(application);
            if (!group.groupState().toString().equalsIgnoreCase("Stable") || group.members().size() != threads) {
                return "the group is " + group.groupState() + " with " + group.members().size() + " members";
            }
            Map<String, TreeSet<String>> active = new HashMap<>();
            Map<String, TreeSet<String>> standby = new HashMap<>();
            Map<String, Map<String, Long>> reported = new HashMap<>();
            for (StreamsGroupMemberDescription member : group.members()) {
                active.computeIfAbsent(member.processId(), p -> new TreeSet<>()).addAll(taskIds(member.assignment().activeTasks()));
                standby.computeIfAbsent(member.processId(), p -> new TreeSet<>()).addAll(taskIds(member.assignment().standbyTasks()));
                for (StreamsGroupMemberDescription.TaskOffset offset : member.taskOffsets()) {
                    reported.computeIfAbsent(member.processId(), p -> new HashMap<>())
                            .merge(offset.subtopologyId() + "_" + offset.partition(), offset.offset(), Math::max);
                }
            }
            if (!active.equals(activeByProcess) || !standby.equals(standbyByProcess)) {
                return "the group's assignment " + active + " / " + standby + " is not what the instances run " + activeByProcess + " / " + standbyByProcess;
            }
            // the offsets the members report for their standbys are their stores' positions (reported every
            // streams.task.offset.interval.ms)
            for (Map.Entry<String, TreeSet<String>> process : standby.entrySet()) {
                for (String task : process.getValue()) {
                    Long sent = reported.getOrDefault(process.getKey(), Map.of()).get(task);
                    Long position = positionsByProcess.get(process.getKey()).get(task);
                    if (sent == null || !sent.equals(position)) {
                        return "process " + process.getKey() + " reported " + sent + " for its standby " + task + ", its store is at " + position;
                    }
                }
            }
        } else {
            ConsumerGroupDescription group = admin.describeConsumerGroups(List.of(application)).all().get(10, TimeUnit.SECONDS).get(application);
            if (!group.groupState().toString().equalsIgnoreCase("Stable") || group.members().size() != threads) {
                return "the group is " + group.groupState() + " with " + group.members().size() + " members";
            }
            for (var member : group.members()) {
                Set<TopicPartition> running = partitionsByClient.get(member.clientId());
                if (running == null || !running.equals(member.assignment().topicPartitions())) {
                    return "member " + member.clientId() + " is assigned " + member.assignment().topicPartitions() + " but runs " + running;
                }
            }
        }
        if (!processing) {
            return null;
        }
        Map<String, Object> ends = endOffsets(List.of(input, repartition));
        Map<TopicPartition, OffsetAndMetadata> committed = committed();
        for (Map.Entry<String, Object> topic : ends.entrySet()) {
            List<?> offsets = (List<?>) topic.getValue();
            for (int p = 0; p < offsets.size(); p++) {
                OffsetAndMetadata done = committed.get(new TopicPartition(topic.getKey(), p));
                long end = ((Number) offsets.get(p)).longValue();
                if (end > 0 && (done == null || done.offset() < end)) {
                    return "partition " + topic.getKey() + "-" + p + " is committed at " + (done == null ? null : done.offset()) + " of " + end;
                }
            }
        }
        return null;
    }

    private static void print(String event) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("event", event);
        List<Map<String, Object>> states = new ArrayList<>();
        for (int i = 0; i < spec.get("instances").size(); i++) {
            states.add(instanceState(i));
        }
        out.put("instances", states);
        out.put("positions_at_stop", positionsAtStop);
        out.put("positions_before_start", positionsBeforeStart);
        out.put("members", members());
        out.put("changelog_end_offsets", endOffsets(List.of(changelog)));
        out.put("topics", Map.of("input", input, "repartition", repartition, "changelog", changelog));
        out.put("partitions", partitions(List.of(input, repartition, changelog)));
        out.put("store_subtopology", storeSubtopology);
        out.put("produced", produced);
        out.put("configs", applied);
        System.out.println(JSON.writeValueAsString(out));
        System.out.flush();
    }
}
