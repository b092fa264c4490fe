package kao.jvm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import kao.plugin.OptimizerConsumerAssignor;
import kao.plugin.OptimizerConsumerGroupAssignor;
import kao.plugin.OptimizerStreamsGroupAssignor;
import kao.plugin.OptimizerTaskAssignor;
import kao.plugin.Outcome;

/**
 * The plug-ins (kao.plugin) called as Kafka calls them, without a group: each case builds Kafka's
 * real inputs with the oracle adapters' builders (the same case formats), configures the plug-in
 * with the case's configs as Kafka would, calls its assign(), and reports what it returned and
 * what it did (its last Outcome). Batch's protocol:
 *
 * <pre>
 * in:  {"cases": [{"plug": "streams_task_assignor" | "consumer_group" | "streams_group" | "classic_consumer",
 *                  "configs": {"kao.service.url": ..., ...},      (given to configure())
 *                  "instance": "name",                           (optional: reuse the plug-in made by an earlier case of that name)
 *                  "sleep_ms_before": n,                         (optional: wait first, e.g. for an answer still in flight)
 *                  "kafka": {...}}]}                             (TaskAssignors' kip924 case, GroupAssignors', StreamsGroupAssignors', ConsumerAssignors')
 * out: {"answers": [{"assignment": {"assignment": {...the protocol's answer shape...},
 *                                   "applied": bool, "reason", "request_id", "cached", "millis" (assign() as timed here)}}]}
 * </pre>
 *
 * The assignment is written in the protocol's answer shapes (docs/service-protocol.md): topic ids
 * as strings for consumer_group, tasks as "subtopology_partition"; lists sorted, except a classic
 * member's partitions (in the order Kafka's Assignment has them). For streams_task_assignor,
 * {@code followup_rebalance_ms} is the earliest follow-up deadline set, from now (null if none).
 */
public final class PluginCalls {
    private static final Map<String, Object> INSTANCES = new HashMap<>();

    private PluginCalls() {
    }

    public static void main(String[] args) throws Exception {
        // the plug-ins' one line per assignment on stderr (the module's log4j2.properties has warnings only)
        Configurator.setLevel("kao.plugin", Level.INFO);
        Batch.run(PluginCalls::call);
    }

    private static Map<String, Object> configs(JsonNode input) {
        Map<String, Object> configs = new LinkedHashMap<>();
        if (input.has("configs")) {
            input.get("configs").fields().forEachRemaining(e -> configs.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText()));
        }
        return configs;
    }

    private static Object plugin(JsonNode input, String plug) {
        String name = input.hasNonNull("instance") ? input.get("instance").asText() : null;
        if (name != null && INSTANCES.containsKey(name)) {
            return INSTANCES.get(name);
        }
        Map<String, Object> configs = configs(input);
        Object plugin;
        switch (plug) {
            case "streams_task_assignor": {
                OptimizerTaskAssignor made = new OptimizerTaskAssignor();
                made.configure(configs);
                plugin = made;
                break;
            }
            case "consumer_group": {
                OptimizerConsumerGroupAssignor made = new OptimizerConsumerGroupAssignor();
                made.configure(configs);
                plugin = made;
                break;
            }
            case "streams_group": {
                OptimizerStreamsGroupAssignor made = new OptimizerStreamsGroupAssignor();
                made.configure(configs);
                plugin = made;
                break;
            }
            case "classic_consumer": {
                OptimizerConsumerAssignor made = new OptimizerConsumerAssignor();
                made.configure(configs);
                plugin = made;
                break;
            }
            default:
                throw new IllegalArgumentException("no plug point " + plug);
        }
        if (name != null) {
            INSTANCES.put(name, plugin);
        }
        return plugin;
    }

    private static ObjectNode call(JsonNode input) {
        String plug = input.get("plug").asText();
        if (input.has("sleep_ms_before")) {
            try {
                Thread.sleep(input.get("sleep_ms_before").asLong());
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        Object plugin = plugin(input, plug);
        JsonNode kafka = input.get("kafka");
        ObjectNode result = Batch.JSON.createObjectNode();
        Outcome outcome;
        long started;
        long ended;
        switch (plug) {
            case "streams_task_assignor": {
                OptimizerTaskAssignor assignor = (OptimizerTaskAssignor) plugin;
                var state = TaskAssignors.kip924State(kafka);
                started = System.nanoTime();
                TaskAssignment answer = assignor.assign(state);
                ended = System.nanoTime();
                result.set("assignment", taskAssignment(answer));
                outcome = assignor.lastOutcome();
                break;
            }
            case "consumer_group": {
                OptimizerConsumerGroupAssignor assignor = (OptimizerConsumerGroupAssignor) plugin;
                GroupAssignors.Inputs inputs = GroupAssignors.inputs(kafka);
                started = System.nanoTime();
                var answer = assignor.assign(inputs.spec(), inputs.describer());
                ended = System.nanoTime();
                ObjectNode members = Batch.JSON.createObjectNode();
                for (Map.Entry<String, MemberAssignment> member : new TreeMap<>(answer.members()).entrySet()) {
                    ArrayNode parts = members.putArray(member.getKey());
                    Map<String, Set<Integer>> byTopic = new TreeMap<>();
                    for (Map.Entry<Uuid, Set<Integer>> topic : member.getValue().partitions().entrySet()) {
                        byTopic.put(topic.getKey().toString(), topic.getValue());
                    }
                    byTopic.forEach((topic, partitions) -> new TreeSet<>(partitions).forEach(p -> parts.addArray().add(topic).add(p)));
                }
                result.putObject("assignment").set("members", members);
                outcome = assignor.lastOutcome();
                break;
            }
            case "streams_group": {
                OptimizerStreamsGroupAssignor assignor = (OptimizerStreamsGroupAssignor) plugin;
                var spec = StreamsGroupAssignors.spec(kafka);
                var topology = StreamsGroupAssignors.topology(kafka);
                started = System.nanoTime();
                var answer = assignor.assign(spec, topology);
                ended = System.nanoTime();
                ObjectNode members = Batch.JSON.createObjectNode();
                for (var member : new TreeMap<>(answer.members()).entrySet()) {
                    ObjectNode tasks = members.putObject(member.getKey());
                    StreamsGroupJson.taskList(member.getValue().activeTasks()).forEach(tasks.putArray("active")::add);
                    StreamsGroupJson.taskList(member.getValue().standbyTasks()).forEach(tasks.putArray("standby")::add);
                }
                result.putObject("assignment").set("members", members);
                outcome = assignor.lastOutcome();
                break;
            }
            case "classic_consumer": {
                OptimizerConsumerAssignor assignor = (OptimizerConsumerAssignor) plugin;
                var cluster = ConsumerAssignors.cluster(kafka.get("topics"));
                Map<String, Subscription> subscriptions = new HashMap<>();
                for (JsonNode member : kafka.get("members")) {
                    Subscription subscription = ConsumerAssignors.subscription("cooperative-sticky", member);
                    if (member.hasNonNull("instance_id")) {
                        subscription.setGroupInstanceId(java.util.Optional.of(member.get("instance_id").asText()));
                    }
                    subscriptions.put(member.get("id").asText(), subscription);
                }
                started = System.nanoTime();
                var answer = assignor.assign(cluster, new GroupSubscription(subscriptions));
                ended = System.nanoTime();
                ObjectNode members = Batch.JSON.createObjectNode();
                for (Map.Entry<String, Assignment> member : new TreeMap<>(answer.groupAssignment()).entrySet()) {
                    ArrayNode parts = members.putArray(member.getKey());
                    for (TopicPartition tp : member.getValue().partitions()) {
                        parts.addArray().add(tp.topic()).add(tp.partition());
                    }
                }
                result.putObject("assignment").set("members", members);
                outcome = assignor.lastOutcome();
                break;
            }
            default:
                throw new IllegalArgumentException("no plug point " + plug);
        }
        result.put("millis", (ended - started) / 1e6);
        if (outcome != null) {
            result.put("applied", outcome.applied);
            result.put("reason", outcome.reason);
            result.put("request_id", outcome.requestId);
            result.put("cached", outcome.cached);
            result.put("outcome_millis", outcome.millis);
        }
        return result;
    }

    private static ObjectNode taskAssignment(TaskAssignment answer) {
        ObjectNode assignment = Batch.JSON.createObjectNode();
        ObjectNode clients = assignment.putObject("clients");
        Map<String, KafkaStreamsAssignment> byProcess = new TreeMap<>();
        long now = System.currentTimeMillis();
        Long followup = null;
        for (KafkaStreamsAssignment client : answer.assignment()) {
            byProcess.put(client.processId().id().toString(), client);
            if (client.followupRebalanceDeadline().isPresent()) {
                long in = client.followupRebalanceDeadline().get().toEpochMilli() - now;
                followup = followup == null ? in : Math.min(followup, in);
            }
        }
        for (Map.Entry<String, KafkaStreamsAssignment> client : byProcess.entrySet()) {
            List<TaskId> active = new ArrayList<>();
            List<TaskId> standby = new ArrayList<>();
            for (AssignedTask task : client.getValue().tasks().values()) {
                (task.type() == AssignedTask.Type.ACTIVE ? active : standby).add(task.id());
            }
            ObjectNode tasks = clients.putObject(client.getKey());
            ArrayNode activeList = tasks.putArray("active");
            new TreeSet<>(active).forEach(task -> activeList.add(task.toString()));
            ArrayNode standbyList = tasks.putArray("standby");
            new TreeSet<>(standby).forEach(task -> standbyList.add(task.toString()));
        }
        if (followup == null) {
            assignment.putNull("followup_rebalance_ms");
        } else {
            assignment.put("followup_rebalance_ms", followup);
        }
        return assignment;
    }
}
