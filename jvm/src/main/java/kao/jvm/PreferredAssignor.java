package kao.jvm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroup;
import org.apache.kafka.coordinator.group.modern.consumer.ConsumerGroupMember;
import org.apache.kafka.timeline.SnapshotRegistry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * How Kafka's group coordinator picks a KIP-848 group's server assignor as members come and go, on Kafka's own
 * {@code ConsumerGroup} class (no broker).
 *
 * <p>Reads scenarios on stdin, one JSON array a line, each a fresh group's steps: {"join": member id, "assignor": name or
 * null (the member names none)} or {"leave": member id}. For each scenario prints one line, a JSON array with one
 * entry per step, taken after it: {"current": the group's preferred server assignor
 * ({@code ConsumerGroup.preferredServerAssignor()}, null when no member names one), "recomputed": {member id:
 * {@code computePreferredServerAssignor(member, member)}}}: what the coordinator computes again at each of that
 * member's heartbeats (one that changes nothing). From Kafka 4.4 ({@code
 * GroupMetadataManager.hasPreferredServerAssignorChanged}, KAFKA-20434) a heartbeat whose recomputed assignor differs
 * from the current one bumps the group epoch, so a member whose two differ bumps it at every heartbeat.
 */
public final class PreferredAssignor {
    private static final ObjectMapper JSON = new ObjectMapper();

    private PreferredAssignor() {
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.isBlank()) {
                System.out.println(JSON.writeValueAsString(scenario(JSON.readTree(line))));
            }
        }
        System.out.flush();
    }

    private static List<Map<String, Object>> scenario(JsonNode steps) {
        ConsumerGroup group = new ConsumerGroup(new LogContext(), new SnapshotRegistry(new LogContext()), "g");
        List<Map<String, Object>> out = new ArrayList<>();
        for (JsonNode step : steps) {
            if (step.hasNonNull("join")) {
                ConsumerGroupMember.Builder member = new ConsumerGroupMember.Builder(step.get("join").asText());
                if (step.hasNonNull("assignor")) {
                    member.setServerAssignorName(step.get("assignor").asText());
                }
                group.updateMember(member.build());
            } else {
                group.removeMember(step.get("leave").asText());
            }
            Map<String, Object> recomputed = new TreeMap<>();
            for (ConsumerGroupMember member : group.members().values()) {
                recomputed.put(member.memberId(), group.computePreferredServerAssignor(member, member).orElse(null));
            }
            Map<String, Object> after = new LinkedHashMap<>();
            after.put("current", group.preferredServerAssignor().orElse(null));
            after.put("recomputed", recomputed);
            out.add(after);
        }
        return out;
    }
}
