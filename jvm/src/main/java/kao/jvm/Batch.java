package kao.jvm;

import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The oracle adapters' protocol: {"cases": [...], "repeat": n} on stdin, {"answers": [...]} on
 * stdout, one answer per case, in order: {"assignment": ..., "micros": ...} or {"error": "..."}
 * when Kafka's class threw. With `repeat` (default 1) each case runs n times in this JVM and
 * `micros` is the fastest run (Kafka's inputs built and its assignor called; JSON aside): with
 * n > 1, a warm JVM's time.
 */
final class Batch {
    static final ObjectMapper JSON = new ObjectMapper();

    private Batch() {
    }

    static void run(Function<JsonNode, ObjectNode> assign) throws Exception {
        JsonNode input = JSON.readTree(System.in);
        int repeat = input.has("repeat") ? Math.max(1, input.get("repeat").asInt()) : 1;
        ArrayNode answers = JSON.createArrayNode();
        for (JsonNode group : input.get("cases")) {
            ObjectNode answer = answers.addObject();
            try {
                long fastest = Long.MAX_VALUE;
                ObjectNode assignment = null;
                for (int run = 0; run < repeat; run++) {
                    long started = System.nanoTime();
                    assignment = assign.apply(group);
                    fastest = Math.min(fastest, System.nanoTime() - started);
                }
                answer.set("assignment", assignment);
                answer.put("micros", fastest / 1000);
            } catch (RuntimeException error) {
                answer.put("error", error.getClass().getSimpleName() + ": " + error.getMessage());
            }
        }
        ObjectNode output = JSON.createObjectNode();
        output.set("answers", answers);
        System.out.println(JSON.writeValueAsString(output));
    }
}
