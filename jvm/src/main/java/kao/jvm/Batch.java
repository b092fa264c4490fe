package kao.jvm;

import java.util.function.Function;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The oracle adapters' protocol: {"cases": [...]} on stdin, {"answers": [...]} on stdout, one
 * answer per case, in order: {"assignment": ...} or {"error": "..."} when Kafka's class threw.
 */
final class Batch {
    static final ObjectMapper JSON = new ObjectMapper();

    private Batch() {
    }

    static void run(Function<JsonNode, ObjectNode> assign) throws Exception {
        JsonNode input = JSON.readTree(System.in);
        ArrayNode answers = JSON.createArrayNode();
        for (JsonNode group : input.get("cases")) {
            ObjectNode answer = answers.addObject();
            try {
                answer.set("assignment", assign.apply(group));
            } catch (RuntimeException error) {
                answer.put("error", error.getClass().getSimpleName() + ": " + error.getMessage());
            }
        }
        ObjectNode output = JSON.createObjectNode();
        output.set("answers", answers);
        System.out.println(JSON.writeValueAsString(output));
    }
}
