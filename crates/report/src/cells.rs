//! What every people format (terminal, Markdown, HTML) writes of a table the same way: its
//! header and body cells, the document's footnote marks ([`Marks`]), the widths of the tables
//! on top, and wrapped notes. Shared by [`crate::render`] and [`crate::terminal`].

use crate::layout::{Comparison, Table};

pub(crate) fn header(t: &Table) -> Vec<String> {
    std::iter::once(t.row_header.clone())
        .chain(t.columns.iter().cloned())
        .collect()
}

/// Longest reason for a missing value written in its cell; a longer one becomes a numbered
/// footnote, written once in the document ([`Marks`]).
pub const INLINE_REASON_CHARS: usize = 32;

/// What the people formats (terminal, Markdown, HTML) write once per document: the numbers
/// of long missing-value reasons, and the notes already printed under an earlier table (the
/// comparison's flags and the noise rule hold for every table; they are written under the
/// first one only).
#[derive(Debug, Default)]
pub struct Marks {
    reasons: Vec<String>,
    printed_notes: Vec<String>,
    new_reasons: Vec<usize>,
    /// Footnote numbers already used by the tables on top (machines, headline).
    offset: usize,
    /// Longest missing reason written in its cell ([`INLINE_REASON_CHARS`] by default); the
    /// printed report's detail tables footnote every reason ([`Marks::footnote_all`]).
    inline_max: Option<usize>,
}

impl Marks {
    /// Marks for `c`: numbers continue after the footnotes of its tables on top.
    pub fn of(c: &Comparison) -> Marks {
        let offset = c
            .tables
            .iter()
            .filter(|t| on_top(t))
            .flat_map(|t| &t.notes)
            .filter(|n| n.starts_with('['))
            .count();
        // the flags are footnotes of the headline
        let printed_notes = if c
            .tables
            .iter()
            .any(|t| t.id == crate::headline::HEADLINE_ID)
        {
            c.flags.clone()
        } else {
            Vec::new()
        };
        Marks {
            offset,
            printed_notes,
            ..Marks::default()
        }
    }
    /// From now on every missing reason is a footnote, short ones too (`— [n]`): the printed
    /// report's detail tables, where "not run: not in this run's plan" would otherwise fill
    /// dozens of cells and widen every row.
    pub fn footnote_all(&mut self) {
        self.inline_max = Some(0);
    }
    /// What one cell shows: [`crate::Cell::display`], except a long missing reason, which is
    /// `— [n]` with the reason written under the table ([`Marks::notes_of`]).
    pub fn cell(&mut self, cell: &crate::Cell) -> String {
        let inline_max = self.inline_max.unwrap_or(INLINE_REASON_CHARS);
        match &cell.missing {
            Some(why) if why.chars().count() > inline_max => {
                let n = match self.reasons.iter().position(|r| r == why) {
                    Some(i) => i + 1,
                    None => {
                        self.reasons.push(why.clone());
                        self.reasons.len()
                    }
                };
                if !self.new_reasons.contains(&n) && n == self.reasons.len() {
                    self.new_reasons.push(n);
                }
                format!("— [{}]", n + self.offset)
            }
            // a rule not evaluated: its long reason (the same in many cells) as a footnote
            None if cell.text == "not-evaluated" => match &cell.note {
                Some(why) if why.chars().count() > inline_max => {
                    let mut missing = cell.clone();
                    missing.note = None;
                    missing.missing = Some(why.clone());
                    format!(
                        "not-evaluated {}",
                        self.cell(&missing).trim_start_matches("— ")
                    )
                }
                _ => cell.display(),
            },
            _ => cell.display(),
        }
    }
    /// The notes to write under table `t` after its cells went through [`Marks::cell`]: its
    /// own notes not printed before, then the reasons first used in it (`[n1] reason`).
    pub fn notes_of(&mut self, t: &Table) -> Vec<String> {
        let mut out = Vec::new();
        for n in &t.notes {
            if !self.printed_notes.contains(n) {
                self.printed_notes.push(n.clone());
                out.push(n.clone());
            }
        }
        for n in self.new_reasons.drain(..) {
            out.push(format!("[{}] {}", n + self.offset, self.reasons[n - 1]));
        }
        out
    }
    /// Marks `note` as printed (the comparison's flags written at the top).
    pub fn printed(&mut self, note: &str) {
        self.printed_notes.push(note.to_string());
    }
}

pub(crate) fn body(t: &Table, marks: &mut Marks) -> Vec<Vec<String>> {
    t.rows
        .iter()
        .map(|r| {
            std::iter::once(r.label.clone())
                .chain(r.cells.iter().map(|c| marks.cell(c)))
                .collect()
        })
        .collect()
}

/// Widest line of the first tables (machines in one line each, the headline), in every
/// terminal output: they fit a 100-column terminal whatever the width of the detail tables.
pub const HEADLINE_COLUMNS: usize = 100;

/// Whether `t` is one of the tables on top of every output (machines, headline).
pub(crate) fn on_top(t: &Table) -> bool {
    t.id == crate::headline::MACHINES_ID || t.id == crate::headline::HEADLINE_ID
}

/// Wraps `text` at spaces to lines of at most `width` columns, later lines indented by
/// `indent` spaces ([`crate::wrap::wrap`]: never inside a word or path; a command whole).
pub fn wrap_note(text: &str, width: usize, indent: usize) -> String {
    crate::wrap::wrap(text, width, 0, indent).join("\n")
}
