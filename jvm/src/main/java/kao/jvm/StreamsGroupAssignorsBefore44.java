package kao.jvm;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The streams-group adapter for Kafka 4.1 to 4.3, whose assignor API (package
 * `org.apache.kafka.coordinator.group.streams.assignor`: GroupSpecImpl of AssignmentMemberSpec
 * and a map of assignment configs; TopologyDescriber there too) is not the 4.4 API this module
 * compiles against: Kafka's classes are reached by reflection, on that release's jars
 * (`batch(..., release="4.3.1")`). Same JSON as StreamsGroupAssignors. Each member becomes an
 * AssignmentMemberSpec (its tasks as given, which these releases' coordinator takes from the
 * member's target assignment); the members go into a HashMap in the order listed; the configs
 * map holds `num.standby.replicas`.
 */
public final class StreamsGroupAssignorsBefore44 {
    private static final String PACKAGE = "org.apache.kafka.coordinator.group.streams.assignor.";

    private StreamsGroupAssignorsBefore44() {
    }

    public static void main(String[] args) throws Exception {
        Batch.run(StreamsGroupAssignorsBefore44::assign);
    }

    private static Class<?> kafka(String name) {
        try {
            return Class.forName(PACKAGE + name);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("this Kafka release has no " + PACKAGE + name, e);
        }
    }

    private static RuntimeException unwrap(Exception error) {
        Throwable cause = error instanceof InvocationTargetException ? error.getCause() : error;
        return cause instanceof RuntimeException ? (RuntimeException) cause : new IllegalStateException(cause);
    }

    private static ObjectNode assign(JsonNode group) {
        try {
            return assignReflectively(group);
        } catch (ReflectiveOperationException error) {
            throw unwrap(error);
        }
    }

    private static ObjectNode assignReflectively(JsonNode group) throws ReflectiveOperationException {
        Class<?> taskId = kafka("TaskId");
        Constructor<?> newTaskId = taskId.getConstructor(String.class, int.class);
        Constructor<?> newMember = kafka("AssignmentMemberSpec").getConstructor(
            Optional.class, Optional.class, Map.class, Map.class, Map.class, String.class, Map.class, Map.class, Map.class);
        Map<String, Object> members = new HashMap<>();
        for (JsonNode member : group.get("members")) {
            Optional<String> rack = member.hasNonNull("rack") ? Optional.of(member.get("rack").asText()) : Optional.empty();
            members.put(member.get("member_id").asText(), newMember.newInstance(
                Optional.empty(), rack,
                StreamsGroupJson.tasks(member.get("active")), StreamsGroupJson.tasks(member.get("standby")), StreamsGroupJson.tasks(member.get("warmup")),
                member.get("process_id").asText(), StreamsGroupJson.tags(member.get("client_tags")),
                offsets(member.get("task_offsets"), newTaskId), offsets(member.get("task_end_offsets"), newTaskId)));
        }
        Map<String, String> configs = new HashMap<>();
        configs.put("num.standby.replicas", Integer.toString(group.get("num_standby_replicas").asInt()));
        Object spec = kafka("GroupSpecImpl").getConstructor(Map.class, Map.class).newInstance(members, configs);

        Class<?> describerType = kafka("TopologyDescriber");
        List<String> ids = new ArrayList<>();
        Map<String, JsonNode> subtopologies = new HashMap<>();
        for (JsonNode subtopology : group.get("subtopologies")) {
            ids.add(subtopology.get("id").asText());
            subtopologies.put(subtopology.get("id").asText(), subtopology);
        }
        Object describer = Proxy.newProxyInstance(describerType.getClassLoader(), new Class<?>[] {describerType}, (proxy, method, args) -> {
            switch (method.getName()) {
                case "subtopologies": return ids;
                case "maxNumInputPartitions": return known(subtopologies, args[0]).get("partitions").asInt();
                case "isStateful": return known(subtopologies, args[0]).get("stateful").asBoolean();
                case "toString": return "TopologyDescriber" + ids;
                case "hashCode": return System.identityHashCode(proxy);
                case "equals": return proxy == args[0];
                default: throw new UnsupportedOperationException(method.getName());
            }
        });
        String name = group.has("assignor") ? group.get("assignor").asText() : "sticky";
        if (!"sticky".equals(name)) {
            throw new IllegalArgumentException("no streams-group assignor " + name);
        }
        Object assignor = kafka("StickyTaskAssignor").getConstructor().newInstance();
        Method assign = kafka("TaskAssignor").getMethod("assign", kafka("GroupSpec"), describerType);
        Object result = assign.invoke(assignor, spec, describer);
        Map<?, ?> byMember = (Map<?, ?>) result.getClass().getMethod("members").invoke(result);
        Map<String, List<String>> active = new HashMap<>();
        Map<String, List<String>> standby = new HashMap<>();
        for (Map.Entry<?, ?> member : byMember.entrySet()) {
            Object tasks = member.getValue();
            List<String> a = StreamsGroupJson.taskList(taskMap(tasks, "activeTasks"));
            List<String> s = StreamsGroupJson.taskList(taskMap(tasks, "standbyTasks"));
            if (!a.isEmpty()) {
                active.put((String) member.getKey(), a);
            }
            if (!s.isEmpty()) {
                standby.put((String) member.getKey(), s);
            }
        }
        return StreamsGroupJson.answer(active, standby);
    }

    private static JsonNode known(Map<String, JsonNode> subtopologies, Object id) {
        JsonNode found = subtopologies.get((String) id);
        if (found == null) {
            throw new NoSuchElementException(String.valueOf(id));
        }
        return found;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Set<Integer>> taskMap(Object assignment, String accessor) throws ReflectiveOperationException {
        return (Map<String, Set<Integer>>) assignment.getClass().getMethod(accessor).invoke(assignment);
    }

    private static Map<Object, Long> offsets(JsonNode map, Constructor<?> newTaskId) throws ReflectiveOperationException {
        Map<Object, Long> offsets = new HashMap<>();
        if (map != null) {
            for (Map.Entry<String, JsonNode> entry : (Iterable<Map.Entry<String, JsonNode>>) map::fields) {
                String task = entry.getKey();
                offsets.put(newTaskId.newInstance(StreamsGroupJson.subtopologyOf(task), StreamsGroupJson.partitionOf(task)), entry.getValue().asLong());
            }
        }
        return offsets;
    }
}
