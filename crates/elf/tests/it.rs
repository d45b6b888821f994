//! Every integration test of this package in one test binary (one compile and one link
//! instead of one per file: issue 37). Each tests/*.rs file is a module here; a new test
//! file must be added below (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod fuzz;
mod headers;
mod target_spec_json;
mod targets;
mod this_binary;
mod user_files;
