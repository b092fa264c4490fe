package kao.plugin;

/**
 * What a plug-in did with its last assignment: the service's answer applied, or Kafka's default
 * (and why). The same facts as the plug-in's log line, for the test harness
 * ({@code kao.jvm.PluginCalls}) and for diagnostics; Kafka never reads it.
 */
public final class Outcome {
    /** The protocol's request kind: streams_task_assignor, consumer_group, streams_group or classic_consumer. */
    public final String kind;
    /** The group id or application.id when the plug point gives it, else null. */
    public final String group;
    /** True when the service's exact assignment was applied, false when Kafka's default was. */
    public final boolean applied;
    /** Why: the service's reason when applied, else what made the plug-in fall back. */
    public final String reason;
    /** The service's request id (r-000042), null when there was no answer. */
    public final String requestId;
    /** True when the answer was one the broker-side cache already held (a same-input request earlier). */
    public final boolean cached;
    /** How long Kafka waited in assign(), milliseconds (the fallback's own run included). */
    public final double millis;

    Outcome(String kind, String group, boolean applied, String reason, String requestId, boolean cached, double millis) {
        this.kind = kind;
        this.group = group;
        this.applied = applied;
        this.reason = reason;
        this.requestId = requestId;
        this.cached = cached;
        this.millis = millis;
    }

    @Override
    public String toString() {
        return kind + " " + (group == null ? "" : group + " ") + (applied ? "applied" : "fell back") + ": " + reason
            + (requestId == null ? "" : " (" + requestId + (cached ? ", cached" : "") + ")") + String.format(" %.1f ms", millis);
    }
}
