//! The pure parts of the MCP tool bridge (OpenClaw PR #21530 compat mode): the
//! parameter-schema conversion and a bridged tool's name, label and
//! description. No I/O, no napi.
//!
//! Checked byte for byte against `tests/fixtures/vectors/schema-conversion.pr21530.json`
//! and `tool-bridge.pr21530.json` by `tests/bridge_vectors.rs`.

mod js_semantics;
pub mod naming;
pub mod schema;

pub use naming::{
    AssignedName, NameScheme, ServerTools, assign_tool_names, assign_tool_names_reserving,
    derived_name_message, is_provider_safe_name,
};
pub use naming::{compat_tool_name, tool_description, tool_label};
pub use schema::{MAX_DEPTH, convert_schema};
pub mod result;
