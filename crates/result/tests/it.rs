//! The integration tests of hwsurvey-result: one module per `tests/*.rs` file below, built
//! as one test binary (one compile and one link instead of one per file, most of what the
//! cross stages cost: docs/testing.md). A new test file must be added below
//! (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod counts;
mod error_bounds;
mod example_estimates;
mod full_disk;
mod load_cost;
mod machine_bounds;
mod machine_document;
mod stored_findings;
