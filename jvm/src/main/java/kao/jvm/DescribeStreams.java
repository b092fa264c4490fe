package kao.jvm;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeStreamsGroupsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.CoordinatorLoadInProgressException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.NotCoordinatorException;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.assignment.AssignmentInfo;
import org.apache.kafka.streams.processor.internals.assignment.SubscriptionInfo;

/**
 * One Kafka Streams application of a live cluster, as JSON on stdout: a classic one (group.protocol
 * classic: a classic group whose members chose the `stream` assignor) or a KIP-1071 streams group
 * (group.protocol streams). Translation only, no mapping to the problem format; Kafka's own classes
 * decode what the cluster holds (docs/import-design.md, sections 3 and 4).
 *
 * <p>Usage: DescribeStreams BOOTSTRAP --application-id A [--command-config FILE] [--timeout-ms T].
 *
 * <p>The group is read again (every 500 ms) until it is Stable (and, classic, every member's metadata is
 * there), Empty or Dead, or the time is up; the JSON then says the state it had, and only what follows
 * up to {@code members} unless the group is Stable. It has:
 * <ul>
 * <li>{@code application_id}, {@code protocol} ("classic", "streams", or null for a group that is not a Streams
 * application: {@code type} and {@code assignor} then say what it is), {@code type}, {@code state}, {@code assignor}
 * (classic: "stream"; streams: the broker's assignor), the epochs (streams);</li>
 * <li>{@code members}: classic, one per stream thread from the raw DescribeGroups response, the Subscription and
 * its SubscriptionInfo (process id, previous and standby tasks, task offset sums, client tags, user end point) and
 * the Assignment and its AssignmentInfo ({@code active_tasks}: [task, [topic, partition]] pairs, the active tasks
 * zipped with the member's assigned partitions sorted by topic then partition, as Streams' onAssignment does;
 * {@code standby_tasks}: task -> its source partitions; error code, next rebalance time); streams, one per stream
 * thread from describeStreamsGroups: process id, rack, client tags, current and target assignment (active, standby,
 * warm-up task ids), task offsets and task end offsets as last reported;</li>
 * <li>{@code subtopologies} (streams: source, repartition source and sink, and changelog topics) or {@code tasks}
 * (classic: every active task with its source partitions, recovered from the assignments);</li>
 * <li>{@code changelog_topics} (streams: the subtopologies' state changelog topics; classic: the topics named
 * {@code <application id>-*-changelog}, without those of another group whose id extends the application id),
 * {@code end_offsets} (their latest offsets, listOffsets, one per partition in partition order);</li>
 * <li>{@code group_configs} (streams: the GROUP resource's entries, value and source) and
 * {@code broker_group_configs} (a broker's {@code group.streams.*} entries: the defaults);</li>
 * <li>{@code brokers} and {@code topics} as {@link Describe} gives them.</li>
 * </ul>
 * Task ids are TaskId.toString(): "SUBTOPOLOGY_PARTITION". Failures as {@link Describe}'s: one JSON object on stderr,
 * exit 3 (unreachable, authentication), 4 (no such group or topic), 5 (other).
 */
public final class DescribeStreams {
    private DescribeStreams() {
    }

    private static final long POLL_MS = 500;

    public static void main(String[] args) throws Exception {
        String usage = "usage: DescribeStreams BOOTSTRAP --application-id A [--command-config FILE] [--timeout-ms T]";
        if (args.length < 3 || !"--application-id".equals(args[1])) {
            System.err.println(usage);
            System.exit(2);
        }
        String bootstrap = args[0];
        String application = args[2];
        String commandConfig = null;
        int timeout = 10_000;
        for (int i = 3; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                System.err.println("option " + args[i] + " needs a value");
                System.exit(2);
            }
            switch (args[i]) {
                case "--command-config" -> commandConfig = args[i + 1];
                case "--timeout-ms" -> timeout = Integer.parseInt(args[i + 1]);
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        Properties config = Describe.clientConfig(bootstrap, commandConfig, timeout);
        int status = 0;
        try {
            System.out.println(Describe.JSON.writeValueAsString(describe(config, application, timeout)));
        } catch (Throwable error) {
            status = Describe.fail(error, application);
        }
        System.exit(status);
    }

    private static boolean settled(String state) {
        return state.equalsIgnoreCase("Stable") || state.equalsIgnoreCase("Empty") || state.equalsIgnoreCase("Dead");
    }

    private static Map<String, Object> describe(Properties config, String application, int timeout) throws Exception {
        long deadline = System.currentTimeMillis() + timeout;
        try (Admin admin = Admin.create(config)) {
            StreamsGroupDescription streams = streamsGroup(admin, application, timeout);
            if (streams != null) {
                return describeStreamsGroup(admin, application, streams, timeout, deadline);
            }
            return describeClassic(admin, config, application, timeout, deadline);
        }
    }

    /** The streams group `application`, or null when the group is not a streams group (or does not exist). */
    private static StreamsGroupDescription streamsGroup(Admin admin, String application, int timeout) throws Exception {
        try {
            return admin.describeStreamsGroups(List.of(application), new DescribeStreamsGroupsOptions()).all()
                    .get(timeout, TimeUnit.MILLISECONDS).get(application);
        } catch (ExecutionException error) {
            if (error.getCause() instanceof GroupIdNotFoundException) {
                return null;
            }
            throw error;
        }
    }

    // ---- KIP-1071 streams groups ----

    private static Map<String, Object> describeStreamsGroup(Admin admin, String application, StreamsGroupDescription first, int timeout,
            long deadline) throws Exception {
        StreamsGroupDescription description = first;
        while (!settled(description.groupState().toString()) && System.currentTimeMillis() <= deadline) {
            Thread.sleep(POLL_MS);
            description = streamsGroup(admin, application, timeout);
            if (description == null) {
                throw new GroupIdNotFoundException("Group " + application + " not found.");
            }
        }
        if (description.groupState().toString().equalsIgnoreCase("Dead")) {
            throw new GroupIdNotFoundException("Group " + application + " not found.");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("application_id", application);
        out.put("protocol", "streams");
        out.put("type", GroupType.STREAMS.name());
        out.put("state", description.groupState().toString());
        out.put("assignor", description.assignorName().orElse(null));
        out.put("group_epoch", description.groupEpoch());
        out.put("target_assignment_epoch", description.targetAssignmentEpoch());
        out.put("topology_epoch", description.topologyEpoch());
        List<StreamsGroupMemberDescription> sorted = new ArrayList<>(description.members());
        sorted.sort(Comparator.comparing(StreamsGroupMemberDescription::processId).thenComparing(StreamsGroupMemberDescription::clientId)
                .thenComparing(StreamsGroupMemberDescription::memberId));
        List<Map<String, Object>> members = new ArrayList<>();
        for (StreamsGroupMemberDescription member : sorted) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("member_id", member.memberId());
            entry.put("member_epoch", member.memberEpoch());
            entry.put("process_id", member.processId());
            entry.put("client_id", member.clientId());
            entry.put("host", member.clientHost());
            entry.put("instance_id", member.instanceId().orElse(null));
            entry.put("rack", member.rackId().orElse(null));
            entry.put("client_tags", new TreeMap<>(member.clientTags()));
            entry.put("user_endpoint", member.userEndpoint().map(e -> e.host() + ":" + e.port()).orElse(null));
            entry.put("topology_epoch", member.topologyEpoch());
            entry.put("is_classic", member.isClassic());
            entry.put("assignment", assignment(member.assignment()));
            entry.put("target_assignment", assignment(member.targetAssignment()));
            entry.put("task_offsets", offsets(member.taskOffsets()));
            entry.put("task_end_offsets", offsets(member.taskEndOffsets()));
            members.add(entry);
        }
        out.put("members", members);
        if (!description.groupState().toString().equalsIgnoreCase("Stable")) {
            return out; // still rebalancing (or empty) when the time was up: the state says it, the topics may not exist yet
        }
        List<StreamsGroupSubtopologyDescription> subtopologyList = new ArrayList<>(description.subtopologies());
        subtopologyList.sort(Comparator.comparing(StreamsGroupSubtopologyDescription::subtopologyId));
        List<Map<String, Object>> subtopologies = new ArrayList<>();
        TreeSet<String> topics = new TreeSet<>();
        TreeSet<String> changelogs = new TreeSet<>();
        for (StreamsGroupSubtopologyDescription subtopology : subtopologyList) {
            subtopologies.add(subtopology(subtopology));
            topics.addAll(subtopology.sourceTopics());
            topics.addAll(subtopology.repartitionSourceTopics().keySet());
            changelogs.addAll(subtopology.stateChangelogTopics().keySet());
        }
        out.put("subtopologies", subtopologies);
        topics.addAll(changelogs);
        out.put("changelog_topics", new ArrayList<>(changelogs));
        Map<String, Object> described = Describe.topics(admin, topics, timeout);
        out.put("end_offsets", endOffsets(admin, changelogs, described, timeout));
        out.put("group_configs", groupConfigs(admin, application, timeout));
        List<Map<String, Object>> brokers = Describe.brokers(admin, timeout);
        out.put("broker_group_configs", brokerGroupConfigs(admin, brokers, timeout));
        out.put("brokers", brokers);
        out.put("topics", described);
        return out;
    }

    private static Map<String, Object> assignment(StreamsGroupMemberAssignment assignment) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("active", taskIds(assignment.activeTasks()));
        out.put("standby", taskIds(assignment.standbyTasks()));
        out.put("warmup", taskIds(assignment.warmupTasks()));
        return out;
    }

    private static List<String> taskIds(List<StreamsGroupMemberAssignment.TaskIds> tasks) {
        List<TaskId> ids = new ArrayList<>();
        List<String> unparsed = new ArrayList<>();
        for (StreamsGroupMemberAssignment.TaskIds subtopology : tasks) {
            for (int partition : subtopology.partitions()) {
                try {
                    ids.add(new TaskId(Integer.parseInt(subtopology.subtopologyId()), partition));
                } catch (NumberFormatException named) {
                    unparsed.add(subtopology.subtopologyId() + "_" + partition);
                }
            }
        }
        List<String> out = new ArrayList<>();
        new TreeSet<>(ids).forEach(id -> out.add(id.toString()));
        unparsed.stream().sorted().forEach(out::add);
        return out;
    }

    private static Map<String, Long> offsets(List<StreamsGroupMemberDescription.TaskOffset> offsets) {
        Map<String, Long> out = new TreeMap<>();
        for (StreamsGroupMemberDescription.TaskOffset offset : offsets) {
            out.put(offset.subtopologyId() + "_" + offset.partition(), offset.offset());
        }
        return out;
    }

    /** One subtopology: {"id", "source_topics", "repartition_source_topics", "repartition_sink_topics",
     * "state_changelog_topics"}, the repartition sources and changelogs with their partitions and replication factor. */
    static Map<String, Object> subtopology(StreamsGroupSubtopologyDescription subtopology) {
        Map<String, Object> entry = new LinkedHashMap<>();
        entry.put("id", subtopology.subtopologyId());
        entry.put("source_topics", new TreeSet<>(subtopology.sourceTopics()));
        entry.put("repartition_source_topics", topicInfos(subtopology.repartitionSourceTopics()));
        entry.put("repartition_sink_topics", new TreeSet<>(subtopology.repartitionSinkTopics()));
        entry.put("state_changelog_topics", topicInfos(subtopology.stateChangelogTopics()));
        return entry;
    }

    private static Map<String, Object> topicInfos(Map<String, StreamsGroupSubtopologyDescription.TopicInfo> infos) {
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<String, StreamsGroupSubtopologyDescription.TopicInfo> info : infos.entrySet()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("partitions", info.getValue().partitions());
            entry.put("replication_factor", info.getValue().replicationFactor());
            out.put(info.getKey(), entry);
        }
        return out;
    }

    /** The GROUP resource's configuration: name -> {value, source}. */
    private static Map<String, Object> groupConfigs(Admin admin, String application, int timeout) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, application);
        Config found = admin.describeConfigs(List.of(resource)).all().get(timeout, TimeUnit.MILLISECONDS).get(resource);
        return entries(found, "");
    }

    /** One broker's `group.streams.*` configuration (the defaults of the group configs), or {} when it cannot be read. */
    private static Map<String, Object> brokerGroupConfigs(Admin admin, List<Map<String, Object>> brokers, int timeout) throws Exception {
        if (brokers.isEmpty()) {
            return Map.of();
        }
        ConfigResource resource = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(brokers.get(0).get("id")));
        try {
            return entries(admin.describeConfigs(List.of(resource)).all().get(timeout, TimeUnit.MILLISECONDS).get(resource), "group.streams.");
        } catch (ExecutionException error) {
            if (error.getCause() instanceof org.apache.kafka.common.errors.AuthorizationException) {
                return Map.of();
            }
            throw error;
        }
    }

    private static Map<String, Object> entries(Config config, String prefix) {
        Map<String, Object> out = new TreeMap<>();
        if (config == null) {
            return out;
        }
        for (ConfigEntry entry : config.entries()) {
            if (!entry.name().startsWith(prefix)) {
                continue;
            }
            Map<String, Object> value = new LinkedHashMap<>();
            value.put("value", entry.isSensitive() ? null : entry.value());
            value.put("source", entry.source() == null ? null : entry.source().name());
            out.put(entry.name(), value);
        }
        return out;
    }

    /** Latest offsets of the named topics' partitions: {"TOPIC": [offset of partition 0, 1, ...]}. */
    private static Map<String, Object> endOffsets(Admin admin, Collection<String> names, Map<String, Object> described, int timeout) throws Exception {
        Map<TopicPartition, OffsetSpec> wanted = new LinkedHashMap<>();
        Map<String, Integer> counts = new TreeMap<>();
        for (String name : names) {
            Object topic = described.get(name);
            if (topic == null) {
                continue;
            }
            List<?> partitions = (List<?>) ((Map<?, ?>) topic).get("partitions");
            counts.put(name, partitions.size());
            for (int p = 0; p < partitions.size(); p++) {
                wanted.put(new TopicPartition(name, p), OffsetSpec.latest());
            }
        }
        Map<String, Object> out = new TreeMap<>();
        if (wanted.isEmpty()) {
            return out;
        }
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> found = admin.listOffsets(wanted).all().get(timeout, TimeUnit.MILLISECONDS);
        for (Map.Entry<String, Integer> topic : counts.entrySet()) {
            List<Long> offsets = new ArrayList<>();
            for (int p = 0; p < topic.getValue(); p++) {
                offsets.add(found.get(new TopicPartition(topic.getKey(), p)).offset());
            }
            out.put(topic.getKey(), offsets);
        }
        return out;
    }

    // ---- classic Kafka Streams applications ----

    private static Map<String, Object> describeClassic(Admin admin, Properties config, String application, int timeout, long deadline)
            throws Exception {
        ConsumerGroupDescription description;
        List<Map<String, Object>> members = null;
        while (true) {
            description = admin.describeConsumerGroups(List.of(application)).all().get(timeout, TimeUnit.MILLISECONDS).get(application);
            String state = description.groupState().toString();
            if (state.equalsIgnoreCase("Dead")) {
                throw new GroupIdNotFoundException("Group " + application + " not found.");
            }
            boolean streamsApp = description.type() == GroupType.CLASSIC && "stream".equals(description.partitionAssignor());
            if (!streamsApp && (state.equalsIgnoreCase("Stable") || description.type() != GroupType.CLASSIC)) {
                return notStreams(description); // a rebalancing classic group may not name its assignor yet: wait for it
            }
            if (state.equalsIgnoreCase("Stable")) {
                try {
                    members = classicMembers(config, description.coordinator(), application, timeout);
                } catch (NotCoordinatorException | CoordinatorLoadInProgressException moved) {
                    // the coordinator moved between Admin's lookup and the raw request: look it up again
                    if (System.currentTimeMillis() > deadline) {
                        throw moved;
                    }
                    Thread.sleep(POLL_MS);
                    continue;
                }
                boolean complete = members.stream().allMatch(m -> Boolean.TRUE.equals(m.get("has_metadata")) && Boolean.TRUE.equals(m.get("has_assignment")));
                if (complete || System.currentTimeMillis() > deadline) {
                    break;
                }
            } else if (state.equalsIgnoreCase("Empty") || System.currentTimeMillis() > deadline) {
                break;
            }
            Thread.sleep(POLL_MS);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("application_id", application);
        out.put("protocol", "stream".equals(description.partitionAssignor()) ? "classic" : null);
        out.put("type", description.type().name());
        out.put("state", description.groupState().toString());
        out.put("assignor", description.partitionAssignor());
        if (members == null) {
            members = List.of();
        }
        out.put("members", members);
        boolean complete = members.stream().allMatch(m -> Boolean.TRUE.equals(m.get("has_metadata")) && Boolean.TRUE.equals(m.get("has_assignment")));
        if (!description.groupState().toString().equalsIgnoreCase("Stable") || !complete || members.isEmpty()) {
            return out; // still rebalancing (or empty) when the time was up: the state and the members say it
        }
        // every active task with its source partitions: activeTasks zipped with the sorted assigned partitions
        Map<TaskId, TreeSet<String>> tasks = new TreeMap<>();
        Map<TaskId, List<List<Object>>> taskPartitions = new TreeMap<>();
        TreeSet<String> topics = new TreeSet<>();
        for (Map<String, Object> member : members) {
            for (Object topic : (List<?>) member.get("subscriptions")) {
                topics.add((String) topic);
            }
            for (Object pair : (List<?>) member.get("active_tasks")) {
                TaskId task = TaskId.parse((String) ((List<?>) pair).get(0));
                @SuppressWarnings("unchecked")
                List<Object> partition = (List<Object>) ((List<?>) pair).get(1);
                topics.add((String) partition.get(0));
                if (tasks.computeIfAbsent(task, t -> new TreeSet<>()).add(partition.get(0) + "\u0000" + partition.get(1))) {
                    taskPartitions.computeIfAbsent(task, t -> new ArrayList<>()).add(partition);
                }
            }
        }
        List<Map<String, Object>> taskList = new ArrayList<>();
        for (Map.Entry<TaskId, List<List<Object>>> task : taskPartitions.entrySet()) {
            List<List<Object>> partitions = new ArrayList<>(task.getValue());
            partitions.sort(Comparator.comparing((List<Object> p) -> (String) p.get(0)).thenComparingInt(p -> (Integer) p.get(1)));
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("id", task.getKey().toString());
            entry.put("source_partitions", partitions);
            taskList.add(entry);
        }
        out.put("tasks", taskList);
        List<String> changelogs = classicChangelogs(admin, application, timeout);
        out.put("changelog_topics", changelogs);
        topics.addAll(changelogs);
        Map<String, Object> described = Describe.topics(admin, topics, timeout);
        out.put("end_offsets", endOffsets(admin, changelogs, described, timeout));
        out.put("group_configs", Map.of());
        List<Map<String, Object>> brokers = Describe.brokers(admin, timeout);
        out.put("broker_group_configs", Map.of());
        out.put("brokers", brokers);
        out.put("topics", described);
        return out;
    }

    /** What a group that is not a Streams application is (the caller says so). */
    private static Map<String, Object> notStreams(ConsumerGroupDescription description) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("application_id", description.groupId());
        out.put("protocol", null);
        out.put("type", description.type().name());
        out.put("state", description.groupState().toString());
        out.put("assignor", description.partitionAssignor());
        out.put("members", List.of());
        return out;
    }

    /**
     * The topics named `<application>-*-changelog`, in name order, without those of another group whose id extends the
     * application id (`app-x-store-changelog` belongs to `app-x` when such a group exists, not to `app`).
     */
    private static List<String> classicChangelogs(Admin admin, String application, int timeout) throws Exception {
        String prefix = application + "-";
        TreeSet<String> found = new TreeSet<>();
        for (String name : admin.listTopics(new ListTopicsOptions().listInternal(false)).names().get(timeout, TimeUnit.MILLISECONDS)) {
            if (name.startsWith(prefix) && name.endsWith("-changelog") && name.length() > prefix.length() + "-changelog".length()) {
                found.add(name);
            }
        }
        if (found.isEmpty()) {
            return List.of();
        }
        List<String> others = new ArrayList<>();
        try {
            for (GroupListing listing : admin.listGroups(new ListGroupsOptions()).all().get(timeout, TimeUnit.MILLISECONDS)) {
                if (listing.groupId().startsWith(prefix)) {
                    others.add(listing.groupId() + "-");
                }
            }
        } catch (ExecutionException error) {
            if (!(error.getCause() instanceof org.apache.kafka.common.errors.AuthorizationException)) {
                throw error;
            }
        }
        found.removeIf(name -> others.stream().anyMatch(name::startsWith));
        return new ArrayList<>(found);
    }

    /** The raw DescribeGroups response's members: the Streams subscription and assignment decoded. */
    private static List<Map<String, Object>> classicMembers(Properties config, Node coordinator, String group, int timeout) throws Exception {
        DescribeGroupsResponseData.DescribedGroup described = Describe.describedGroup(config, coordinator, group, timeout);
        List<Map<String, Object>> members = new ArrayList<>();
        for (DescribeGroupsResponseData.DescribedGroupMember raw : described.members()) {
            Map<String, Object> member = Describe.identity(raw);
            byte[] metadata = raw.memberMetadata();
            boolean hasMetadata = metadata != null && metadata.length > 0;
            member.put("has_metadata", hasMetadata);
            if (hasMetadata) {
                ConsumerPartitionAssignor.Subscription subscription = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(metadata));
                member.put("rack", subscription.rackId().orElse(null));
                member.put("subscriptions", new ArrayList<>(new TreeSet<>(subscription.topics())));
                member.put("generation", subscription.generationId().orElse(null));
                SubscriptionInfo info = SubscriptionInfo.decode(subscription.userData().duplicate());
                member.put("subscription_version", info.version());
                member.put("process_id", info.processId().id().toString());
                member.put("user_endpoint", info.userEndPoint());
                member.put("client_tags", new TreeMap<>(info.clientTags()));
                member.put("prev_tasks", taskNames(info.prevTasks()));
                member.put("prev_standby_tasks", taskNames(info.standbyTasks()));
                Map<String, Long> sums = new TreeMap<>();
                info.taskOffsetSums().forEach((task, sum) -> sums.put(task.toString(), sum));
                member.put("task_offset_sums", sums);
            } else {
                member.put("rack", null);
                member.put("subscriptions", List.of());
                member.put("generation", null);
                member.put("process_id", null);
                member.put("client_tags", Map.of());
                member.put("prev_tasks", List.of());
                member.put("prev_standby_tasks", List.of());
                member.put("task_offset_sums", Map.of());
            }
            byte[] assigned = raw.memberAssignment();
            boolean hasAssignment = assigned != null && assigned.length > 0;
            member.put("has_assignment", hasAssignment);
            List<TopicPartition> partitions = new ArrayList<>();
            List<List<Object>> activeTasks = new ArrayList<>();
            Map<String, Object> standbyTasks = new TreeMap<>();
            if (hasAssignment) {
                ConsumerPartitionAssignor.Assignment assignment = ConsumerProtocol.deserializeAssignment(ByteBuffer.wrap(assigned));
                partitions.addAll(assignment.partitions());
                partitions.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
                AssignmentInfo info = AssignmentInfo.decode(assignment.userData().duplicate());
                List<TaskId> active = info.activeTasks();
                if (active.size() != partitions.size()) {
                    throw new IllegalStateException("member " + raw.memberId() + " of " + group + " has " + partitions.size()
                            + " assigned partitions but " + active.size() + " active task entries");
                }
                for (int i = 0; i < partitions.size(); i++) {
                    activeTasks.add(List.of(active.get(i).toString(), List.of(partitions.get(i).topic(), partitions.get(i).partition())));
                }
                for (Map.Entry<TaskId, Set<TopicPartition>> standby : new TreeMap<>(info.standbyTasks()).entrySet()) {
                    standbyTasks.put(standby.getKey().toString(), Describe.partitions(new ArrayList<>(standby.getValue())));
                }
                member.put("assignment_version", info.version());
                member.put("assignment_error_code", info.errCode());
                member.put("next_rebalance_ms", info.nextRebalanceMs() == Long.MAX_VALUE ? null : info.nextRebalanceMs());
            }
            member.put("assignment", Describe.partitions(partitions));
            member.put("active_tasks", activeTasks);
            member.put("standby_tasks", standbyTasks);
            members.add(member);
        }
        members.sort(Comparator.comparing((Map<String, Object> m) -> String.valueOf(m.get("process_id")))
                .thenComparing(m -> String.valueOf(m.get("client_id"))).thenComparing(m -> String.valueOf(m.get("member_id"))));
        return members;
    }

    private static List<String> taskNames(Set<TaskId> tasks) {
        List<String> out = new ArrayList<>();
        new TreeSet<>(tasks).forEach(task -> out.add(task.toString()));
        return out;
    }
}
