package kao.jvm;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.ListOffsetsResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;

/**
 * Bytes per second into each partition of some topics, measured over a window: the growth of the
 * leader replica's log (Admin describeLogDirs: the on-disk bytes, which fetches send) between
 * snapshots, with its earliest offset (Admin listOffsets) and its log end offset to see what else
 * happened to the log. JSON on stdout; translation and arithmetic only (docs/import-design.md,
 * section 6).
 *
 * <p>Usage: Sample BOOTSTRAP --topics T1,T2,... --seconds S [--command-config FILE] [--timeout-ms T].
 *
 * <p>The window of S seconds is cut into n = round(S) intervals (at least 1, at most 30), with a
 * snapshot at each end: every partition's leader (describeTopics), the size of the leader's replica
 * (describeLogDirs on the leaders' brokers), its log end offset (the "latest" offset: a raw
 * ListOffsets sent to the leader as Kafka's debugging replica, over a connection kept open for the
 * window; see logEnds) and the earliest offset (Admin listOffsets), each snapshot timed at the
 * middle of its size request. A first snapshot before the window opens the connections. Per interval:
 * <ul>
 * <li>the same leader at both ends, its log grown: the size delta, measured;</li>
 * <li>the same, but the earliest offset moved (deleteRecords, or retention): the size delta still
 * counts, since deleteRecords frees no bytes until its segments are deleted at a later retention
 * check (never the active segment), and retention deletes whole segments, which shrink the log unless
 * a segment is smaller than what an interval appends; the partition is marked estimated;</li>
 * <li>the log shrank (retention, compaction), the leader moved, the latest offset went back
 * (truncation), or the leader, its size or the offsets were missing: estimated, the interval's
 * records (latest offset delta) counting at the bytes per record measured over the measured
 * intervals, or, when those had no records, at the log's average at the end of the window (size /
 * (latest - earliest)).</li>
 * </ul>
 * Two replicas' sizes are never compared: each broker deletes old segments on its own schedule, so
 * replicas of one partition can differ by whole segments, and a replica being added may still be
 * catching up. The short intervals keep an estimate to where something happened, and measure the
 * record size on the partition's fresh records: size / (latest - earliest) alone is off by any offset
 * gap (compaction) and by any bytes below the earliest offset not yet deleted (deleteRecords: many
 * times the real record size).
 *
 * <p>Answer: {"topics", "seconds", "snapshots", "window_ms", "started_ms", "ended_ms" (wall clock, at the
 * first and last size), "start_span_ms", "end_span_ms" (how long the first and last snapshots' size
 * and log-end requests took: the brokers read them at some moment inside),
 * "partitions": [{"topic", "partition", "leader" (at the end), "leaders" (in the order seen),
 * "start"/"end": {"leader", "size" (the leader's replica), "earliest", "latest"}, "offsets" (latest
 * delta), "measured_bytes", "estimated_offsets", "estimated_bytes", "bytes", "window_ms",
 * "bytes_per_second", "estimated", "why" (null for a plain measurement)}]} in topic and partition
 * order. A partition without a leader at either end of the window has "bytes_per_second": null and
 * says why. On failure: Describe's error object on stderr and its exit status (3 unreachable or
 * refused credentials, 4 an unknown topic, named in the message, 5 another error Kafka reports).
 * Once the first snapshot is taken, one line on stderr says the window started ("sample: window
 * started, ...").
 */
public final class Sample {
    private Sample() {
    }

    static final int MAX_INTERVALS = 30;

    /** One snapshot: `sizes` holds the size of each partition's leader replica; partitions absent from `replicas` did not exist
     * yet (an empty log). */
    private record Snapshot(long sizesNanos, double wallMs, long spanNanos, Map<TopicPartition, Integer> leaders, Map<TopicPartition, List<Integer>> replicas,
            Map<TopicPartition, Long> sizes, Map<TopicPartition, Long> earliest, Map<TopicPartition, Long> latest) {

        Integer leader(TopicPartition partition) {
            return leaders.get(partition);
        }

        Long size(TopicPartition partition) {
            return replicas.containsKey(partition) ? sizes.get(partition) : Long.valueOf(0L);
        }

        Long earliest(TopicPartition partition) {
            return replicas.containsKey(partition) ? earliest.get(partition) : Long.valueOf(0L);
        }

        Long latest(TopicPartition partition) {
            return replicas.containsKey(partition) ? latest.get(partition) : Long.valueOf(0L);
        }
    }

    public static void main(String[] args) throws Exception {
        String usage = "usage: Sample BOOTSTRAP --topics T1,T2,... --seconds S [--command-config FILE] [--timeout-ms T]";
        if (args.length < 1 || args.length % 2 != 1) {
            System.err.println(usage);
            System.exit(2);
        }
        String bootstrap = args[0];
        List<String> topics = null;
        double seconds = -1;
        String commandConfig = null;
        int timeout = 10_000;
        for (int i = 1; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--topics" -> topics = new ArrayList<>(new TreeSet<>(List.of(args[i + 1].split(","))));
                case "--seconds" -> seconds = number(args[i + 1], usage);
                case "--command-config" -> commandConfig = args[i + 1];
                case "--timeout-ms" -> timeout = (int) number(args[i + 1], usage);
                default -> {
                    System.err.println("unknown option " + args[i] + "\n" + usage);
                    System.exit(2);
                }
            }
        }
        if (topics == null || topics.isEmpty() || topics.contains("") || !(seconds > 0)) {
            System.err.println(usage);
            System.exit(2);
        }
        Properties config = Describe.clientConfig(bootstrap, commandConfig, timeout);
        int status = 0;
        try (Admin admin = Admin.create(config)) {
            System.out.println(Describe.JSON.writeValueAsString(sample(admin, config, topics, seconds, timeout)));
        } catch (Throwable error) {
            status = Describe.fail(error, "");
        }
        System.exit(status);
    }

    private static double number(String text, String usage) {
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException notNumber) {
            System.err.println("not a number: " + text + "\n" + usage);
            System.exit(2);
            return 0;
        }
    }

    static Map<String, Object> sample(Admin admin, Properties config, List<String> topics, double seconds, int timeout) throws Exception {
        List<String> unknown = missing(admin, topics, timeout);
        if (!unknown.isEmpty()) {
            throw unknownTopics(unknown);
        }
        Map<Integer, Node> nodes = new HashMap<>();
        for (Node node : admin.describeCluster().nodes().get(timeout, TimeUnit.MILLISECONDS)) {
            nodes.put(node.id(), node);
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(8, Math.max(1, nodes.size())), task -> {
            Thread thread = new Thread(task, "sample-log-ends");
            thread.setDaemon(true);
            return thread;
        });
        Map<Integer, Connection> connections = new java.util.concurrent.ConcurrentHashMap<>();
        try {
            return sample(new Cluster(admin, config, timeout, nodes, connections, pool), topics, seconds);
        } finally {
            pool.shutdownNow();
            connections.values().forEach(Connection::close);
        }
    }

    private static Map<String, Object> sample(Cluster cluster, List<String> topics, double seconds) throws Exception {
        snapshot(cluster, topics); // connects, and loads the classes, before the window: its first snapshot is then as quick as the others
        int intervals = (int) Math.max(1, Math.min(MAX_INTERVALS, Math.round(seconds)));
        long step = (long) (seconds * 1e9 / intervals);
        long origin = System.nanoTime();
        List<Snapshot> snapshots = new ArrayList<>();
        for (int k = 0; k <= intervals; k++) {
            long wait = origin + k * step - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            snapshots.add(snapshot(cluster, topics));
            if (k == 0) {
                // for whoever watches the window (the tests act inside it); stdout stays the JSON answer alone
                System.err.println("sample: window started, " + intervals + " intervals of " + Math.round(step / 1e6) + " ms");
                System.err.flush();
            }
        }
        Set<TopicPartition> partitions = new TreeSet<>((a, b) -> a.topic().equals(b.topic()) ? Integer.compare(a.partition(), b.partition())
                : a.topic().compareTo(b.topic()));
        for (Snapshot snapshot : snapshots) {
            partitions.addAll(snapshot.replicas().keySet());
        }
        Snapshot first = snapshots.get(0);
        Snapshot last = snapshots.get(snapshots.size() - 1);
        List<Map<String, Object>> rates = new ArrayList<>();
        for (TopicPartition partition : partitions) {
            rates.add(rate(partition, snapshots));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topics", topics);
        out.put("seconds", seconds);
        out.put("snapshots", snapshots.size());
        out.put("window_ms", Math.round((last.sizesNanos() - first.sizesNanos()) / 1e6));
        out.put("started_ms", Math.round(first.wallMs()));
        out.put("ended_ms", Math.round(last.wallMs()));
        out.put("start_span_ms", Math.round(first.spanNanos() / 1e6));
        out.put("end_span_ms", Math.round(last.spanNanos() / 1e6));
        out.put("partitions", rates);
        return out;
    }

    /** The partition's rate over the snapshots (the class comment says how). */
    private static Map<String, Object> rate(TopicPartition partition, List<Snapshot> snapshots) {
        Snapshot first = snapshots.get(0);
        Snapshot last = snapshots.get(snapshots.size() - 1);
        List<Integer> leaders = new ArrayList<>();
        for (Snapshot snapshot : snapshots) {
            Integer leader = snapshot.leader(partition);
            if (leader != null && (leaders.isEmpty() || !leaders.get(leaders.size() - 1).equals(leader))) {
                leaders.add(leader);
            }
        }
        long windowNanos = last.sizesNanos() - first.sizesNanos();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("topic", partition.topic());
        out.put("partition", partition.partition());
        out.put("leader", last.leader(partition));
        out.put("leaders", leaders);
        out.put("start", ends(first, partition));
        out.put("end", ends(last, partition));
        out.put("window_ms", Math.round(windowNanos / 1e6));
        Long latestStart = first.latest(partition);
        Long latestEnd = last.latest(partition);
        if (latestStart == null || latestEnd == null) {
            out.put("offsets", null);
            out.put("measured_bytes", null);
            out.put("estimated_offsets", null);
            out.put("estimated_bytes", null);
            out.put("bytes", null);
            out.put("bytes_per_second", null);
            out.put("estimated", true);
            out.put("why", "the partition had no leader at the " + (latestStart == null ? "start" : "end") + " of the window: its offsets could not be read");
            return out;
        }
        long measuredBytes = 0;
        long measuredOffsets = 0;
        Set<String> estimatedWhy = new LinkedHashSet<>();
        Set<String> grewWhy = new LinkedHashSet<>();
        for (int k = 0; k + 1 < snapshots.size(); k++) {
            Snapshot a = snapshots.get(k);
            Snapshot b = snapshots.get(k + 1);
            Long sizeA = a.size(partition);
            Long sizeB = b.size(partition);
            Long earliestA = a.earliest(partition);
            Long earliestB = b.earliest(partition);
            Long latestA = a.latest(partition);
            Long latestB = b.latest(partition);
            Integer leaderA = a.replicas().containsKey(partition) ? a.leader(partition) : b.leader(partition);
            Integer leaderB = b.leader(partition);
            String reason = null;
            if (earliestA == null || earliestB == null || latestA == null || latestB == null || leaderA == null || leaderB == null) {
                reason = "no leader at a snapshot";
            } else if (!leaderA.equals(leaderB)) {
                reason = "its leader moved from broker " + leaderA + " to broker " + leaderB; // two replicas' sizes are not compared
            } else if (sizeA == null || sizeB == null) {
                reason = "its leader's log size was not reported at a snapshot";
            } else if (sizeB < sizeA) {
                reason = "its log shrank by " + (sizeA - sizeB) + " bytes (retention or compaction)";
            } else if (latestB < latestA) {
                reason = "its latest offset went back from " + latestA + " to " + latestB + " (truncation)";
            }
            if (reason != null) {
                estimatedWhy.add(reason);
                continue;
            }
            if (earliestB > earliestA) {
                grewWhy.add("its earliest offset moved from " + earliestA + " to " + earliestB + " while its log grew");
            }
            measuredBytes += sizeB - sizeA;
            measuredOffsets += latestB - latestA;
        }
        long offsets = Math.max(0, latestEnd - latestStart);
        long estimatedOffsets = estimatedWhy.isEmpty() ? 0 : Math.max(0, offsets - measuredOffsets);
        double estimatedBytes = 0;
        List<String> why = new ArrayList<>();
        Double perRecord = null;
        if (!estimatedWhy.isEmpty()) {
            String basis;
            if (measuredOffsets > 0) {
                perRecord = (double) measuredBytes / measuredOffsets;
                basis = "measured over the rest of the window";
            } else {
                perRecord = averageRecord(snapshots, partition);
                basis = "the log's average, size / (latest - earliest)";
            }
            String counted = estimatedOffsets == 0 ? "no records in those intervals"
                    : perRecord == null ? estimatedOffsets + " records in those intervals, of unknown size"
                    : String.format(java.util.Locale.ROOT, "%d records in those intervals counted at %.1f bytes each (%s)", estimatedOffsets, perRecord, basis);
            why.add("estimated: " + String.join("; ", estimatedWhy) + "; " + counted);
            if (perRecord != null) {
                estimatedBytes = estimatedOffsets * perRecord;
            }
        }
        if (!grewWhy.isEmpty()) {
            why.add(String.join("; ", grewWhy) + " (deleteRecords, or retention of less than was written): its growth counts");
        }
        boolean unknownSize = estimatedOffsets > 0 && perRecord == null;
        long bytes = measuredBytes + Math.round(estimatedBytes);
        out.put("offsets", offsets);
        out.put("measured_bytes", measuredBytes);
        out.put("estimated_offsets", estimatedOffsets);
        out.put("estimated_bytes", unknownSize ? null : Math.round(estimatedBytes));
        out.put("bytes", unknownSize ? null : bytes);
        out.put("bytes_per_second", unknownSize || windowNanos <= 0 ? null : bytes / (windowNanos / 1e9));
        out.put("estimated", !estimatedWhy.isEmpty() || !grewWhy.isEmpty());
        out.put("why", why.isEmpty() ? null : String.join("; ", why));
        return out;
    }

    /** size / (latest - earliest) at the last snapshot where the leader's log holds records, or null. */
    private static Double averageRecord(List<Snapshot> snapshots, TopicPartition partition) {
        for (int k = snapshots.size() - 1; k >= 0; k--) {
            Snapshot snapshot = snapshots.get(k);
            Long size = snapshot.size(partition);
            Long earliest = snapshot.earliest(partition);
            Long latest = snapshot.latest(partition);
            if (size != null && earliest != null && latest != null && latest > earliest) {
                return (double) size / (latest - earliest);
            }
        }
        return null;
    }

    private static Map<String, Object> ends(Snapshot snapshot, TopicPartition partition) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("leader", snapshot.leader(partition));
        out.put("size", snapshot.size(partition));
        out.put("earliest", snapshot.earliest(partition));
        out.put("latest", snapshot.latest(partition));
        return out;
    }

    /** What every snapshot needs: the Admin client, its configuration, the brokers by id, a connection to each leader's
     * broker (for the raw requests) and the threads that send on them. */
    private record Cluster(Admin admin, Properties config, int timeout, Map<Integer, Node> nodes, Map<Integer, Connection> connections,
            ExecutorService pool) {

        Connection connection(int id) throws Exception {
            Connection open = connections.get(id);
            if (open != null) {
                return open;
            }
            Node node = nodes.get(id);
            if (node == null) { // a broker that joined during the window
                for (Node found : admin.describeCluster().nodes().get(timeout, TimeUnit.MILLISECONDS)) {
                    nodes.put(found.id(), found);
                }
                node = nodes.get(id);
            }
            if (node == null) {
                throw new IllegalStateException("broker " + id + " leads a partition but is not in the cluster's metadata");
            }
            open = new Connection(config, node, timeout);
            connections.put(id, open);
            return open;
        }
    }

    /** A connection to one broker, built as Describe.send builds its own (the command config's security settings apply), but
     * kept open over the window: a request every interval would otherwise pay for a new connection, and the log ends must be
     * read at the moment the sizes are. Used by one thread at a time. */
    private static final class Connection implements AutoCloseable {
        private final Node node;
        private final int timeout;
        private final Metrics metrics = new Metrics();
        private final NetworkClient client;

        Connection(Properties config, Node node, int timeout) {
            this.node = node;
            this.timeout = timeout;
            Time time = Time.SYSTEM;
            LogContext logContext = new LogContext("[kao-sample] ");
            AdminClientConfig adminConfig = new AdminClientConfig(config);
            Selector selector = new Selector(adminConfig.getLong(AdminClientConfig.CONNECTIONS_MAX_IDLE_MS_CONFIG), metrics, time, "kao",
                    ClientUtils.createChannelBuilder(adminConfig, time, logContext), logContext);
            client = new NetworkClient(selector, new ManualMetadataUpdater(List.of(node)), "kao-sample", 1, 50, 1000, 65536, 65536, timeout,
                    10_000L, 30_000L, time, true, new ApiVersions(), logContext, MetadataRecoveryStrategy.NONE,
                    ClientUtils.bootstrapConfiguration(adminConfig, adminConfig.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG)), false);
        }

        AbstractResponse send(AbstractRequest.Builder<?> request) throws Exception {
            Time time = Time.SYSTEM;
            if (!NetworkClientUtils.awaitReady(client, node, time, timeout)) {
                throw new java.util.concurrent.TimeoutException("broker " + node.id() + " (" + node.host() + ":" + node.port() + ") was not reachable within "
                        + timeout + " ms");
            }
            return NetworkClientUtils.sendAndReceive(client, client.newClientRequest(String.valueOf(node.id()), request, time.milliseconds(), true), time)
                    .responseBody();
        }

        @Override
        public void close() {
            client.close();
            metrics.close();
        }
    }

    @SuppressWarnings("unchecked")
    private static Snapshot snapshot(Cluster cluster, List<String> topics) throws Exception {
        Admin admin = cluster.admin();
        int timeout = cluster.timeout();
        Map<String, Object> described;
        try {
            described = Describe.topics(admin, topics, timeout);
        } catch (ExecutionException error) {
            throw deleted(admin, topics, timeout, error);
        }
        Map<TopicPartition, Integer> leaders = new HashMap<>();
        Map<TopicPartition, List<Integer>> replicas = new HashMap<>();
        Map<Integer, List<TopicPartition>> led = new TreeMap<>();
        for (Map.Entry<String, Object> topic : described.entrySet()) {
            for (Map<String, Object> info : (List<Map<String, Object>>) ((Map<String, Object>) topic.getValue()).get("partitions")) {
                TopicPartition partition = new TopicPartition(topic.getKey(), (Integer) info.get("partition"));
                if (info.get("leader") != null) {
                    leaders.put(partition, (Integer) info.get("leader"));
                    led.computeIfAbsent((Integer) info.get("leader"), k -> new ArrayList<>()).add(partition);
                }
                replicas.put(partition, (List<Integer>) info.get("replicas"));
            }
        }
        Map<TopicPartition, OffsetSpec> earliestSpec = new HashMap<>();
        for (TopicPartition partition : replicas.keySet()) {
            earliestSpec.put(partition, OffsetSpec.earliest());
        }
        long wallBefore = System.currentTimeMillis();
        long before = System.nanoTime();
        KafkaFuture<Map<Integer, Map<String, LogDirDescription>>> logDirs = admin.describeLogDirs(led.keySet()).allDescriptions();
        ListOffsetsResult earliestFound = admin.listOffsets(earliestSpec);
        List<Future<Map<TopicPartition, Long>>> ends = new ArrayList<>();
        for (Map.Entry<Integer, List<TopicPartition>> broker : led.entrySet()) {
            Connection connection = cluster.connection(broker.getKey());
            ends.add(cluster.pool().submit(() -> logEnds(connection, broker.getValue())));
        }
        Map<Integer, Map<String, LogDirDescription>> dirs = logDirs.get(timeout, TimeUnit.MILLISECONDS);
        long sizesNanos = before + (System.nanoTime() - before) / 2;
        Map<TopicPartition, Long> sizes = new HashMap<>();
        for (Map.Entry<TopicPartition, Integer> leader : leaders.entrySet()) {
            for (LogDirDescription dir : dirs.getOrDefault(leader.getValue(), Map.of()).values()) {
                ReplicaInfo replica = dir.error() == null ? dir.replicaInfos().get(leader.getKey()) : null;
                if (replica != null && !replica.isFuture()) {
                    sizes.put(leader.getKey(), replica.size());
                }
            }
        }
        Map<TopicPartition, Long> latest = new HashMap<>();
        for (Future<Map<TopicPartition, Long>> end : ends) {
            try {
                latest.putAll(end.get(timeout * 2L, TimeUnit.MILLISECONDS));
            } catch (ExecutionException error) {
                throw error.getCause() instanceof Exception cause ? cause : error;
            }
        }
        long spanNanos = System.nanoTime() - before; // sizes and log ends were read at some moment in it
        Map<TopicPartition, Long> earliest = new HashMap<>();
        for (TopicPartition partition : replicas.keySet()) {
            offset(admin, topics, timeout, earliestFound, partition, earliest);
        }
        return new Snapshot(sizesNanos, wallBefore + (sizesNanos - before) / 1e6, spanNanos, leaders, replicas, sizes, earliest, latest);
    }

    /**
     * The log end offsets of `partitions` on `broker` (their leader): a raw ListOffsets (latest) sent as Kafka's debugging
     * replica (ListOffsetsRequest.DEBUGGING_REPLICA_ID), which the broker answers from its own replica with the log's end,
     * not the high watermark a client gets. The log size is the log's end too: the high watermark trails it by the followers'
     * lag (1.5 s of records after a leader election on a loaded machine), which would count records into the wrong interval.
     * A partition the broker holds no replica of (its leadership moved on) is left out.
     */
    private static Map<TopicPartition, Long> logEnds(Connection broker, List<TopicPartition> partitions) throws Exception {
        Map<String, ListOffsetsRequestData.ListOffsetsTopic> byTopic = new TreeMap<>();
        for (TopicPartition partition : partitions) {
            byTopic.computeIfAbsent(partition.topic(), t -> new ListOffsetsRequestData.ListOffsetsTopic().setName(t)).partitions()
                    .add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(partition.partition())
                            .setTimestamp(ListOffsetsRequest.LATEST_TIMESTAMP));
        }
        ListOffsetsRequest.Builder request = ListOffsetsRequest.Builder.forReplica(ApiKeys.LIST_OFFSETS.latestVersion(), ListOffsetsRequest.DEBUGGING_REPLICA_ID)
                .setTargetTimes(new ArrayList<>(byTopic.values()));
        ListOffsetsResponse response = (ListOffsetsResponse) broker.send(request);
        Map<TopicPartition, Long> ends = new HashMap<>();
        for (ListOffsetsResponseData.ListOffsetsTopicResponse topic : response.topics()) {
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse partition : topic.partitions()) {
                Errors error = Errors.forCode(partition.errorCode());
                if (error == Errors.NONE) {
                    ends.put(new TopicPartition(topic.name(), partition.partitionIndex()), partition.offset());
                } else if (!(error.exception() instanceof org.apache.kafka.common.errors.RetriableException)
                        && error != Errors.UNKNOWN_TOPIC_OR_PARTITION) {
                    throw error.exception();
                }
            }
        }
        return ends;
    }

    /** The partition's offset from `found` into `into`; left out when the partition has no leader now. */
    private static void offset(Admin admin, List<String> topics, int timeout, ListOffsetsResult found, TopicPartition partition,
            Map<TopicPartition, Long> into) throws Exception {
        try {
            into.put(partition, found.partitionResult(partition).get(timeout, TimeUnit.MILLISECONDS).offset());
        } catch (ExecutionException error) {
            Exception reported = deleted(admin, topics, timeout, error);
            if (reported instanceof UnknownTopicOrPartitionException) {
                throw reported;
            }
            if (!(error.getCause() instanceof org.apache.kafka.common.errors.RetriableException)) {
                throw error;
            }
            // a partition without a leader at this moment (LeaderNotAvailable, NotLeaderOrFollower): no offsets in this snapshot
        }
    }

    /** `error`, or, when some of `topics` no longer exist, the unknown-topic error naming them. */
    private static Exception deleted(Admin admin, List<String> topics, int timeout, ExecutionException error) throws Exception {
        List<String> unknown;
        try {
            unknown = missing(admin, topics, timeout);
        } catch (Exception again) {
            return error;
        }
        return unknown.isEmpty() ? error : unknownTopics(unknown);
    }

    /** The topics among `topics` the cluster does not know, in name order. */
    static List<String> missing(Admin admin, Collection<String> topics, int timeout) throws Exception {
        Map<String, KafkaFuture<TopicDescription>> found = admin.describeTopics(topics).topicNameValues();
        List<String> unknown = new ArrayList<>();
        for (String topic : new TreeSet<>(topics)) {
            try {
                found.get(topic).get(timeout, TimeUnit.MILLISECONDS);
            } catch (ExecutionException error) {
                if (!(error.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw error;
                }
                unknown.add(topic);
            }
        }
        return unknown;
    }

    private static UnknownTopicOrPartitionException unknownTopics(List<String> unknown) {
        List<String> quoted = unknown.stream().map(t -> "'" + t + "'").toList();
        return new UnknownTopicOrPartitionException((unknown.size() == 1 ? "topic " : "topics ") + String.join(", ", quoted)
                + (unknown.size() == 1 ? " does" : " do") + " not exist");
    }
}
