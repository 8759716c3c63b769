//! The poisoning scan of a server's listing: every tool's label, description and every string
//! in its schemas, and the server's `instructions`, through the hygiene pass (what invisible
//! tag characters spell is read too) and the manager's detector (OpenClaw's patterns, or with
//! `detection: 'enhanced'` the enhanced rules). A tool whose definition carries
//! instructions to the model, or text hidden from a reader, is flagged; each finding is
//! reported once per listing it first appears in. Cached per listing (by pointer).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::options::Detection;
use crate::security::{self, WrapFormat};
use crate::supervisor::ToolEntry;

/// What the scan found in one tool (or, with `tool` empty, in the server's instructions).
pub(super) struct Finding {
    pub tool: Option<String>,
    pub findings: Vec<String>,
}

/// Per server: the listing (by pointer) a verdict was made for, and the verdict.
type Verdicts = HashMap<String, (usize, Arc<Vec<bool>>)>;

#[derive(Default)]
pub(super) struct Scanner {
    verdicts: Mutex<Verdicts>,
    /// (server, tool, findings) already reported.
    reported: Mutex<HashSet<(String, String, Vec<String>)>>,
}

impl Scanner {
    /// For each of `tools`, whether its definition is flagged, and the findings not reported
    /// before (the server's `instructions` included).
    pub fn scan(
        &self,
        server: &str,
        tools: &Arc<Vec<ToolEntry>>,
        instructions: Option<&str>,
        format: WrapFormat,
        detection: Detection,
    ) -> (Arc<Vec<bool>>, Vec<Finding>) {
        let key = Arc::as_ptr(tools) as usize;
        if let Some((list, verdict)) = self
            .verdicts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            && *list == key
        {
            return (verdict.clone(), Vec::new());
        }
        let mut flagged = Vec::with_capacity(tools.len());
        let mut found = Vec::new();
        for tool in tools.iter() {
            if tool.builtin.is_some() {
                flagged.push(false);
                continue;
            }
            let mut texts = vec![tool.label.clone(), tool.description.clone()];
            if let Ok(schema) = serde_json::from_str::<Value>(&tool.parameters_json) {
                strings(&schema, &mut texts);
            }
            if let Some(schema) = &tool.output_schema {
                strings(schema, &mut texts);
            }
            let findings = findings(&texts.join("\n"), format, detection);
            flagged.push(!findings.is_empty());
            if !findings.is_empty() {
                found.push(Finding {
                    tool: Some(tool.mcp_name.clone()),
                    findings,
                });
            }
        }
        if let Some(text) = instructions {
            let findings = findings(text, format, detection);
            if !findings.is_empty() {
                found.push(Finding {
                    tool: None,
                    findings,
                });
            }
        }
        let verdict = Arc::new(flagged);
        self.verdicts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(server.to_owned(), (key, verdict.clone()));
        let mut reported = self.reported.lock().unwrap_or_else(|p| p.into_inner());
        found.retain(|f| {
            reported.insert((
                server.to_owned(),
                f.tool.clone().unwrap_or_default(),
                f.findings.clone(),
            ))
        });
        (verdict, found)
    }
}

/// The detector's findings in `text` and in what its tag characters spell (`pattern …` for
/// OpenClaw's, `rule …` for the enhanced one, which reads tag characters itself), and the
/// classes of invisible text it hides.
fn findings(text: &str, format: WrapFormat, detection: Detection) -> Vec<String> {
    let cleaned = security::hygiene::clean(text);
    let (read, label) = match detection {
        Detection::OpenClaw => (cleaned.text.as_ref(), "pattern"),
        Detection::Enhanced => (text, "rule"),
    };
    let mut out: Vec<String> = detection
        .detect_definition(read, format)
        .into_iter()
        .map(|found| format!("{label} {found}"))
        .collect();
    if detection == Detection::OpenClaw && !cleaned.hidden.is_empty() {
        for p in security::detect_suspicious_patterns(&cleaned.hidden, format) {
            let p = format!("pattern {p}");
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    let c = cleaned.counts;
    if c.tag_chars > 0 {
        out.push(format!("{} invisible tag characters", c.tag_chars));
    }
    if c.bidi > 0 {
        out.push(format!("{} bidi controls", c.bidi));
    }
    if c.escapes > 0 {
        out.push(format!("{} terminal escape sequences", c.escapes));
    }
    out
}

/// Every string in `value`.
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}
