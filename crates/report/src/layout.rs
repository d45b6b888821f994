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
    /// Warnings that hold for every table (e.g. mixed profile versions with --mixed-profiles).
    pub flags: Vec<String>,
    /// Tables.
    pub tables: Vec<Table>,
    /// One line per run: its dates, hwsurvey version and profile ([`crate::about::run_lines`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// One sentence per machine: what it is, what is wrong with it, how it compares
    /// ([`crate::about::verdicts`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<String>,
    /// When the report was written (UTC, RFC 3339), set by `hwsurvey compare`; `None` from
    /// the library, so that the same inputs render the same bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_at: Option<String>,
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
    /// The statistics of a measured median cell, as numbers in the row's base unit, for jq
    /// and spreadsheets (the `note` says the same for people); absent for other cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<CellStats>,
    /// The unit of `value` where it is not the row's (a per-watt column: `bytes_per_j`,
    /// `ops_per_j`, [`crate::energy`]); absent: the row's unit (a relative column's: ratio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// Statistics of one measured cell, from the result file's summary of its samples
/// (`hwsurvey_stats::Summary`); values in the row's base unit, `cv` a fraction (0.05 = 5 %).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellStats {
    /// Number of samples.
    pub n: usize,
    /// Median of the samples (the cell's `value`).
    pub median: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Coefficient of variation, a fraction; absent when the mean is 0.
    pub cv: Option<f64>,
    /// Lower end of the 95 % bootstrap confidence interval of the median.
    pub ci95_low: f64,
    /// Upper end of that interval.
    pub ci95_high: f64,
}

impl CellStats {
    /// The numbers of `s`.
    pub fn of(s: &hwsurvey_stats::Summary) -> CellStats {
        CellStats {
            n: s.n,
            median: s.median,
            min: s.min,
            max: s.max,
            cv: s.cv,
            ci95_low: s.median_ci95_low,
            ci95_high: s.median_ci95_high,
        }
    }
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
            stats: None,
            unit: None,
        }
    }
    /// A number computed from other cells (a ratio, a figure per core, a peak): `text` for
    /// people, `value` in the row's base unit, no statistics of its own.
    pub fn computed(text: impl Into<String>, value: f64) -> Cell {
        Cell {
            value: Some(value),
            ..Cell::text(text)
        }
    }
    /// A measured median: `text` for people (scaled from the row's base unit), the median as
    /// the value, the CV note and the numbers of the summary.
    pub fn measured(s: &hwsurvey_stats::Summary, text: String) -> Cell {
        Cell {
            text,
            value: Some(s.median),
            note: s.cv.map(|cv| format!("CV {:.1}%", cv * 100.0)),
            missing: None,
            x: None,
            stats: Some(CellStats::of(s)),
            unit: None,
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
            stats: None,
            unit: None,
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

/// Longest column label shown, characters (a default label has hostname, arch and kernel at
/// most 48 each, plus their lengths when cut).
pub const MAX_LABEL_CHARS: usize = 160;
/// Longest title, row label or cell text shown, characters: a backstop against an unbounded
/// string from a file, never reached by a cell composed of bounded parts (the machine line:
/// the label, at most [`MAX_LABEL_CHARS`], and six parts of at most 64 characters each with
/// hwsurvey's own words, about 700). At 200 it cut the arm64 example's 218-character machine
/// line in the middle of a word.
pub const MAX_CELL_CHARS: usize = 1000;
/// Longest note or flag shown, characters.
pub const MAX_NOTE_CHARS: usize = 2000;

impl Comparison {
    /// Makes every string of the comparison safe for every format: control characters
    /// (ESC, BEL, NUL, newlines) and bidirectional overrides escaped, and each string bounded
    /// ([`MAX_LABEL_CHARS`], [`MAX_CELL_CHARS`], [`MAX_NOTE_CHARS`]; the middle of a longer
    /// one is cut, its length said), so a 1 MiB hostname in a result file neither widens a
    /// terminal table to a megabyte per row nor makes an SVG invalid XML.
    /// [`crate::compare`] calls it on what it returns.
    pub fn make_printable(&mut self) {
        use hwsurvey_model::text::one_line;
        let fix = |s: &mut String, max: usize| {
            if let std::borrow::Cow::Owned(o) = one_line(s, max) {
                *s = o;
            }
        };
        self.platforms
            .iter_mut()
            .for_each(|p| fix(p, MAX_LABEL_CHARS));
        fix(&mut self.baseline, MAX_LABEL_CHARS);
        self.flags.iter_mut().for_each(|f| fix(f, MAX_NOTE_CHARS));
        for t in &mut self.tables {
            fix(&mut t.id, MAX_CELL_CHARS);
            fix(&mut t.title, MAX_CELL_CHARS);
            fix(&mut t.row_header, MAX_CELL_CHARS);
            // relative columns hold two labels: "B vs A"
            t.columns
                .iter_mut()
                .for_each(|c| fix(c, 2 * MAX_LABEL_CHARS + 4));
            t.notes.iter_mut().for_each(|n| fix(n, MAX_NOTE_CHARS));
            if let Some(p) = &mut t.plot {
                fix(&mut p.x_label, MAX_CELL_CHARS);
                fix(&mut p.x_unit, MAX_CELL_CHARS);
                fix(&mut p.y_label, MAX_CELL_CHARS);
            }
            for r in &mut t.rows {
                fix(&mut r.label, MAX_CELL_CHARS);
                if let Some(u) = &mut r.unit {
                    fix(u, MAX_CELL_CHARS);
                }
                for c in &mut r.cells {
                    fix(&mut c.text, MAX_CELL_CHARS);
                    // a long missing reason or note is written in full as a footnote
                    // (breaker finding: "… (471 bytes)" cut a skip reason in its note)
                    if let Some(n) = &mut c.note {
                        fix(n, MAX_NOTE_CHARS);
                    }
                    if let Some(m) = &mut c.missing {
                        fix(m, MAX_NOTE_CHARS);
                    }
                }
            }
        }
    }
}
