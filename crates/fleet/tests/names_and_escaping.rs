//! Host names are unique in every output, and every format follows its escaping rule:
//! - two machines in folder `web` and a real folder `web [machine 2]` made two rows both
//!   named "web [machine 2]";
//! - host folder names and CPU models holding ESC, OSC, BEL, CR, U+202E and U+2066 were
//!   written raw by `--format markdown` (8 ESC, 3 BEL, 2 CR, 5 bidi in the file) and
//!   by `--json` (the bidi characters), while the terminal showed them escaped;
//! - a fleet loaded file by file is the fleet of its files loaded at once.

use std::collections::BTreeSet;
use std::path::Path;

use hwsurvey_fleet::render::{render, Format};
use hwsurvey_fleet::{analyse, collect, load_all, Fleet, Options};
use hwsurvey_testkit::fleet_sample::{example, with_host};

fn fleet_of(dir: &Path) -> Fleet {
    analyse(
        load_all(collect(&[dir.to_path_buf()], &[]).unwrap().sources),
        &Options::default(),
    )
}

/// The x86 example as run on a machine with CPU model `model`, at `dir/<folder>/<file>`.
fn write_run(dir: &Path, folder: &str, file: &str, model: &str) {
    let mut f = with_host(example("x86_64-standard.json"), "h");
    f.machine.cpu.identity.model_name = Some(model.into());
    f.write_atomic(&dir.join(folder).join(file)).unwrap();
}

const FORMATS: [Format; 4] = [
    Format::Terminal,
    Format::Markdown,
    Format::Json,
    Format::Html,
];

#[test]
fn host_names_are_unique_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    write_run(
        dir.path(),
        "web",
        "a.json",
        "AMD EPYC 7451 24-Core Processor",
    );
    write_run(dir.path(), "web", "b.json", "Intel Xeon Gold 6130");
    write_run(
        dir.path(),
        "web [machine 2]",
        "c.json",
        "Intel Xeon E5-2680",
    );
    let fleet = fleet_of(dir.path());
    let names: Vec<&str> = fleet.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["web", "web [machine 3]", "web [machine 2]"]);
    assert!(
        fleet
            .notes
            .iter()
            .any(|n| n.ends_with("shown as web, web [machine 3]")),
        "{:?}",
        fleet.notes
    );
    // the JSON's hosts, and each format's fleet table, name each host once
    let json: serde_json::Value =
        serde_json::from_str(&render(&fleet, Format::Json, None)).unwrap();
    let json_names: Vec<&str> = json["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(json_names.iter().collect::<BTreeSet<_>>().len(), 3);
    let md = render(&fleet, Format::Markdown, None);
    for name in names {
        let row = format!("| {name} | G");
        assert_eq!(md.matches(&row).count(), 1, "{row}\n{md}");
    }
}

/// The characters of the issue, in folder names and CPU models.
const HOSTILE: [&str; 3] = [
    "esc\u{1b}[31mred\u{1b}]0;title\u{7}",
    "cr\rover",
    "bidi\u{202e}txt.exe\u{2066}x\u{2069}",
];

fn raw_unsafe(text: &str, keep: &str) -> Vec<char> {
    text.chars()
        .filter(|c| hwsurvey_model::text::is_unsafe(*c) && !keep.contains(*c))
        .collect()
}

#[test]
fn control_and_bidi_characters_are_escaped_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    for (i, name) in HOSTILE.iter().enumerate() {
        write_run(
            dir.path(),
            name,
            "result.json",
            &format!("AMD EPYC {name} {i}"),
        );
    }
    let fleet = fleet_of(dir.path());
    assert_eq!(fleet.hosts.len(), 3);
    for format in FORMATS {
        let text = render(&fleet, format, Some(80));
        let keep = match format {
            Format::Terminal | Format::Html => "\n\t",
            _ => "\n",
        };
        assert_eq!(
            raw_unsafe(&text, keep),
            Vec::<char>::new(),
            "{format:?}:\n{text}"
        );
        // what was escaped shows as text
        assert!(text.contains("u{1b}[31mred"), "{format:?}:\n{text}");
        assert!(
            text.contains("u{202e}") || text.contains("\\u202e"),
            "{format:?}"
        );
    }
    // JSON loses nothing: the CPU models read back as they were
    let json: serde_json::Value =
        serde_json::from_str(&render(&fleet, Format::Json, None)).unwrap();
    let identities: Vec<&str> = json["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["identity_text"].as_str().unwrap())
        .collect();
    assert!(
        identities
            .iter()
            .any(|i| i.contains("bidi\u{202e}txt.exe\u{2066}x\u{2069}")),
        "{identities:?}"
    );
}

/// `hwsurvey fleet` loads and analyses file by file, giving each result file up once its
/// figures and facts are taken (`load_and_analyse`): the same fleet as loading every file
/// first (`analyse(load_all(..))`), a corrupt file one failed entry in both.
#[test]
fn loading_file_by_file_gives_the_same_fleet() {
    let dir = tempfile::tempdir().unwrap();
    write_run(
        dir.path(),
        "web",
        "a.json",
        "AMD EPYC 7451 24-Core Processor",
    );
    write_run(dir.path(), "web", "b.json", "Intel Xeon Gold 6130");
    write_run(
        dir.path(),
        "db",
        "c.json",
        "AMD EPYC 7451 24-Core Processor",
    );
    std::fs::create_dir(dir.path().join("broken")).unwrap();
    std::fs::write(dir.path().join("broken/r.json"), "{\"schema\": ").unwrap();
    let sources = collect(&[dir.path().to_path_buf()], &[]).unwrap().sources;
    let opts = Options::default();
    let at_once = analyse(load_all(sources.clone()), &opts);
    let by_file = hwsurvey_fleet::load_and_analyse(sources, &opts);
    assert_eq!(
        render(&at_once, Format::Json, None),
        render(&by_file, Format::Json, None)
    );
    assert_eq!(by_file.hosts.len(), 4);
    assert_eq!(by_file.exit_code(), 2);
}
