use super::*;

#[test]
fn channel_counts_from_processor_names() {
    assert_eq!(
        channels_per_socket("Intel(R) Xeon(R) Silver 4210 CPU @ 2.20GHz"),
        Some(6)
    );
    assert_eq!(
        channels_per_socket("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz"),
        Some(8)
    );
    assert_eq!(
        channels_per_socket("Intel(R) Xeon(R) CPU E5-2699 v3 @ 2.30GHz"),
        Some(4)
    );
    assert_eq!(
        channels_per_socket("Intel(R) Xeon(R) CPU E5-2420 0 @ 1.90GHz"),
        Some(3)
    );
    assert_eq!(
        channels_per_socket("AMD EPYC 7451 24-Core Processor"),
        Some(8)
    );
    assert_eq!(
        channels_per_socket("Cavium ThunderX2(R) CPU CN9975 v2.1"),
        None
    );
}

fn dev(locator: &str, bank: &str) -> MemoryDevice {
    MemoryDevice {
        handle: None,
        array_handle: None,
        locator: Some(locator.into()),
        bank_locator: Some(bank.into()),
        size: super::super::ModuleSize::Installed {
            size_bytes: 1 << 30,
        },
        memory_type: None,
        memory_type_raw: None,
        form_factor: None,
        speed_mt_per_s: None,
        configured_speed_mt_per_s: None,
        rank: None,
        manufacturer: None,
        part_number: None,
        total_width_bits: None,
        data_width_bits: None,
    }
}

#[test]
fn channel_tokens() {
    let ch = |l: &str, b: &str| place(&dev(l, b), None, None);
    let p = ch("N1 DIMM_N0", "");
    assert_eq!(
        (p.socket.as_deref(), p.channel),
        (Some("N1"), Probed::Known("N".into()))
    );
    let p = ch("DIMM_P0_A0", "N0");
    assert_eq!(
        (p.socket.as_deref(), p.channel),
        (Some("P0"), Probed::Known("A".into()))
    );
    let p = ch("CPU1_DIMM_B2", "");
    assert_eq!(
        (p.socket.as_deref(), p.channel),
        (Some("CPU1"), Probed::Known("B".into()))
    );
    let p = ch("ChannelA-DIMM0", "BANK 0");
    assert_eq!(p.channel, Probed::Known("A".into()));
    let p = ch("Controller1-DIMM1", "BANK 0");
    assert_eq!(p.channel, Probed::Known("Controller1".into()));
    assert!(ch("DIMM 3", "Bank 3").channel.known().is_none());
    assert!(ch("D7", "/SYS/MB/P1").channel.known().is_none());
    // Dell: the letter is the socket, numbers run across the channels first.
    let p = place(&dev("B8", ""), Some("Dell Inc."), Some(6));
    assert_eq!(
        (p.socket.as_deref(), p.channel),
        (Some("B"), Probed::Known("ch1".into()))
    );
    let p = place(&dev("A5", ""), Some("Dell Inc."), None);
    assert_eq!(p.socket.as_deref(), Some("A"));
    assert!(p.channel.known().is_none());
}

#[test]
fn socket_tokens() {
    assert_eq!(socket_in("/SYS/MB/P1"), Some("P1".into()));
    assert_eq!(socket_in("DIMM_P0_A0"), Some("P0".into()));
    assert_eq!(socket_in("CPU1_DIMM_A1"), Some("CPU1".into()));
    assert_eq!(socket_in("N0 DIMM_A0"), Some("N0".into()));
    assert_eq!(socket_in("NODE 1"), Some("NODE1".into()));
    assert_eq!(socket_in("DIMM 1"), None);
    assert_eq!(socket_in("Bank 1"), None);
    assert_eq!(socket_in("BANK 0"), None);
}

/// The channel may be named in the Bank Locator only (`P0 CHANNEL A`), which `place` did not
/// read before qualify and probe shared this reader; the rest of a word is no channel label.
#[test]
fn channel_named_in_the_bank_locator() {
    let p = place(&dev("DIMM 0", "P0 CHANNEL A"), None, None);
    assert_eq!(
        (p.socket.as_deref(), p.channel),
        (Some("P0"), Probed::Known("A".into()))
    );
    assert_eq!(channel_token("_CHB_"), Some("B".into()));
    assert_eq!(channel_token("NODE 0 CH 1"), Some("1".into()));
    assert_eq!(channel_token("CHIP 1"), None);
    assert_eq!(
        channel_token("Controller0-ChannelA"),
        Some("Controller0".into())
    );
}

/// Dell's A1-An naming is a convention: the population says it rests on it.
#[test]
fn dell_slot_naming_is_said() {
    let slots: Vec<SlotPlace> = ["A1", "A7", "B1"]
        .iter()
        .map(|l| place(&dev(l, ""), Some("Dell Inc."), Some(6)))
        .collect();
    let basis = channel_basis(Some("Dell Inc."), Some(6), &slots).unwrap();
    assert!(
        basis.contains("A1-A6 are the first DIMM of each of the 6 channels"),
        "{basis}"
    );
    assert_eq!(channel_basis(Some("Supermicro"), Some(6), &slots), None);
}
