//! Output that fits the terminal. When stdout is a terminal, no printed line is wider than it:
//! tables are shrunk by their renderers (cells wrapped, widest column first), prose lines are
//! wrapped with a hanging indent, and a table row that is still too wide (a column that cannot
//! shrink further) is cut with "…". To a pipe or a file everything is printed in full, as
//! lscpu and numactl do.

/// Columns of the terminal on stdout, or `None` when stdout is not a terminal (pipe, file,
/// /dev/null). Source: the TIOCGWINSZ ioctl on fd 1 (through `console`). A terminal that
/// reports no size (0 columns: some serial consoles, `script` without a size) counts as
/// `COLUMNS` when that is a positive number, else 80. Never less than [`MIN_WIDTH`].
pub(crate) fn stdout_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        return None;
    }
    width_of(&console::Term::stdout())
}

/// [`stdout_width`] for stderr (fd 2), where notes, warnings and errors go.
pub(crate) fn stderr_width() -> Option<usize> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    width_of(&console::Term::stderr())
}

fn width_of(term: &console::Term) -> Option<usize> {
    let reported = term
        .size_checked()
        .map(|(_rows, cols)| usize::from(cols))
        .filter(|&c| c > 0);
    let columns = reported.or_else(|| {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    });
    Some(columns.unwrap_or(80).max(MIN_WIDTH))
}

/// Narrowest width that [`fit`] lays text out for, columns: below it a hanging indent and a
/// table's borders leave no room for text.
pub(crate) const MIN_WIDTH: usize = 20;

/// Display width of `s` in terminal columns (wide characters count 2).
pub(crate) fn display_width(s: &str) -> usize {
    console::measure_text_width(s)
}

/// Whether `line` is a row of a box-drawn table (its first visible character is a border).
fn is_table_row(line: &str) -> bool {
    line.trim_start()
        .chars()
        .next()
        .is_some_and(|c| "┌┐└┘├┤┬┴┼│─╭╮╰╯".contains(c))
}

/// `text` laid out for a terminal `width` columns wide (at least [`MIN_WIDTH`]): each line at
/// most that wide where it can be. A prose line is wrapped by the one wrapping layer
/// ([`hwsurvey_report::wrap::fit_line`]): at spaces only, never inside a word, path or option
/// name; a shell command (a fix) whole, on a line of its own when it does not fit where it
/// stands; continuation lines indented by the line's own indent plus 4 columns (at most half
/// the width), so a wrapped item still reads as one. A word wider than the terminal stays
/// whole (the line overflows) rather than being cut. A table row is cut at the width with
/// "…". Lines that fit are unchanged, and so is the number of trailing newlines.
pub(crate) fn fit(text: &str, width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let mut out = String::with_capacity(text.len());
    for piece in text.split_inclusive('\n') {
        let (line, newline) = match piece.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (piece, ""),
        };
        if display_width(line) <= width {
            out.push_str(line);
        } else if is_table_row(line) {
            out.push_str(&console::truncate_str(line, width, "…"));
        } else {
            out.push_str(&hwsurvey_report::wrap::fit_line(line, width).join("\n"));
        }
        out.push_str(newline);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(s: &str) -> usize {
        s.lines().map(display_width).max().unwrap_or(0)
    }

    #[test]
    fn prose_wraps_with_a_hanging_indent_and_keeps_every_word() {
        // the probe's widest line on this VM (488 columns): the kernel command line
        let line = "  cmdline mitigations=auto,no_guest_host console=ttyS0 quiet reboot=k \
                    panic=1 nomodule random.trust_cpu=1 swiotlb=noforce psi=1 deferred_init=lazy";
        let out = fit(line, 40);
        assert!(widest(&out) <= 40, "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines.len() >= 4, "{out}");
        assert!(lines[0].starts_with("  cmdline "), "{out}");
        assert!(lines[1..].iter().all(|l| l.starts_with("      ")), "{out}");
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&out), words(line));
    }

    #[test]
    fn lines_that_fit_and_newlines_are_unchanged() {
        let text = "a short line\n\n  indented\n";
        assert_eq!(fit(text, 80), text);
        assert_eq!(fit("no newline", 80), "no newline");
    }

    #[test]
    fn a_path_is_broken_only_when_wider_than_the_terminal_and_a_command_never() {
        let path = format!("/sys/{}", "x".repeat(60));
        let out = fit(&format!("{}read {path}: 0", " ".repeat(34)), 80);
        assert!(
            out.lines().any(|l| l.trim() == format!("{path}: 0")),
            "{out}"
        );
        // a fix's command stays whole: qualify at 80 columns split it inside a path
        // (".../hugepages-" / "2048kB/nr_hugepages")
        let fix = format!(
            "{}fix: echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (or \
             vm.nr_hugepages in sysctl.conf)",
            " ".repeat(34)
        );
        let out = fit(&fix, 80);
        assert!(widest(&out) <= 80, "{out}");
        assert!(
            out.lines()
                .any(|l| l.trim()
                    == "echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"),
            "{out}"
        );
    }

    #[test]
    fn table_rows_are_cut_with_an_ellipsis() {
        let row = format!("│ read │ {} │", "9".repeat(200));
        let out = fit(&format!("{row}\n"), 50);
        assert_eq!(display_width(out.trim_end()), 50, "{out}");
        assert!(out.trim_end().ends_with('…'), "{out}");
        assert!(out.ends_with('\n'));
    }

    #[test]
    fn width_below_the_minimum_is_raised_to_it() {
        let out = fit(&"word ".repeat(30), 5);
        assert!(widest(&out) <= MIN_WIDTH, "{out}");
        assert!(out.lines().count() > 1);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let line = "机器 ".repeat(20);
        let out = fit(&line, 21);
        assert!(widest(&out) <= 21, "{out}");
    }
}
