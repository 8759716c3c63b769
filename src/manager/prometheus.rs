//! `metricsText()`: servers' metrics in the Prometheus text exposition format 0.0.4. Each family
//! is one `# HELP` line, one `# TYPE` line and its samples (one per server, config order), in a
//! fixed order; label values are escaped as the format says (`\\`, `\"`, `\n`).

use std::fmt::Write;

use super::metrics::MetricsEntry;

/// The outcomes `mcp_native_tool_call_outcomes_total` counts (`ok` is the rest of the calls).
const OUTCOMES: [&str; 4] = ["error", "timeout", "aborted", "denied"];

/// The families, in the order they are written.
pub const FAMILIES: [(&str, &str, &str); 7] = [
    (
        "mcp_native_tool_calls_total",
        "counter",
        "Tool calls made through the manager's agent tools, whatever their outcome.",
    ),
    (
        "mcp_native_tool_call_outcomes_total",
        "counter",
        "Tool calls that did not end ok, by outcome (error includes isError results).",
    ),
    (
        "mcp_native_tool_call_duration_ms",
        "gauge",
        "Tool call duration quantiles in ms over the last 1024 calls.",
    ),
    (
        "mcp_native_server_restarts_total",
        "counter",
        "Restarts after a crash, a lost connection or a failed start.",
    ),
    (
        "mcp_native_server_uptime_seconds",
        "gauge",
        "Seconds since the current session became ready (0 without a session).",
    ),
    (
        "mcp_native_server_up",
        "gauge",
        "1 when the server is ready (its tools are offered), else 0.",
    ),
    (
        "mcp_native_server_tools",
        "gauge",
        "Tools the server currently lists.",
    ),
];

/// The text of `entries`' metrics (every family's HELP and TYPE even without servers).
pub fn render(entries: &[MetricsEntry]) -> String {
    let mut out = String::with_capacity(1024 + entries.len() * 1024);
    for (index, (name, kind, help)) in FAMILIES.iter().enumerate() {
        let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(out, "# TYPE {name} {kind}");
        for entry in entries {
            let server = escape_label(&entry.server);
            let mut sample = |labels: &str, value: &dyn std::fmt::Display| {
                let _ = writeln!(out, "{name}{{server=\"{server}\"{labels}}} {value}");
            };
            match index {
                0 => sample("", &entry.counts.calls),
                1 => {
                    let counts = [
                        entry.counts.errors,
                        entry.counts.timeouts,
                        entry.counts.aborts,
                        entry.counts.denied,
                    ];
                    for (outcome, count) in OUTCOMES.iter().zip(counts) {
                        sample(&format!(",outcome=\"{outcome}\""), &count);
                    }
                }
                2 => {
                    for (quantile, value) in
                        [("0.5", entry.counts.p50_ms), ("0.99", entry.counts.p99_ms)]
                    {
                        if let Some(value) = value {
                            sample(&format!(",quantile=\"{quantile}\""), &value);
                        }
                    }
                }
                3 => sample("", &entry.counts.restarts),
                4 => sample("", &(entry.uptime_ms as f64 / 1000.0)),
                5 => sample("", &u8::from(entry.up())),
                _ => sample("", &entry.tool_count),
            }
        }
    }
    out
}

/// A label value as the format writes it: backslash, double quote and line feed escaped.
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// HELP text as the format writes it: backslash and line feed escaped.
fn escape_help(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;
    use crate::supervisor::MetricsReading;

    fn entry(server: &str) -> MetricsEntry {
        MetricsEntry {
            server: server.to_owned(),
            status: Status::Ready,
            transport: Some("stdio"),
            tool_count: 3,
            counts: MetricsReading::default(),
            uptime_ms: 1500,
            stderr_tail: Vec::new(),
        }
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label("line\nnext"), "line\\nnext");
        assert_eq!(escape_label("plain é"), "plain é");
        let text = render(&[entry("we\"ird\\name\n")]);
        assert!(text.contains("mcp_native_tool_calls_total{server=\"we\\\"ird\\\\name\\n\"} 0\n"));
        // Every sample stays on one line.
        assert!(
            text.lines()
                .all(|l| l.starts_with('#') || l.starts_with("mcp_native_"))
        );
    }

    #[test]
    fn each_family_is_help_type_then_its_samples() {
        let text = render(&[entry("a"), entry("b")]);
        let lines: Vec<&str> = text.lines().collect();
        let mut at = 0;
        for (name, kind, _) in FAMILIES {
            assert!(
                lines[at].starts_with(&format!("# HELP {name} ")),
                "{}",
                lines[at]
            );
            assert_eq!(lines[at + 1], format!("# TYPE {name} {kind}"));
            at += 2;
            while at < lines.len() && !lines[at].starts_with('#') {
                assert!(
                    lines[at].starts_with(&format!("{name}{{server=")),
                    "{}",
                    lines[at]
                );
                at += 1;
            }
        }
        assert_eq!(at, lines.len());
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn no_calls_no_quantile_lines() {
        let text = render(&[entry("a")]);
        assert!(!text.contains("quantile="));
        assert!(text.contains("# TYPE mcp_native_tool_call_duration_ms gauge\n"));
        assert!(
            text.contains(
                "mcp_native_tool_call_outcomes_total{server=\"a\",outcome=\"timeout\"} 0\n"
            )
        );
    }

    #[test]
    fn values() {
        let mut e = entry("a");
        e.counts.calls = 7;
        e.counts.errors = 2;
        e.counts.timeouts = 1;
        e.counts.aborts = 3;
        e.counts.denied = 1;
        e.counts.p50_ms = Some(4);
        e.counts.p99_ms = Some(250);
        e.counts.restarts = 2;
        let mut down = entry("b");
        down.status = Status::Error;
        down.uptime_ms = 0;
        let text = render(&[e, down]);
        for line in [
            "mcp_native_tool_calls_total{server=\"a\"} 7",
            "mcp_native_tool_call_outcomes_total{server=\"a\",outcome=\"error\"} 2",
            "mcp_native_tool_call_outcomes_total{server=\"a\",outcome=\"timeout\"} 1",
            "mcp_native_tool_call_outcomes_total{server=\"a\",outcome=\"aborted\"} 3",
            "mcp_native_tool_call_outcomes_total{server=\"a\",outcome=\"denied\"} 1",
            "mcp_native_tool_call_duration_ms{server=\"a\",quantile=\"0.5\"} 4",
            "mcp_native_tool_call_duration_ms{server=\"a\",quantile=\"0.99\"} 250",
            "mcp_native_server_restarts_total{server=\"a\"} 2",
            "mcp_native_server_uptime_seconds{server=\"a\"} 1.5",
            "mcp_native_server_uptime_seconds{server=\"b\"} 0",
            "mcp_native_server_up{server=\"a\"} 1",
            "mcp_native_server_up{server=\"b\"} 0",
            "mcp_native_server_tools{server=\"a\"} 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
        assert!(!text.contains("duration_ms{server=\"b\""));
    }

    #[test]
    fn no_servers_still_describes_the_families() {
        let text = render(&[]);
        assert_eq!(text.lines().count(), FAMILIES.len() * 2);
    }
}
