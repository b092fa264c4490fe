package kao.plugin;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Map;

import org.apache.kafka.common.config.ConfigException;

/**
 * The plug-ins' configuration, read from the configs Kafka hands to {@code configure} (the
 * broker's server.properties, the Streams application's StreamsConfig, the consumer's configs):
 *
 * <ul>
 * <li>{@code kao.service.url}: the service's base URL, e.g. {@code http://127.0.0.1:8787} (the
 * plug-ins POST to {@code /v1/assign} under it). Absent: every assignment is Kafka's default, said
 * once in the log.</li>
 * <li>{@code kao.service.token.file}: a file holding the bearer token (read at each request, so
 * that it can be rotated; never logged). Absent: no Authorization header.</li>
 * <li>{@code kao.deadline.ms}: sent as the request's {@code deadline_ms} (default: client side 2000;
 * broker side {@code kao.budget.ms} - 100, so that the service answers while the coordinator still
 * waits).</li>
 * <li>{@code kao.budget.ms}: the longest the plug-in waits for the answer before it falls back
 * (default: client side {@code kao.deadline.ms} + 1000; broker side 500, see
 * {@link Exchange}).</li>
 * </ul>
 *
 * A malformed value is a ConfigException, as for Kafka's own configs.
 */
final class PluginConfig {
    static final String URL = "kao.service.url";
    static final String TOKEN_FILE = "kao.service.token.file";
    static final String DEADLINE_MS = "kao.deadline.ms";
    static final String BUDGET_MS = "kao.budget.ms";
    static final int DEFAULT_DEADLINE_MS = 2000;
    static final int DEFAULT_BROKER_BUDGET_MS = 500;
    static final int CLIENT_BUDGET_MARGIN_MS = 1000;
    static final int BROKER_DEADLINE_MARGIN_MS = 100;

    /** The POST target, {@code <kao.service.url>/v1/assign}; null when not configured. */
    final URI assignUri;
    final Path tokenFile;
    final int deadlineMs;
    final int budgetMs;

    private PluginConfig(URI assignUri, Path tokenFile, int deadlineMs, int budgetMs) {
        this.assignUri = assignUri;
        this.tokenFile = tokenFile;
        this.deadlineMs = deadlineMs;
        this.budgetMs = budgetMs;
    }

    /** Not configured: no service, every assignment is Kafka's default. */
    static PluginConfig none(boolean brokerSide) {
        return brokerSide
            ? new PluginConfig(null, null, DEFAULT_BROKER_BUDGET_MS - BROKER_DEADLINE_MARGIN_MS, DEFAULT_BROKER_BUDGET_MS)
            : new PluginConfig(null, null, DEFAULT_DEADLINE_MS, DEFAULT_DEADLINE_MS + CLIENT_BUDGET_MARGIN_MS);
    }

    static PluginConfig parse(Map<String, ?> configs, boolean brokerSide) {
        String url = text(configs, URL);
        URI assign = url == null ? null : assignUri(url);
        String token = text(configs, TOKEN_FILE);
        int deadline;
        int budget;
        if (brokerSide) {
            // the coordinator's budget comes first; the service is asked to answer within it, so
            // that its answer is used now rather than cached for inputs that rarely come back
            budget = positive(configs, BUDGET_MS, DEFAULT_BROKER_BUDGET_MS);
            deadline = positive(configs, DEADLINE_MS, Math.max(1, budget - BROKER_DEADLINE_MARGIN_MS));
        } else {
            deadline = positive(configs, DEADLINE_MS, DEFAULT_DEADLINE_MS);
            budget = positive(configs, BUDGET_MS, deadline + CLIENT_BUDGET_MARGIN_MS);
        }
        return new PluginConfig(assign, token == null ? null : Path.of(token), deadline, budget);
    }

    static String text(Map<String, ?> configs, String key) {
        Object value = configs == null ? null : configs.get(key);
        if (value == null) {
            return null;
        }
        String text = value.toString().trim();
        return text.isEmpty() ? null : text;
    }

    private static URI assignUri(String url) {
        URI base;
        try {
            base = new URI(url);
        } catch (URISyntaxException bad) {
            throw new ConfigException(URL, url, "not a URL: " + bad.getMessage());
        }
        String scheme = base.getScheme();
        if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https")) || base.getHost() == null) {
            throw new ConfigException(URL, url, "expected http://HOST:PORT or https://HOST:PORT");
        }
        String path = base.getPath() == null ? "" : base.getPath();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        try {
            return new URI(base.getScheme(), base.getUserInfo(), base.getHost(), base.getPort(), path + "/v1/assign", null, null);
        } catch (URISyntaxException bad) {
            throw new ConfigException(URL, url, "not a URL: " + bad.getMessage());
        }
    }

    private static int positive(Map<String, ?> configs, String key, int otherwise) {
        String text = text(configs, key);
        if (text == null) {
            return otherwise;
        }
        try {
            int value = Integer.parseInt(text);
            if (value > 0) {
                return value;
            }
        } catch (NumberFormatException bad) {
            // said below
        }
        throw new ConfigException(key, text, "expected a positive number of milliseconds");
    }

    /** The URL as logs may show it: without a user and password, if one was written into it. */
    String shownUri() {
        if (assignUri == null || assignUri.getRawUserInfo() == null) {
            return String.valueOf(assignUri);
        }
        try {
            return new URI(assignUri.getScheme(), null, assignUri.getHost(), assignUri.getPort(), assignUri.getPath(), null, null).toString();
        } catch (URISyntaxException impossible) {
            return assignUri.getScheme() + "://" + assignUri.getHost();
        }
    }

    @Override
    public String toString() {
        return (assignUri == null ? "no service" : shownUri()) + ", deadline " + deadlineMs + " ms, budget " + budgetMs + " ms"
            + (tokenFile == null ? "" : ", token from " + tokenFile);
    }
}
