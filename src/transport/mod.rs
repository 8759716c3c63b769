//! How the manager reaches a server. Only stdio exists so far; Streamable HTTP and legacy SSE
//! slot in beside it as further variants of [`Connection`].

pub mod orphan_guard;
pub mod stdio;
