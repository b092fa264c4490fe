package kao.jvm;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.ApiVersions;
import org.apache.kafka.clients.ClientResponse;
import org.apache.kafka.clients.ClientUtils;
import org.apache.kafka.clients.ManualMetadataUpdater;
import org.apache.kafka.clients.MetadataRecoveryStrategy;
import org.apache.kafka.clients.NetworkClient;
import org.apache.kafka.clients.NetworkClientUtils;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.message.ConsumerGroupDescribeRequestData;
import org.apache.kafka.common.message.ConsumerGroupDescribeResponseData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.Selector;
import org.apache.kafka.common.requests.ConsumerGroupDescribeRequest;
import org.apache.kafka.common.requests.ConsumerGroupDescribeResponse;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.DescribeGroupsResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.common.utils.internals.LogContext;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * One consumer group of a live cluster, and the topics it involves, as JSON on stdout; Kafka's
 * Admin client and, for what Admin drops (the members' subscriptions and racks), the raw
 * DescribeGroups (classic) or ConsumerGroupDescribe (KIP-848) request to the group's coordinator,
 * decoded with Kafka's own ConsumerProtocol. Translation only: no mapping to the problem format.
 *
 * <p>Usage: Describe BOOTSTRAP (--group GROUP | --list | --broker-configs | --topics) [--command-config FILE]
 * [--timeout-ms T]. With --list: every group of the cluster, {"groups": [{"group_id", "type", "protocol", "state"}]}
 * (Admin listGroups). With --topics: the brokers (as for a group) and every topic that is not internal,
 * {"brokers": [...], "topics": {"TOPIC": {"id": "Uuid", "partitions": [{"partition", "leader", "replicas"}]}}}
 * and "streams_groups": {"GROUP": {"subtopologies": [...], "members": [{"member_id", "process_id"}]}}, every streams
 * group's topology as {@link DescribeStreams} gives it, and its members (or "streams_groups_error" when the cluster cannot say) (the assignment service's view of leaders, racks
 * and topologies). With --broker-configs: every broker's configuration as it reports it,
 * {"brokers": {"ID": {"name": "value"}}} (Admin describeConfigs; sensitive values are null). The group is read
 * again (every 500 ms) until its state is Stable or Empty, or the time is up; the JSON then says the
 * state it had. On failure: one JSON object {"kind", "group", "message"} on stderr and exit status
 * 3 (the cluster cannot be reached or refuses the credentials), 4 (no such group or topic), 5 (any
 * other error Kafka reports). The command config's values are never printed.
 */
public final class Describe {
    private Describe() {
    }

    static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        String usage = "usage: Describe BOOTSTRAP (--group GROUP | --list | --broker-configs | --topics) [--command-config FILE] [--timeout-ms T]";
        if (args.length < 2 || ("--group".equals(args[1]) && args.length < 3)) {
            System.err.println(usage);
            System.exit(2);
        }
        String bootstrap = args[0];
        String mode = args[1];
        String group = "--group".equals(mode) ? args[2] : "";
        String commandConfig = null;
        int timeout = 10_000;
        for (int i = "--group".equals(mode) ? 3 : 2; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--command-config" -> commandConfig = args[i + 1];
                case "--timeout-ms" -> timeout = Integer.parseInt(args[i + 1]);
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        Properties config = clientConfig(bootstrap, commandConfig, timeout);
        int status = 0;
        try {
            Object answer = switch (mode) {
                case "--list" -> listGroups(config, timeout);
                case "--broker-configs" -> brokerConfigs(config, timeout);
                case "--topics" -> clusterTopics(config, timeout);
                case "--group" -> describe(config, group, timeout);
                default -> throw new IllegalArgumentException(usage);
            };
            System.out.println(JSON.writeValueAsString(answer));
        } catch (Throwable error) {
            status = fail(error, group);
        }
        System.exit(status);
    }

    /** The Admin (and raw NetworkClient) configuration: the command config's properties, if any, with the
     * bootstrap servers and the timeouts set over them. */
    static Properties clientConfig(String bootstrap, String commandConfig, int timeout) throws java.io.IOException {
        Properties config = commandConfig == null ? new Properties() : Utils.loadProps(commandConfig);
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        return config;
    }

    /** Reports `error` as the documented JSON object on stderr; the exit status to end with. */
    static int fail(Throwable error, String group) throws Exception {
        Throwable cause = error instanceof ExecutionException && error.getCause() != null ? error.getCause() : error;
        String kind;
        int status;
        if (cause instanceof GroupIdNotFoundException) {
            kind = "unknown_group";
            status = 4;
        } else if (cause instanceof UnknownTopicOrPartitionException) {
            kind = "unknown_topic";
            status = 4;
        } else if (causedBy(cause, AuthenticationException.class) != null) {
            kind = "authentication";
            status = 3;
            cause = causedBy(cause, AuthenticationException.class);
        } else if (unreachable(cause)) {
            kind = "unreachable";
            status = 3;
        } else {
            kind = "kafka";
            status = 5;
        }
        Map<String, Object> failure = new LinkedHashMap<>();
        failure.put("kind", kind);
        failure.put("group", group);
        failure.put("message", cause.getClass().getSimpleName() + ": " + cause.getMessage());
        System.err.println(JSON.writeValueAsString(failure));
        return status;
    }

    /** The first of `error` and its causes that is a `type`, or null. */
    static Throwable causedBy(Throwable error, Class<? extends Throwable> type) {
        for (Throwable cause = error; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            if (type.isInstance(cause)) {
                return cause;
            }
        }
        return null;
    }

    /** A timeout or I/O failure, or a Kafka error caused by one ("Failed to find brokers ..."). */
    private static boolean unreachable(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof org.apache.kafka.common.errors.TimeoutException
                    || cause instanceof java.util.concurrent.TimeoutException
                    || cause instanceof java.io.IOException) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    private static Map<String, Object> listGroups(Properties config, int timeout) throws Exception {
        try (Admin admin = Admin.create(config)) {
            List<GroupListing> listed = new ArrayList<>(admin.listGroups(new ListGroupsOptions()).all().get(timeout, TimeUnit.MILLISECONDS));
            listed.sort(Comparator.comparing(GroupListing::groupId));
            List<Map<String, Object>> groups = new ArrayList<>();
            for (GroupListing listing : listed) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("group_id", listing.groupId());
                entry.put("type", listing.type().map(GroupType::name).orElse(null));
                entry.put("protocol", listing.protocol());
                entry.put("state", listing.groupState().map(Object::toString).orElse(null));
                groups.add(entry);
            }
            return Map.of("groups", groups);
        }
    }

    private static Map<String, Object> brokerConfigs(Properties config, int timeout) throws Exception {
        try (Admin admin = Admin.create(config)) {
            List<ConfigResource> resources = new ArrayList<>();
            for (Node node : admin.describeCluster().nodes().get(timeout, TimeUnit.MILLISECONDS)) {
                resources.add(new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(node.id())));
            }
            Map<ConfigResource, Config> found = admin.describeConfigs(resources).all().get(timeout, TimeUnit.MILLISECONDS);
            Map<String, Object> brokers = new TreeMap<>();
            for (Map.Entry<ConfigResource, Config> broker : found.entrySet()) {
                Map<String, Object> entries = new TreeMap<>();
                for (ConfigEntry entry : broker.getValue().entries()) {
                    entries.put(entry.name(), entry.isSensitive() ? null : entry.value());
                }
                brokers.put(broker.getKey().name(), entries);
            }
            return Map.of("brokers", brokers);
        }
    }

    private static Map<String, Object> describe(Properties config, String group, int timeout) throws Exception {
        long deadline = System.currentTimeMillis() + timeout;
        try (Admin admin = Admin.create(config)) {
            ConsumerGroupDescription description;
            while (true) {
                description = admin.describeConsumerGroups(List.of(group)).all()
                        .get(timeout, TimeUnit.MILLISECONDS).get(group);
                String state = description.groupState().toString();
                boolean settled = state.equalsIgnoreCase("Stable") || state.equalsIgnoreCase("Empty") || state.equalsIgnoreCase("Dead");
                if (settled || System.currentTimeMillis() > deadline) {
                    break;
                }
                Thread.sleep(500);
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("group_id", description.groupId());
            out.put("type", description.type().name());
            out.put("state", description.groupState().toString());
            out.put("assignor", description.partitionAssignor());
            out.put("group_epoch", description.groupEpoch().orElse(null));
            out.put("target_assignment_epoch", description.targetAssignmentEpoch().orElse(null));
            List<Map<String, Object>> members;
            if (description.groupState().toString().equalsIgnoreCase("Dead")) {
                throw new GroupIdNotFoundException("Group " + group + " not found.");
            }
            while (true) {
                try {
                    if (description.type() == GroupType.CONSUMER) {
                        members = consumerMembers(config, description.coordinator(), group, timeout);
                    } else {
                        members = classicMembers(config, description.coordinator(), group, timeout);
                    }
                    break;
                } catch (org.apache.kafka.common.errors.NotCoordinatorException
                        | org.apache.kafka.common.errors.CoordinatorLoadInProgressException moved) {
                    // The coordinator moved (or is loading) between Admin's lookup and the raw request: look it up again.
                    if (System.currentTimeMillis() > deadline) {
                        throw moved;
                    }
                    Thread.sleep(500);
                    description = admin.describeConsumerGroups(List.of(group)).all().get(timeout, TimeUnit.MILLISECONDS).get(group);
                }
            }
            out.put("members", members);
            TreeSet<String> topics = new TreeSet<>();
            for (Map<String, Object> member : members) {
                for (Object topic : (List<?>) member.get("subscriptions")) {
                    topics.add((String) topic);
                }
                for (Object owned : (List<?>) member.get("assignment")) {
                    topics.add((String) ((List<?>) owned).get(0));
                }
            }
            out.put("brokers", brokers(admin, timeout));
            Map<String, Object> described = topics(admin, topics, timeout);
            out.put("topics", described);
            return out;
        }
    }

    /** The cluster's brokers in id order: {"id", "rack", "replica_selector"}; the selector is the broker's
     * `replica.selector.class` (null when unset), or "unknown" when its configuration cannot be read (no
     * DESCRIBE_CONFIGS permission). */
    static List<Map<String, Object>> brokers(Admin admin, int timeout) throws Exception {
        List<Node> nodes = new ArrayList<>(admin.describeCluster().nodes().get(timeout, TimeUnit.MILLISECONDS));
        nodes.sort(Comparator.comparingInt(Node::id));
        Map<String, String> selectors = new TreeMap<>();
        boolean known = true;
        try {
            List<ConfigResource> resources = new ArrayList<>();
            for (Node node : nodes) {
                resources.add(new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(node.id())));
            }
            for (Map.Entry<ConfigResource, Config> found : admin.describeConfigs(resources).all().get(timeout, TimeUnit.MILLISECONDS).entrySet()) {
                ConfigEntry entry = found.getValue().get("replica.selector.class");
                selectors.put(found.getKey().name(), entry == null ? null : entry.value());
            }
        } catch (ExecutionException error) {
            if (!(error.getCause() instanceof org.apache.kafka.common.errors.AuthorizationException)) {
                throw error;
            }
            known = false;
        }
        List<Map<String, Object>> brokers = new ArrayList<>();
        for (Node node : nodes) {
            Map<String, Object> broker = new LinkedHashMap<>();
            broker.put("id", node.id());
            broker.put("rack", node.hasRack() ? node.rack() : null);
            broker.put("replica_selector", known ? selectors.get(String.valueOf(node.id())) : "unknown");
            brokers.add(broker);
        }
        return brokers;
    }

    /** The brokers and every topic that is not internal, each with its id (--topics). */
    private static Map<String, Object> clusterTopics(Properties config, int timeout) throws Exception {
        try (Admin admin = Admin.create(config)) {
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("brokers", brokers(admin, timeout));
            java.util.Set<String> names = admin.listTopics().names().get(timeout, TimeUnit.MILLISECONDS);
            Map<String, Object> topics = new TreeMap<>();
            if (!names.isEmpty()) {
                Map<String, TopicDescription> found = admin.describeTopics(names).allTopicNames().get(timeout, TimeUnit.MILLISECONDS);
                topics.putAll(topics(found));
            }
            answer.put("topics", topics);
            streamsGroups(admin, timeout, answer);
            return answer;
        }
    }

    /** Every KIP-1071 streams group's topology and members into {@code answer}: "streams_groups": {GROUP:
     * {"subtopologies": [...] (each as {@link DescribeStreams#subtopology} gives it), "members": [{"member_id",
     * "process_id"}]}}. A cluster that cannot say (no streams groups API, not
     * authorised) gives none and "streams_groups_error" instead: the topics are what the caller needs most. */
    private static void streamsGroups(Admin admin, int timeout, Map<String, Object> answer) throws Exception {
        Map<String, Object> groups = new TreeMap<>();
        try {
            List<String> ids = new ArrayList<>();
            for (GroupListing listing : admin.listGroups(new ListGroupsOptions().withTypes(java.util.Set.of(GroupType.STREAMS)))
                    .all().get(timeout, TimeUnit.MILLISECONDS)) {
                ids.add(listing.groupId());
            }
            if (!ids.isEmpty()) {
                var described = admin.describeStreamsGroups(ids).all().get(timeout, TimeUnit.MILLISECONDS);
                for (var group : described.entrySet()) {
                    List<org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription> listed = new ArrayList<>(group.getValue().subtopologies());
                    listed.sort(Comparator.comparing(org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription::subtopologyId));
                    List<Map<String, Object>> subtopologies = new ArrayList<>();
                    listed.forEach(subtopology -> subtopologies.add(DescribeStreams.subtopology(subtopology)));
                    List<Map<String, Object>> members = new ArrayList<>();
                    for (var member : group.getValue().members()) {
                        members.add(Map.of("member_id", member.memberId(), "process_id", member.processId()));
                    }
                    members.sort(Comparator.comparing(m -> (String) m.get("member_id")));
                    groups.put(group.getKey(), Map.of("subtopologies", subtopologies, "members", members));
                }
            }
        } catch (ExecutionException error) {
            Throwable cause = error.getCause() == null ? error : error.getCause();
            if (!(cause instanceof org.apache.kafka.common.errors.UnsupportedVersionException
                    || cause instanceof org.apache.kafka.common.errors.AuthorizationException
                    || cause instanceof org.apache.kafka.common.errors.GroupIdNotFoundException)) {
                throw error;
            }
            answer.put("streams_groups_error", cause.toString());
            return;
        }
        answer.put("streams_groups", groups);
    }

    /** The named topics' ids and partitions in partition order: {"TOPIC": {"id": "Uuid", "partitions": [{"partition",
     * "leader", "replicas"}]}}, the leader and replicas as broker ids (the leader null when it has none). */
    static Map<String, Object> topics(Admin admin, java.util.Collection<String> names, int timeout) throws Exception {
        Map<String, Object> described = new TreeMap<>();
        if (names.isEmpty()) {
            return described;
        }
        return topics(admin.describeTopics(names).allTopicNames().get(timeout, TimeUnit.MILLISECONDS));
    }

    private static Map<String, Object> topics(Map<String, TopicDescription> found) {
        Map<String, Object> described = new TreeMap<>();
        for (Map.Entry<String, TopicDescription> topic : found.entrySet()) {
            List<Map<String, Object>> partitions = new ArrayList<>();
            for (TopicPartitionInfo info : topic.getValue().partitions()) {
                Map<String, Object> partition = new LinkedHashMap<>();
                partition.put("partition", info.partition());
                partition.put("leader", info.leader() == null || info.leader().isEmpty() ? null : info.leader().id());
                partition.put("replicas", info.replicas().stream().map(Node::id).toList());
                partitions.add(partition);
            }
            partitions.sort(Comparator.comparingInt(p -> (Integer) p.get("partition")));
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("id", topic.getValue().topicId().toString());
            entry.put("partitions", partitions);
            described.put(topic.getKey(), entry);
        }
        return described;
    }

    /** The classic group as the raw DescribeGroups request gives it (its members' metadata and assignment as bytes);
     * the group's error as Kafka's exception. */
    static DescribeGroupsResponseData.DescribedGroup describedGroup(Properties config, Node coordinator, String group, int timeout) throws Exception {
        DescribeGroupsResponse response = (DescribeGroupsResponse) send(config, coordinator, timeout,
                new DescribeGroupsRequest.Builder(new DescribeGroupsRequestData().setGroups(List.of(group))));
        DescribeGroupsResponseData.DescribedGroup described = response.data().groups().get(0);
        if (described.errorCode() != 0) {
            throw org.apache.kafka.common.protocol.Errors.forCode(described.errorCode()).exception();
        }
        return described;
    }

    /** A classic member's identity: {"member_id", "instance_id", "client_id", "host"}. */
    static Map<String, Object> identity(DescribeGroupsResponseData.DescribedGroupMember raw) {
        Map<String, Object> member = new LinkedHashMap<>();
        member.put("member_id", raw.memberId());
        member.put("instance_id", raw.groupInstanceId());
        member.put("client_id", raw.clientId());
        member.put("host", raw.clientHost());
        return member;
    }

    /** The raw DescribeGroups response's members, their metadata and assignment decoded. */
    private static List<Map<String, Object>> classicMembers(Properties config, Node coordinator, String group, int timeout) throws Exception {
        DescribeGroupsResponseData.DescribedGroup described = describedGroup(config, coordinator, group, timeout);
        List<Map<String, Object>> members = new ArrayList<>();
        for (DescribeGroupsResponseData.DescribedGroupMember raw : described.members()) {
            Map<String, Object> member = identity(raw);
            member.put("protocol", described.protocolData());
            byte[] metadata = raw.memberMetadata();
            if (metadata != null && metadata.length > 0) {
                ConsumerPartitionAssignor.Subscription subscription = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata));
                member.put("rack", subscription.rackId().orElse(null));
                member.put("subscriptions", new ArrayList<>(subscription.topics()));
                member.put("owned_at_join", partitions(subscription.ownedPartitions()));
                member.put("generation", subscription.generationId().orElse(null));
                member.put("has_metadata", true);
            } else {
                member.put("rack", null);
                member.put("subscriptions", List.of());
                member.put("owned_at_join", List.of());
                member.put("generation", null);
                member.put("has_metadata", false);
            }
            byte[] assignment = raw.memberAssignment();
            if (assignment != null && assignment.length > 0) {
                member.put("assignment", partitions(ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(assignment)).partitions()));
            } else {
                member.put("assignment", List.of());
            }
            member.put("member_epoch", null);
            member.put("target_assignment", null);
            members.add(member);
        }
        return members;
    }

    /** The raw ConsumerGroupDescribe response's members (KIP-848). */
    private static List<Map<String, Object>> consumerMembers(Properties config, Node coordinator, String group, int timeout) throws Exception {
        ConsumerGroupDescribeResponse response = (ConsumerGroupDescribeResponse) send(config, coordinator, timeout,
                new ConsumerGroupDescribeRequest.Builder(new ConsumerGroupDescribeRequestData().setGroupIds(List.of(group))));
        ConsumerGroupDescribeResponseData.DescribedGroup described = response.data().groups().get(0);
        if (described.errorCode() != 0) {
            throw org.apache.kafka.common.protocol.Errors.forCode(described.errorCode()).exception(described.errorMessage());
        }
        List<Map<String, Object>> members = new ArrayList<>();
        for (ConsumerGroupDescribeResponseData.Member raw : described.members()) {
            Map<String, Object> member = new LinkedHashMap<>();
            member.put("member_id", raw.memberId());
            member.put("instance_id", raw.instanceId());
            member.put("client_id", raw.clientId());
            member.put("host", raw.clientHost());
            member.put("rack", raw.rackId());
            member.put("subscriptions", new ArrayList<>(raw.subscribedTopicNames()));
            member.put("subscribed_regex", raw.subscribedTopicRegex());
            member.put("assignment", assigned(raw.assignment()));
            member.put("target_assignment", assigned(raw.targetAssignment()));
            member.put("member_epoch", raw.memberEpoch());
            member.put("member_type", raw.memberType());
            member.put("generation", null);
            member.put("has_metadata", true);
            members.add(member);
        }
        return members;
    }

    private static List<List<Object>> assigned(ConsumerGroupDescribeResponseData.Assignment assignment) {
        List<TopicPartition> found = new ArrayList<>();
        for (ConsumerGroupDescribeResponseData.TopicPartitions topic : assignment.topicPartitions()) {
            for (int partition : topic.partitions()) {
                found.add(new TopicPartition(topic.topicName(), partition));
            }
        }
        return partitions(found);
    }

    static List<List<Object>> partitions(List<TopicPartition> partitions) {
        List<TopicPartition> sorted = new ArrayList<>(partitions);
        sorted.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        List<List<Object>> out = new ArrayList<>();
        for (TopicPartition partition : sorted) {
            out.add(List.of(partition.topic(), partition.partition()));
        }
        return out;
    }

    /** One request to `node` over a NetworkClient built from the Admin config (its security settings too). */
    static org.apache.kafka.common.requests.AbstractResponse send(Properties config, Node node, int timeout,
            org.apache.kafka.common.requests.AbstractRequest.Builder<?> request) throws Exception {
        Time time = Time.SYSTEM;
        LogContext logContext = new LogContext("[kao-describe] ");
        AdminClientConfig adminConfig = new AdminClientConfig(config);
        List<String> bootstrap = adminConfig.getList(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG);
        Metrics metrics = new Metrics();
        Selector selector = new Selector(adminConfig.getLong(AdminClientConfig.CONNECTIONS_MAX_IDLE_MS_CONFIG), metrics, time, "kao",
                ClientUtils.createChannelBuilder(adminConfig, time, logContext), logContext);
        NetworkClient client = new NetworkClient(selector, new ManualMetadataUpdater(List.of(node)), "kao-describe", 1, 50, 1000,
                65536, 65536, timeout, 10_000L, 30_000L, time, true, new ApiVersions(), logContext,
                MetadataRecoveryStrategy.NONE, ClientUtils.bootstrapConfiguration(adminConfig, bootstrap), false);
        try {
            if (!NetworkClientUtils.awaitReady(client, node, time, timeout)) {
                throw new java.util.concurrent.TimeoutException("the group coordinator " + node.host() + ":" + node.port() + " was not reachable within " + timeout + " ms");
            }
            ClientResponse response = NetworkClientUtils.sendAndReceive(client,
                    client.newClientRequest(String.valueOf(node.id()), request, time.milliseconds(), true), time);
            return response.responseBody();
        } finally {
            client.close();
            metrics.close();
        }
    }
}
