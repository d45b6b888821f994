//! The one table layout every format renders: title, columns (platforms), rows of cells.
//! Renderers supply syntax only.

use serde::{Deserialize, Serialize};

/// A whole comparison: tables in order (machine first, then one per family).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Column labels, one per result file, in the order given.
    pub platforms: Vec<String>,
    /// Label of the baseline platform.
    pub baseline: String,
    /// Warnings that hold for every table (e.g. mixed profile versions with --force).
    pub flags: Vec<String>,
    /// Tables.
    pub tables: Vec<Table>,
}

/// One table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Stable id (`machine`, `family:mem.bandwidth`).
    pub id: String,
    /// Title for people.
    pub title: String,
    /// Header of the first column (`property`, `test`).
    pub row_header: String,
    /// Column headers after the first: platforms, then relative columns (`B vs A`).
    pub columns: Vec<String>,
    /// Rows.
    pub rows: Vec<Row>,
    /// Notes under the table (flags, how noise is judged).
    pub notes: Vec<String>,
    /// How the table is drawn as a plot (scaling tables only): one line per platform column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plot: Option<PlotSpec>,
}

/// Axes of a scaling table's plot. Points: x = the cell's `x`, else the row's `x`; y = the
/// cell's `value` (the row's `unit`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlotSpec {
    /// What x is (`working set`, `closed-loop clients`).
    pub x_label: String,
    /// Base unit of x: `bytes`, `bytes_per_s`, `clients`.
    pub x_unit: String,
    /// x on a log2 scale (sizes and client counts that double).
    pub x_log: bool,
    /// What y is (`load-to-use latency`, `bandwidth`).
    pub y_label: String,
    /// y on a log10 scale (latencies spanning cache levels).
    pub y_log: bool,
}

/// One row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Row label (`CPU model`, `stream.triad/threads=4`).
    pub label: String,
    /// Unit of the row's values in files (base unit: `bytes_per_s`), if numeric.
    pub unit: Option<String>,
    /// The row's x in its table's [`PlotSpec::x_unit`] (working set bytes, clients), for
    /// scaling tables whose rows share one x.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    /// One cell per column.
    pub cells: Vec<Cell>,
}

/// One cell: a value for people, its base-unit number for files, a note, or why it is missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Scaled text for people (`48.2 GB/s`); empty when missing.
    pub text: String,
    /// The number in the row's base unit, when numeric.
    pub value: Option<f64>,
    /// Spread or verdict (`CV 2.1%`, `within noise`, `+12% better`).
    pub note: Option<String>,
    /// Why there is no value (`skipped: hugetlb pool empty`).
    pub missing: Option<String>,
    /// The cell's own x when it differs per platform (delivered bandwidth of a load level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
}

impl Cell {
    /// A text-only cell.
    pub fn text(t: impl Into<String>) -> Cell {
        Cell {
            text: t.into(),
            value: None,
            note: None,
            missing: None,
            x: None,
        }
    }
    /// A missing value and why.
    pub fn missing(why: impl Into<String>) -> Cell {
        Cell {
            text: String::new(),
            value: None,
            note: None,
            missing: Some(why.into()),
            x: None,
        }
    }
    /// What people see in one line: text, note in parentheses, or `— why`.
    pub fn display(&self) -> String {
        match (&self.missing, &self.note) {
            (Some(why), _) => format!("— {why}"),
            (None, Some(n)) if !self.text.is_empty() => format!("{} ({n})", self.text),
            (None, Some(n)) => n.clone(),
            (None, None) => self.text.clone(),
        }
    }
}
