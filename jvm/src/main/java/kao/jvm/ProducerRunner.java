package kao.jvm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A workload for the tests (and demos): producers writing at set rates, from one KafkaProducer in
 * this JVM. Reads a JSON spec on stdin's first line: {"bootstrap", "topics": {name: {"partitions",
 * "replication_factor", "configs" (optional: topic configs)}} (created first with Kafka's Admin
 * client unless they exist), "producers":
 * [{"topic", "partition" (optional: without it Kafka's partitioner chooses, by key), "records_per_second",
 * "value_bytes", "key" (optional, a string)}], "producer_config" (optional: producer properties over
 * the runner's own, e.g. {"batch.size": "0"} for one record per batch)}. Compression is off
 * (`compression.type=none`), so the log holds the bytes sent.
 *
 * <p>Pacing: every producer has sent floor(records_per_second x seconds since the start) records at
 * each tick (every 5 ms), so the rate is smooth within a second and exact over any whole second; a
 * tick that comes late catches up. Once every topic's partitions have a leader and sending has
 * begun, prints one JSON line {"started": {"topics": {name: partitions}, "producers": n, "time_ms"}}.
 *
 * <p>Each further stdin line is a command, answered by one JSON line:
 * <ul>
 * <li>{"delete_records": {"topic", "partition"}}: Admin deleteRecords before the high watermark;
 * {"deleted": {"topic", "partition", "low_watermark"}};</li>
 * <li>{"elect_leader": {"topic", "partition", "broker" (optional: the replica after the leader)}}:
 * makes `broker` (a replica) the leader: the replicas reordered with it first (Admin
 * alterPartitionReassignments), then a preferred leader election; {"leader": {"topic", "partition",
 * "broker", "before" (the leader it replaced), "replicas"}}.</li>
 * </ul>
 * When stdin closes: stops, flushes, prints {"sent": [{"topic", "partition", "records", "value_bytes"}]
 * (acknowledged sends, in topic and partition order), "failed": n, "error": the first failure or null}
 * and exits 0. A command that fails prints {"error": message} and the runner goes on.
 */
public final class ProducerRunner {
    private ProducerRunner() {
    }

    private static final long TICK_MS = 5;

    private record Producer(String topic, Integer partition, double recordsPerSecond, byte[] key, byte[] value) {
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        JsonNode spec = json.readTree(in.readLine());
        String bootstrap = spec.get("bootstrap").asText();
        Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        Admin admin = Admin.create(adminConfig);
        Map<String, Integer> topics = new TreeMap<>();
        List<NewTopic> wanted = new ArrayList<>();
        spec.get("topics").fields().forEachRemaining(t -> {
            int partitions = t.getValue().get("partitions").asInt();
            short replication = (short) t.getValue().path("replication_factor").asInt(3);
            topics.put(t.getKey(), partitions);
            Map<String, String> configs = new TreeMap<>();
            t.getValue().path("configs").fields().forEachRemaining(c -> configs.put(c.getKey(), c.getValue().asText()));
            wanted.add(new NewTopic(t.getKey(), partitions, replication).configs(configs));
        });
        Workloads.createTopics(admin, wanted);
        List<Producer> producers = new ArrayList<>();
        for (JsonNode p : spec.get("producers")) {
            byte[] value = new byte[p.get("value_bytes").asInt()];
            for (int i = 0; i < value.length; i++) {
                value[i] = (byte) ('a' + i % 26);
            }
            producers.add(new Producer(p.get("topic").asText(), p.hasNonNull("partition") ? p.get("partition").asInt() : null,
                    p.get("records_per_second").asDouble(), p.hasNonNull("key") ? p.get("key").asText().getBytes(StandardCharsets.UTF_8) : null, value));
        }
        Properties config = Workloads.producerConfig(bootstrap, ByteArraySerializer.class);
        config.put(ProducerConfig.CLIENT_ID_CONFIG, "kao-producer-runner");
        spec.path("producer_config").fields().forEachRemaining(e -> config.put(e.getKey(), e.getValue().asText()));
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config);
        awaitLeaders(producer, topics.keySet());

        Map<TopicPartition, long[]> sent = new ConcurrentHashMap<>();
        AtomicLong failed = new AtomicLong();
        AtomicReference<String> firstError = new AtomicReference<>();
        AtomicBoolean running = new AtomicBoolean(true);
        long start = System.nanoTime();
        Thread pacer = new Thread(() -> {
            long[] done = new long[producers.size()];
            while (running.get()) {
                double elapsed = (System.nanoTime() - start) / 1e9;
                for (int i = 0; i < producers.size(); i++) {
                    Producer p = producers.get(i);
                    long due = (long) Math.floor(p.recordsPerSecond() * elapsed);
                    for (; done[i] < due; done[i]++) {
                        producer.send(new ProducerRecord<>(p.topic(), p.partition(), p.key(), p.value()), (metadata, error) -> {
                            if (error != null) {
                                failed.incrementAndGet();
                                firstError.compareAndSet(null, error.getClass().getSimpleName() + ": " + error.getMessage());
                            } else {
                                TopicPartition partition = new TopicPartition(metadata.topic(), metadata.partition());
                                long[] counts = sent.computeIfAbsent(partition, k -> new long[2]);
                                synchronized (counts) {
                                    counts[0] += 1;
                                    counts[1] += p.value().length;
                                }
                            }
                        });
                    }
                }
                try {
                    Thread.sleep(TICK_MS);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }, "pacer");
        pacer.setDaemon(true);
        pacer.start();
        Map<String, Object> started = new LinkedHashMap<>();
        started.put("topics", topics);
        started.put("producers", producers.size());
        started.put("time_ms", System.currentTimeMillis());
        System.out.println(json.writeValueAsString(Map.of("started", started)));
        System.out.flush();

        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Object answer;
            try {
                JsonNode command = json.readTree(line);
                answer = command(admin, command);
            } catch (Exception error) {
                Throwable cause = error instanceof ExecutionException && error.getCause() != null ? error.getCause() : error;
                answer = Map.of("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
            }
            System.out.println(json.writeValueAsString(answer));
            System.out.flush();
        }
        running.set(false);
        pacer.join(10_000);
        producer.flush();
        producer.close();
        admin.close();
        List<TopicPartition> partitions = new ArrayList<>(sent.keySet());
        partitions.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<Map<String, Object>> report = new ArrayList<>();
        for (TopicPartition partition : partitions) {
            long[] counts = sent.get(partition);
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("topic", partition.topic());
            entry.put("partition", partition.partition());
            entry.put("records", counts[0]);
            entry.put("value_bytes", counts[1]);
            report.add(entry);
        }
        Map<String, Object> end = new LinkedHashMap<>();
        end.put("sent", report);
        end.put("failed", failed.get());
        end.put("error", firstError.get());
        System.out.println(json.writeValueAsString(end));
        System.out.flush();
        System.exit(0);
    }

    /** Waits (up to 60 s) until the producer's metadata gives every partition of `topics` a leader. */
    private static void awaitLeaders(KafkaProducer<byte[], byte[]> producer, Set<String> topics) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 60_000;
        for (String topic : topics) {
            while (true) {
                List<PartitionInfo> partitions = producer.partitionsFor(topic);
                if (partitions.stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("topic " + topic + " has partitions without a leader after 60 s");
                }
                Thread.sleep(100);
            }
        }
    }

    private static Object command(Admin admin, JsonNode command) throws Exception {
        if (command.has("delete_records")) {
            JsonNode target = command.get("delete_records");
            TopicPartition partition = new TopicPartition(target.get("topic").asText(), target.get("partition").asInt());
            // beforeOffset(-1): up to the high watermark (DeleteRecordsRequest.HIGH_WATERMARK)
            long low = admin.deleteRecords(Map.of(partition, RecordsToDelete.beforeOffset(-1L))).lowWatermarks().get(partition)
                    .get(30, TimeUnit.SECONDS).lowWatermark();
            Map<String, Object> deleted = new LinkedHashMap<>();
            deleted.put("topic", partition.topic());
            deleted.put("partition", partition.partition());
            deleted.put("low_watermark", low);
            return Map.of("deleted", deleted);
        }
        if (command.has("elect_leader")) {
            JsonNode target = command.get("elect_leader");
            TopicPartition partition = new TopicPartition(target.get("topic").asText(), target.get("partition").asInt());
            TopicPartitionInfo now = describe(admin, partition);
            List<Integer> replicas = new ArrayList<>(now.replicas().stream().map(Node::id).toList());
            int broker;
            if (target.hasNonNull("broker")) {
                broker = target.get("broker").asInt();
            } else { // the replica after the current leader
                int leader = now.leader() == null || now.leader().isEmpty() ? replicas.get(replicas.size() - 1) : now.leader().id();
                broker = replicas.get((replicas.indexOf(leader) + 1) % replicas.size());
            }
            Integer before = now.leader() == null || now.leader().isEmpty() ? null : now.leader().id();
            if (!replicas.remove(Integer.valueOf(broker))) {
                throw new IllegalArgumentException("broker " + broker + " holds no replica of " + partition + " (replicas " + replicas + ")");
            }
            replicas.add(0, broker);
            admin.alterPartitionReassignments(Map.of(partition, Optional.of(new NewPartitionReassignment(replicas)))).all().get(30, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + 30_000;
            while (!describe(admin, partition).replicas().stream().map(Node::id).toList().equals(replicas)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("the reassignment of " + partition + " to " + replicas + " did not complete within 30 s");
                }
                Thread.sleep(50);
            }
            try {
                admin.electLeaders(ElectionType.PREFERRED, Set.of(partition)).partitions().get(30, TimeUnit.SECONDS).get(partition)
                        .ifPresent(error -> {
                            if (!(error instanceof ElectionNotNeededException)) {
                                throw new IllegalStateException(error);
                            }
                        });
            } catch (ExecutionException error) {
                if (!(error.getCause() instanceof ElectionNotNeededException)) {
                    throw error;
                }
            }
            while (describe(admin, partition).leader() == null || describe(admin, partition).leader().id() != broker) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("broker " + broker + " did not become the leader of " + partition + " within 30 s");
                }
                Thread.sleep(50);
            }
            Map<String, Object> leader = new LinkedHashMap<>();
            leader.put("topic", partition.topic());
            leader.put("partition", partition.partition());
            leader.put("broker", broker);
            leader.put("before", before);
            leader.put("replicas", replicas);
            return Map.of("leader", leader);
        }
        throw new IllegalArgumentException("unknown command (expected delete_records or elect_leader): " + command);
    }

    private static TopicPartitionInfo describe(Admin admin, TopicPartition partition) throws Exception {
        TopicDescription description = admin.describeTopics(List.of(partition.topic())).allTopicNames().get(30, TimeUnit.SECONDS).get(partition.topic());
        return description.partitions().get(partition.partition());
    }
}
