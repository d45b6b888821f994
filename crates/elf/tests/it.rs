//! The integration tests of hwsurvey-elf: one module per `tests/*.rs` file below, built
//! as one test binary (one compile and one link instead of one per file, most of what the
//! cross stages cost: docs/testing.md). A new test file must be added below
//! (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod fuzz;
mod headers;
mod target_spec_json;
mod targets;
mod this_binary;
mod user_files;
