//! What a set of SMBIOS memory records allows to say: slots, populated slots, DIMMs per socket
//! and per channel where the locators allow it, empty channels, mixed modules, rated vs
//! configured speed, total installed, and the theoretical peak bandwidth
//! (populated channels x configured MT/s x 8 bytes per transfer, one 64-bit channel).
//!
//! Locators are vendor conventions, not a standard. The rules known here ([`place`]):
//! - socket tokens: `/SYS/MB/P0` (Oracle), `P0`/`CPU1`/`N0`/`NODE 0`/`Socket 0` anywhere in the
//!   Locator or Bank Locator (`DIMM_P0_A0`, `CPU1_DIMM_A1`, `N0 DIMM_A0`);
//! - channel tokens: `DIMM_A1`/`DIMM_P0_A0` (channel letter A, slot 1 within it; Intel,
//!   Supermicro, Gigabyte, Cavium boards), `ChannelA`/`CH1`, `Controller0` (client boards);
//! - Dell PowerEdge (`A1`..`A12`, `DIMM_A1`): the letter is the socket and the slots are numbered
//!   across channels first (A1..An are the first slot of each of the n channels), so the
//!   channel is `(number - 1) mod channels_per_socket`, which needs the processor model
//!   ([`channels_per_socket`]);
//! - anything else (Oracle `D0`..`D11`, Ampere `DIMM 1`/`Bank 1`): the channel is unknown, and
//!   the population says so instead of guessing.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use hwsurvey_model::units::format_bytes_binary;
use hwsurvey_model::{Probed, Unknown};
use serde::{Deserialize, Serialize};

use super::{rate, MemoryDevice, SmbiosMemory};

/// Bytes moved per transfer by one DDR channel (64 data bits; ECC bits carry no data).
pub const BYTES_PER_TRANSFER: u64 = 8;

/// Where one listed slot sits, as far as its locators tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotPlace {
    /// The slot's Locator.
    pub locator: Option<String>,
    /// The slot's Bank Locator.
    pub bank_locator: Option<String>,
    /// Socket label as the board names it (`P0`, `CPU1`, `A`), if the locators name one.
    pub socket: Option<String>,
    /// Channel label within the socket (`A`, `ch0`, `Controller0`), or why it is unknown.
    pub channel: Probed<String>,
    /// Whether a module is in the slot.
    pub populated: bool,
}

/// One channel of one socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelPopulation {
    /// Channel label (see [`SlotPlace::channel`]).
    pub channel: String,
    /// Slots the table lists on this channel.
    pub slots_listed: u32,
    /// Of those, populated.
    pub populated: u32,
}

/// One socket (or, when the locators name no socket, the whole board as `"-"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketPopulation {
    /// Socket label, or `"-"` when the locators name none.
    pub socket: String,
    /// Slots the table lists for this socket.
    pub slots_listed: u32,
    /// Of those, populated.
    pub populated: u32,
    /// Bytes installed in this socket's slots (modules of known size).
    pub installed_bytes: u64,
    /// Per-channel population, or why the locators do not tell.
    pub channels: Probed<Vec<ChannelPopulation>>,
    /// Channels with no module, or why that cannot be said.
    pub empty_channels: Probed<Vec<String>>,
    /// Theoretical peak of this socket's populated channels, bytes/s.
    pub peak_bandwidth_bytes_per_s: Probed<u64>,
}

/// One Type 16 array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayPopulation {
    /// The array's handle.
    pub handle: Option<u16>,
    /// "Number Of Devices" the array declares.
    pub slots_declared: Option<u32>,
    /// Type 17 records that point at this array.
    pub slots_listed: u32,
    /// Of those, populated.
    pub populated: u32,
    /// Bytes installed (modules of known size).
    pub installed_bytes: u64,
}

/// Theoretical peak memory bandwidth and how it was derived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeakBandwidth {
    /// populated_channels x speed_mt_per_s x 10^6 x bytes_per_transfer, bytes/s.
    pub bandwidth_bytes_per_s: u64,
    /// Channels with at least one module, over all sockets.
    pub populated_channels: u32,
    /// Transfer rate used: the lowest configured speed of the populated modules (channels run
    /// at one speed), or the lowest rated speed when no configured speed is reported.
    pub speed_mt_per_s: u32,
    /// Bytes per transfer per channel ([`BYTES_PER_TRANSFER`]).
    pub bytes_per_transfer: u64,
    /// The derivation in words.
    pub derivation: String,
}

/// The population derived from one [`SmbiosMemory`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Population {
    /// Type 17 records (slots) the table lists.
    pub slots_listed: u32,
    /// Slots the Type 16 arrays declare ("Number Of Devices", summed), if every array says.
    pub slots_declared: Option<u32>,
    /// When the table lists fewer slots than declared: the rest are not described and are
    /// not assumed empty or populated.
    pub unlisted_slots_note: Option<String>,
    /// Slots with a module.
    pub populated: u32,
    /// Listed slots without a module.
    pub empty: u32,
    /// Sum of the populated modules' sizes, bytes (modules of unknown size excluded).
    pub total_installed_bytes: u64,
    /// Populated modules whose size the firmware does not give.
    pub modules_of_unknown_size: u32,
    /// Distinct module sizes, bytes, ascending.
    pub module_sizes_bytes: Vec<u64>,
    /// Distinct memory types (`DDR4`).
    pub memory_types: Vec<String>,
    /// Distinct rated speeds, MT/s.
    pub rated_speeds_mt_per_s: Vec<u32>,
    /// Distinct configured speeds, MT/s.
    pub configured_speeds_mt_per_s: Vec<u32>,
    /// Distinct rank counts.
    pub ranks: Vec<u8>,
    /// Distinct part numbers.
    pub part_numbers: Vec<String>,
    /// More than one module size.
    pub mixed_sizes: bool,
    /// More than one rated or configured speed.
    pub mixed_speeds: bool,
    /// More than one rank count.
    pub mixed_ranks: bool,
    /// More than one part number.
    pub mixed_part_numbers: bool,
    /// Some module runs below its rated speed (configured < rated).
    pub configured_below_rated: bool,
    /// Memory channels per socket, from the processor model ([`channels_per_socket`]).
    pub channels_per_socket: Option<u32>,
    /// What the channel labels rest on where it is a vendor's slot naming, not a channel the
    /// locators name ([`channel_basis`]); `None` otherwise (and in documents written before).
    #[serde(default)]
    pub channel_basis: Option<String>,
    /// Where each listed slot sits, in table order.
    pub slots: Vec<SlotPlace>,
    /// Per Type 16 array.
    pub arrays: Vec<ArrayPopulation>,
    /// Per socket, or why the locators do not name sockets.
    pub sockets: Probed<Vec<SocketPopulation>>,
    /// Theoretical peak bandwidth, or why it cannot be derived.
    pub peak_bandwidth: Probed<PeakBandwidth>,
}

/// Memory channels per socket of a processor named by SMBIOS Type 4 "Version" (or
/// /proc/cpuinfo "model name"), for the parts whose numbering tells it (Intel ARK, AMD specs):
/// Xeon E5-24xx 3; other E5 4; Xeon Scalable 1st/2nd gen (x1xx, x2xx) 6, 3rd-5th gen 8;
/// EPYC 7001-7003 8, EPYC 9004 12. `None` for anything else.
pub fn channels_per_socket(processor: &str) -> Option<u32> {
    let words: Vec<&str> = processor.split_whitespace().collect();
    for (i, w) in words.iter().enumerate() {
        if let Some(model) = w.strip_prefix("E5-") {
            return Some(if model.starts_with("24") { 3 } else { 4 });
        }
        let tier = w.trim_end_matches("(R)");
        if ["Platinum", "Gold", "Silver", "Bronze"].contains(&tier) {
            let model = words.get(i + 1)?.as_bytes();
            if model.len() >= 4 && model[..4].iter().all(u8::is_ascii_digit) {
                return match model[1] {
                    b'1' | b'2' => Some(6),
                    b'3' | b'4' | b'5' => Some(8),
                    _ => None,
                };
            }
        }
        if *w == "EPYC" {
            let model = words.get(i + 1)?.as_bytes();
            return match model.first()? {
                b'7' => Some(8),
                b'9' => Some(12),
                _ => None,
            };
        }
    }
    None
}

fn tokens(s: &str) -> Vec<String> {
    s.split(['_', ' ', '/', '-', '.', '#'])
        .filter(|t| !t.is_empty())
        .map(|t| t.to_ascii_uppercase())
        .collect()
}

fn prefixed_number(token: &str, prefix: &str) -> Option<u32> {
    let rest = token.strip_prefix(prefix)?;
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok()
}

/// A socket label from one locator string.
fn socket_in(s: &str) -> Option<String> {
    let t = tokens(s);
    for (i, tok) in t.iter().enumerate() {
        for prefix in ["CPU", "P", "N", "NODE", "SOCKET"] {
            if let Some(n) = prefixed_number(tok, prefix) {
                return Some(format!("{prefix}{n}"));
            }
            // "CPU 1", "NODE 0", "Socket 0".
            if tok == prefix && prefix.len() > 1 {
                if let Some(n) = t.get(i + 1).and_then(|n| n.parse::<u32>().ok()) {
                    return Some(format!("{prefix}{n}"));
                }
            }
        }
    }
    None
}

/// `[A-Z]<digits>` -> (letter, number).
fn letter_number(tok: &str) -> Option<(char, u32)> {
    let mut chars = tok.chars();
    let letter = chars.next().filter(|c| c.is_ascii_uppercase())?;
    let rest = chars.as_str();
    if rest.is_empty() || !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((letter, rest.parse().ok()?))
}

/// A channel named in one locator string: `CHANNEL 1`, `Channel A`, `CH A`, `ChannelA`,
/// `_CHB_`, `CH1` (the label after the word, upper-cased), `Controller0` (`Controller0`).
pub fn channel_token(text: &str) -> Option<String> {
    let upper = text.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // a short label: `A`, `1`, `12` (not the rest of a word such as `CHIP`)
    let label = |r: &str| {
        (!r.is_empty()
            && r.len() <= 2
            && (r.bytes().all(|b| b.is_ascii_digit())
                || (r.len() == 1 && r.bytes().all(|b| b.is_ascii_alphabetic()))))
        .then(|| r.to_string())
    };
    for (i, w) in words.iter().enumerate() {
        if *w == "CHANNEL" || *w == "CH" {
            if let Some(n) = words.get(i + 1).and_then(|n| label(n)) {
                return Some(n);
            }
        }
        if let Some(rest) = w.strip_prefix("CONTROLLER") {
            if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                return Some(format!("Controller{rest}"));
            }
        }
        if let Some(n) = w
            .strip_prefix("CHANNEL")
            .or_else(|| w.strip_prefix("CH"))
            .and_then(label)
        {
            return Some(n);
        }
    }
    None
}

/// Where one slot sits (see the module docs for the rules).
pub fn place(d: &MemoryDevice, vendor: Option<&str>, channels: Option<u32>) -> SlotPlace {
    let (socket, channel) = locate(
        d.locator.as_deref().unwrap_or(""),
        d.bank_locator.as_deref().unwrap_or(""),
        vendor,
        channels,
    );
    SlotPlace {
        locator: d.locator.clone(),
        bank_locator: d.bank_locator.clone(),
        socket,
        channel,
        populated: d.size.is_populated(),
    }
}

/// The one reader of the locator conventions (module docs): the socket and channel a slot
/// with Locator `loc` and Bank Locator `bank` sits on, on a board of SMBIOS system `vendor`
/// whose processor has `channels` memory channels per socket ([`channels_per_socket`]).
/// `hwsurvey probe` and `hwsurvey qualify` both place slots with it.
pub fn locate(
    loc: &str,
    bank: &str,
    vendor: Option<&str>,
    channels: Option<u32>,
) -> (Option<String>, Probed<String>) {
    let is_dell = vendor.is_some_and(|v| v.to_ascii_lowercase().contains("dell"));
    let toks = tokens(loc);
    let mut socket = socket_in(loc).or_else(|| socket_in(bank));
    let unknown = |why: String| Probed::Unknown(Unknown::Other { detail: why });
    let mut channel: Probed<String> = unknown(format!(
        "locator {loc:?} / bank locator {bank:?} name no channel"
    ));

    // Explicit channel tokens: ChannelA, CH1, Controller0, in the Locator or Bank Locator.
    let explicit = channel_token(loc).or_else(|| channel_token(bank));
    // The last letter+number token that is not the socket token (`DIMM_P0_A0` -> A0, and
    // `N1 DIMM_N0` -> N0, channel N).
    let socket_token = socket_in(loc);
    let slot_token = toks
        .iter()
        .rev()
        .filter(|t| Some(t.as_str()) != socket_token.as_deref())
        .find_map(|t| letter_number(t));
    let has_dimm_word = toks.iter().any(|t| t == "DIMM");

    if let Some(c) = explicit {
        channel = Probed::Known(c);
    } else if is_dell && socket.is_none() {
        if let Some((letter, n)) = slot_token.filter(|_| toks.len() <= 2) {
            socket = Some(letter.to_string());
            channel = match channels {
                Some(c) if c > 0 && n >= 1 => Probed::Known(format!("ch{}", (n - 1) % c)),
                _ => unknown(format!(
                    "Dell numbers slots across channels ({letter}1..{letter}n are the first \
                     slot of each channel), and the channel count per socket is not known \
                     from the processor model"
                )),
            };
        }
    } else if let Some((letter, _)) = slot_token.filter(|_| has_dimm_word) {
        channel = Probed::Known(letter.to_string());
    } else if let Some((letter, _)) = slot_token {
        channel = unknown(format!(
            "locator {loc:?} is a slot name ({letter}<n>) that does not say which channel \
             it is on"
        ));
    }
    (socket, channel)
}

/// What the channel labels rest on, where it is a vendor's slot naming rather than a channel
/// the locators name: Dell's `A1`..`An` numbering needs the channel count from the processor
/// model. `None` when the locators name the channels (or none is known).
pub fn channel_basis(
    vendor: Option<&str>,
    channels: Option<u32>,
    slots: &[SlotPlace],
) -> Option<String> {
    let dell = vendor.is_some_and(|v| v.to_ascii_lowercase().contains("dell"));
    let n = channels?;
    let by_naming = slots.iter().any(|s| {
        s.channel.known().is_some_and(|c| c.starts_with("ch"))
            && s.locator
                .as_deref()
                .is_some_and(|l| channel_token(l).is_none())
    });
    (dell && by_naming).then(|| {
        format!(
            "channels from Dell's slot naming, not from the firmware: A1-A{n} are the first DIMM \
             of each of the {n} channels of socket A (the processor model's channel count), \
             A{}-A{} the second, likewise B",
            n + 1,
            2 * n
        )
    })
}

fn array_label(handle: u16) -> String {
    format!("array 0x{handle:04X}")
}

fn distinct<T: Ord + Clone>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = items.collect();
    v.sort();
    v.dedup();
    v
}

/// Derives the population of `m` (see the module docs).
pub fn derive(m: &SmbiosMemory) -> Population {
    let channels = m.processors.iter().find_map(|p| channels_per_socket(p));
    let vendor = m.system_vendor.as_deref();
    let mut slots: Vec<SlotPlace> = m
        .devices
        .iter()
        .map(|d| place(d, vendor, channels))
        .collect();
    // Boards that name the socket on only some slots (Ampere Mt.Jade: "DIMM 1" on one socket,
    // "Socket 1 DIMM 1" on the other): a whole Type 16 array without socket names stands for
    // a socket of its own, labelled by the array handle; nothing finer is guessed.
    if slots.iter().any(|s| s.socket.is_some()) {
        for (i, d) in m.devices.iter().enumerate() {
            let Some(h) = d.array_handle else { continue };
            let array_unnamed = m
                .devices
                .iter()
                .zip(&slots)
                .filter(|(o, _)| o.array_handle == Some(h))
                .all(|(_, s)| s.socket.is_none() || s.socket.as_deref() == Some(&array_label(h)));
            if array_unnamed {
                if let Some(s) = slots.get_mut(i) {
                    s.socket = Some(array_label(h));
                }
            }
        }
    }
    let populated: Vec<&MemoryDevice> =
        m.devices.iter().filter(|d| d.size.is_populated()).collect();
    let slots_listed = m.devices.len() as u32;
    let slots_declared = if m.arrays.is_empty() {
        None
    } else {
        m.arrays
            .iter()
            .map(|a| a.slots_declared)
            .sum::<Option<u32>>()
    };
    let unlisted_slots_note = slots_declared.filter(|d| *d > slots_listed).map(|d| {
        format!(
            "the arrays declare {d} slots but the table lists {slots_listed}: the other {} \
             are not described (not assumed empty)",
            d - slots_listed
        )
    });
    let sizes = distinct(populated.iter().filter_map(|d| d.size.size_bytes()));
    let rated = distinct(populated.iter().filter_map(|d| d.speed_mt_per_s));
    let configured = distinct(populated.iter().filter_map(|d| d.configured_speed_mt_per_s));
    let ranks = distinct(populated.iter().filter_map(|d| d.rank));
    let parts = distinct(populated.iter().filter_map(|d| d.part_number.clone()));
    let configured_below_rated = populated.iter().any(
        |d| matches!((d.configured_speed_mt_per_s, d.speed_mt_per_s), (Some(c), Some(r)) if c < r),
    );

    let arrays = m
        .arrays
        .iter()
        .map(|a| {
            let mine: Vec<&MemoryDevice> = m
                .devices
                .iter()
                .filter(|d| d.array_handle.is_some() && d.array_handle == a.handle)
                .collect();
            ArrayPopulation {
                handle: a.handle,
                slots_declared: a.slots_declared,
                slots_listed: mine.len() as u32,
                populated: mine.iter().filter(|d| d.size.is_populated()).count() as u32,
                installed_bytes: mine.iter().filter_map(|d| d.size.size_bytes()).sum(),
            }
        })
        .collect();

    let speed = configured.first().copied().or(rated.first().copied());
    let speed_note = if configured.is_empty() {
        "no configured speed reported; the lowest rated speed is used"
    } else {
        "lowest configured speed of the populated modules"
    };
    let listing_complete = unlisted_slots_note.is_none();

    // Group slots by socket ("-" when no socket token anywhere).
    let any_socket = slots.iter().any(|s| s.socket.is_some());
    let all_socket = slots.iter().all(|s| s.socket.is_some());
    let mut groups: BTreeMap<String, Vec<(&SlotPlace, &MemoryDevice)>> = BTreeMap::new();
    for (s, d) in slots.iter().zip(&m.devices) {
        let key = s.socket.clone().unwrap_or_else(|| "-".to_string());
        groups.entry(key).or_default().push((s, d));
    }
    let sockets_result: Vec<SocketPopulation> = groups
        .iter()
        .map(|(socket, members)| {
            socket_population(socket, members, channels, speed, listing_complete)
        })
        .collect();
    let sockets = if any_socket && !all_socket {
        Probed::Unknown(Unknown::Other {
            detail: "some locators name a socket and others do not".to_string(),
        })
    } else if !any_socket && slots.len() > 1 && groups.len() == 1 {
        // No socket tokens: keep the per-channel view under "-" when channels are known,
        // and say the sockets are unknown otherwise.
        let only = &sockets_result[0];
        if only.channels.known().is_some() {
            Probed::Known(sockets_result.clone())
        } else {
            Probed::Unknown(Unknown::Other {
                detail: format!(
                    "the locators ({:?} ...) name neither socket nor channel",
                    m.devices.first().and_then(|d| d.locator.clone())
                ),
            })
        }
    } else {
        Probed::Known(sockets_result.clone())
    };

    // Peak: every populated module must have a channel.
    let mut populated_channels: Vec<(String, String)> = Vec::new();
    let mut missing_channel = None;
    for (s, d) in slots.iter().zip(&m.devices) {
        if !d.size.is_populated() {
            continue;
        }
        match &s.channel {
            Probed::Known(c) => populated_channels.push((
                s.socket.clone().unwrap_or_else(|| "-".to_string()),
                c.clone(),
            )),
            Probed::Unknown(u) => {
                missing_channel.get_or_insert_with(|| u.clone());
            }
        }
    }
    populated_channels.sort();
    populated_channels.dedup();
    let peak_bandwidth = match (missing_channel, speed) {
        (Some(u), _) => Probed::Unknown(Unknown::Other {
            detail: format!("channels of the populated slots are unknown: {u}"),
        }),
        (None, None) => Probed::Unknown(Unknown::Other {
            detail: "no populated module reports a speed".to_string(),
        }),
        (None, Some(_)) if populated_channels.is_empty() => Probed::Unknown(Unknown::Other {
            detail: "no populated slots".to_string(),
        }),
        (None, Some(mts)) => {
            let n = populated_channels.len() as u32;
            let bw = u64::from(n) * u64::from(mts) * 1_000_000 * BYTES_PER_TRANSFER;
            Probed::Known(PeakBandwidth {
                bandwidth_bytes_per_s: bw,
                populated_channels: n,
                speed_mt_per_s: mts,
                bytes_per_transfer: BYTES_PER_TRANSFER,
                derivation: format!(
                    "{} x {mts} MT/s ({speed_note}) x {BYTES_PER_TRANSFER} bytes = {}",
                    hwsurvey_model::units::plural(n as u64, "populated channel"),
                    rate(bw)
                ),
            })
        }
    };

    Population {
        slots_listed,
        slots_declared,
        unlisted_slots_note,
        populated: populated.len() as u32,
        empty: slots_listed - populated.len() as u32,
        total_installed_bytes: populated.iter().filter_map(|d| d.size.size_bytes()).sum(),
        modules_of_unknown_size: populated
            .iter()
            .filter(|d| d.size.size_bytes().is_none())
            .count() as u32,
        mixed_sizes: sizes.len() > 1,
        mixed_speeds: rated.len() > 1 || configured.len() > 1,
        mixed_ranks: ranks.len() > 1,
        mixed_part_numbers: parts.len() > 1,
        module_sizes_bytes: sizes,
        memory_types: distinct(populated.iter().filter_map(|d| d.memory_type.clone())),
        rated_speeds_mt_per_s: rated,
        configured_speeds_mt_per_s: configured,
        ranks,
        part_numbers: parts,
        configured_below_rated,
        channels_per_socket: channels,
        channel_basis: channel_basis(vendor, channels, &slots),
        slots,
        arrays,
        sockets,
        peak_bandwidth,
    }
}

fn socket_population(
    socket: &str,
    members: &[(&SlotPlace, &MemoryDevice)],
    channels_per_socket: Option<u32>,
    speed: Option<u32>,
    listing_complete: bool,
) -> SocketPopulation {
    let populated = members.iter().filter(|(s, _)| s.populated).count() as u32;
    let installed_bytes = members
        .iter()
        .filter_map(|(_, d)| d.size.size_bytes())
        .sum();
    let first_unknown = members.iter().find_map(|(s, _)| s.channel.why_unknown());
    let channels: Probed<Vec<ChannelPopulation>> = match first_unknown {
        Some(u) => Probed::Unknown(u.clone()),
        None => {
            let mut map: BTreeMap<String, ChannelPopulation> = BTreeMap::new();
            for (s, _) in members {
                if let Probed::Known(c) = &s.channel {
                    let e = map.entry(c.clone()).or_insert_with(|| ChannelPopulation {
                        channel: c.clone(),
                        slots_listed: 0,
                        populated: 0,
                    });
                    e.slots_listed += 1;
                    e.populated += u32::from(s.populated);
                }
            }
            Probed::Known(map.into_values().collect())
        }
    };
    let empty_channels = match &channels {
        Probed::Unknown(u) => Probed::Unknown(u.clone()),
        Probed::Known(_) if !listing_complete => Probed::Unknown(Unknown::Other {
            detail: "the table omits some declared slots, so channels without a listed \
                     module may still exist"
                .to_string(),
        }),
        Probed::Known(list) => {
            let mut empty: Vec<String> = list
                .iter()
                .filter(|c| c.populated == 0)
                .map(|c| c.channel.clone())
                .collect();
            // Dell-style ch<k> labels: channels with no listed slot at all are empty too.
            if let Some(n) = channels_per_socket {
                if list.iter().all(|c| c.channel.starts_with("ch")) {
                    for k in 0..n {
                        let label = format!("ch{k}");
                        if !list.iter().any(|c| c.channel == label) {
                            empty.push(label);
                        }
                    }
                }
            }
            Probed::Known(empty)
        }
    };
    let peak_bandwidth_bytes_per_s = match (&channels, speed) {
        (Probed::Known(list), Some(mts)) => {
            let n = list.iter().filter(|c| c.populated > 0).count() as u64;
            Probed::Known(n * u64::from(mts) * 1_000_000 * BYTES_PER_TRANSFER)
        }
        (Probed::Unknown(u), _) => Probed::Unknown(u.clone()),
        (_, None) => Probed::Unknown(Unknown::Other {
            detail: "no populated module reports a speed".to_string(),
        }),
    };
    SocketPopulation {
        socket: socket.to_string(),
        slots_listed: members.len() as u32,
        populated,
        installed_bytes,
        channels,
        empty_channels,
        peak_bandwidth_bytes_per_s,
    }
}

/// Readable lines for [`super::summary`].
pub fn summary(p: &Population) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "  Population: {} of {} populated{}, {} installed{}",
        p.populated,
        hwsurvey_model::units::plural(p.slots_listed as u64, "listed slot"),
        p.slots_declared
            .map(|d| format!(" ({d} declared)"))
            .unwrap_or_default(),
        format_bytes_binary(p.total_installed_bytes),
        if p.modules_of_unknown_size > 0 {
            format!(
                " + {} of unknown size",
                hwsurvey_model::units::plural(p.modules_of_unknown_size as u64, "module")
            )
        } else {
            String::new()
        }
    );
    if let Some(note) = &p.unlisted_slots_note {
        let _ = writeln!(out, "    note: {note}");
    }
    let list = |v: &[u32]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join("/")
    };
    let _ = writeln!(
        out,
        "    modules: {} {}; rated {} MT/s, configured {} MT/s{}{}{}{}",
        p.module_sizes_bytes
            .iter()
            .map(|b| format_bytes_binary(*b))
            .collect::<Vec<_>>()
            .join("/"),
        p.memory_types.join("/"),
        list(&p.rated_speeds_mt_per_s),
        list(&p.configured_speeds_mt_per_s),
        if p.configured_below_rated {
            " (configured below rated)"
        } else {
            ""
        },
        if p.mixed_sizes { "; mixed sizes" } else { "" },
        if p.mixed_ranks { "; mixed ranks" } else { "" },
        if p.mixed_part_numbers {
            "; mixed part numbers"
        } else {
            ""
        },
    );
    if p.arrays.len() > 1 {
        let arrays: Vec<String> = p
            .arrays
            .iter()
            .map(|a| {
                format!(
                    "{} {}/{}",
                    a.handle
                        .map(|h| format!("0x{h:04X}"))
                        .unwrap_or_else(|| "?".into()),
                    a.populated,
                    a.slots_declared.unwrap_or(a.slots_listed)
                )
            })
            .collect();
        let _ = writeln!(out, "    arrays (populated/slots): {}", arrays.join(", "));
    }
    match &p.sockets {
        Probed::Known(sockets) => {
            for s in sockets {
                let channels = match &s.channels {
                    Probed::Known(c) => format!(
                        "{}, DIMMs per channel {}",
                        hwsurvey_model::units::plural(c.len() as u64, "channel"),
                        c.iter()
                            .map(|c| format!("{}:{}", c.channel, c.populated))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                    Probed::Unknown(u) => format!("channels unknown ({u})"),
                };
                let empty = match &s.empty_channels {
                    Probed::Known(e) if e.is_empty() => "no empty channel".to_string(),
                    Probed::Known(e) => format!("empty channels {}", e.join(",")),
                    Probed::Unknown(_) => "empty channels unknown".to_string(),
                };
                let _ = writeln!(
                    out,
                    "    socket {}: {}/{} populated, {}; {}; {}",
                    s.socket,
                    s.populated,
                    s.slots_listed,
                    format_bytes_binary(s.installed_bytes),
                    channels,
                    empty
                );
            }
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "    sockets: unknown ({u})");
        }
    }
    if let Some(basis) = &p.channel_basis {
        let _ = writeln!(out, "    note: {basis}");
    }
    match &p.peak_bandwidth {
        Probed::Known(b) => {
            let _ = writeln!(out, "    theoretical peak: {}", b.derivation);
        }
        Probed::Unknown(u) => {
            let _ = writeln!(out, "    theoretical peak: unknown ({u})");
        }
    }
    out
}

#[cfg(test)]
mod tests;
