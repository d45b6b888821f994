//! `memory.interleave`: whether the populated DIMMs interleave, as the firmware's SMBIOS
//! Type 19/20 records (DSP0134 3.x sections 7.20, 7.21) state it, against the channels the
//! Type 17 locators show populated.

use hwsurvey_model::units::plural;
use hwsurvey_model::Probed;

use crate::facts::Facts;
use crate::{Finding, Params, RuleFinding, Verdict};

const SOURCE: &str = "SMBIOS Type 20";
const FIX: &str = "enable channel (and rank) interleaving in the firmware setup, and populate \
    the channels alike; some firmware writes one Type 20 range per DIMM whatever the memory \
    controller does, so confirm with a mem.bandwidth run (its peak against the theoretical \
    peak: memory.triad_share)";

/// `memory.interleave`: warns when some populated DIMMs are mapped to address ranges of their
/// own (Interleave Position 0), or when an interleave is narrower than the populated channels
/// of a socket; passes when every DIMM with a known position interleaves at least as wide.
/// Not evaluated, with the reason, without Type 20 records.
pub fn memory_interleave(f: &Facts, _: &Params) -> Vec<Finding> {
    const ID: &str = "memory.interleave";
    let i = match &f.memory.interleave {
        Probed::Known(i) => i,
        Probed::Unknown(why) => return vec![Finding::not_evaluated(ID, why)],
    };
    let channels = if i.populated_channels.is_empty() {
        "the Type 17 locators do not say which channel each DIMM is on".to_string()
    } else {
        let per: Vec<String> = i
            .populated_channels
            .iter()
            .map(|(s, n)| format!("{s}: {}", plural(u64::from(*n), "populated channel")))
            .collect();
        per.join(", ")
    };
    let widest_channels = i.populated_channels.iter().map(|(_, n)| *n).max();
    let mut finding = if !i.not_interleaved.is_empty() {
        let total = i.interleaved.len() + i.not_interleaved.len() + i.unknown.len();
        Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "memory is not interleaved: {} of {} populated DIMMs each answer an address \
                 range of their own (Interleave Position 0), so a thread's memory sits on one \
                 DIMM's channel, not across the populated channels ({channels})",
                i.not_interleaved.len(),
                total
            ),
        )
        .fix(FIX)
    } else if let Some(n) = widest_channels.filter(|n| i.ways < *n) {
        Finding::new(
            ID,
            Verdict::Warn,
            format!(
                "memory interleaves {}-way, fewer than the {n} populated channels of a socket \
                 ({channels})",
                i.ways
            ),
        )
        .fix(FIX)
    } else {
        Finding::new(ID, Verdict::Pass, format!("{} ({channels})", i.state))
    };
    finding = finding.with("SMBIOS Type 19/20", i.state.clone());
    for d in &i.devices {
        finding = finding.with(SOURCE, d.clone());
    }
    if !i.unknown.is_empty() {
        finding = finding.with(
            SOURCE,
            format!("position unknown or no record: {}", i.unknown.join(" ")),
        );
    }
    vec![finding]
}
