//! The pure parts of the MCP tool bridge: the parameter-schema conversion and a bridged
//! tool's name, label and description (OpenClaw PR #21530 compat mode), and what a tool result
//! becomes (compat text in `result`, rich parts in `rich`). No I/O, no napi.
//!
//! Checked byte for byte against `tests/fixtures/vectors/schema-conversion.pr21530.json`
//! and `tool-bridge.pr21530.json` by `tests/bridge_vectors.rs`.

pub mod faithful;
mod js_semantics;
pub mod json_check;
pub mod media;
pub mod naming;
pub mod schema;

pub use naming::{
    AssignedName, NameScheme, ServerTools, assign_tool_names, assign_tool_names_reserving,
    derived_name_message, is_provider_safe_name,
};
pub use naming::{compat_tool_name, tool_description, tool_label};
pub use schema::{MAX_DEPTH, convert_schema};
pub mod result;
pub mod rich;
