package kao.plugin;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import kao.plugin.Exchange.InvalidAnswer;

/**
 * The answer checks, free of Kafka's types (the client-side plug-ins load without the broker's
 * classes and the reverse): an assignment is applied only when it is one Kafka could have made
 * for this request. Partitions: every one of a subscribed topic assigned exactly once (under the
 * cooperative protocol, at most once, a partition left out only when a member owns it: it is
 * being revoked), only to members of the request that subscribe to its topic, never moved from
 * its owner to another member in one cooperative rebalance. Tasks: every task active exactly
 * once, only to clients or members of the request, standbys (and warm-ups) only of stateful
 * tasks, a task at most once per process.
 */
final class Answers {
    private Answers() {
    }

    /** A topic (its name, or its id on the broker) and a partition. */
    record Part(String topic, int partition) {
        @Override
        public String toString() {
            return topic + "-" + partition;
        }
    }

    /** What a consumer group's answer is checked against. */
    static final class PartitionRequest {
        /** Members in the request's order. */
        final List<String> members = new ArrayList<>();
        /** Topics and their partition counts. */
        final Map<String, Integer> topics = new HashMap<>();
        final Map<String, Set<String>> subscribed = new HashMap<>();
        /** Cooperative protocol only: the members owning each partition (null under the others). */
        Map<Part, Set<String>> owners;
    }

    static Map<String, List<Part>> partitions(Map<String, Object> assignment, PartitionRequest request) throws InvalidAnswer {
        Map<String, Object> byMember = object(assignment.get("members"), "members");
        Set<String> known = new HashSet<>(request.members);
        for (String member : byMember.keySet()) {
            if (!known.contains(member)) {
                throw new InvalidAnswer("unknown member " + member);
            }
        }
        Map<Part, String> assignedTo = new HashMap<>();
        Map<String, List<Part>> result = new LinkedHashMap<>();
        for (String member : request.members) {
            if (!byMember.containsKey(member)) {
                throw new InvalidAnswer("member " + member + " is missing");
            }
            List<Part> parts = new ArrayList<>();
            Set<String> subscribed = request.subscribed.getOrDefault(member, Set.of());
            for (Object item : list(byMember.get(member), "members." + member)) {
                List<Object> pair = item instanceof List ? cast(item) : null;
                if (pair == null || pair.size() != 2 || !(pair.get(0) instanceof String) || !(pair.get(1) instanceof Long)) {
                    throw new InvalidAnswer("members." + member + ": expected [topic, partition] pairs, got " + Exchange.clip(Json.write(item)));
                }
                String topic = (String) pair.get(0);
                long partition = (Long) pair.get(1);
                Integer count = request.topics.get(topic);
                if (count == null) {
                    throw new InvalidAnswer("unknown topic " + topic + " (given to member " + member + ")");
                }
                if (partition < 0 || partition >= count) {
                    throw new InvalidAnswer("unknown partition " + topic + "-" + partition + " (" + count + " partitions; given to member " + member + ")");
                }
                Part part = new Part(topic, (int) partition);
                if (!subscribed.contains(topic)) {
                    throw new InvalidAnswer("partition " + part + " given to member " + member + ", which does not subscribe to " + topic);
                }
                String before = assignedTo.put(part, member);
                if (before != null) {
                    throw new InvalidAnswer("partition " + part + " assigned twice (to " + before + " and " + member + ")");
                }
                if (request.owners != null) {
                    Set<String> owners = request.owners.getOrDefault(part, Set.of());
                    if (!owners.isEmpty() && !owners.contains(member)) {
                        throw new InvalidAnswer("partition " + part + " moves from " + new TreeSet<>(owners) + " to " + member
                            + " in one cooperative rebalance (it must be revoked first)");
                    }
                }
                parts.add(part);
            }
            result.put(member, parts);
        }
        Set<String> wanted = new TreeSet<>();
        request.subscribed.values().forEach(wanted::addAll);
        for (String topic : wanted) {
            Integer count = request.topics.get(topic);
            for (int p = 0; count != null && p < count; p++) {
                Part part = new Part(topic, p);
                if (!assignedTo.containsKey(part)) {
                    boolean revoked = request.owners != null && !request.owners.getOrDefault(part, Set.of()).isEmpty();
                    if (!revoked) {
                        throw new InvalidAnswer("partition " + part + " is not assigned");
                    }
                }
            }
        }
        return result;
    }

    /** A client's (KIP-924) or a member's (streams group) tasks. */
    static final class Tasks {
        final List<String> active = new ArrayList<>();
        final List<String> standby = new ArrayList<>();
    }

    /** What a Streams answer is checked against. */
    static final class TaskRequest {
        /** "client" (KIP-924: a KafkaStreams process) or "member" (a streams group's member). */
        final String owner;
        /** Owners in the request's order, and each one's process. */
        final Map<String, String> processOf = new LinkedHashMap<>();
        final Set<String> tasks = new HashSet<>();
        final Set<String> stateful = new HashSet<>();
        /** Whether the answer may hold warm-up tasks (a streams group's 4.4 API has none). */
        final boolean warmups;

        TaskRequest(String owner, boolean warmups) {
            this.owner = owner;
            this.warmups = warmups;
        }
    }

    static Map<String, Tasks> tasks(Map<String, Object> byOwner, TaskRequest request) throws InvalidAnswer {
        for (String owner : byOwner.keySet()) {
            if (!request.processOf.containsKey(owner)) {
                throw new InvalidAnswer("unknown " + request.owner + " " + owner);
            }
        }
        Map<String, String> activeOn = new HashMap<>();
        Map<String, Map<String, String>> onProcess = new HashMap<>();
        Map<String, Tasks> result = new LinkedHashMap<>();
        for (Map.Entry<String, String> entry : request.processOf.entrySet()) {
            String owner = entry.getKey();
            if (!byOwner.containsKey(owner)) {
                throw new InvalidAnswer(request.owner + " " + owner + " is missing");
            }
            String where = request.owner + " " + owner;
            Map<String, Object> given = object(byOwner.get(owner), where);
            Tasks tasks = new Tasks();
            Map<String, String> processTasks = onProcess.computeIfAbsent(entry.getValue(), k -> new HashMap<>());
            for (String task : taskList(given, "active", where, true)) {
                known(task, request, where);
                String before = activeOn.put(task, owner);
                if (before != null) {
                    throw new InvalidAnswer("active task " + task + " assigned twice (to " + before + " and " + owner + ")");
                }
                once(processTasks, task, owner, "active", request);
                tasks.active.add(task);
            }
            for (String kind : List.of("standby", "warmup")) {
                List<String> listed = taskList(given, kind, where, kind.equals("standby"));
                if (!listed.isEmpty() && kind.equals("warmup") && !request.warmups) {
                    throw new InvalidAnswer(where + " has warm-up tasks, which Kafka's 4.4 streams-group assignor API cannot take");
                }
                for (String task : listed) {
                    known(task, request, where);
                    if (!request.stateful.contains(task)) {
                        throw new InvalidAnswer(kind + " of stateless task " + task + " (given to " + owner + ")");
                    }
                    once(processTasks, task, owner, kind, request);
                    tasks.standby.add(task);
                }
            }
            result.put(owner, tasks);
        }
        for (String task : new TreeSet<>(request.tasks)) {
            if (!activeOn.containsKey(task)) {
                throw new InvalidAnswer("task " + task + " has no active " + request.owner);
            }
        }
        return result;
    }

    private static void known(String task, TaskRequest request, String where) throws InvalidAnswer {
        if (!request.tasks.contains(task)) {
            throw new InvalidAnswer("unknown task " + task + " (given to " + where + ")");
        }
    }

    private static void once(Map<String, String> processTasks, String task, String owner, String kind, TaskRequest request) throws InvalidAnswer {
        String before = processTasks.put(task, kind + " on " + owner);
        if (before != null) {
            throw new InvalidAnswer("task " + task + " twice in one process: " + before + " and " + kind + " on " + owner);
        }
    }

    private static List<String> taskList(Map<String, Object> given, String key, String where, boolean required) throws InvalidAnswer {
        Object value = given.get(key);
        if (value == null && !required) {
            return List.of();
        }
        List<String> tasks = new ArrayList<>();
        for (Object task : list(value, where + "." + key)) {
            if (!(task instanceof String)) {
                throw new InvalidAnswer(where + "." + key + ": a task is a string like \"0_1\", got " + Exchange.clip(Json.write(task)));
            }
            tasks.add((String) task);
        }
        return tasks;
    }

    static Map<String, Object> object(Object value, String where) throws InvalidAnswer {
        if (!(value instanceof Map)) {
            throw new InvalidAnswer(where + ": expected an object, got " + Exchange.clip(Json.write(value)));
        }
        return cast(value);
    }

    static List<Object> list(Object value, String where) throws InvalidAnswer {
        if (!(value instanceof List)) {
            throw new InvalidAnswer(where + ": expected a list, got " + Exchange.clip(Json.write(value)));
        }
        return cast(value);
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object value) {
        return (T) value;
    }

    /** Sorted strings of a collection, for a request written in a fixed order. */
    static List<String> sorted(Collection<String> values) {
        return new ArrayList<>(new TreeSet<>(values));
    }
}
