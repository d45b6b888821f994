//! Comparison reports.
