package kao.jvm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A test workload: N consumers of one group in this JVM, each polling on its own thread. Reads a
 * JSON spec on stdin's first line: {"bootstrap", "topics": {name: partitions} (created first with
 * Kafka's Admin client, with "replication_factor" replicas (default 3), unless they exist), "group", "protocol" ("classic"|"consumer"),
 * "assignor" (a classic strategy's class name, or the KIP-848 server assignor), "members": [{"rack",
 * "topics": [...]}]}. Once the group is Stable (Admin) and every consumer holds the partitions the
 * coordinator lists for it, prints one JSON line {"members": [{"index", "member_id", "client_id",
 * "assignment": [[topic, partition]]}], "topics": {name: [{"partition", "leader_rack", "replica_racks"}]}}
 * (the topics as Kafka placed them); then keeps polling until stdin closes, closes the consumers
 * and exits. Exit 1 when the group does not settle within 120 s.
 */
public final class ConsumerGroupRunner {
    private ConsumerGroupRunner() {
    }

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        JsonNode spec = json.readTree(in.readLine());
        String bootstrap = spec.get("bootstrap").asText();
        String group = spec.get("group").asText();
        String protocol = spec.get("protocol").asText();
        String assignor = spec.get("assignor").asText();
        Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(adminConfig)) {
            List<NewTopic> wanted = new ArrayList<>();
            short replicas = (short) (spec.has("replication_factor") ? spec.get("replication_factor").asInt() : 3);
            spec.get("topics").fields().forEachRemaining(t -> wanted.add(new NewTopic(t.getKey(), t.getValue().asInt(), replicas)));
            for (var created : admin.createTopics(wanted).values().values()) {
                try {
                    created.get(30, TimeUnit.SECONDS);
                } catch (ExecutionException error) {
                    if (!(error.getCause() instanceof TopicExistsException)) {
                        throw error;
                    }
                }
            }
        }
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        Map<Integer, Set<TopicPartition>> held = new ConcurrentHashMap<>();
        Map<Integer, String> memberIds = new ConcurrentHashMap<>();
        Map<Integer, String> clientIds = new ConcurrentHashMap<>();
        int index = 0;
        for (JsonNode member : spec.get("members")) {
            int me = index++;
            Properties config = new Properties();
            config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            config.put(ConsumerConfig.CLIENT_ID_CONFIG, group + "-" + me);
            config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            if (protocol.equals("classic")) {
                config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor);
                config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
            } else {
                config.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor);
            }
            if (member.hasNonNull("rack")) {
                config.put(ConsumerConfig.CLIENT_RACK_CONFIG, member.get("rack").asText());
            }
            config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            List<String> topics = new ArrayList<>();
            member.get("topics").forEach(t -> topics.add(t.asText()));
            clientIds.put(me, group + "-" + me);
            Thread thread = new Thread(() -> {
                try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
                    consumer.subscribe(topics);
                    while (running.get()) {
                        consumer.poll(Duration.ofMillis(200));
                        held.put(me, Set.copyOf(consumer.assignment()));
                        memberIds.put(me, consumer.groupMetadata().memberId());
                    }
                }
            }, "consumer-" + me);
            thread.setUncaughtExceptionHandler((t, error) -> {
                error.printStackTrace();
                Runtime.getRuntime().halt(1);
            });
            thread.start();
            threads.add(thread);
        }
        int count = index;
        long deadline = System.currentTimeMillis() + 120_000;
        Map<String, Object> result = null;
        try (Admin admin = Admin.create(adminConfig)) {
            while (result == null && System.currentTimeMillis() < deadline) {
                Thread.sleep(300);
                ConsumerGroupDescription described;
                try {
                    described = admin.describeConsumerGroups(List.of(group)).all().get(10, TimeUnit.SECONDS).get(group);
                } catch (ExecutionException | java.util.concurrent.TimeoutException notYet) {
                    continue; // the group does not exist before its first member joins; a loaded broker answers late
                }
                if (!described.groupState().toString().equalsIgnoreCase("Stable") || described.members().size() != count) {
                    continue;
                }
                Map<String, Set<TopicPartition>> listed = new LinkedHashMap<>();
                described.members().forEach(m -> listed.put(m.consumerId(), m.assignment().topicPartitions()));
                boolean agree = true;
                List<Map<String, Object>> members = new ArrayList<>();
                for (int me = 0; me < count; me++) {
                    String memberId = memberIds.get(me);
                    Set<TopicPartition> mine = held.get(me);
                    if (memberId == null || mine == null || !mine.equals(listed.get(memberId))) {
                        agree = false;
                        break;
                    }
                    List<TopicPartition> sorted = new ArrayList<>(mine);
                    sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
                    Map<String, Object> member = new LinkedHashMap<>();
                    member.put("index", me);
                    member.put("member_id", memberId);
                    member.put("client_id", clientIds.get(me));
                    member.put("assignment", sorted.stream().map(p -> List.of(p.topic(), p.partition())).toList());
                    members.add(member);
                }
                if (agree) {
                    result = Map.of("members", members, "topics", layout(admin, spec));
                }
            }
        }
        int status = 0;
        if (result == null) {
            System.err.println("the group " + group + " did not settle within 120 s");
            status = 1;
        } else {
            System.out.println(json.writeValueAsString(result));
            System.out.flush();
            while (in.readLine() != null) {
                // until stdin closes
            }
        }
        running.set(false);
        for (Thread thread : threads) {
            thread.join(15_000);
        }
        System.exit(status);
    }

    /** The spec's topics as Kafka placed them: {name: [{"partition", "leader_rack", "replica_racks"}]}, in partition order. */
    private static Map<String, Object> layout(Admin admin, JsonNode spec) throws Exception {
        Map<Integer, String> racks = new java.util.HashMap<>();
        for (Node node : admin.describeCluster().nodes().get(10, TimeUnit.SECONDS)) {
            racks.put(node.id(), node.rack());
        }
        List<String> names = new ArrayList<>();
        spec.get("topics").fieldNames().forEachRemaining(names::add);
        Map<String, Object> topics = new java.util.TreeMap<>();
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
        }
        return topics;
    }
}
