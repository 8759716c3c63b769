//! `getMetrics()`'s entries as plain JS objects (`McpServerMetrics` in the header).

use ::napi::bindgen_prelude::*;

use crate::manager::MetricsEntry;

/// `entries` as an array of plain objects: every field present (`null` where there is no
/// value), but `transport`, which is left out until a connection succeeded (as in
/// `getStatus()`).
pub fn entries_to_js<'env>(env: &'env Env, entries: Vec<MetricsEntry>) -> Result<Array<'env>> {
    let mut out = env.create_array(entries.len() as u32)?;
    for (i, e) in entries.into_iter().enumerate() {
        let mut object = Object::new(env)?;
        object.set_named_property("server", e.server)?;
        object.set_named_property("status", e.status.as_str())?;
        if let Some(transport) = e.transport {
            object.set_named_property("transport", transport)?;
        }
        for (key, count) in [
            ("calls", e.counts.calls),
            ("errors", e.counts.errors),
            ("timeouts", e.counts.timeouts),
            ("aborts", e.counts.aborts),
            ("denied", e.counts.denied),
        ] {
            object.set_named_property(key, count as f64)?;
        }
        for (key, ms) in [("p50Ms", e.counts.p50_ms), ("p99Ms", e.counts.p99_ms)] {
            match ms {
                Some(ms) => object.set_named_property(key, ms as f64)?,
                None => object.set_named_property(key, Null)?,
            }
        }
        object.set_named_property("restarts", e.counts.restarts as f64)?;
        object.set_named_property("uptimeMs", e.uptime_ms as f64)?;
        match e.counts.last_error {
            Some(error) => object.set_named_property("lastError", error)?,
            None => object.set_named_property("lastError", Null)?,
        }
        object.set_named_property("stderrTail", e.stderr_tail)?;
        match e.counts.startup {
            Some(startup) => {
                let mut timings = Object::new(env)?;
                timings.set_named_property("connectMs", startup.connect_ms)?;
                timings.set_named_property("initializeMs", startup.initialize_ms)?;
                timings.set_named_property("listMs", startup.list_ms)?;
                object.set_named_property("startup", timings)?;
            }
            None => object.set_named_property("startup", Null)?,
        }
        out.set(i as u32, object)?;
    }
    Ok(out)
}
