//! The integration tests of hwsurvey-fleet: one module per `tests/*.rs` file below, built
//! as one test binary (one compile and one link instead of one per file, most of what the
//! cross stages cost: docs/testing.md). A new test file must be added below
//! (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod firmware;
mod fleet;
mod machine_document;
mod names_and_escaping;
mod terminal_fit;
mod verdict;
mod watch;
