//! Side-by-side comparison of result files.
//!
//! Shape: loaded result files ([`input::Input`]) -> [`build::compare`] -> one layout model
//! ([`layout::Comparison`]: tables of rows of cells) -> renderers ([`render`]: terminal via
//! tabled, Markdown, CSV, JSON, HTML) that supply syntax only, and SVG plots ([`plot`]) drawn
//! from the same tables (threads scaling rows, and the scaling tables of [`scaling`]).

pub mod about;
pub mod build;
pub mod cells;
pub mod comparability;
pub mod critical;
pub mod energy;
pub mod family;
pub mod format;
pub mod headline;
pub mod html;
pub mod input;
pub mod layout;
pub mod machine;
pub mod normalised;
pub mod plot;
pub mod point_params;
pub mod render;
pub mod run;
pub mod scaling;
pub mod soak;
pub mod summary;
pub mod terminal;
pub mod tlb;
pub mod verdicts;
pub mod wrap;

pub use build::compare;
pub use input::{
    default_label, distinct_labels, inputs_with_default_labels, label_candidates, CompareError,
    Input,
};
pub use layout::{Cell, CellStats, Comparison, PlotSpec, Row, Table};
pub use render::{render, Format};
