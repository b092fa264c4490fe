package kao.jvm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A test workload: the consumers of one group in this JVM, each polling on its own thread.
 *
 * <p>Reads a JSON spec on stdin's first line: {"bootstrap", "topics": {name: partitions} (created first with Kafka's
 * Admin client, with "replication_factor" replicas (default 3), unless they exist), "group", "protocol"
 * ("classic"|"consumer"), "assignor" (a classic strategy's class name, or the KIP-848 server assignor's name: absent or
 * null, the consumers name none and the coordinator uses its default, the first of {@code group.consumer.assignors}),
 * "members": [{"rack", "topics": [...]}], and optionally "configs": {key: value} (put into every consumer's config after
 * the runner's own settings, so they win: e.g. {@code partition.assignment.strategy}, {@code auto.offset.reset},
 * {@code kao.service.url} for a client-side plug-in) and "settle_timeout_ms" (default 120000)}. Member i's client id is
 * "&lt;group&gt;-i"; a classic member heartbeats every 500 ms.
 *
 * <p>Once the group is Stable (Admin) and every consumer holds the partitions the coordinator lists for it, prints one
 * JSON line, the state (below); exit 1 when that does not happen within the settle timeout. Then it reads commands,
 * one JSON object a line, each answered with one JSON line:
 * <ul>
 * <li>{"command": "state"}: the state once settled;</li>
 * <li>{"command": "add", "rack": r, "topics": [...], "configs": {key: value} (optional: over the spec's; a null value
 * takes the key out)}: a new member
 * (the next index), then the state once settled;</li>
 * <li>{"command": "drain"}: the state once settled and every partition of the spec's topics consumed to the end offset
 * it had when the command came;</li>
 * <li>{"command": "remove", "index": i}: member i closes (it leaves the group), then the state once settled;</li>
 * <li>{"command": "produce", "records": n}: n records (keyless, 200-byte values) spread round-robin over every partition
 * of the spec's topics, in topic then partition order; the state once settled and every record produced here
 * consumed (each partition's consumed position at or past the offset after the last record produced to it; with
 * Kafka's default {@code auto.offset.reset=latest} a member that gets a partition nobody committed yet starts at its
 * end and may skip records: give {@code auto.offset.reset=earliest} in "configs" when every record must be consumed);</li>
 * <li>{"command": "describe"}: at once, the coordinator's view, settled or not: {"group_state", "assignor" (the
 * preferred server assignor it lists), "group_epoch", "target_assignment_epoch", "members"};</li>
 * <li>{"command": "metrics"}: at once, {"metrics": {index: {broker id: bytes}}}: per member (removed ones with their
 * figures when they closed), the sum of its consumer's {@code incoming-byte-total} in metric group
 * {@code consumer-node-metrics}, by the broker at the other end of each connection ({@link #incomingBytesByBroker}).</li>
 * </ul>
 * A command may carry its own "settle_timeout_ms" (over the spec's). The state also gives the coordinator's view
 * ("coordinator": as the describe command answers it, without its members).
 * A settle that does not happen within the settle timeout is answered {"error": why} (the runner goes on reading
 * commands), as is a command it cannot read. Ends when stdin closes: closes every consumer and exits.
 *
 * <p>The state: {"members": [{"index", "member_id", "client_id", "rack", "assignment": [[topic, partition]],
 * "consumed" (records polled so far)}] (the live members, by index), "removed": [{"index", "member_id", "consumed"}],
 * "consumed" (the group's total, removed members included; a record polled twice across a rebalance counts twice),
 * "produced" (records the produce commands wrote), "consumed_to": {topic: [the next offset after the highest consumed,
 * per partition]}, "topics": {name: [{"partition", "leader_rack", "replica_racks"}]} (the topics as Kafka placed them),
 * "topic_ids": {name: topic id} (how the KIP-848 coordinator names them)}.
 */
public final class ConsumerGroupRunner {
    private ConsumerGroupRunner() {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int VALUE_BYTES = 200;

    /** One consumer of the group, on its own thread. */
    private static final class Member {
        final int index;
        final String rack;
        final List<String> topics;
        final String clientId;
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicLong consumed = new AtomicLong();
        volatile Set<TopicPartition> held;
        volatile String memberId;
        volatile KafkaConsumer<byte[], byte[]> consumer;
        /** Its incoming bytes by broker, taken when it closed. */
        volatile Map<String, Long> bytesAtClose;
        Thread thread;

        Member(int index, String rack, List<String> topics, String clientId) {
            this.index = index;
            this.rack = rack;
            this.topics = topics;
            this.clientId = clientId;
        }

        boolean live() {
            return running.get();
        }
    }

    private static JsonNode spec;
    private static String bootstrap;
    private static String group;
    private static String protocol;
    private static String assignor;
    private static long settleMs;
    private static Admin admin;
    private static KafkaProducer<byte[], byte[]> producer;
    private static long produced = 0;
    private static final List<Member> members = new ArrayList<>();
    /** Per partition of the spec's topics, the offset after the highest record any member consumed. */
    private static final Map<TopicPartition, Long> consumedTo = new ConcurrentHashMap<>();
    /** Per partition, the offset after the last record the produce commands wrote: what settling waits for. */
    private static final Map<TopicPartition, Long> producedTo = new HashMap<>();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        spec = JSON.readTree(in.readLine());
        bootstrap = spec.get("bootstrap").asText();
        group = spec.get("group").asText();
        protocol = spec.get("protocol").asText();
        assignor = spec.hasNonNull("assignor") ? spec.get("assignor").asText() : null;
        settleMs = spec.hasNonNull("settle_timeout_ms") ? spec.get("settle_timeout_ms").asLong() : 120_000;
        Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        admin = Admin.create(adminConfig);
        int status = 0;
        try {
            createTopics();
            for (JsonNode member : spec.get("members")) {
                add(member);
            }
            String why = settle(settleMs);
            if (why != null) {
                System.err.println("the group " + group + " did not settle within " + settleMs / 1000 + " s: " + why);
                status = 1;
            } else {
                print(state());
                String line;
                while ((line = in.readLine()) != null) {
                    if (!line.isBlank()) {
                        print(command(line));
                    }
                }
            }
        } finally {
            for (Member member : members) {
                member.running.set(false);
            }
            for (Member member : members) {
                member.thread.join(15_000);
            }
            if (producer != null) {
                producer.close(Duration.ofSeconds(10));
            }
            admin.close(Duration.ofSeconds(10));
        }
        System.exit(status);
    }

    private static void print(Map<String, Object> answer) throws Exception {
        System.out.println(JSON.writeValueAsString(answer));
        System.out.flush();
    }

    /** One command's answer: the state once settled, the metrics, or {"error": why}. */
    private static Map<String, Object> command(String line) {
        try {
            JsonNode command = JSON.readTree(line);
            String name = command.path("command").asText("");
            switch (name) {
                case "state" -> {
                }
                case "add" -> add(command);
                case "remove" -> {
                    int index = command.path("index").asInt(-1);
                    if (index < 0 || index >= members.size() || !members.get(index).live()) {
                        return Map.of("error", "no live member " + command.path("index"));
                    }
                    remove(members.get(index));
                }
                case "produce" -> produce(command.path("records").asInt());
                case "drain" -> drain();
                case "metrics" -> {
                    return Map.of("metrics", metrics());
                }
                case "describe" -> {
                    return describe(true);
                }
                default -> {
                    return Map.of("error", "unknown command " + JSON.writeValueAsString(command.path("command"))
                        + ": expected state, add, remove, produce, drain, describe or metrics");
                }
            }
            long timeout = command.hasNonNull("settle_timeout_ms") ? command.get("settle_timeout_ms").asLong() : settleMs;
            String why = settle(timeout);
            if (why != null) {
                return Map.of("error", "the group " + group + " did not settle within " + timeout / 1000 + " s after " + name + ": " + why);
            }
            return state();
        } catch (Exception failure) {
            return Map.of("error", failure.toString());
        }
    }

    private static void createTopics() throws Exception {
        List<NewTopic> wanted = new ArrayList<>();
        short replicas = (short) (spec.has("replication_factor") ? spec.get("replication_factor").asInt() : 3);
        spec.get("topics").fields().forEachRemaining(t -> wanted.add(new NewTopic(t.getKey(), t.getValue().asInt(), replicas)));
        Workloads.createTopics(admin, wanted);
    }

    private static Properties consumerConfig(Member member) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, member.clientId);
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        if (protocol.equals("classic")) {
            config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor);
            config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
        } else if (assignor != null) {
            config.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor);
        }
        if (member.rack != null) {
            config.put(ConsumerConfig.CLIENT_RACK_CONFIG, member.rack);
        }
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        if (spec.hasNonNull("configs")) {
            putConfigs(config, spec.get("configs"));
        }
        return config;
    }

    /** A new member (the next index) from {"rack", "topics"}, polling on its own thread. */
    private static void add(JsonNode described) {
        int index = members.size();
        List<String> topics = new ArrayList<>();
        described.get("topics").forEach(t -> topics.add(t.asText()));
        Member member = new Member(index, described.hasNonNull("rack") ? described.get("rack").asText() : null, topics, group + "-" + index);
        Properties config = consumerConfig(member);
        if (described.hasNonNull("configs")) {  // this member's own settings over the spec's (e.g. group.remote.assignor)
            putConfigs(config, described.get("configs"));
        }
        member.thread = new Thread(() -> {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
                member.consumer = consumer;
                consumer.subscribe(topics);
                while (member.running.get()) {
                    for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                        member.consumed.incrementAndGet();
                        consumedTo.merge(new TopicPartition(record.topic(), record.partition()), record.offset() + 1, Math::max);
                    }
                    member.held = Set.copyOf(consumer.assignment());
                    member.memberId = consumer.groupMetadata().memberId();
                }
                member.bytesAtClose = incomingBytesByBroker(consumer.metrics(), brokers());
            }
        }, "consumer-" + index);
        member.thread.setUncaughtExceptionHandler((t, error) -> {
            error.printStackTrace();
            Runtime.getRuntime().halt(1);
        });
        members.add(member);
        member.thread.start();
    }

    private static void remove(Member member) throws InterruptedException {
        member.running.set(false);
        member.thread.join(60_000);
    }

    private static void produce(int records) throws Exception {
        if (producer == null) {
            producer = new KafkaProducer<>(Workloads.producerConfig(bootstrap, ByteArraySerializer.class));
        }
        List<TopicPartition> partitions = new ArrayList<>();
        new TreeMap<String, JsonNode>(toMap(spec.get("topics"))).forEach((topic, count) -> {
            for (int p = 0; p < count.asInt(); p++) {
                partitions.add(new TopicPartition(topic, p));
            }
        });
        byte[] value = new byte[VALUE_BYTES];
        Arrays.fill(value, (byte) 'x');
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (int i = 0; i < records; i++) {
            TopicPartition target = partitions.get((int) (produced++ % partitions.size()));
            sent.add(producer.send(new ProducerRecord<>(target.topic(), target.partition(), null, value)));
        }
        producer.flush();
        for (Future<RecordMetadata> done : sent) {
            RecordMetadata metadata = done.get(30, TimeUnit.SECONDS);
            producedTo.merge(new TopicPartition(metadata.topic(), metadata.partition()), metadata.offset() + 1, Math::max);
        }
    }

    /** Every partition of the spec's topics must be consumed to its end offset as of now (records others produced too). */
    private static void drain() throws Exception {
        Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
        toMap(spec.get("topics")).forEach((topic, count) -> {
            for (int p = 0; p < count.asInt(); p++) {
                latest.put(new TopicPartition(topic, p), org.apache.kafka.clients.admin.OffsetSpec.latest());
            }
        });
        admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS)
            .forEach((partition, end) -> producedTo.merge(partition, end.offset(), Math::max));
    }

    private static Map<String, JsonNode> toMap(JsonNode object) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        object.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }

    /** Puts {key: value} into a consumer's config; a null value takes the key out (e.g. {"group.remote.assignor": null}: the member names none). */
    private static void putConfigs(Properties config, JsonNode configs) {
        configs.fields().forEachRemaining(c -> {
            if (c.getValue().isNull()) {
                config.remove(c.getKey());
            } else {
                config.put(c.getKey(), c.getValue().asText());
            }
        });
    }

    /** Waits until settled; null, or why not once {@code timeoutMs} passed. */
    private static String settle(long timeoutMs) throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        String why = "not asked yet";
        while (System.currentTimeMillis() < deadline) {
            Thread.sleep(300);
            try {
                why = unsettled();
            } catch (ExecutionException | java.util.concurrent.TimeoutException | org.apache.kafka.common.errors.TimeoutException notYet) {
                why = "Kafka answered " + notYet;  // the group does not exist before its first member joins; a loaded broker answers late
            }
            if (why == null) {
                return null;
            }
        }
        return why;
    }

    /** Why the group is not settled, or null. */
    private static String unsettled() throws Exception {
        List<Member> live = members.stream().filter(Member::live).toList();
        ConsumerGroupDescription described = admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group);
        if (!described.groupState().toString().equalsIgnoreCase("Stable") || described.members().size() != live.size()) {
            return "the group is " + described.groupState() + " with " + described.members().size() + " members, " + live.size() + " expected";
        }
        Map<String, Set<TopicPartition>> listed = new HashMap<>();
        described.members().forEach(m -> listed.put(m.consumerId(), m.assignment().topicPartitions()));
        for (Member member : live) {
            if (member.memberId == null || member.held == null || !member.held.equals(listed.get(member.memberId))) {
                return "member " + member.index + " (" + member.memberId + ") holds " + member.held + ", the coordinator lists " + listed.get(member.memberId);
            }
        }
        for (Map.Entry<TopicPartition, Long> target : producedTo.entrySet()) {
            long at = consumedTo.getOrDefault(target.getKey(), 0L);
            if (at < target.getValue()) {
                return "partition " + target.getKey() + " is consumed to " + at + " of " + target.getValue();
            }
        }
        return null;
    }

    private static Map<String, Object> state() throws Exception {
        List<Map<String, Object>> live = new ArrayList<>();
        List<Map<String, Object>> removed = new ArrayList<>();
        long total = 0;
        for (Member member : members) {
            total += member.consumed.get();
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("index", member.index);
            entry.put("member_id", member.memberId);
            if (member.live()) {
                List<TopicPartition> sorted = new ArrayList<>(member.held);
                sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
                entry.put("client_id", member.clientId);
                entry.put("rack", member.rack);
                entry.put("assignment", sorted.stream().map(p -> List.of(p.topic(), p.partition())).toList());
                entry.put("consumed", member.consumed.get());
                live.add(entry);
            } else {
                entry.put("consumed", member.consumed.get());
                removed.add(entry);
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("members", live);
        out.put("removed", removed);
        out.put("consumed", total);
        out.put("produced", produced);
        Map<String, Object> positions = new TreeMap<>();
        spec.get("topics").fields().forEachRemaining(t -> {
            List<Long> offsets = new ArrayList<>();
            for (int p = 0; p < t.getValue().asInt(); p++) {
                offsets.add(consumedTo.getOrDefault(new TopicPartition(t.getKey(), p), 0L));
            }
            positions.put(t.getKey(), offsets);
        });
        out.put("consumed_to", positions);
        Map<String, Object> ids = new TreeMap<>();
        out.put("topics", layout(ids));
        out.put("topic_ids", ids);
        out.put("coordinator", describe(false));
        return out;
    }

    /** The coordinator's view of the group now (Admin's describe): its state, preferred server assignor and epochs, and
     * with {@code withMembers} each member's id and assignment ([topic, partition] pairs, sorted). */
    private static Map<String, Object> describe(boolean withMembers) throws Exception {
        ConsumerGroupDescription described = admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("group_state", described.groupState().toString());
        out.put("assignor", described.partitionAssignor());
        out.put("group_epoch", described.groupEpoch().orElse(null));
        out.put("target_assignment_epoch", described.targetAssignmentEpoch().orElse(null));
        if (withMembers) {
            Map<String, Object> listed = new TreeMap<>();
            described.members().forEach(m -> listed.put(m.consumerId(), m.assignment().topicPartitions().stream()
                .sorted(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition))
                .map(tp -> List.of(tp.topic(), tp.partition())).toList()));
            out.put("members", listed);
        }
        return out;
    }

    /** Per member index, its consumer's incoming bytes by broker (removed members: at their close). */
    private static Map<String, Object> metrics() throws Exception {
        Brokers brokers = brokers();
        Map<String, Object> out = new LinkedHashMap<>();
        for (Member member : members) {
            KafkaConsumer<byte[], byte[]> consumer = member.consumer;
            if (member.bytesAtClose != null) {
                out.put(String.valueOf(member.index), member.bytesAtClose);
            } else if (consumer != null) {
                out.put(String.valueOf(member.index), incomingBytesByBroker(consumer.metrics(), brokers));
            }
        }
        return out;
    }

    /** The cluster's brokers: id by "host:port", and the bootstrap list (a bootstrap connection's id is -1 for its first address, -2 ...). */
    record Brokers(Map<String, Integer> byAddress, Map<Integer, Integer> byPort, List<String> bootstrap) {
    }

    private static Brokers brokers() {
        return brokers(admin, bootstrap);
    }

    static Brokers brokers(Admin admin, String bootstrap) {
        Map<String, Integer> byAddress = new HashMap<>();
        Map<Integer, Integer> byPort = new HashMap<>();
        try {
            for (Node node : admin.describeCluster().nodes().get(10, TimeUnit.SECONDS)) {
                byAddress.put(node.host() + ":" + node.port(), node.id());
                byPort.put(node.port(), node.id());
            }
        } catch (Exception unknown) {
            // bootstrap connections are then named by their address
        }
        List<String> listed = new ArrayList<>();
        for (String address : bootstrap.split(",")) {
            if (!address.isBlank()) {
                listed.add(address.trim());
            }
        }
        return new Brokers(byAddress, byPort, listed);
    }

    /**
     * Kafka's own per-connection {@code incoming-byte-total} (metric group {@code consumer-node-metrics}, tag
     * {@code node-id} "node-&lt;connection id&gt;", Selector's per-node sensors) of every consumer among {@code metrics},
     * summed by the broker at the other end: a broker's own connection (id "3") under "3"; the group coordinator's
     * connection under its broker, whether named "+3" (Kafka 4.4's GroupCoordinatorNode) or Integer.MAX_VALUE - 3
     * (older clients); a bootstrap connection (-1 for the first bootstrap address, -2 ...) under the broker listening at
     * that address, or under "bootstrap &lt;host:port&gt;" when no broker does.
     */
    static Map<String, Long> incomingBytesByBroker(Map<MetricName, ? extends Metric> metrics, Brokers brokers) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<MetricName, ? extends Metric> metric : metrics.entrySet()) {
            MetricName name = metric.getKey();
            if (!name.group().equals("consumer-node-metrics") || !name.name().equals("incoming-byte-total")) {
                continue;
            }
            String node = name.tags().get("node-id");
            if (node == null || !node.startsWith("node-")) {
                continue;
            }
            Object value = metric.getValue().metricValue();
            if (!(value instanceof Number)) {
                continue;
            }
            out.merge(broker(node.substring("node-".length()), brokers), Math.round(((Number) value).doubleValue()), Long::sum);
        }
        return out;
    }

    private static String broker(String connection, Brokers brokers) {
        if (connection.startsWith("+")) {
            return connection.substring(1);
        }
        long id;
        try {
            id = Long.parseLong(connection);
        } catch (NumberFormatException other) {
            return connection;
        }
        if (id >= Integer.MAX_VALUE / 2) {
            return String.valueOf(Integer.MAX_VALUE - id);
        }
        if (id >= 0) {
            return String.valueOf(id);
        }
        int position = (int) (-id - 1);
        if (position >= brokers.bootstrap().size()) {
            return connection;
        }
        String address = brokers.bootstrap().get(position);
        Integer found = brokers.byAddress().get(address);
        if (found == null) {
            int colon = address.lastIndexOf(':');
            try {
                found = colon < 0 ? null : brokers.byPort().get(Integer.parseInt(address.substring(colon + 1)));
            } catch (NumberFormatException bad) {
                found = null;
            }
        }
        return found == null ? "bootstrap " + address : String.valueOf(found);
    }

    /**
     * The spec's topics as Kafka placed them: {name: [{"partition", "leader_rack", "replica_racks"}]}, in partition
     * order; {@code ids} gets each topic's id.
     */
    private static Map<String, Object> layout(Map<String, Object> ids) throws Exception {
        Map<Integer, String> racks = new HashMap<>();
        for (Node node : admin.describeCluster().nodes().get(10, TimeUnit.SECONDS)) {
            racks.put(node.id(), node.rack());
        }
        List<String> names = new ArrayList<>();
        spec.get("topics").fieldNames().forEachRemaining(names::add);
        Map<String, Object> topics = new TreeMap<>();
        for (Map.Entry<String, TopicDescription> topic : admin.describeTopics(names).allTopicNames().get(10, TimeUnit.SECONDS).entrySet()) {
            List<Map<String, Object>> partitions = new ArrayList<>();
            for (TopicPartitionInfo info : topic.getValue().partitions()) {
                Map<String, Object> partition = new LinkedHashMap<>();
                partition.put("partition", info.partition());
                partition.put("leader_rack", info.leader() == null ? null : racks.get(info.leader().id()));
                partition.put("replica_racks", info.replicas().stream().map(n -> racks.get(n.id())).toList());
                partitions.add(partition);
            }
            partitions.sort(Comparator.comparingInt(x -> (Integer) x.get("partition")));
            topics.put(topic.getKey(), partitions);
            ids.put(topic.getKey(), topic.getValue().topicId().toString());
        }
        return topics;
    }
}
