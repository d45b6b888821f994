//! Memory population rules: `memory.balance`, `memory.channels`, `memory.mixed`,
//! `memory.speed`, `memory.triad_share`, `memory.edac`. DIMM slots are grouped per socket
//! and channel by the tokens of their SMBIOS locators.

use std::collections::BTreeMap;

use hwsurvey_model::units::{format_bytes_binary, format_rate_decimal};
use hwsurvey_model::Probed;

use crate::facts::{DimmFacts, Facts};
use crate::{Finding, Params, RuleFinding, Verdict};

fn dimm_slots<'a>(f: &'a Facts, id: &str) -> Result<&'a [DimmFacts], Finding> {
    match &f.memory.dimms {
        Probed::Known(d) if d.is_empty() => Err(Finding::not_evaluated(
            id,
            "no SMBIOS Type 17 memory devices (firmware lists none)",
        )),
        Probed::Known(d) => Ok(d),
        Probed::Unknown(why) => Err(Finding::not_evaluated(id, why)),
    }
}

/// A socket named in a locator (`P0`, `CPU1`, `NODE 0`, `SOCKET 1`, `PROC 2`, `N1`), upper-cased.
pub fn socket_token(text: &str) -> Option<String> {
    let upper = text.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        for prefix in ["CPU", "SOCKET", "PROC", "NODE", "P", "N"] {
            if let Some(rest) = w.strip_prefix(prefix) {
                if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                    return Some(format!("{prefix}{rest}"));
                }
                // "NODE 0", "CPU 1": the number is the next word
                if rest.is_empty() && prefix.len() > 1 {
                    if let Some(n) = words.get(i + 1) {
                        if n.bytes().all(|b| b.is_ascii_digit()) {
                            return Some(format!("{prefix}{n}"));
                        }
                    }
                }
            }
        }
    }
    None
}

/// A channel named in a locator: the probe's reader
/// (`hwsurvey_machine::memory::population::channel_token`), so that qualify and `hwsurvey probe`
/// read locators alike.
pub use hwsurvey_machine::memory::population::channel_token;

/// The socket and channel of a slot: the probe's placement when it placed the slot, else the
/// probe's reader of the locators (`population::locate`, without vendor or channel count).
fn slot_channel(d: &DimmFacts) -> (Option<String>, Probed<String>) {
    match &d.channel {
        Some(c) => (d.socket.clone(), c.clone()),
        None => {
            let (socket, channel) = hwsurvey_machine::memory::population::locate(
                &d.locator,
                d.bank_locator.as_deref().unwrap_or(""),
                None,
                None,
            );
            (d.socket.clone().or(socket), channel)
        }
    }
}

/// How slots group into sockets: from a socket word in the locators, else from a single
/// leading letter (`A1`..`B12` as Dell writes them), else one group.
fn socket_groups(dimms: &[DimmFacts]) -> (String, Vec<(String, Vec<&DimmFacts>)>) {
    // The probe's placement first, so that qualify and `hwsurvey probe` group alike.
    if dimms.iter().all(|d| d.socket.is_some()) {
        let mut groups: BTreeMap<String, Vec<&DimmFacts>> = BTreeMap::new();
        for d in dimms {
            groups
                .entry(d.socket.clone().unwrap_or_default())
                .or_default()
                .push(d);
        }
        return (
            "socket as the probe places each slot (Locator / Bank Locator)".to_string(),
            groups.into_iter().collect(),
        );
    }
    let by_token: Vec<Option<String>> = dimms
        .iter()
        .map(|d| {
            d.bank_locator
                .as_deref()
                .and_then(socket_token)
                .or_else(|| socket_token(&d.locator))
        })
        .collect();
    let mut groups: BTreeMap<String, Vec<&DimmFacts>> = BTreeMap::new();
    let how;
    if by_token.iter().all(|t| t.is_some()) {
        for (d, t) in dimms.iter().zip(by_token) {
            groups.entry(t.unwrap_or_default()).or_default().push(d);
        }
        how = "socket named in the Locator/Bank Locator".to_string();
    } else if dimms.iter().all(|d| letter_prefix(&d.locator).is_some()) {
        for d in dimms {
            groups
                .entry(letter_prefix(&d.locator).unwrap_or_default())
                .or_default()
                .push(d);
        }
        how = "slot group = the Locator's letter".to_string();
    } else {
        groups.insert("all".into(), dimms.iter().collect());
        how = "one group (the locators name no socket)".to_string();
    }
    (how, groups.into_iter().collect())
}

/// `A12` -> `A`; anything else -> None.
fn letter_prefix(locator: &str) -> Option<String> {
    let l = locator.trim();
    let mut chars = l.chars();
    let first = chars.next()?;
    let rest: String = chars.collect();
    (first.is_ascii_alphabetic() && !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| first.to_ascii_uppercase().to_string())
}

fn populated<'a>(slots: &[&'a DimmFacts]) -> Vec<&'a DimmFacts> {
    slots.iter().copied().filter(|d| d.populated).collect()
}

fn group_line(name: &str, slots: &[&DimmFacts]) -> String {
    let pop = populated(slots);
    let total: u64 = pop.iter().filter_map(|d| d.size_bytes).sum();
    let empty: Vec<&str> = slots
        .iter()
        .filter(|d| !d.populated)
        .map(|d| d.locator.as_str())
        .collect();
    let unknown_size = pop.iter().filter(|d| d.size_bytes.is_none()).count();
    format!(
        "{name}: {} of {} slots, {}{}{}",
        pop.len(),
        slots.len(),
        format_bytes_binary(total),
        if unknown_size > 0 {
            format!(
                " + {} of unknown size",
                hwsurvey_model::units::plural(unknown_size as u64, "module")
            )
        } else {
            String::new()
        },
        if empty.is_empty() {
            String::new()
        } else {
            format!(", empty {}", empty.join(" "))
        }
    )
}

/// The per-group signature compared for balance: populated count and total size.
fn signature(slots: &[&DimmFacts]) -> (usize, u64) {
    let pop = populated(slots);
    (pop.len(), pop.iter().filter_map(|d| d.size_bytes).sum())
}

/// `memory.balance`: groups slots by socket, then by memory array, and compares populated
/// count and capacity. Says when the locators do not map slots to channels.
pub fn memory_balance(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "memory.balance";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    if !dimms.iter().any(|d| d.populated) {
        // no module anywhere is not "populated alike"
        return vec![Finding::not_evaluated(
            ID,
            format!("none of {} DIMM slots listed holds a module", dimms.len()),
        )];
    }
    let (how, groups) = socket_groups(dimms);
    let mut uneven = Vec::new();
    let mut evidence = Vec::new();
    let sigs: Vec<(usize, u64)> = groups.iter().map(|(_, s)| signature(s)).collect();
    if sigs.windows(2).any(|w| w[0] != w[1]) {
        uneven.push("across sockets".to_string());
    }
    for (name, slots) in &groups {
        evidence.push(group_line(name, slots));
        let mut arrays: BTreeMap<&str, Vec<&DimmFacts>> = BTreeMap::new();
        for d in slots {
            arrays
                .entry(d.array_handle.as_deref().unwrap_or("?"))
                .or_default()
                .push(d);
        }
        if arrays.len() > 1 {
            let sigs: Vec<(usize, u64)> = arrays.values().map(|s| signature(s)).collect();
            for (a, s) in &arrays {
                evidence.push(group_line(&format!("{name} array {a}"), s));
            }
            if sigs.windows(2).any(|w| w[0] != w[1]) {
                uneven.push(format!("within {name} (between its memory arrays)"));
            }
        }
    }
    let channels_known = dimms.iter().all(|d| slot_channel(d).1.known().is_some());
    let channel_note = if channels_known {
        ""
    } else {
        "; the per-channel mapping is not in these locators (SMBIOS Type 17 Locator / Bank Locator), so channel balance is not checked"
    };
    let mut finding = if uneven.is_empty() {
        Finding::new(
            ID,
            Verdict::Pass,
            format!(
                "populated alike over {} ({how}){channel_note}",
                hwsurvey_model::units::plural(groups.len() as u64, "group")
            ),
        )
    } else {
        Finding::new(
            ID,
            Verdict::Warn,
            format!("DIMMs populated unevenly {}{channel_note}", uneven.join(" and ")),
        )
        .fix("populate every socket (and every memory array of a socket) with the same DIMMs in the same slots, as the board manual's population table shows")
    };
    for e in evidence {
        finding = finding.with("SMBIOS Type 17", e);
    }
    vec![finding]
}

/// `memory.channels`: channels without DIMMs or with unequal DIMM counts, where the locators
/// name channels; otherwise not evaluated, with the reason.
pub fn memory_channels(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "memory.channels";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    let places: Vec<(Option<String>, Probed<String>)> = dimms.iter().map(slot_channel).collect();
    if places.iter().any(|p| p.0.is_some()) && places.iter().any(|p| p.0.is_none()) {
        // as the probe's population says: channels of which socket is then unknown
        return vec![Finding::not_evaluated(
            ID,
            "some locators name a socket and others do not",
        )];
    }
    let mut channels: BTreeMap<(String, String), Vec<&DimmFacts>> = BTreeMap::new();
    for (d, (socket, ch)) in dimms.iter().zip(places) {
        let ch = match ch {
            Probed::Known(c) => c,
            Probed::Unknown(why) => {
                return vec![Finding::not_evaluated(
                    ID,
                    format!("the per-channel mapping is not in these locators: {why}"),
                )];
            }
        };
        channels
            .entry((socket.unwrap_or_else(|| "-".into()), ch))
            .or_default()
            .push(d);
    }
    let counts: Vec<((String, String), usize)> = channels
        .iter()
        .map(|(k, v)| (k.clone(), populated(v).len()))
        .collect();
    let empty: Vec<String> = counts
        .iter()
        .filter(|(_, n)| *n == 0)
        .map(|((s, c), _)| format!("{s} channel {c}"))
        .collect();
    let mut distinct: Vec<usize> = counts.iter().map(|(_, n)| *n).filter(|n| *n > 0).collect();
    distinct.sort();
    distinct.dedup();
    let mut out = Vec::new();
    let evidence: Vec<String> = counts
        .iter()
        .map(|((s, c), n)| format!("{s} channel {c}: {n} DIMM(s)"))
        .collect();
    if !empty.is_empty() {
        let mut fnd = Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "{} of {} channels empty: {}",
                empty.len(),
                counts.len(),
                empty.join(", ")
            ),
        )
        .fix("add DIMMs so that every channel holds one: bandwidth scales with populated channels");
        for e in &evidence {
            fnd = fnd.with("SMBIOS Type 17", e.clone());
        }
        out.push(fnd);
    }
    if distinct.len() > 1 {
        out.push(
            Finding::new(
                ID,
                Verdict::Warn,
                format!("channels hold different numbers of DIMMs ({:?})", distinct),
            )
            .fix("populate every channel with the same number of DIMMs"),
        );
    }
    if out.is_empty() && f.memory.unlisted_slots.is_some() {
        // as the probe says: the listed channels are known, which are empty is not
        let mut ne = Finding::not_evaluated(
            ID,
            format!(
                "empty channels cannot be told: {}",
                f.memory.unlisted_slots.as_deref().unwrap_or_default()
            ),
        );
        for e in &evidence {
            ne = ne.with("SMBIOS Type 17", e.clone());
        }
        out.push(ne);
    }
    if out.is_empty() {
        let sockets = distinct_count(counts.iter().map(|((s, _), _)| s.as_str()));
        let mut pass = Finding::new(
            ID,
            Verdict::Pass,
            format!(
                "{} over {}, each holds {}",
                hwsurvey_model::units::plural(counts.len() as u64, "channel"),
                hwsurvey_model::units::plural(sockets as u64, "socket"),
                hwsurvey_model::units::plural(
                    distinct.first().copied().unwrap_or(0) as u64,
                    "DIMM"
                ),
            ),
        );
        for e in &evidence {
            pass = pass.with("SMBIOS Type 17", e.clone());
        }
        out.push(pass);
    }
    // where the channels rest on a vendor's slot naming, every finding says so
    if let Some(basis) = &f.memory.channel_basis {
        out = out
            .into_iter()
            .map(|fnd| fnd.with("channel mapping", basis.clone()))
            .collect();
    }
    out
}

fn distinct_count<'a>(items: impl Iterator<Item = &'a str>) -> usize {
    let mut v: Vec<&str> = items.collect();
    v.sort();
    v.dedup();
    v.len()
}

fn census<T: Ord + Clone>(items: impl Iterator<Item = T>) -> BTreeMap<T, usize> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i).or_insert(0) += 1;
    }
    m
}

/// `memory.mixed`: mixed DIMM sizes, speeds, ranks or part numbers among populated slots.
pub fn memory_mixed(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "memory.mixed";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    let pop: Vec<&DimmFacts> = dimms.iter().filter(|d| d.populated).collect();
    if pop.is_empty() {
        return vec![Finding::not_evaluated(ID, "no populated DIMM slots listed")];
    }
    if pop.iter().all(|d| {
        d.size_bytes.is_none()
            && d.speed_mt_per_s.is_none()
            && d.rank.is_none()
            && d.part_number.is_none()
    }) {
        // nothing to compare is not "all alike"
        return vec![Finding::not_evaluated(
            ID,
            format!(
                "none of {} populated DIMMs lists size, speed, rank or part number",
                pop.len()
            ),
        )];
    }
    let mut mixed = Vec::new();
    let show = |m: BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, n)| format!("{n} x {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sizes = census(pop.iter().filter_map(|d| d.size_bytes));
    if sizes.len() > 1 {
        mixed.push(format!(
            "sizes {}",
            show(
                sizes
                    .iter()
                    .map(|(k, n)| (format_bytes_binary(*k), *n))
                    .collect()
            )
        ));
    }
    let speeds = census(pop.iter().filter_map(|d| d.speed_mt_per_s));
    if speeds.len() > 1 {
        mixed.push(format!(
            "rated speeds {}",
            show(
                speeds
                    .iter()
                    .map(|(k, n)| (format!("{k} MT/s"), *n))
                    .collect()
            )
        ));
    }
    let ranks = census(pop.iter().filter_map(|d| d.rank));
    if ranks.len() > 1 {
        mixed.push(format!(
            "ranks {}",
            show(
                ranks
                    .iter()
                    .map(|(k, n)| (format!("rank {k}"), *n))
                    .collect()
            )
        ));
    }
    if p.0.get("check_part_numbers") != Some(&crate::ParamValue::Bool(false)) {
        let parts = census(pop.iter().filter_map(|d| d.part_number.clone()));
        if parts.len() > 1 {
            mixed.push(format!("part numbers {}", show(parts)));
        }
    }
    if mixed.is_empty() {
        return vec![];
    }
    vec![Finding::new(
        ID,
        Verdict::Warn,
        format!("mixed DIMMs: {}", mixed.join("; ")),
    )
    .with("SMBIOS Type 17", format!("{} populated DIMMs", pop.len()))
    .fix("use identical DIMMs (size, speed, ranks, part number) in every populated slot; mixed modules run at the slowest common timing")]
}

/// `memory.speed`: configured speed below rated speed.
pub fn memory_speed(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "memory.speed";
    let dimms = match dimm_slots(f, ID) {
        Ok(d) => d,
        Err(e) => return vec![e],
    };
    let pop: Vec<&DimmFacts> = dimms.iter().filter(|d| d.populated).collect();
    let both: Vec<(&DimmFacts, u32, u32)> = pop
        .iter()
        .filter_map(|d| Some((*d, d.speed_mt_per_s?, d.configured_speed_mt_per_s?)))
        .collect();
    if both.is_empty() {
        return vec![Finding::not_evaluated(
            ID,
            "no populated DIMM lists both Speed and Configured Memory Speed",
        )];
    }
    let slow: Vec<&(&DimmFacts, u32, u32)> = both.iter().filter(|(_, r, c)| c < r).collect();
    if slow.is_empty() {
        return vec![];
    }
    let pairs = census(slow.iter().map(|(_, r, c)| (*c, *r)));
    let what: Vec<String> = pairs
        .keys()
        .map(|(c, r)| format!("configured {c} MT/s below rated {r} MT/s"))
        .collect();
    let on = if slow.len() == pop.len() {
        format!("on every DIMM ({} of {})", slow.len(), pop.len())
    } else {
        format!("on {} of {} DIMMs", slow.len(), pop.len())
    };
    let locs: Vec<&str> = slow.iter().map(|(d, _, _)| d.locator.as_str()).collect();
    vec![Finding::new(ID, Verdict::Warn, format!("{} {on}", what.join("; ")))
        .with("SMBIOS Type 17 Speed / Configured Memory Speed", locs.join(" "))
        .fix("the memory controller caps the speed: check the CPU's supported DDR speed (e.g. Xeon Silver runs DDR4 at 2400 MT/s), DIMMs per channel, and the firmware's memory frequency setting")]
}

/// `memory.triad_share`: measured Triad peak / theoretical peak below the threshold.
pub fn memory_triad_share(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "memory.triad_share";
    let result = need!(f.result, ID);
    let peak = need!(f.memory.theoretical_peak_bytes_per_s, ID);
    let Some(triad) = result.triad_peak_bytes_per_s else {
        return vec![Finding::not_evaluated(
            ID,
            format!("{} has no STREAM Triad figure", result.path),
        )];
    };
    if *peak <= 0.0 || !peak.is_finite() {
        return vec![Finding::not_evaluated(
            ID,
            "theoretical peak is not a positive number",
        )];
    }
    let min = p.f64("min_share").unwrap_or(0.6);
    let share = triad / peak;
    let line = format!(
        "Triad peak {} is {:.0}% of the theoretical {} (threshold {:.0}%)",
        format_rate_decimal(triad),
        share * 100.0,
        format_rate_decimal(*peak),
        min * 100.0
    );
    let finding = Finding::new(
        ID,
        if share < min {
            Verdict::Warn
        } else {
            Verdict::Pass
        },
        line,
    )
    .with(
        format!("{} mem.bandwidth triad", result.path),
        format_rate_decimal(triad),
    )
    .with(
        "memory.theoretical_peak_bytes_per_s",
        format_rate_decimal(*peak),
    );
    if share < min {
        vec![finding.fix("check DIMM population (empty channels), configured speed, NUMA placement and the thread count of the peak")]
    } else {
        vec![finding]
    }
}

/// `memory.edac`: corrected (warn) and uncorrected (fail) error counts per DIMM.
pub fn memory_edac(f: &Facts, p: &Params) -> Vec<Finding> {
    const ID: &str = "memory.edac";
    let edac = need!(f.memory.edac, ID);
    if edac.is_empty() {
        return vec![Finding::not_evaluated(
            ID,
            "no EDAC memory controller (/sys/devices/system/edac/mc is empty: driver not loaded, or errors go to firmware)",
        )];
    }
    if edac
        .iter()
        .all(|d| d.ce_count.is_none() && d.ue_count.is_none())
    {
        // unreadable counters are not zero errors
        return vec![Finding::not_evaluated(
            ID,
            format!(
                "none of {} EDAC DIMMs has a readable dimm_ce_count or dimm_ue_count",
                edac.len()
            ),
        )];
    }
    let max_ce = p.i64("max_ce").unwrap_or(0).max(0) as u64;
    let name = |d: &crate::facts::EdacDimmFacts| {
        format!(
            "mc{} dimm{}{}",
            d.mc,
            d.dimm,
            d.label
                .as_deref()
                .map(|l| format!(" ({l})"))
                .unwrap_or_default()
        )
    };
    let mut out = Vec::new();
    let ue: Vec<_> = edac
        .iter()
        .filter(|d| d.ue_count.unwrap_or(0) > 0)
        .collect();
    if !ue.is_empty() {
        let mut fnd = Finding::new(
            ID,
            Verdict::Fail,
            format!(
                "uncorrected memory errors on {}",
                ue.iter().map(|d| name(d)).collect::<Vec<_>>().join(", ")
            ),
        )
        .fix("replace the named DIMMs; uncorrected errors crash or corrupt");
        for d in &ue {
            fnd = fnd.with(
                format!(
                    "/sys/devices/system/edac/mc/mc{}/dimm{}/dimm_ue_count",
                    d.mc, d.dimm
                ),
                d.ue_count.unwrap_or(0).to_string(),
            );
        }
        out.push(fnd);
    }
    let ce: Vec<_> = edac
        .iter()
        .filter(|d| d.ce_count.unwrap_or(0) > max_ce)
        .collect();
    if !ce.is_empty() {
        let total: u64 = ce.iter().filter_map(|d| d.ce_count).sum();
        let mut by_mc: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        for d in &ce {
            by_mc
                .entry(d.mc)
                .or_default()
                .push(format!("dimm{}", d.dimm));
        }
        let where_: Vec<String> = by_mc
            .iter()
            .map(|(mc, ds)| format!("mc{mc} {}", ds.join("/")))
            .collect();
        let mut fnd = Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "{total} corrected memory errors on {}",
                where_.join(" and ")
            ),
        )
        .fix(
            "watch the counts; replace a DIMM whose count keeps rising (its label names the slot)",
        );
        for d in &ce {
            fnd = fnd.with(
                format!(
                    "/sys/devices/system/edac/mc/mc{}/dimm{}/dimm_ce_count",
                    d.mc, d.dimm
                ),
                format!("{} ({})", d.ce_count.unwrap_or(0), name(d)),
            );
        }
        out.push(fnd);
    }
    out
}
