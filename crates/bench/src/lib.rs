//! Workloads and the runner.
