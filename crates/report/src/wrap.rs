//! The terminal wrapping layer: every line hwsurvey wraps for a terminal (prose, notes, table
//! cells, qualify's fixes, the probe's kernel command line) goes through here, so one rule
//! holds everywhere: a line breaks only at a space, never inside a word, a path, an option
//! name or a number, and a shell command ([`command_words`]: `echo 512 > /sys/...`,
//! `cpupower frequency-set -g performance`) is kept whole: on the current line when it fits
//! there, else on a line of its own, continued at a space with a shell-valid ` \` when it is
//! wider than the terminal.
//!
//! A word wider than the room left is put on a line of its own at a smaller indent; only one
//! wider than the whole terminal is broken, and only after a `,` of a list (`0-3,8-11,...`)
//! or a `/` of a path (in a table cell: a word wider than its column, [`wrap_cell`]); a word
//! with neither overflows the line rather than being cut. A command is never broken inside a
//! word.
//!
//! Widths are terminal columns (`unicode-width`: a wide character counts 2).

use unicode_width::UnicodeWidthStr;

/// Terminal columns of `s` (wide characters 2, combining marks 0).
pub fn columns(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Words that start a shell command in hwsurvey's own texts (qualify's fixes, the run's
/// closing lines): a run of words from one of these up to the end of its clause is a command.
pub const COMMAND_WORDS: &[&str] = &[
    "echo",
    "cpupower",
    "sysctl",
    "taskset",
    "systemctl",
    "numactl",
    "modprobe",
    "mount",
    "sudo",
    "hwsurvey",
    "cargo",
    "apt-get",
    "tuned-adm",
    "grubby",
    "update-grub",
];

/// One unit of layout: a word, or a shell command of several words.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Unit {
    /// The text, with the command's own spaces between its words.
    text: String,
    /// The spaces after it in the source (kept between units on one line).
    gap: String,
    /// Whether this is a shell command ([`command_words`]).
    command: bool,
    /// A command without the prose around it: the `(` or backquote before it and the `,`
    /// `;` `)` or backquote after it, as it is printed on a line of its own (a copy of that
    /// line runs).
    bare: String,
}

/// `cmd` without an opening `(` or backquote and without the punctuation of the prose after
/// it: `,` `;` a backquote, and `)` that closes nothing inside it.
fn bare_command(cmd: &str) -> String {
    let mut s = cmd.trim_start_matches(['(', '`']);
    loop {
        let opened = s.matches('(').count();
        let closed = s.matches(')').count();
        match s.chars().last() {
            Some(',' | ';' | '`') => s = &s[..s.len() - 1],
            Some(')') if closed > opened => s = &s[..s.len() - 1],
            _ => break,
        }
    }
    s.to_string()
}

/// `text` split into words, each with the run of spaces after it.
fn words(text: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(' ').unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        let gap_end = after.find(|c| c != ' ').unwrap_or(after.len());
        let (gap, next) = after.split_at(gap_end);
        if !word.is_empty() {
            out.push((word, gap));
        }
        rest = next;
    }
    out
}

/// Whether `word` starts a shell command: one of [`COMMAND_WORDS`], after an opening `(` or
/// backquote.
fn starts_command(word: &str) -> bool {
    let w = word.trim_start_matches(['(', '`']);
    COMMAND_WORDS.contains(&w)
}

/// The number of words of the shell command starting at `words[0]`, or `None` when `words[0]`
/// starts none. The command runs to the end of its clause: through the first word that ends
/// in `,` `;` or a backquote, or a `)` closing a parenthesis opened before the command, or
/// up to (not including) a word that opens a parenthesis (`(or ...`) or a comment (`#`).
pub fn command_words(words: &[&str]) -> Option<usize> {
    let first = *words.first()?;
    if !starts_command(first) {
        return None;
    }
    let mut depth: i32 = 0;
    for (i, w) in words.iter().enumerate() {
        let w = if i == 0 {
            w.trim_start_matches(['(', '`'])
        } else {
            w
        };
        if i > 0 && (w.starts_with('(') || w.starts_with('#')) {
            return Some(i);
        }
        depth += w.matches('(').count() as i32;
        depth -= w.matches(')').count() as i32;
        if i > 0 && (w.ends_with(',') || w.ends_with(';') || w.ends_with('`') || depth < 0) {
            return Some(i + 1);
        }
        if i == 0 && depth < 0 {
            return Some(1);
        }
    }
    Some(words.len())
}

/// `text` as units: words, and shell commands grouped ([`command_words`]).
fn units(text: &str) -> Vec<Unit> {
    let ws = words(text);
    let plain: Vec<&str> = ws.iter().map(|(w, _)| *w).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < ws.len() {
        match command_words(&plain[i..]) {
            Some(n) if n > 1 => {
                let mut t = String::new();
                for (k, (w, gap)) in ws[i..i + n].iter().enumerate() {
                    t += w;
                    if k + 1 < n {
                        t += gap;
                    }
                }
                out.push(Unit {
                    bare: bare_command(&t),
                    text: t,
                    gap: ws[i + n - 1].1.to_string(),
                    command: true,
                });
                i += n;
            }
            _ => {
                out.push(Unit {
                    text: ws[i].0.to_string(),
                    gap: ws[i].1.to_string(),
                    command: false,
                    bare: String::new(),
                });
                i += 1;
            }
        }
    }
    out
}

/// The lines of a command too wide for `width` columns at `indent`: broken at its spaces,
/// each line but the last ending in ` \` (a shell continuation), the next ones indented 2
/// more. A single word wider than the room stays whole (the line overflows).
fn command_lines(cmd: &str, indent: usize, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = " ".repeat(indent);
    let mut empty = true;
    for (w, _) in words(cmd) {
        let extra = if empty { 0 } else { 1 };
        // room for " \" after it, unless it is the last word (checked when closing the line)
        if !empty && columns(&cur) + extra + columns(w) + 2 > width {
            cur.push_str(" \\");
            lines.push(cur);
            cur = " ".repeat(indent + 2);
            empty = true;
        }
        if !empty {
            cur.push(' ');
        }
        cur.push_str(w);
        empty = false;
    }
    lines.push(cur);
    lines
}

/// `word` broken after any of `after`, its pieces joined greedily to at most `room` columns
/// (a piece wider than `room` alone on its line).
fn split_after(word: &str, after: &[char], room: usize) -> Vec<String> {
    let mut pieces: Vec<&str> = Vec::new();
    let mut start = 0;
    for (i, c) in word.char_indices() {
        if after.contains(&c) && i + c.len_utf8() < word.len() {
            pieces.push(&word[start..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    pieces.push(&word[start..]);
    let mut out: Vec<String> = Vec::new();
    for p in pieces {
        match out.last_mut() {
            Some(last) if columns(last) + columns(p) <= room => last.push_str(p),
            _ => out.push(p.to_string()),
        }
    }
    out
}

/// `text` wrapped to `width` columns: the first line starts with `first` (spaces), the others
/// with `hang`. Breaks only at spaces; a shell command is kept whole (module docs). A unit
/// that does not fit at `hang` starts its line at indent 4 (or 0) instead, so a long path
/// or command is not pushed past the edge by a deep indent. `width` below 10 counts as 10.
pub fn wrap(text: &str, width: usize, first: usize, hang: usize) -> Vec<String> {
    let width = width.max(10);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = " ".repeat(first);
    let mut empty = true;
    let mut gap = String::new();
    // a command moved to a line of its own ends that line
    let mut alone = false;
    for u in units(text) {
        let w = columns(&u.text);
        if alone {
            lines.push(std::mem::take(&mut cur));
            cur = " ".repeat(hang);
            empty = true;
            alone = false;
        }
        if !empty && columns(&cur) + columns(&gap) + w <= width {
            cur.push_str(&gap);
            cur.push_str(&u.text);
            gap = u.gap;
            continue;
        }
        if empty && columns(&cur) + w <= width {
            cur.push_str(&u.text);
            empty = false;
            gap = u.gap;
            continue;
        }
        // a new line (unless this is the first unit of the current one)
        let indent = if empty { columns(&cur) } else { hang };
        if !empty {
            lines.push(std::mem::take(&mut cur));
        }
        let w = if u.command { columns(&u.bare) } else { w };
        let indent = [indent, 4, 0]
            .into_iter()
            .find(|&i| i + w <= width)
            .unwrap_or(0);
        if u.command {
            let mut cl = command_lines(&u.bare, indent, width);
            cur = cl.pop().unwrap_or_default();
            lines.extend(cl);
            alone = true;
        } else if !u.command && indent + w > width && u.text.contains([',', '/']) {
            let mut pieces = split_after(&u.text, &[',', '/'], width - indent);
            let last = pieces.pop().unwrap_or_default();
            for p in pieces {
                lines.push(format!("{}{p}", " ".repeat(indent)));
            }
            cur = format!("{}{last}", " ".repeat(indent));
        } else {
            cur = format!("{}{}", " ".repeat(indent), u.text);
        }
        empty = false;
        gap = u.gap;
    }
    lines.push(cur);
    lines
}

/// One line for a terminal `width` columns wide: unchanged when it fits, else [`wrap`]ped
/// with its own indent first and 4 more (at most half the width) on the lines after.
pub fn fit_line(line: &str, width: usize) -> Vec<String> {
    if columns(line) <= width {
        return vec![line.to_string()];
    }
    let lead = line.len() - line.trim_start_matches(' ').len();
    let hang = (lead + 4).min(width / 2);
    wrap(line[lead..].trim_end(), width, lead, hang)
}

/// The narrowest column in which `text` wraps with no word broken: its widest word, a word
/// with `/` counting as its widest path segment (`package/` of `package/other_node`).
pub fn cell_min_width(text: &str) -> usize {
    text.lines()
        .flat_map(words)
        .map(|(w, _)| {
            split_after(w, &['/'], 0)
                .iter()
                .map(|p| columns(p))
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

/// The widest line of `text`, columns (a cell's natural width).
pub fn cell_width(text: &str) -> usize {
    text.lines().map(columns).max().unwrap_or(0)
}

/// A table cell wrapped to `width` columns (at least [`cell_min_width`] of it): lines broken
/// at spaces, a word wider than `width` after a `/` of its path; never inside a word.
pub fn wrap_cell(text: &str, width: usize) -> String {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut cur = String::new();
        for (w, _) in words(line) {
            let pieces = if columns(w) > width {
                split_after(w, &['/'], width)
            } else {
                vec![w.to_string()]
            };
            for (k, p) in pieces.into_iter().enumerate() {
                let sep = if cur.is_empty() || k > 0 { "" } else { " " };
                if !cur.is_empty() && (k > 0 || columns(&cur) + 1 + columns(&p) > width) {
                    out.push(std::mem::take(&mut cur));
                    cur.push_str(&p);
                } else {
                    cur.push_str(sep);
                    cur.push_str(&p);
                }
            }
        }
        out.push(cur);
    }
    out.join("\n")
}

/// Columns a box table (tabled's `Style::sharp`, padding 1) takes around `n` columns of
/// content: a border before each column and after the last, a space each side of a cell.
pub fn table_overhead(n: usize) -> usize {
    n + 1 + 2 * n
}

/// Content widths of the columns of a table whose cells' natural widths are `natural` and
/// narrowest widths `min` (per column), so the whole table is at most `width` columns: the
/// widest column is narrowed first, one column at a time, never below its minimum. `None`
/// when even the minimum widths do not fit.
pub fn column_widths(natural: &[usize], min: &[usize], width: usize) -> Option<Vec<usize>> {
    let overhead = table_overhead(natural.len());
    let mut w: Vec<usize> = natural.iter().zip(min).map(|(&n, &m)| n.max(m)).collect();
    if min.iter().sum::<usize>() + overhead > width {
        return None;
    }
    while w.iter().sum::<usize>() + overhead > width {
        // the widest column that can still shrink
        let (i, _) = w
            .iter()
            .enumerate()
            .filter(|(i, &c)| c > min[*i])
            .max_by_key(|(i, &c)| (c, std::cmp::Reverse(*i)))?;
        w[i] -= 1;
    }
    Some(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(lines: &[String]) -> usize {
        lines.iter().map(|l| columns(l)).max().unwrap_or(0)
    }

    #[test]
    fn commands_are_found_to_the_end_of_their_clause() {
        let n = |s: &str| command_words(&s.split(' ').collect::<Vec<_>>());
        assert_eq!(
            n("echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (or vm.nr_hugepages in sysctl.conf)"),
            Some(4)
        );
        assert_eq!(
            n("(echo 1 > /sys/devices/system/cpu/cpuN/online) and check maxcpus="),
            Some(4)
        );
        assert_eq!(
            n("echo on > /sys/devices/system/cpu/smt/control, or set SMT"),
            Some(4)
        );
        assert_eq!(
            n("cpupower frequency-set -g performance (or the firmware's"),
            Some(4)
        );
        assert_eq!(
            n("`hwsurvey compare FILE` (or run with --full-summary)"),
            Some(3)
        );
        assert_eq!(n("check tsc= and clocksource="), None);
        assert_eq!(n("dmesg: \"Marking"), None);
    }

    #[test]
    fn a_fix_keeps_its_command_whole_on_a_line_of_its_own() {
        let pad = " ".repeat(34);
        let line = format!(
            "{pad}fix: echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (or vm.nr_hugepages in sysctl.conf)"
        );
        let out = fit_line(&line, 80);
        assert!(widest(&out) <= 80, "{out:#?}");
        let cmd = "echo 512 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
        assert!(out.iter().any(|l| l.trim() == cmd), "{out:#?}");
        let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(&out.join(" ")), words(&line));
    }

    #[test]
    fn a_command_on_a_line_of_its_own_leaves_the_prose_punctuation_out() {
        let line = "bring them online (echo 1 > /sys/devices/system/cpu/cpuN/online) and check maxcpus=/nr_cpus= on the kernel command line";
        let out = wrap(line, 50, 0, 4);
        assert!(
            out.iter()
                .any(|l| l.trim() == "echo 1 > /sys/devices/system/cpu/cpuN/online"),
            "{out:#?}"
        );
        // on one line when it fits, as written
        assert_eq!(wrap(line, 200, 0, 4), vec![line.to_string()]);
        assert_eq!(
            bare_command("`hwsurvey compare $(ls *.json)`,"),
            "hwsurvey compare $(ls *.json)"
        );
    }

    #[test]
    fn a_command_wider_than_the_terminal_continues_with_a_backslash_at_a_space() {
        let cmd = format!("echo {} > /sys/a/b/c", "x".repeat(30));
        let line = format!("fix: {cmd}, then reboot");
        let out = wrap(&line, 30, 0, 4);
        // each continued line ends in " \", and the command reads back whole
        let mut joined: Vec<String> = vec![String::new()];
        for l in &out {
            let last = joined.last_mut().unwrap();
            let more = l.ends_with(" \\");
            last.push_str(l.trim_start().trim_end_matches(" \\"));
            if more {
                last.push(' ');
            } else {
                joined.push(String::new());
            }
        }
        assert!(joined.iter().any(|l| l == &cmd), "{out:#?}");
        assert!(joined.iter().any(|l| l == "then reboot"), "{out:#?}");
        assert!(out.iter().any(|l| l.ends_with(" \\")), "{out:#?}");
    }

    #[test]
    fn words_and_paths_are_never_split_and_option_names_stay_whole() {
        let line = "  cmdline BOOT_IMAGE=/boot/vmlinuz-6.1.0-57-amd64 root=UUID=0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0 ro console=ttyS0,115200n8 mitigations=auto,nosmt intel_iommu=on iommu=pt hugepagesz=1G";
        for width in [50, 60, 80] {
            let out = fit_line(line, width);
            assert!(widest(&out) <= width, "{width}: {out:#?}");
            let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
            assert_eq!(words(&out.join(" ")), words(line), "{width}: {out:#?}");
        }
        // a path wider than the room after a deep indent moves left, whole
        let pad = " ".repeat(34);
        let out = fit_line(
            &format!("{pad}read /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages: 0"),
            80,
        );
        assert!(
            out.iter()
                .any(|l| l.trim() == "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages: 0"),
            "{out:#?}"
        );
        assert!(widest(&out) <= 80, "{out:#?}");
    }

    #[test]
    fn a_long_list_or_path_breaks_after_commas_or_slashes_and_another_word_overflows() {
        let list = (0..64)
            .map(|c| (2 * c).to_string())
            .collect::<Vec<_>>()
            .join(",");
        let out = wrap(&format!("cpus {list}"), 40, 0, 4);
        assert!(widest(&out) <= 40, "{out:#?}");
        assert_eq!(out.concat().replace(' ', ""), format!("cpus{list}"));
        let word = "x".repeat(100);
        assert_eq!(wrap(&word, 30, 0, 4), vec![word.clone()]);
        // a path wider than the terminal: after a `/`
        let path =
            "(/sys/fs/cgroup/memory/user.slice/user-0.slice/session-1.scope/memory.limit_in_bytes";
        let out = wrap(path, 60, 0, 4);
        assert!(widest(&out) <= 60, "{out:#?}");
        assert!(out[0].ends_with('/'), "{out:#?}");
        assert_eq!(out.concat(), path);
    }

    #[test]
    fn cells_wrap_at_spaces_and_path_segments_only() {
        assert_eq!(cell_min_width("c2c, package/other_node"), 10);
        assert_eq!(
            wrap_cell("c2c, package/other_node", 13),
            "c2c, package/\nother_node"
        );
        assert_eq!(
            wrap_cell("c2c, package/other_node", 11),
            "c2c,\npackage/\nother_node"
        );
        assert_eq!(
            wrap_cell("STREAM Triad peak @N", 12),
            "STREAM Triad\npeak @N"
        );
        assert_eq!(cell_min_width("stream.triad"), 12);
        assert_eq!(wrap_cell("stream.triad x", 12), "stream.triad\nx");
    }

    #[test]
    fn columns_shrink_widest_first_and_never_below_their_minimum() {
        let w = column_widths(&[30, 10, 40], &[8, 10, 12], 60).unwrap();
        assert!(w.iter().sum::<usize>() + table_overhead(3) <= 60, "{w:?}");
        assert_eq!(w[1], 10);
        assert!(column_widths(&[30, 30], &[30, 30], 40).is_none());
    }
}
