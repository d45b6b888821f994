//! OS CPU numbers and NUMA node numbers as distinct types, and the Linux list and mask
//! grammars they are written in.
//!
//! The list grammar is the one the kernel's `bitmap_parselist()` accepts and that
//! `/sys/devices/system/cpu/{online,present,possible}`, `cpuN/topology/*_list`,
//! `node/nodeN/cpulist` and `Cpus_allowed_list` in `/proc/PID/status` print:
//! comma-separated items, each `N`, `N-M`, or `N-M:U/G` (in every group of `G` numbers
//! starting at `N`, the first `U` are set; see Documentation/admin-guide/kernel-parameters.rst,
//! "cpu lists"). Surrounding white space and a trailing newline are ignored; an empty list is
//! the empty set. The mask grammar is the one of `cpumap`/`Cpus_allowed`: 32-bit hex words
//! separated by commas, most significant first.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An OS CPU number, as in `/sys/devices/system/cpu/cpuN` (not a logical index).
pub type CpuId = u32;
/// A NUMA node number, as in `/sys/devices/system/node/nodeN`. Node numbers may have holes.
pub type NodeId = u32;

/// The largest id a list may name. Linux's NR_CPUS tops out at 8192 and MAX_NUMNODES at 1024;
/// anything far beyond is a corrupt file, not a machine, and must not make us allocate.
pub const MAX_ID: u32 = 1 << 20;

/// Why a list or mask could not be parsed. Carries the whole input and the bad item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected a list like \"0-3,8\", got {}: {reason} at {}",
    crate::text::quote(input),
    crate::text::quote(item)
)]
pub struct ListParseError {
    /// The whole text that was being parsed.
    pub input: String,
    /// The item (between commas) that failed.
    pub item: String,
    /// What was wrong with it.
    pub reason: &'static str,
}

macro_rules! id_set {
    ($(#[$doc:meta])* $name:ident, $id:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(BTreeSet<$id>);

        impl $name {
            /// The empty set.
            pub fn new() -> Self {
                Self(BTreeSet::new())
            }
            /// Parses the kernel's list grammar (see the module docs).
            pub fn parse_list(text: &str) -> Result<Self, ListParseError> {
                parse_list(text).map(Self)
            }
            /// Parses the kernel's hex mask grammar (`cpumap`, `Cpus_allowed`).
            pub fn parse_mask(text: &str) -> Result<Self, ListParseError> {
                parse_mask(text).map(Self)
            }
            /// Number of members.
            pub fn len(&self) -> usize {
                self.0.len()
            }
            /// True when there are no members.
            pub fn is_empty(&self) -> bool {
                self.0.is_empty()
            }
            /// True when `id` is a member.
            pub fn contains(&self, id: $id) -> bool {
                self.0.contains(&id)
            }
            /// Adds `id`; returns false if it was already there.
            pub fn insert(&mut self, id: $id) -> bool {
                self.0.insert(id)
            }
            /// Members in increasing order.
            pub fn iter(&self) -> impl DoubleEndedIterator<Item = $id> + '_ {
                self.0.iter().copied()
            }
            /// Smallest member.
            pub fn first(&self) -> Option<$id> {
                self.0.first().copied()
            }
            /// Largest member.
            pub fn last(&self) -> Option<$id> {
                self.0.last().copied()
            }
            /// Members of `self` that are not in `other`.
            pub fn difference(&self, other: &Self) -> Self {
                Self(self.0.difference(&other.0).copied().collect())
            }
            /// Members of both.
            pub fn intersection(&self, other: &Self) -> Self {
                Self(self.0.intersection(&other.0).copied().collect())
            }
            /// Members of either.
            pub fn union(&self, other: &Self) -> Self {
                Self(self.0.union(&other.0).copied().collect())
            }
            /// True when every member of `self` is in `other`.
            pub fn is_subset(&self, other: &Self) -> bool {
                self.0.is_subset(&other.0)
            }
            /// The kernel's list form, shortest ranges: `0-3,8`; the empty set is `""`.
            pub fn to_list_string(&self) -> String {
                format_list(self.0.iter().copied())
            }
        }

        impl FromIterator<$id> for $name {
            fn from_iter<I: IntoIterator<Item = $id>>(iter: I) -> Self {
                Self(iter.into_iter().collect())
            }
        }

        impl FromStr for $name {
            type Err = ListParseError;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse_list(s)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.to_list_string())
            }
        }

        /// Serialized as the kernel's list string (`"0-3,8"`), so result files stay readable.
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_list_string())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                Self::parse_list(&text).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_set!(
    /// A set of OS CPU numbers ([`CpuId`]).
    CpuSet,
    CpuId
);
id_set!(
    /// A set of NUMA node numbers ([`NodeId`]); a separate type so the two index spaces never mix.
    NodeSet,
    NodeId
);

fn err(input: &str, item: &str, reason: &'static str) -> ListParseError {
    ListParseError {
        input: input.to_string(),
        item: item.to_string(),
        reason,
    }
}

fn parse_id(input: &str, item: &str, text: &str) -> Result<u32, ListParseError> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(input, item, "expected a decimal number"));
    }
    let value: u64 = text
        .parse()
        .map_err(|_| err(input, item, "number too large"))?;
    if value > MAX_ID as u64 {
        return Err(err(input, item, "number beyond any kernel's limit"));
    }
    Ok(value as u32)
}

fn parse_list(input: &str) -> Result<BTreeSet<u32>, ListParseError> {
    let mut out = BTreeSet::new();
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Ok(out);
    }
    let mut expanded: u64 = 0;
    for raw_item in trimmed.split(',') {
        let item = raw_item.trim();
        if item.is_empty() {
            return Err(err(input, raw_item, "empty item"));
        }
        let (range, stride) = match item.split_once(':') {
            Some((range, stride)) => (range, Some(stride)),
            None => (item, None),
        };
        let (lo, hi) = match range.split_once('-') {
            Some((lo, hi)) => (parse_id(input, item, lo)?, parse_id(input, item, hi)?),
            None => {
                let id = parse_id(input, item, range)?;
                (id, id)
            }
        };
        if lo > hi {
            return Err(err(input, item, "range runs backwards"));
        }
        let (used, group) = match stride {
            None => (1, 1),
            Some(stride) => {
                let (used, group) = stride
                    .split_once('/')
                    .ok_or_else(|| err(input, item, "stride must be USED/GROUP"))?;
                let used = parse_id(input, item, used)?;
                let group = parse_id(input, item, group)?;
                if used == 0 || group == 0 || used > group {
                    return Err(err(input, item, "stride needs 0 < USED <= GROUP"));
                }
                (used, group)
            }
        };
        let mut base = lo;
        while base <= hi {
            for id in base..base.saturating_add(used).min(hi.saturating_add(1)) {
                out.insert(id);
                // The kernel writes each id once; overlapping ranges ("0-8191,0-8191,..." over
                // a 1 MiB line) would cost items x range inserts (minutes): at most
                // MAX_ID + 1 ids are expanded, whatever the overlaps.
                expanded += 1;
                if expanded > MAX_ID as u64 + 1 {
                    return Err(err(
                        input,
                        item,
                        "more ids than any list can name (ranges overlap)",
                    ));
                }
            }
            match base.checked_add(group) {
                Some(next) => base = next,
                None => break,
            }
        }
    }
    Ok(out)
}

fn parse_mask(input: &str) -> Result<BTreeSet<u32>, ListParseError> {
    let mut out = BTreeSet::new();
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(err(input, input, "empty mask"));
    }
    let words: Vec<&str> = trimmed.split(',').collect();
    if words.len() as u64 * 32 > MAX_ID as u64 {
        return Err(err(input, trimmed, "mask wider than any kernel's limit"));
    }
    for (index_from_low, word) in words.iter().rev().enumerate() {
        let word = word.trim();
        if word.is_empty() || word.len() > 8 {
            return Err(err(input, word, "expected hex words of at most 8 digits"));
        }
        let value =
            u32::from_str_radix(word, 16).map_err(|_| err(input, word, "expected hex digits"))?;
        for bit in 0..32u32 {
            if value & (1 << bit) != 0 {
                out.insert(index_from_low as u32 * 32 + bit);
            }
        }
    }
    Ok(out)
}

fn format_list(ids: impl Iterator<Item = u32>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    let flush = |run: (u32, u32), parts: &mut Vec<String>| {
        if run.0 == run.1 {
            parts.push(run.0.to_string());
        } else {
            parts.push(format!("{}-{}", run.0, run.1));
        }
    };
    for id in ids {
        run = match run {
            Some((lo, hi)) if hi.checked_add(1) == Some(id) => Some((lo, id)),
            Some(done) => {
                flush(done, &mut parts);
                Some((id, id))
            }
            None => Some((id, id)),
        };
    }
    if let Some(done) = run {
        flush(done, &mut parts);
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    /// A 1 MiB line of overlapping ranges is refused after MAX_ID + 1 ids, in well under a
    /// second, instead of ~10^9 inserts (found by the mutation campaign's list mutations).
    #[test]
    fn overlapping_ranges_are_bounded() {
        let text = "0-8191,".repeat(150_000);
        let start = std::time::Instant::now();
        let e = super::CpuSet::parse_list(&text).unwrap_err();
        assert_eq!(e.reason, "more ids than any list can name (ranges overlap)");
        assert!(start.elapsed().as_secs() < 10, "{:?}", start.elapsed());
        // a canonical list up to the limit still parses
        assert_eq!(
            super::CpuSet::parse_list("0-1048576").unwrap().len(),
            1 << 20 | 1
        );
    }

    use super::*;
    use proptest::prelude::*;

    fn ids(set: &CpuSet) -> Vec<u32> {
        set.iter().collect()
    }

    /// B07 (psutil PR #2973): "0-3,8" is five CPUs, not a parse failure or four.
    #[test]
    fn b07_cpus_allowed_list_grammar() {
        assert_eq!(ids(&"0-3,8".parse().unwrap()), vec![0, 1, 2, 3, 8]);
        assert_eq!(ids(&"5".parse().unwrap()), vec![5]);
        assert_eq!(ids(&" 0-1 , 4 \n".parse().unwrap()), vec![0, 1, 4]);
        assert!(CpuSet::parse_list("").unwrap().is_empty());
        assert!(CpuSet::parse_list("\n").unwrap().is_empty());
        assert_eq!(ids(&"0-7:2/4".parse().unwrap()), vec![0, 1, 4, 5]);
        assert_eq!(ids(&"2-3,0-1".parse().unwrap()), vec![0, 1, 2, 3]);
    }

    #[test]
    fn bad_lists_name_the_item() {
        for bad in [
            "3-1",
            "0-",
            "a",
            "0,,1",
            "1-2:0/4",
            "1-2:3/2",
            "99999999999",
            "0-3x",
        ] {
            let e = CpuSet::parse_list(bad).unwrap_err();
            assert_eq!(e.input, bad);
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn masks() {
        // sparc64 T1 node0 cpumap is 36 bits wide: two words.
        let set = CpuSet::parse_mask("0,00ffffff\n").unwrap();
        assert_eq!(set.len(), 24);
        assert_eq!(set.to_list_string(), "0-23");
        let set = CpuSet::parse_mask("00000001,00000000").unwrap();
        assert_eq!(ids(&set), vec![32]);
        assert!(CpuSet::parse_mask("xyz").is_err());
        assert!(CpuSet::parse_mask("").is_err());
    }

    #[test]
    fn serde_as_list_string() {
        let set: CpuSet = "0-3,8".parse().unwrap();
        let json = serde_json::to_string(&set).unwrap();
        assert_eq!(json, "\"0-3,8\"");
        let back: CpuSet = serde_json::from_str(&json).unwrap();
        assert_eq!(back, set);
    }

    proptest! {
        #[test]
        fn list_round_trips(members in proptest::collection::btree_set(0u32..5000, 0..200)) {
            let set: CpuSet = members.iter().copied().collect();
            let text = set.to_list_string();
            prop_assert_eq!(CpuSet::parse_list(&text).unwrap(), set);
        }

        #[test]
        fn list_parser_never_panics(text in "\\PC{0,40}") {
            let _ = CpuSet::parse_list(&text);
            let _ = CpuSet::parse_mask(&text);
        }

        #[test]
        fn list_parser_never_panics_on_list_like_text(text in "[0-9,:/ -]{0,40}") {
            let _ = CpuSet::parse_list(&text);
        }
    }
}
