package kao.jvm;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Node;

import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The brokers of a cluster as JSON on stdout: {"cluster_id": ..., "brokers": [{"id", "host",
 * "port", "rack"}]}, read with Kafka's Admin client. Usage: Nodes BOOTSTRAP [TIMEOUT_MS].
 */
public final class Nodes {
    private Nodes() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: Nodes BOOTSTRAP [TIMEOUT_MS]");
            System.exit(2);
        }
        int timeout = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        Properties config = new Properties();
        config.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        config.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, timeout);
        config.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, timeout);
        try (Admin admin = Admin.create(config)) {
            var cluster = admin.describeCluster();
            List<Node> nodes = new ArrayList<>(cluster.nodes().get(timeout, TimeUnit.MILLISECONDS));
            nodes.sort(Comparator.comparingInt(Node::id));
            List<Map<String, Object>> brokers = new ArrayList<>();
            for (Node node : nodes) {
                brokers.add(Map.of("id", node.id(), "host", node.host(), "port", node.port(),
                        "rack", node.hasRack() ? node.rack() : ""));
            }
            String clusterId = cluster.clusterId().get(timeout, TimeUnit.MILLISECONDS);
            System.out.println(new ObjectMapper().writeValueAsString(Map.of("cluster_id", clusterId, "brokers", brokers)));
        }
    }
}
