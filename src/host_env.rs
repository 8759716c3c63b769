//! Where a server start reads the host's environment: what its stdio child inherits and what
//! `secret://env/…` and `${VAR}` read.
//!
//! For a Rust embedder that is this process's environment. Under Node it is `process.env`, the
//! JS object, which a gateway or a test may have replaced (`process.env = { ...process.env,
//! X: 'v' }`): the original module read that object at each start, so the binding supplies it.

use std::future::Future;
use std::pin::Pin;

use crate::secrets::EnvSource;

/// The host environment at the moment a server (re)starts.
pub trait HostEnvironment: Send + Sync {
    fn current(&self) -> Pin<Box<dyn Future<Output = EnvSource> + Send + '_>>;
}

/// This process's own environment.
pub struct ProcessEnvironment;

impl HostEnvironment for ProcessEnvironment {
    fn current(&self) -> Pin<Box<dyn Future<Output = EnvSource> + Send + '_>> {
        Box::pin(std::future::ready(EnvSource::Process))
    }
}
