//! Workloads and the runner.
pub mod service;
