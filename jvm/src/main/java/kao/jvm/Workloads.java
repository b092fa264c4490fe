package kao.jvm;

import java.util.Collection;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.TopicExistsException;

/** What the workload runners ({@link ProducerRunner}, {@link ConsumerGroupRunner}, {@link StreamsAppRunner}) share. */
final class Workloads {
    private Workloads() {
    }

    /** Creates the topics with Kafka's Admin client, each within 30 s; a topic that exists already is left as it is. */
    static void createTopics(Admin admin, Collection<NewTopic> wanted) throws Exception {
        for (var created : admin.createTopics(wanted).values().values()) {
            try {
                created.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException error) {
                if (!(error.getCause() instanceof TopicExistsException)) {
                    throw error;
                }
            }
        }
    }

    /** A producer's configuration: the bootstrap servers, {@code serializer} for keys and values, acks from all replicas. */
    static Properties producerConfig(String bootstrap, Class<?> serializer) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, serializer.getName());
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, serializer.getName());
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        return config;
    }
}
