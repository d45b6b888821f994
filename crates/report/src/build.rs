//! Result files -> [`Comparison`]: the glance and headline tables ([`crate::headline`]), the
//! machine table ([`crate::machine`]), the qualification table ([`crate::verdicts`]), the
//! scaling summary and the A/B views of the latency curves ([`crate::summary`]), then per
//! family the headline metric of every test side by side ([`crate::family`]) with its scaling
//! tables ([`crate::scaling`]), and the normalised views ([`crate::normalised`]).

use crate::family::family_table;
use crate::input::{CompareError, Input};
use crate::layout::Comparison;
use crate::machine::machine_table;
use crate::normalised::normalised_table;
use crate::verdicts::qualify_table;

impl Comparison {
    /// Adds a note that concerns the whole comparison: to [`Comparison::flags`] and under
    /// the machine table (every format shows one or the other).
    pub fn add_note(&mut self, note: String) {
        if let Some(t) = self.tables.iter_mut().find(|t| t.id == "machine") {
            t.notes.push(note.clone());
        }
        // and as the next footnote of the headline, which writes every flag once
        let numbered = self
            .tables
            .iter()
            .filter(|t| {
                t.id == crate::headline::MACHINES_ID || t.id == crate::headline::HEADLINE_ID
            })
            .flat_map(|t| &t.notes)
            .filter(|n| n.starts_with('['))
            .count();
        if let Some(t) = self
            .tables
            .iter_mut()
            .find(|t| t.id == crate::headline::HEADLINE_ID)
        {
            t.notes.push(format!("[{}] {note}", numbered + 1));
        }
        self.flags.push(note);
    }
}

/// Builds the comparison. `baseline` defaults to the first column whose figures do not
/// measure an emulator ([`crate::headline::emulation`]), else the first column: ratios
/// against an emulated baseline would make every other machine look 10-30x faster, and the
/// shell's `*.json` puts `guest-*` files first.
pub fn compare(
    inputs: &[Input],
    baseline: Option<&str>,
    force: bool,
) -> Result<Comparison, CompareError> {
    if inputs.is_empty() {
        return Err(CompareError::Empty);
    }
    let labels: Vec<String> = inputs.iter().map(|i| i.label.clone()).collect();
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].contains(l) {
            return Err(CompareError::DuplicateLabel(l.clone()));
        }
    }
    let base = match baseline {
        Some(b) => labels
            .iter()
            .position(|l| l == b)
            .ok_or_else(|| CompareError::NoSuchBaseline(b.into(), labels.join(", ")))?,
        None => inputs
            .iter()
            .position(|i| crate::headline::emulation(&i.file).is_empty())
            .unwrap_or(0),
    };
    let mut flags = crate::comparability::profile_flags(inputs, force)?;
    if baseline.is_none() && base > 0 {
        flags.push(format!(
            "baseline {}: the first column not measured under emulation ({} ran under \
             emulation: ratios against it would measure the emulator); --baseline chooses \
             another",
            labels[base],
            labels[..base].join(", ")
        ));
    }
    for i in inputs {
        // sample counts and lengths are how a point was measured, not what it is: a capped
        // run's points line up with any run's, with wider noise (fewer, shorter samples)
        if let Some(t) = &i.file.time_limit {
            flags.push(format!(
                "{}: time-limited run ({}): its points were measured with fewer or shorter \
                 samples and compare as any run's, within wider noise",
                i.label,
                t.summary()
            ));
        }
        if i.file.status != hwsurvey_result::RunStatus::Complete {
            flags.push(format!(
                "{}: run status {}, not complete",
                i.label, i.file.status
            ));
        }
    }
    flags.extend(copies_of_one_run(inputs));
    flags.extend(crate::comparability::unshared_points(inputs));
    let [glance, headline] = crate::headline::top_tables(inputs, base, &flags);
    let mut tables = vec![
        glance,
        headline,
        machine_table(inputs, &flags),
        qualify_table(inputs, &flags),
    ];
    for family in families(inputs) {
        tables.push(family_table(inputs, base, &family, &flags));
        tables.extend(crate::scaling::scaling_tables(inputs, &family, &flags));
        if family == "storage.iops" {
            tables.extend(crate::scaling::storage_ceilings_table(inputs, &flags));
        }
        if family == "mem.latency" {
            tables.extend(crate::tlb::tlb_table(inputs, &flags));
        }
    }
    // the summaries go after the findings, before the detail tables they read
    let summaries: Vec<_> = [
        crate::summary::scaling_table(&tables, &labels, &flags),
        crate::summary::ab_table(&tables, &labels, &flags),
    ]
    .into_iter()
    .flatten()
    .collect();
    tables.push(normalised_table(inputs, &tables, &flags));
    let after_findings = tables
        .iter()
        .position(|t| t.id == "qualify")
        .map_or(0, |i| i + 1);
    tables.splice(after_findings..after_findings, summaries);
    let verdicts = crate::about::verdicts(inputs, base, &tables);
    let mut c = Comparison {
        platforms: labels.clone(),
        baseline: labels[base].clone(),
        flags,
        tables,
        runs: crate::about::run_lines(inputs),
        verdicts,
        written_at: None,
    };
    c.make_printable();
    Ok(c)
}

/// `A, B: one run (started ... on host): a file and its copy, not two measurements`, for
/// each run given more than once ([`hwsurvey_result::provenance::same_runs`]): their
/// differences are no differences of machines or of runs.
fn copies_of_one_run(inputs: &[Input]) -> Vec<String> {
    let files: Vec<&hwsurvey_result::ResultFile> = inputs.iter().map(|i| &i.file).collect();
    hwsurvey_result::provenance::same_runs(&files)
        .into_iter()
        .map(|group| {
            let labels: Vec<&str> = group.iter().map(|&k| inputs[k].label.as_str()).collect();
            format!(
                "{}: one run ({}): copies of one result file, not separate measurements",
                labels.join(", "),
                hwsurvey_result::provenance::RunId::of(&inputs[group[0]].file).words()
            )
        })
        .collect()
}

fn families(inputs: &[Input]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in inputs {
        let names = i
            .file
            .plan
            .families
            .iter()
            .map(|f| f.family.clone())
            .chain(i.file.tests.iter().map(|t| t.point.family.clone()));
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}
