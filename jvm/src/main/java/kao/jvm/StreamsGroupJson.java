package kao.jvm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The streams-group adapters' JSON (see StreamsGroupAssignors), free of Kafka's classes so that
 * the adapter for releases before 4.4 (StreamsGroupAssignorsBefore44) can share it on their jars.
 */
final class StreamsGroupJson {

    private StreamsGroupJson() {
    }

    static String subtopologyOf(String task) {
        return task.substring(0, task.lastIndexOf('_'));
    }

    static int partitionOf(String task) {
        return Integer.parseInt(task.substring(task.lastIndexOf('_') + 1));
    }

    static Map<String, Set<Integer>> tasks(JsonNode list) {
        Map<String, Set<Integer>> tasks = new HashMap<>();
        if (list != null) {
            for (JsonNode task : list) {
                tasks.computeIfAbsent(subtopologyOf(task.asText()), k -> new HashSet<>()).add(partitionOf(task.asText()));
            }
        }
        return tasks;
    }

    static Map<String, Map<Integer, Long>> offsets(JsonNode map) {
        Map<String, Map<Integer, Long>> offsets = new HashMap<>();
        if (map != null) {
            map.fields().forEachRemaining(entry -> offsets
                .computeIfAbsent(subtopologyOf(entry.getKey()), k -> new HashMap<>())
                .put(partitionOf(entry.getKey()), entry.getValue().asLong()));
        }
        return offsets;
    }

    static Map<String, String> tags(JsonNode map) {
        Map<String, String> tags = new HashMap<>();
        if (map != null) {
            map.fields().forEachRemaining(entry -> tags.put(entry.getKey(), entry.getValue().asText()));
        }
        return tags;
    }

    static List<String> taskList(Map<String, Set<Integer>> tasks) {
        List<String> list = new ArrayList<>();
        for (Map.Entry<String, Set<Integer>> entry : new TreeMap<>(tasks).entrySet()) {
            for (int partition : new TreeSet<>(entry.getValue())) {
                list.add(entry.getKey() + "_" + partition);
            }
        }
        return list;
    }

    static ObjectNode answer(Map<String, List<String>> active, Map<String, List<String>> standby) {
        ObjectNode result = Batch.JSON.createObjectNode();
        Set<String> members = new TreeSet<>(active.keySet());
        members.addAll(standby.keySet());
        for (String member : members) {
            ObjectNode tasks = result.putObject(member);
            ArrayNode a = tasks.putArray("active");
            active.getOrDefault(member, List.of()).forEach(a::add);
            ArrayNode s = tasks.putArray("standby");
            standby.getOrDefault(member, List.of()).forEach(s::add);
        }
        return result;
    }
}
