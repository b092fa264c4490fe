package kao.plugin;

import java.util.Map;

import org.slf4j.Logger;

/**
 * What the four plug-ins share: the name groups choose them by, their {@link Exchange} with the
 * service (configured from Kafka's configs), and the last assignment's outcome for the test harness.
 * Each plug-in adds its plug point's interface, its Kafka default, and its request.
 */
public abstract class Plugin {
    /** The name groups choose the plug-ins by ({@code group.remote.assignor}, {@code streams.assignor.name}, the classic protocol). */
    public static final String NAME = "optimizer";

    final Exchange exchange;

    Plugin(String kind, String fallbackName, Logger log, boolean brokerSide) {
        this.exchange = new Exchange(kind, fallbackName, log, brokerSide);
    }

    public String name() {
        return NAME;
    }

    public void configure(Map<String, ?> configs) {
        exchange.configure(configs);
    }

    /** The last assignment's outcome (the test harness's, and diagnostics). */
    public Outcome lastOutcome() {
        return exchange.last();
    }
}
