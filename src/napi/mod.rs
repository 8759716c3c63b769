//! The Node.js binding: converts between JS values and the core's types and holds no logic of
//! its own. Nothing in it may panic into JS: closures called from JS catch unwinds, and futures
//! handed to JS are built so a failure becomes a value, never a crash.

mod functions;
mod logger;
mod manager;
mod tool;
