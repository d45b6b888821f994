//! Qualification rules.
