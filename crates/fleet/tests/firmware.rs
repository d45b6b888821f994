//! Hosts of one part number whose firmware differs: a BIOS update applied to one host of
//! three, or a microcode revision loaded on one only, is named as a configuration cause (the
//! configuration rule, docs/fleet.md 6.), with the values the probe reads (the BIOS strings of
//! the Dell R640's saved dmidecode text; the microcode line of the EPYC 7451 capture's
//! /proc/cpuinfo). Identical firmware, or firmware the result files do not know, flags no one.

use hwsurvey_fleet::facts::host_facts;
use hwsurvey_fleet::{analyse, collect, load_all, Fleet, Options};
use hwsurvey_machine::firmware::{DmiIds, MicrocodeRevision};
use hwsurvey_model::{CpuSet, Probed};
use hwsurvey_result::ResultFile;
use hwsurvey_testkit::fleet_sample::{example, with_host};

/// The BIOS, system and board of the Dell R640 (its saved `dmidecode` text: BIOS 2.8.2 of
/// 08/27/2020, PowerEdge R640, board 0H28RR A00).
fn r640() -> DmiIds {
    DmiIds {
        source: "dmidecode text".into(),
        bios_vendor: Some("Dell Inc.".into()),
        bios_version: Some("2.8.2".into()),
        bios_date: Some("08/27/2020".into()),
        system_vendor: Some("Dell Inc.".into()),
        system_product: Some("PowerEdge R640".into()),
        system_version: None,
        board_vendor: Some("Dell Inc.".into()),
        board_name: Some("0H28RR".into()),
        board_version: Some("A00".into()),
    }
}

/// `file` whose machine has firmware `dmi` and every CPU at microcode `revision`.
fn with_firmware(mut file: ResultFile, dmi: Option<DmiIds>, revision: Option<&str>) -> ResultFile {
    let m = &mut file.machine;
    if let Some(d) = dmi {
        m.firmware = Probed::Known(d);
    }
    if let Some(r) = revision {
        let cpus: CpuSet = m.cpu.online.known().cloned().unwrap();
        m.cpu.identity.microcode = Probed::Known(vec![MicrocodeRevision {
            revision: r.to_string(),
            cpus,
        }]);
    }
    file
}

/// A fleet of the hosts `(name, BIOS, microcode)` written to a temporary folder.
fn fleet(hosts: &[(&str, Option<DmiIds>, Option<&str>)]) -> Fleet {
    let dir = tempfile::tempdir().unwrap();
    let base = example("x86_64-standard.json");
    for (name, dmi, rev) in hosts {
        let file = with_firmware(with_host(base.clone(), name), dmi.clone(), *rev);
        file.write_atomic(&dir.path().join(name).join("result.json"))
            .unwrap();
    }
    analyse(
        load_all(collect(&[dir.path().to_path_buf()], &[]).unwrap().sources),
        &Options::default(),
    )
}

/// A cause: (fact, host's value, group's value, whether configuration).
type Cause<'a> = (&'a str, &'a str, &'a str, bool);

/// `(host, its causes)` of the flagged hosts.
fn flagged(f: &Fleet) -> Vec<(&str, Vec<Cause<'_>>)> {
    f.hosts
        .iter()
        .filter(|h| h.flagged())
        .map(|h| {
            (
                h.name.as_str(),
                h.causes
                    .iter()
                    .map(|c| (c.fact, c.host.as_str(), c.group.as_str(), c.configuration))
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn a_host_whose_bios_differs_stands_out_by_its_configuration() {
    let older = DmiIds {
        bios_version: Some("2.6.3".into()),
        bios_date: Some("02/26/2020".into()),
        ..r640()
    };
    let f = fleet(&[
        ("r640-a", Some(r640()), None),
        ("r640-b", Some(r640()), None),
        ("r640-c", Some(older), None),
    ]);
    assert_eq!(f.groups.len(), 1, "{:#?}", f.groups);
    assert_eq!(
        flagged(&f),
        [(
            "r640-c",
            vec![(
                "BIOS",
                "Dell Inc. 2.6.3 (02/26/2020)",
                "Dell Inc. 2.8.2 (08/27/2020)",
                true
            )]
        )]
    );
    let text =
        hwsurvey_testkit::fleet_sample::unwrapped(&hwsurvey_fleet::render::terminal(&f, None));
    assert!(
        text.contains("r640-c:\n  stands out: its configuration differs from the group's majority (BIOS)\n  cause: BIOS is Dell Inc. 2.6.3 (02/26/2020) (the group's majority: Dell Inc. 2.8.2 (08/27/2020))"),
        "{text}"
    );
}

#[test]
fn a_host_whose_microcode_differs_stands_out_and_same_firmware_flags_no_one() {
    // the EPYC 7451 capture's revision, and a later one on one host
    let f = fleet(&[
        ("epyc-a", None, Some("0x8001227")),
        ("epyc-b", None, Some("0x8001250")),
        ("epyc-c", None, Some("0x8001227")),
    ]);
    assert_eq!(
        flagged(&f),
        [(
            "epyc-b",
            vec![("microcode", "0x8001250", "0x8001227", true)]
        )]
    );
    // the same BIOS and microcode everywhere: no one; unknown firmware (files written before
    // hwsurvey read it): no one either
    let same = fleet(&[
        ("a", Some(r640()), Some("0x8001227")),
        ("b", Some(r640()), Some("0x8001227")),
        ("c", Some(r640()), Some("0x8001227")),
    ]);
    assert!(flagged(&same).is_empty(), "{:?}", flagged(&same));
    let unknown = fleet(&[("a", None, None), ("b", None, None), ("c", None, None)]);
    assert!(flagged(&unknown).is_empty());
}

/// The facts of a host read the probe's values through the probe's own phrases.
#[test]
fn bios_and_microcode_facts_of_one_host() {
    let file = with_firmware(
        example("x86_64-standard.json"),
        Some(r640()),
        Some("0x8001227"),
    );
    let facts = host_facts(&file);
    let get = |name: &str| {
        facts
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get("BIOS"), Some("Dell Inc. 2.8.2 (08/27/2020)"));
    assert_eq!(get("microcode"), Some("0x8001227"));
    let old = example("x86_64-standard.json");
    let facts = host_facts(&old);
    assert!(facts.iter().any(|(n, v)| *n == "BIOS" && v == "unknown"));
}
