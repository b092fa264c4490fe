package kao.plugin;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;

/**
 * One plug-in's side of the protocol (docs/service-protocol.md): the request written, sent, waited
 * for within the budget, the answer read and checked, and the one log line per assignment. Kafka's
 * types stay in the plug-ins: they give the request's {@code kafka} object and a {@link Reader}
 * that turns the answer's {@code assignment} into Kafka's answer type, checking it.
 *
 * <p>The service's answer is applied only when its {@code source} is {@code exact}. An answer with
 * {@code source: kafka} (the service's reproduction of Kafka's default, when its exact assignment
 * was not ready) is not applied: the plug-in runs Kafka's own assignor, which that answer
 * reproduces, in the plug point's own process.
 *
 * <p>Client side (no cache) the request is sent and awaited up to {@code kao.budget.ms}. Broker
 * side ({@code cached}), a request is keyed by the SHA-256 of its bytes (the plug-ins write
 * their requests in a fixed order, so the same inputs give the same key): an exact answer already
 * received for that key is used at once; else the request is sent unless one for the same key is
 * still in flight (at most one per key), and awaited up to the budget. When it is not back by
 * then, Kafka's default is used at once and the request stays in flight: its answer is kept for
 * the next call with the same inputs. The inputs include the members' current assignment (and a
 * streams group's task offsets), and the coordinator computes a new target assignment only when
 * the group changed, so a late answer is used only when exactly the same inputs come again: the
 * broker side's {@code kao.deadline.ms} is therefore the budget less 100 ms by default. The
 * cache holds at most {@value #CACHE_ENTRIES} requests, least recently used out first; an answer
 * that cannot be applied is not kept. Thread-safe.
 */
final class Exchange {
    static final int CACHE_ENTRIES = 64;
    private static final int CONNECT_TIMEOUT_MS = 1000;
    private static final int MAX_REASON_CHARS = 300;
    /** An answer that says it is larger is not read. */
    static final long MAX_ANSWER_BYTES = 64L * 1024 * 1024;

    /** One HTTP client for every plug-in instance: Kafka Streams makes a task assignor per rebalance. Its threads are daemons. */
    private static volatile HttpClient http;
    /** The kinds already told, once, that kao.service.url is not set. */
    private static final Set<String> UNCONFIGURED_TOLD = ConcurrentHashMap.newKeySet();
    /** The configurations already logged (kind and settings). */
    private static final Set<String> CONFIGS_TOLD = ConcurrentHashMap.newKeySet();

    private final String kind;
    /** Kafka's default the plug-in falls back to, as the log lines name it. */
    private volatile String fallbackName;
    private final Logger log;
    private final boolean brokerSide;
    private volatile PluginConfig config;
    private volatile Outcome last;
    private final Map<String, CompletableFuture<Reply>> cache = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CompletableFuture<Reply>> eldest) {
            return size() > CACHE_ENTRIES;
        }
    };

    Exchange(String kind, String fallbackName, Logger log, boolean brokerSide) {
        this.kind = kind;
        this.fallbackName = fallbackName;
        this.log = log;
        this.brokerSide = brokerSide;
        this.config = PluginConfig.none(brokerSide);
    }

    /** Names another fallback (the classic plug-in's depends on the rebalance protocol its configs choose). */
    void fallbackName(String name) {
        fallbackName = name;
    }

    void configure(Map<String, ?> configs) {
        PluginConfig parsed = PluginConfig.parse(configs, brokerSide);
        config = parsed;
        if (parsed.assignUri != null) {
            if (CONFIGS_TOLD.add(kind + " " + parsed)) {  // once: Streams makes a task assignor per rebalance
                log.info("kao: {} plug-in: {} (else {})", kind, parsed, fallbackName);
            }
            http();  // made now (its TLS set-up takes a while in a cold JVM), not in the first assign()'s budget
        }
    }

    PluginConfig config() {
        return config;
    }

    Outcome last() {
        return last;
    }

    /** Reads an answer's {@code assignment} into Kafka's answer type, or says what is wrong with it. */
    interface Reader<T> {
        T read(Map<String, Object> assignment) throws InvalidAnswer;
    }

    /** A plug point's inputs as the request's {@code kafka} object (filled by the subclass), and the reader of its answers. */
    abstract static class Request<T> implements Reader<T> {
        final Map<String, Object> kafka = new LinkedHashMap<>();
    }

    /** Builds the inputs from Kafka's objects (anything it throws is the plug-in's failure: Kafka's default is used). */
    @FunctionalInterface
    interface Build<T> {
        Request<T> build() throws Exception;
    }

    /** Kafka's default assignor of the plug point, on the same inputs. */
    @FunctionalInterface
    interface KafkaDefault<T> {
        T assign();
    }

    /**
     * One assign() call of a plug-in: the service's answer when it can be applied, else Kafka's
     * default, with the one log line. Never throws but what Kafka's default throws (then said).
     */
    <T> T assign(String group, String label, long startedNanos, Build<T> build, KafkaDefault<T> kafkaDefault) {
        Decision<T> decision;
        try {
            Request<T> request = build.build();
            decision = ask(group, request.kafka, startedNanos, request);
        } catch (Exception | LinkageError failure) {
            decision = failed(failure);
        }
        if (decision.applied()) {
            report(group, label, decision, startedNanos);
            return decision.value;
        }
        T assignment;
        try {
            assignment = kafkaDefault.assign();
        } catch (RuntimeException | Error thrown) {
            fallbackFailed(group, label, decision, startedNanos, thrown);
            throw thrown;
        }
        report(group, label, decision, startedNanos);
        return assignment;
    }

    /** An answer that cannot be applied; the message names what is wrong, for the log line. */
    static final class InvalidAnswer extends Exception {
        private static final long serialVersionUID = 1L;

        InvalidAnswer(String message) {
            super(message);
        }
    }

    /** The service's answer in Kafka's type, or why there is none (then Kafka's default is used). */
    static final class Decision<T> {
        final T value;
        final String reason;
        final String requestId;
        final boolean cached;
        /** Not configured: said once, then at DEBUG. */
        final boolean unconfigured;

        private Decision(T value, String reason, String requestId, boolean cached, boolean unconfigured) {
            this.value = value;
            this.reason = reason;
            this.requestId = requestId;
            this.cached = cached;
            this.unconfigured = unconfigured;
        }

        boolean applied() {
            return value != null;
        }

        static <T> Decision<T> fallback(String reason) {
            return new Decision<>(null, reason, null, false, false);
        }
    }

    /** A failure of the plug-in's own code, as a reason to fall back. */
    static <T> Decision<T> failed(Throwable failure) {
        return Decision.fallback("the plug-in failed: " + describe(failure));
    }

    /** What came back over HTTP: its status and its JSON (the text itself is not kept: a broker's cache holds these). */
    private static final class Reply {
        final int status;
        final Object json;
        final String parseError;

        Reply(int status, String body) {
            this.status = status;
            Object parsed = null;
            String error = null;
            if (body == null) {
                error = "larger than " + MAX_ANSWER_BYTES + " bytes";
            } else {
                try {
                    parsed = Json.parse(body);
                } catch (Json.ParseException bad) {
                    error = bad.getMessage();
                }
            }
            this.json = parsed;
            this.parseError = error;
        }

        /** An exact answer: worth keeping for the next call with the same inputs. */
        boolean reusable() {
            return status == 200 && json instanceof Map && "exact".equals(((Map<?, ?>) json).get("source"));
        }
    }

    /** The request for these inputs, sent unless the answer is known; Kafka's answer type or why not. */
    <T> Decision<T> ask(String group, Map<String, Object> kafka, long startedNanos, Reader<T> reader) {
        PluginConfig cfg = config;
        if (cfg.assignUri == null) {
            return new Decision<>(null, PluginConfig.URL + " is not set", null, false, true);
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("version", 1);
        request.put("kind", kind);
        request.put("group", group);
        request.put("deadline_ms", cfg.deadlineMs);
        request.put("kafka", kafka);
        byte[] body = Json.write(request).getBytes(StandardCharsets.UTF_8);

        String key = null;
        CompletableFuture<Reply> pending;
        boolean reused = false;
        if (brokerSide) {
            key = cfg.assignUri + " " + sha256(body);
            synchronized (cache) {
                pending = cache.get(key);
                if (pending != null && pending.isDone() && !usable(pending)) {
                    cache.remove(key);
                    pending = null;
                }
                if (pending == null) {
                    pending = send(cfg, body);
                    cache.put(key, pending);
                } else {
                    reused = true;
                }
            }
        } else {
            pending = send(cfg, body);
        }

        long waitNanos = TimeUnit.MILLISECONDS.toNanos(cfg.budgetMs) - (System.nanoTime() - startedNanos);
        Reply reply;
        try {
            reply = pending.get(Math.max(0L, waitNanos), TimeUnit.NANOSECONDS);
        } catch (TimeoutException late) {
            if (!brokerSide) {
                pending.cancel(true);
            }
            return Decision.fallback("no answer within kao.budget.ms (" + cfg.budgetMs + " ms)"
                + (brokerSide ? "; the answer will be kept for the next rebalance with the same inputs" : ""));
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return Decision.fallback("interrupted while waiting for the service");
        } catch (ExecutionException | CancellationException failed) {
            forget(key, pending);
            return Decision.fallback(failure(cfg, failed));
        }

        Decision<T> decision = decide(reply, reader, reused);
        if (!decision.applied()) {
            forget(key, pending);
        }
        return decision;
    }

    private static boolean usable(CompletableFuture<Reply> done) {
        try {
            return !done.isCompletedExceptionally() && !done.isCancelled() && done.join().reusable();
        } catch (CompletionException | CancellationException failed) {
            return false;
        }
    }

    private void forget(String key, CompletableFuture<Reply> pending) {
        if (key != null) {
            synchronized (cache) {
                cache.remove(key, pending);
            }
        }
    }

    private <T> Decision<T> decide(Reply reply, Reader<T> reader, boolean reused) {
        if (reply.status != 200) {
            String error = null;
            if (reply.json instanceof Map && ((Map<?, ?>) reply.json).get("error") instanceof String) {
                error = (String) ((Map<?, ?>) reply.json).get("error");
            }
            return Decision.fallback("the service answered HTTP " + reply.status + (error == null ? "" : ": " + clip(error)));
        }
        if (reply.json == null) {
            return Decision.fallback("the answer is " + clip(reply.parseError));
        }
        if (!(reply.json instanceof Map)) {
            return Decision.fallback("the answer is not a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> answer = (Map<String, Object>) reply.json;
        String requestId = answer.get("request_id") instanceof String ? (String) answer.get("request_id") : null;
        Object version = answer.get("version");
        if (!(version instanceof Long) || (Long) version != 1L) {
            return new Decision<>(null, "the answer's version is " + Json.write(version) + ", not 1", requestId, reused, false);
        }
        if (!kind.equals(answer.get("kind"))) {
            return new Decision<>(null, "the answer's kind is " + clip(Json.write(answer.get("kind"))) + ", not " + kind, requestId, reused, false);
        }
        Object source = answer.get("source");
        String serviceReason = answer.get("reason") instanceof String ? clip((String) answer.get("reason")) : "no reason given";
        if ("kafka".equals(source)) {
            return new Decision<>(null, "the service had no exact assignment (" + serviceReason + ")", requestId, reused, false);
        }
        if (!"exact".equals(source)) {
            return new Decision<>(null, "the answer's source is " + clip(Json.write(source)) + ", not exact or kafka", requestId, reused, false);
        }
        if (!(answer.get("assignment") instanceof Map)) {
            return new Decision<>(null, "the answer has no assignment object", requestId, reused, false);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> assignment = (Map<String, Object>) answer.get("assignment");
        try {
            T value = reader.read(assignment);
            return new Decision<>(value, serviceReason, requestId, reused, false);
        } catch (InvalidAnswer invalid) {
            return new Decision<>(null, "invalid answer: " + clip(invalid.getMessage()), requestId, reused, false);
        } catch (RuntimeException failure) {
            return new Decision<>(null, "the answer could not be read: " + describe(failure), requestId, reused, false);
        }
    }

    private static HttpClient http() {
        HttpClient client = http;
        if (client == null) {
            synchronized (Exchange.class) {
                client = http;
                if (client == null) {
                    client = HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofMillis(CONNECT_TIMEOUT_MS))
                        .followRedirects(HttpClient.Redirect.NEVER)
                        .build();
                    http = client;
                }
            }
        }
        return client;
    }

    /** The token file could not be read: the request is not sent. */
    private static final class TokenUnreadable extends IOException {
        private static final long serialVersionUID = 1L;

        TokenUnreadable(String message) {
            super(message);
        }
    }

    private static CompletableFuture<Reply> send(PluginConfig cfg, byte[] body) {
        HttpRequest built;
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(cfg.assignUri)
                // the service answers by deadline_ms; the wait in ask() is the budget. Broker side the
                // request may outlive the budget (its answer is cached), never the deadline by much.
                .timeout(Duration.ofMillis(Math.max(cfg.budgetMs, cfg.deadlineMs + 1000L)))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            if (cfg.tokenFile != null) {
                String token;
                try {
                    token = Files.readString(cfg.tokenFile, StandardCharsets.UTF_8).strip();
                } catch (IOException | RuntimeException unreadable) {
                    return CompletableFuture.failedFuture(new TokenUnreadable(
                        PluginConfig.TOKEN_FILE + " " + cfg.tokenFile + " cannot be read (" + unreadable.getClass().getSimpleName() + ")"));
                }
                if (token.isEmpty()) {
                    return CompletableFuture.failedFuture(new TokenUnreadable(PluginConfig.TOKEN_FILE + " " + cfg.tokenFile + " is empty"));
                }
                if (!token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                    // the JDK would refuse the header with the whole value in its message: never let it reach a log
                    return CompletableFuture.failedFuture(new TokenUnreadable(
                        PluginConfig.TOKEN_FILE + " " + cfg.tokenFile + " holds characters a header cannot carry (one line of visible ASCII)"));
                }
                request.header("Authorization", "Bearer " + token);
            }
            built = request.build();
        } catch (RuntimeException failure) {  // its message may quote a header: not repeated
            return CompletableFuture.failedFuture(new IOException("the request could not be built (" + failure.getClass().getSimpleName() + ")"));
        }
        try {
            return http().sendAsync(built, Exchange::bounded).thenApply(response -> new Reply(response.statusCode(), response.body()));
        } catch (RuntimeException failure) {
            return CompletableFuture.failedFuture(failure);
        }
    }

    /** The answer's text, or null (without reading it) when it says it is larger than MAX_ANSWER_BYTES. */
    private static HttpResponse.BodySubscriber<String> bounded(HttpResponse.ResponseInfo info) {
        long length = info.headers().firstValueAsLong("Content-Length").orElse(-1L);
        if (length > MAX_ANSWER_BYTES) {
            return HttpResponse.BodySubscribers.replacing(null);
        }
        return HttpResponse.BodySubscribers.ofString(StandardCharsets.UTF_8);
    }

    private static String failure(PluginConfig cfg, Exception failed) {
        Throwable cause = failed;
        while ((cause instanceof ExecutionException || cause instanceof CompletionException) && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof TokenUnreadable) {
            return cause.getMessage();
        }
        if (cause instanceof HttpConnectTimeoutException) {
            return "cannot connect to " + cfg.shownUri() + " (connect timed out)";
        }
        if (cause instanceof HttpTimeoutException) {
            return "no answer from " + cfg.shownUri() + " within the request timeout";
        }
        if (cause instanceof ConnectException) {
            return "cannot connect to " + cfg.shownUri() + " (" + (cause.getMessage() == null ? "connection refused" : clip(cause.getMessage())) + ")";
        }
        if (cause instanceof CancellationException) {
            return "the request was cancelled";
        }
        return "the request to " + cfg.shownUri() + " failed: " + describe(cause);
    }

    static String describe(Throwable failure) {
        String message = failure.getMessage();
        return failure.getClass().getSimpleName() + (message == null ? "" : ": " + clip(message));
    }

    static String clip(String text) {
        if (text == null) {
            return "";
        }
        String line = text.replace('\n', ' ').replace('\r', ' ');
        return line.length() <= MAX_REASON_CHARS ? line : line.substring(0, MAX_REASON_CHARS) + "...";
    }

    private static String sha256(byte[] body) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(body);
            StringBuilder hex = new StringBuilder(64);
            for (byte b : digest) {
                hex.append(String.format("%02x", b));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /**
     * The one log line for this assignment, and the outcome the harness reads: INFO when the
     * service's answer was applied, WARN when Kafka's default was used (once, then DEBUG, when
     * kao.service.url is not set).
     */
    void report(String group, String label, Decision<?> decision, long startedNanos) {
        double millis = (System.nanoTime() - startedNanos) / 1e6;
        last = new Outcome(kind, group, decision.applied(), decision.reason, decision.requestId, decision.cached, millis);
        String timing = String.format("%.2f s", millis / 1000);
        if (decision.applied()) {
            log.info("kao: {}: applied the service's exact assignment (request {}{}, {})", label, decision.requestId,
                decision.cached ? ", sent by an earlier call" : "", timing);
        } else if (decision.unconfigured) {
            if (UNCONFIGURED_TOLD.add(kind)) {
                log.warn("kao: {}: fell back to Kafka's {}: {} (said once: every assignment here is Kafka's default)", label, fallbackName, decision.reason);
            } else if (log.isDebugEnabled()) {
                log.debug("kao: {}: fell back to Kafka's {}: {}", label, fallbackName, decision.reason);
            }
        } else {
            log.warn("kao: {}: fell back to Kafka's {}: {}{} ({})", label, fallbackName, decision.reason,
                decision.requestId == null ? "" : " (request " + decision.requestId + ")", timing);
        }
    }

    /** Kafka's default threw too: said, and Kafka's exception goes on to Kafka. */
    void fallbackFailed(String group, String label, Decision<?> decision, long startedNanos, Throwable thrown) {
        double millis = (System.nanoTime() - startedNanos) / 1e6;
        last = new Outcome(kind, group, false, decision.reason + "; then Kafka's " + fallbackName + " threw " + describe(thrown),
            decision.requestId, decision.cached, millis);
        log.warn("kao: {}: fell back to Kafka's {} ({}), which threw {}", label, fallbackName, decision.reason, describe(thrown));
    }
}
