//! Every integration test of this package in one test binary (one compile and one link
//! instead of one per file: issue 37). Each tests/*.rs file is a module here; a new test
//! file must be added below (xtask/tests/one_test_binary.rs fails naming a file that is not).

mod firmware;
mod fleet;
mod names_and_escaping;
mod terminal_fit;
mod verdict;
mod watch;
