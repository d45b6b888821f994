//! The integration tests of hwsurvey-workloads: one module per `tests/*.rs` file below, built
//! as one test binary (one compile and one link instead of one per file, most of what the
//! cross stages cost: docs/testing.md). A new test file must be added below
//! (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod clock_family;
mod kernels_c2c;
mod kernels_cpu_sync;
mod kernels_mem_latency;
mod kernels_profile;
mod ladder_fixtures;
mod loaded_latency_driver;
mod loaded_latency_family;
mod plan_rules;
mod point_params_views;
mod profile_validation;
mod raid6_correctness;
mod raid6_family;
mod raid6_kernel_log;
mod service_accounting;
mod service_family;
mod service_histogram;
mod service_index;
mod service_open_loop;
mod service_search;
mod start_gate;
mod storage_cleanup;
mod storage_family;
mod storage_identity;
mod storage_in_use;
mod storage_refusal;
mod storage_stack;
mod sync_cancel;
