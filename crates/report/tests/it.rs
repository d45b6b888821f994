//! The integration tests of hwsurvey-report: one module per `tests/*.rs` file below, built
//! as one test binary (one compile and one link instead of one per file, most of what the
//! cross stages cost: docs/testing.md). A new test file must be added below
//! (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod examples;
mod formats;
mod headline;
mod hostile_strings;
mod machine_table;
mod measured_clock;
mod plots;
mod time_limited;
mod tlb_reach;
