//! The terminal renderer of a [`Comparison`]: box tables (tabled's `Style::sharp`) whose cells
//! are wrapped by the one wrapping layer ([`crate::wrap`]), notes under them.
//!
//! On a terminal ([`Screen::width`] given) the answer comes first: the machines, a few lines
//! each without a box, and the headline (why a column is not comparable printed whole between
//! the headline's title and its table, before the figures; the key to `+ - ~ !` whole under
//! it, then the machines' notes and its own), the notes that fit one line under them, then
//! [`Screen::hint`] (how to see the detail tables) when they are left out, then the notes that
//! do not fit one line, in full ("Notes in full"). The detail tables are printed only with
//! [`Screen::details`]. A table wider than the terminal has its widest cells wrapped first, at
//! spaces (a path after a `/`), never inside a word; one that is still too wide at its
//! narrowest is printed in groups of columns, each with the row labels.
//!
//! To a pipe or a file (`width` `None`) every table is printed at its natural width (the
//! tables on top fitted to [`HEADLINE_COLUMNS`]), each note in full under its table.

use crate::cells::{body, header, on_top, Marks, HEADLINE_COLUMNS};
use crate::layout::{Comparison, Table};
use crate::wrap;

/// How [`screen`] lays a comparison out.
#[derive(Debug, Clone, Default)]
pub struct Screen {
    /// Columns of the terminal; `None`: a pipe or file, everything in full.
    pub width: Option<usize>,
    /// On a terminal, print the detail tables too (to a pipe or file they always are).
    pub details: bool,
    /// One line printed after the tables on top when detail tables were left out: how to see
    /// them (`hwsurvey compare --details FILE...`).
    pub hint: Option<String>,
    /// The run's closing headline to a pipe or file: each note on one line, not wrapped.
    pub one_line_notes: bool,
}

/// A box table of `header` and `rows` (each as long as `header`) at most `width` columns wide
/// when it can be: the widest column narrowed first, no column below its widest word
/// ([`wrap::column_widths`], [`wrap::wrap_cell`]); a table too wide even so is printed in
/// groups of columns, each with the first column. `None`: natural width. Ends with a newline.
pub fn boxed(header: Vec<String>, rows: Vec<Vec<String>>, width: Option<usize>) -> String {
    let all: Vec<Vec<String>> = std::iter::once(header).chain(rows).collect();
    let n = all.first().map(Vec::len).unwrap_or(0);
    let Some(width) = width.filter(|_| n > 0) else {
        return draw(&all);
    };
    let natural: Vec<usize> = (0..n)
        .map(|j| {
            all.iter()
                .map(|r| wrap::cell_width(&r[j]))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let min: Vec<usize> = (0..n)
        .map(|j| {
            all.iter()
                .map(|r| wrap::cell_min_width(&r[j]))
                .max()
                .unwrap_or(0)
        })
        .collect();
    if let Some(w) = wrap::column_widths(&natural, &min, width) {
        return draw(&wrapped(&all, &(0..n).collect::<Vec<_>>(), &w));
    }
    // groups of columns, each after the first column, as many as fit at their minimum
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    for j in 1..n {
        let cost = |g: &[usize]| min[0] + g.iter().map(|&k| min[k]).sum::<usize>();
        let mut next = cur.clone();
        next.push(j);
        if !cur.is_empty() && cost(&next) + wrap::table_overhead(next.len() + 1) > width {
            groups.push(std::mem::replace(&mut cur, vec![j]));
        } else {
            cur = next;
        }
    }
    groups.push(cur);
    groups
        .iter()
        .map(|g| {
            let cols: Vec<usize> = std::iter::once(0).chain(g.iter().copied()).collect();
            let nat: Vec<usize> = cols.iter().map(|&k| natural[k]).collect();
            let mn: Vec<usize> = cols.iter().map(|&k| min[k]).collect();
            // a single column wider than the terminal at its narrowest: it overflows
            let w = wrap::column_widths(&nat, &mn, width).unwrap_or(mn);
            draw(&wrapped(&all, &cols, &w))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The columns `cols` of `all`, each cell wrapped to its column's width.
fn wrapped(all: &[Vec<String>], cols: &[usize], widths: &[usize]) -> Vec<Vec<String>> {
    all.iter()
        .map(|r| {
            cols.iter()
                .zip(widths)
                .map(|(&k, &w)| wrap::wrap_cell(&r[k], w))
                .collect()
        })
        .collect()
}

fn draw(rows: &[Vec<String>]) -> String {
    let mut b = tabled::builder::Builder::default();
    for r in rows {
        b.push_record(r.clone());
    }
    let mut table = b.build();
    table.with(tabled::settings::Style::sharp());
    format!("{table}\n")
}

/// A note as [`screen`] prints it beside a table drawn `w` columns wide (`None`: natural
/// width): wrapped to that width with a hanging indent, or on one line to a pipe or file with
/// [`Screen::one_line_notes`] (or beside a table of natural width). No newline at the end.
fn note_text(n: &str, s: &Screen, w: Option<usize>) -> String {
    match w {
        Some(w) if s.width.is_some() || !s.one_line_notes => crate::cells::wrap_note(n, w, 6),
        _ => n.to_string(),
    }
}

/// The machines table on a terminal `width` columns wide: per row its label and its one
/// cell (`rows` as [`body`] made them), wrapped with a hanging indent, under a line that says
/// what the parts of a machine's line are (the table's column header).
fn machine_lines(t: &Table, rows: &[Vec<String>], width: usize) -> String {
    let mut out = String::new();
    if let Some(what) = t.columns.first() {
        out += &crate::cells::wrap_note(&format!("({what})"), width, 1);
        out.push('\n');
    }
    for r in rows {
        let line = r.join(" = ");
        out += &crate::cells::wrap_note(&line, width, 4);
        out.push('\n');
    }
    out
}

/// The number of tables [`screen`] leaves out on a terminal without [`Screen::details`]:
/// every table but the machines and the headline.
pub fn detail_tables(c: &Comparison) -> usize {
    c.tables.iter().filter(|t| !on_top(t)).count()
}

/// `c` for a terminal or a pipe, as [`Screen`] says (module docs).
pub fn screen(c: &Comparison, s: &Screen) -> String {
    let (body, notes) = screen_parts(c, s);
    body + &notes
}

/// [`screen`] in two parts: the tables with their notes, and the notes in full that go at the
/// very end (empty to a pipe or file), for a caller that prints more lines between them.
pub fn screen_parts(c: &Comparison, s: &Screen) -> (String, String) {
    let mut out = String::new();
    let mut marks = Marks::of(c);
    let mut at_end: Vec<String> = Vec::new();
    let terminal = s.width.is_some();
    let shown: Vec<&Table> = c
        .tables
        .iter()
        .filter(|t| !terminal || s.details || on_top(t))
        .collect();
    // a terminal: the machines' notes wait for the headline's key (below)
    let mut deferred: Vec<String> = Vec::new();
    for (i, t) in shown.iter().enumerate() {
        let rows = body(t, &mut marks);
        let w = if on_top(t) {
            Some(s.width.unwrap_or(HEADLINE_COLUMNS).min(HEADLINE_COLUMNS))
        } else {
            s.width
        };
        out += &format!("{}\n", t.title);
        if terminal && t.id == crate::headline::MACHINES_ID {
            // one machine a few lines, no box: a box table of three machines took 16 lines of
            // an 80x24 screen, and its notes more, before any figure (issue 49)
            out += &machine_lines(t, &rows, w.unwrap_or(HEADLINE_COLUMNS));
            deferred = marks
                .notes_of(t)
                .into_iter()
                .map(|n| format!("note: {n}"))
                .collect();
            out.push('\n');
            continue;
        }
        // why a column is not comparable (emulated, quick, busy at start) comes before the
        // figures it qualifies, whole: under the headline it fell below an 80x24 screen, which
        // then showed an emulator's figures with only a "!" beside them
        if t.id == crate::headline::HEADLINE_ID {
            for n in t
                .notes
                .iter()
                .filter(|n| crate::headline::is_not_comparable_note(n))
            {
                marks.printed(n);
                out += &note_text(&format!("note: {n}"), s, w);
                out.push('\n');
            }
        }
        out += &boxed(header(t), rows, w);
        let mut notes: Vec<String> = marks
            .notes_of(t)
            .into_iter()
            .map(|n| format!("note: {n}"))
            .collect();
        if terminal && t.id == crate::headline::HEADLINE_ID {
            // the key to + - ~ ! right under the table whose marks it explains, whole (it
            // went to the very end, after dozens of notes), then the machines' notes
            if let Some(k) = notes.iter().position(|n| crate::headline::is_key_note(n)) {
                let key = notes.remove(k);
                out += &note_text(&key, s, w);
                out.push('\n');
            }
            notes = deferred.drain(..).chain(notes).collect();
        }
        for n in notes {
            // a terminal: a note on one line under its table, or in full at the end
            if s.width.is_some() && w.is_some_and(|w| wrap::columns(&n) > w) {
                at_end.push(n);
                continue;
            }
            out += &note_text(&n, s, w);
            out.push('\n');
        }
        out.push('\n');
        // the hint right after the tables on top
        let last_top = shown.get(i + 1).is_none_or(|next| !on_top(next));
        if terminal && on_top(t) && last_top && !s.details && detail_tables(c) > 0 {
            if let Some(h) = &s.hint {
                out += &crate::cells::wrap_note(h, s.width.unwrap_or(HEADLINE_COLUMNS), 4);
                out += "\n\n";
            }
        }
    }
    // machines without a headline after them (never from compare): their notes still
    for n in deferred {
        out += &note_text(&n, s, s.width);
        out.push('\n');
    }
    let mut end = String::new();
    if let (Some(width), false) = (s.width, at_end.is_empty()) {
        end += "Notes in full\n";
        for n in at_end {
            end += &wrap::wrap(&n, width, 0, 6).join("\n");
            end.push('\n');
        }
    }
    (out, end)
}
