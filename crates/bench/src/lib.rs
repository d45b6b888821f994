//! Workloads and the runner.
pub mod service;
pub mod raid6;
pub mod storage;
