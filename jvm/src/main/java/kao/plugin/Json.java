package kao.plugin;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The plug-ins' JSON, self-contained: a Kafka client's classpath has no Jackson, and the broker's
 * may be any version. Objects are {@code Map<String, Object>} (insertion order kept), arrays
 * {@code List<Object>}, numbers {@code Long} (integers) or {@code Double}, and JSON null Java's
 * null. The writer writes maps in their iteration order, so the plug-ins build their requests in a
 * fixed order and the same inputs give the same bytes (the broker-side cache's key).
 */
final class Json {
    /** Deeper than any request or answer of the protocol: a guard against a runaway recursion. */
    private static final int MAX_DEPTH = 64;

    private Json() {
    }

    static final class ParseException extends Exception {
        private static final long serialVersionUID = 1L;

        ParseException(String message) {
            super(message);
        }
    }

    // ---- writing

    static String write(Object value) {
        StringBuilder out = new StringBuilder(4096);
        write(out, value);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string(out, (String) value);
        } else if (value instanceof Boolean) {
            out.append(value.toString());
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("not a JSON number: " + d);
            }
            out.append(d);
        } else if (value instanceof Number) {
            out.append(((Number) value).longValue());
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(out, String.valueOf(entry.getKey()));
                out.append(':');
                write(out, entry.getValue());
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            boolean first = true;
            for (Object item : (Collection<?>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(out, item);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("no JSON for " + value.getClass().getName());
        }
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    // ---- reading

    static Object parse(String text) throws ParseException {
        Parser parser = new Parser(text);
        parser.space();
        Object value = parser.value(0);
        parser.space();
        if (parser.at < text.length()) {
            throw parser.error("trailing characters");
        }
        return value;
    }

    private static final class Parser {
        private final String text;
        private int at;

        Parser(String text) {
            this.text = text;
        }

        ParseException error(String what) {
            return new ParseException("not JSON: " + what + " at character " + at);
        }

        void space() {
            while (at < text.length()) {
                char c = text.charAt(at);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                at++;
            }
        }

        Object value(int depth) throws ParseException {
            if (depth > MAX_DEPTH) {
                throw error("nested deeper than " + MAX_DEPTH);
            }
            if (at >= text.length()) {
                throw error("unexpected end");
            }
            char c = text.charAt(at);
            switch (c) {
                case '{': return object(depth);
                case '[': return array(depth);
                case '"': return string();
                case 't': return literal("true", Boolean.TRUE);
                case 'f': return literal("false", Boolean.FALSE);
                case 'n': return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw error("unexpected '" + c + "'");
            }
        }

        private Object literal(String word, Object value) throws ParseException {
            if (!text.startsWith(word, at)) {
                throw error("unexpected word");
            }
            at += word.length();
            return value;
        }

        private Map<String, Object> object(int depth) throws ParseException {
            Map<String, Object> map = new LinkedHashMap<>();
            at++;
            space();
            if (at < text.length() && text.charAt(at) == '}') {
                at++;
                return map;
            }
            while (true) {
                space();
                if (at >= text.length() || text.charAt(at) != '"') {
                    throw error("expected a key");
                }
                String key = string();
                space();
                expect(':');
                space();
                map.put(key, value(depth + 1));
                space();
                if (at < text.length() && text.charAt(at) == ',') {
                    at++;
                    continue;
                }
                expect('}');
                return map;
            }
        }

        private List<Object> array(int depth) throws ParseException {
            List<Object> list = new ArrayList<>();
            at++;
            space();
            if (at < text.length() && text.charAt(at) == ']') {
                at++;
                return list;
            }
            while (true) {
                space();
                list.add(value(depth + 1));
                space();
                if (at < text.length() && text.charAt(at) == ',') {
                    at++;
                    continue;
                }
                expect(']');
                return list;
            }
        }

        private void expect(char c) throws ParseException {
            if (at >= text.length() || text.charAt(at) != c) {
                throw error("expected '" + c + "'");
            }
            at++;
        }

        private String string() throws ParseException {
            at++;
            StringBuilder out = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    throw error("control character in a string");
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (at >= text.length()) {
                    throw error("unterminated escape");
                }
                char e = text.charAt(at++);
                switch (e) {
                    case '"': out.append('"'); break;
                    case '\\': out.append('\\'); break;
                    case '/': out.append('/'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        if (at + 4 > text.length()) {
                            throw error("short \\u escape");
                        }
                        try {
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        } catch (NumberFormatException bad) {
                            throw error("bad \\u escape");
                        }
                        at += 4;
                        break;
                    default:
                        throw error("bad escape \\" + e);
                }
            }
        }

        private Object number() throws ParseException {
            int start = at;
            if (text.charAt(at) == '-') {
                at++;
            }
            boolean integral = true;
            while (at < text.length()) {
                char c = text.charAt(at);
                if (c >= '0' && c <= '9') {
                    at++;
                } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                    integral = false;
                    at++;
                } else {
                    break;
                }
            }
            String literal = text.substring(start, at);
            try {
                if (integral) {
                    return Long.parseLong(literal);
                }
                return Double.parseDouble(literal);
            } catch (NumberFormatException bad) {
                if (integral) {
                    try {
                        return Double.parseDouble(literal);
                    } catch (NumberFormatException worse) {
                        // fall through to the error
                    }
                }
                throw error("bad number " + literal);
            }
        }
    }
}
