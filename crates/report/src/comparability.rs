//! Which runs line up, and on which points (issue 49 item 3).
//!
//! A point is what the profile defines: its family, its id (test, thread count, working set,
//! page mode, ...) under one profile id and version. How many samples of what length measured
//! it (`samples_min`, `sample_min_s`, ..., what `run --max-time` shortens) is not what it is:
//! two runs of one profile compare on every point both measured, whatever their sample
//! counts, with the noise of each run's own samples deciding "within noise".
//!
//! - [`profile_flags`]: another profile id or version is refused (or flagged with
//!   `--mixed-profiles`), and so is an edited copy: one id and version whose settings that
//!   define points differ ([`hwsurvey_result::PointSettings`], part by part, in files that
//!   carry them). Files written before those fingerprints carry only a fingerprint of the
//!   whole settings text, which sample counts also change; where two such texts differ, what
//!   differs cannot be told, and the comparison says so instead of refusing.
//! - [`unshared_points`]: the points some runs measured and another did not (a family not in
//!   its plan, a point dropped by `--max-time`, skipped, failed or not run after an
//!   interruption), named per run; a point another machine's plan never had (a thread count
//!   past its CPUs) is not "missing".

use std::collections::{BTreeMap, BTreeSet};

use hwsurvey_result::{Outcome, ResultFile};

use crate::input::{CompareError, Input};

/// `label: standard v2`.
fn version_of(i: &Input) -> String {
    format!(
        "{}: {} v{}",
        i.label, i.file.profile.id, i.file.profile.version
    )
}

/// The parts of the profile's point settings where `a` and `b` differ (`[run]`, then family
/// ids), when both files carry [`hwsurvey_result::PointSettings`]; `None` when either lacks
/// them. A family only one of the two has is no difference: its points are points only that
/// run measured ([`unshared_points`]).
fn differing_parts(a: &ResultFile, b: &ResultFile) -> Option<Vec<String>> {
    let (pa, pb) = (
        a.profile.point_settings.as_ref()?,
        b.profile.point_settings.as_ref()?,
    );
    let mut parts = Vec::new();
    if pa.run != pb.run {
        parts.push("[run] (placement, memory working-set rules, oversubscription)".to_string());
    }
    for (family, fp) in &pa.families {
        if pb.families.get(family).is_some_and(|other| other != fp) {
            parts.push(format!("[families.\"{family}\"]"));
        }
    }
    Some(parts)
}

/// The flags that the profiles of `inputs` give the comparison, or the refusal (see the
/// module text). `force` (`--mixed-profiles`) turns a refusal into a flag on every table.
pub fn profile_flags(inputs: &[Input], force: bool) -> Result<Vec<String>, CompareError> {
    let Some(first) = inputs.first() else {
        return Ok(Vec::new());
    };
    let mut flags = Vec::new();
    let other_version = inputs.iter().any(|i| {
        i.file.profile.id != first.file.profile.id
            || i.file.profile.version != first.file.profile.version
    });
    if other_version {
        let versions: Vec<String> = inputs.iter().map(version_of).collect();
        if !force {
            return Err(CompareError::ProfileMismatch(versions.join("; ")));
        }
        flags.push(format!(
            "DIFFERENT PROFILE VERSIONS (--mixed-profiles): {}",
            versions.join("; ")
        ));
        return Ok(flags);
    }
    // one id and version: an edited copy where a part that defines points differs
    let mut edited: Vec<String> = Vec::new();
    let mut undecided: Vec<String> = Vec::new();
    for (k, b) in inputs.iter().enumerate() {
        for a in &inputs[..k] {
            match differing_parts(&a.file, &b.file) {
                Some(parts) if !parts.is_empty() => edited.push(format!(
                    "{} and {} differ in {}",
                    a.label,
                    b.label,
                    parts.join(", ")
                )),
                Some(_) => {}
                None => {
                    let (fa, fb) = (&a.file.profile.fingerprint, &b.file.profile.fingerprint);
                    if let (Some(fa), Some(fb)) = (fa, fb) {
                        if fa != fb {
                            undecided.push(format!("{} ({fa}) and {} ({fb})", a.label, b.label));
                        }
                    }
                }
            }
        }
    }
    if !edited.is_empty() {
        let what = format!(
            "{} v{}, settings that define points: {}; one id and version with other such \
             settings is an edited copy of a profile: give a changed profile its own id or \
             version",
            first.file.profile.id,
            first.file.profile.version,
            edited.join("; ")
        );
        if !force {
            return Err(CompareError::ProfileMismatch(what));
        }
        flags.push(format!(
            "DIFFERENT PROFILE SETTINGS (--mixed-profiles): {what}"
        ));
    }
    if !undecided.is_empty() {
        flags.push(format!(
            "{} v{} with settings texts that differ: {}; a file written before 2026-12-08 \
             fingerprints the whole text, sample counts included, so what differs (sample \
             counts, or settings that define points) cannot be told: compared point by point",
            first.file.profile.id,
            first.file.profile.version,
            undecided.join(", ")
        ));
    }
    Ok(flags)
}

/// Why `f` has no measurement of point `id` of `family`, in a few words: `not in its plan`
/// (the family), or the skip, failure or interruption recorded for it, up to its first `: `
/// (`skipped: dropped by --max-time 360 s`). `None` when `f`'s plan never had the point (a
/// thread count past its CPUs) or it was measured.
fn missing_reason(f: &ResultFile, family: &str, id: &str) -> Option<String> {
    let in_plan = f.plan.families.iter().any(|p| p.family == family)
        || f.tests.iter().any(|t| t.point.family == family);
    if !in_plan {
        return Some("family not in its plan".into());
    }
    // the reason's first clause (before a `:`, `;` or `(`), at most about 60 characters
    let short = |r: &str| {
        let end = r.find([':', ';', '(']).unwrap_or(r.len());
        let clause = r[..end].trim();
        if clause.chars().count() <= 60 {
            return clause.to_string();
        }
        let mut out = String::new();
        for w in clause.split_whitespace() {
            if out.chars().count() + w.chars().count() > 58 {
                break;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
        format!("{out} …")
    };
    if let Some(t) = f
        .tests
        .iter()
        .find(|t| t.point.family == family && t.point.id == id)
    {
        return (t.outcome != Outcome::Measured).then(|| {
            format!(
                "{}: {}",
                t.outcome,
                short(t.reason.as_deref().unwrap_or("no reason given"))
            )
        });
    }
    if let Some(s) = f
        .skipped
        .iter()
        .chain(f.plan.families.iter().flat_map(|p| p.skipped.iter()))
        .find(|s| s.family == family && (s.id == id || s.id == "*" || s.params.is_null()))
    {
        return Some(format!("skipped: {}", short(&s.reason)));
    }
    let planned = f
        .plan
        .families
        .iter()
        .filter(|p| p.family == family)
        .any(|p| p.points.iter().any(|q| q.id == id));
    planned.then(|| "not run".to_string())
}

/// Families listed by name in one input's part of the [`unshared_points`] note; the rest are
/// counted.
const FAMILIES_NAMED: usize = 6;

/// One note naming, per run, the points another run measured and it did not (see the module
/// text): `B lacks 12 points that A measured: cpu.clock 9 (family not in its plan),
/// mem.latency 3 (skipped: dropped by --max-time 360 s)`. `None` when every run measured every
/// point of its plan that another measured.
pub fn unshared_points(inputs: &[Input]) -> Option<String> {
    if inputs.len() < 2 {
        return None;
    }
    let measured: Vec<BTreeSet<(&str, &str)>> = inputs
        .iter()
        .map(|i| {
            i.file
                .tests
                .iter()
                .filter(|t| t.outcome == Outcome::Measured)
                .map(|t| (t.point.family.as_str(), t.point.id.as_str()))
                .collect()
        })
        .collect();
    let mut parts = Vec::new();
    for (k, i) in inputs.iter().enumerate() {
        // (family) -> (count, first reason), in family order of first appearance
        let mut by_family: BTreeMap<&str, (usize, String)> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        let mut total = 0;
        let mut measured_by: BTreeSet<usize> = BTreeSet::new();
        let others: BTreeSet<(&str, &str)> = measured
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != k)
            .flat_map(|(_, m)| m.iter().copied())
            .collect();
        for &(family, id) in &others {
            if measured[k].contains(&(family, id)) {
                continue;
            }
            let Some(why) = missing_reason(&i.file, family, id) else {
                continue;
            };
            for (j, m) in measured.iter().enumerate() {
                if j != k && m.contains(&(family, id)) {
                    measured_by.insert(j);
                }
            }
            total += 1;
            let e = by_family.entry(family).or_insert_with(|| {
                order.push(family);
                (0, why)
            });
            e.0 += 1;
        }
        if total == 0 {
            continue;
        }
        let mut named: Vec<String> = order
            .iter()
            .take(FAMILIES_NAMED)
            .map(|f| {
                let (n, why) = &by_family[f];
                format!("{f} {n} ({why})")
            })
            .collect();
        if order.len() > FAMILIES_NAMED {
            named.push(format!("{} more families", order.len() - FAMILIES_NAMED));
        }
        let by: Vec<&str> = measured_by
            .into_iter()
            .map(|j| inputs[j].label.as_str())
            .collect();
        parts.push(format!(
            "{} lacks {} that {} measured: {}",
            i.label,
            hwsurvey_model::units::plural(total as u64, "point"),
            by.join(", "),
            named.join(", ")
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "points not measured by every run (each figure is compared where both runs have \
             it; the family tables give each point's reason): {}",
            parts.join("; ")
        )
    })
}
