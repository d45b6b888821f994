use super::*;

const KNOWN: &[&str] = &["mem.bandwidth"];

fn minimal(run_extra: &str, families: &str) -> String {
    format!(
        "format_version = 1\nid = \"t\"\nversion = 3\ndescription = \"d\"\n\n[run]\nplacement = \"spread\"\nsample_min_s = 0.2\nsample_min_clock_ticks = 20\nwarmup_s = 0.1\nsamples_min = 3\nsamples_max = 5\ntarget_cv = 0.03\nmemory_fraction = 0.5\nmemory_llc_multiple = 4.0\nmemory_min_working_set_bytes = 4096\noversubscription_factor = 2\nbudget_s = 100\n{run_extra}\n{families}"
    )
}

#[test]
fn builtin_profiles_parse() {
    for (name, text) in [("standard", STANDARD_TOML), ("quick", QUICK_TOML)] {
        let doc: ProfileDoc = toml::from_str(text).unwrap();
        assert_eq!(doc.id, name);
        assert_eq!(doc.format_version, PROFILE_FORMAT_VERSION);
        // issue 13: no budget in the built-in profiles; the profile defines the points
        assert_eq!(doc.run.budget_s, None, "{name}");
        assert!(
            doc.families.values().all(|f| f.budget_s.is_none()),
            "{name}"
        );
    }
    let standard: ProfileDoc = toml::from_str(STANDARD_TOML).unwrap();
    assert!(
        standard.run.sample_min_s >= 0.2,
        "issue 4: >= 0.2 s per sample"
    );
    assert!(standard.run.sample_min_clock_ticks >= 20);
    assert!(standard.run.memory_llc_multiple >= 4.0);
}

#[test]
fn parses_settings_and_sections() {
    let text = minimal(
        "",
        "[families.\"mem.bandwidth\"]\nbudget_s = 40\n[families.\"mem.bandwidth\".params]\nx = 1\n",
    );
    let p = Profile::parse("t.toml", &text, KNOWN).unwrap();
    assert_eq!(p.version, 3);
    assert_eq!(p.run.placement, crate::affinity::Placement::Spread);
    assert_eq!(p.run.memory_max_working_set_bytes, None);
    let s = &p.families["mem.bandwidth"];
    assert_eq!(s.common.budget_s, Some(40.0));
    assert_eq!(
        p.obsolete_keys,
        ["run.budget_s", "families.\"mem.bandwidth\".budget_s"]
    );
    let note = p.obsolete_note().unwrap();
    assert!(
        note.starts_with(
            "t.toml: run.budget_s, families.\"mem.bandwidth\".budget_s no longer change anything"
        ),
        "{note}"
    );
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct P {
        x: u32,
    }
    assert_eq!(s.params::<P>().unwrap().x, 1);
}

#[test]
fn errors_name_file_line_and_key() {
    let text = minimal("bogus = 1", "");
    let e = Profile::parse("t.toml", &text, KNOWN).unwrap_err();
    assert_eq!(e.file, "t.toml");
    assert_eq!(e.line, Some(19));
    assert_eq!(e.key.as_deref(), Some("run.bogus"));
    assert!(
        e.to_string()
            .starts_with("t.toml:19: key `run.bogus`: unknown field `bogus`"),
        "{e}"
    );

    let text = minimal("", "").replace("memory_fraction = 0.5", "memory_fraction = 1.5");
    let e = Profile::parse("t.toml", &text, KNOWN).unwrap_err();
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(14), Some("run.memory_fraction"))
    );
    assert!(e.message.contains("fraction in (0, 1], got 1.5"), "{e}");

    let text = minimal("", "").replace("placement = \"spread\"", "placement = \"diagonal\"");
    let e = Profile::parse("t.toml", &text, KNOWN).unwrap_err();
    assert_eq!((e.line, e.key.as_deref()), (Some(7), Some("run.placement")));

    let text = minimal("", "").replace("format_version = 1", "format_version = 2");
    let e = Profile::parse("t.toml", &text, KNOWN).unwrap_err();
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(1), Some("format_version"))
    );

    let text = minimal("", "[families.\"mem.bandwith\"]\nbudget_s = 1\n");
    let e = Profile::parse("t.toml", &text, KNOWN).unwrap_err();
    assert_eq!(e.line, Some(20));
    assert!(e.message.contains("unknown family \"mem.bandwith\""), "{e}");

    // an obsolete budget is still range-checked, and over the run's it is no error
    let text = minimal("", "[families.\"mem.bandwidth\"]\nbudget_s = 101\n");
    assert!(Profile::parse("t.toml", &text, KNOWN).is_ok());
    let text = minimal("", "[families.\"mem.bandwidth\"]\nbudget_s = -1\n");
    let e = Profile::parse("t.toml", &text, KNOWN).unwrap_err();
    assert_eq!(
        e.key.as_deref(),
        Some("families.\"mem.bandwidth\".budget_s")
    );

    let text = minimal("", "").replace("samples_min = 3", "samples_min = 1");
    let e = Profile::parse("t.toml", &text, KNOWN).unwrap_err();
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(11), Some("run.samples_min"))
    );
}

#[test]
fn family_params_errors_have_lines() {
    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct P {
        sizes_bytes: Vec<u64>,
    }
    let text = minimal(
        "",
        "[families.\"mem.bandwidth\"]\nbudget_s = 40\n[families.\"mem.bandwidth\".params]\nsizes_bytes = [1, \"two\"]\n",
    );
    let p = Profile::parse("t.toml", &text, KNOWN).unwrap();
    let e = p.families["mem.bandwidth"].params::<P>().unwrap_err();
    assert_eq!(e.line, Some(23));
    assert_eq!(
        e.key.as_deref(),
        Some("families.\"mem.bandwidth\".params.sizes_bytes")
    );
}

/// The settings' fingerprint ignores comments, layout, key order and the description, and
/// changes with any setting; the built-in standard profile's is stable across loads.
#[test]
fn the_fingerprint_follows_the_settings_only() {
    let text = STANDARD_TOML;
    let fp = settings_fingerprint(text);
    assert_eq!(fp.len(), 16, "{fp}");
    let relaid = format!("# a comment\n\n{}", text.replace("\n", "\n\n"));
    assert_eq!(settings_fingerprint(&relaid), fp);
    let described = text.replacen("description = \"", "description = \"my copy: ", 1);
    assert_ne!(described, text);
    assert_eq!(settings_fingerprint(&described), fp);
    let edited = text.replacen("samples_max = ", "samples_max = 1", 1);
    assert_ne!(edited, text);
    assert_ne!(settings_fingerprint(&edited), fp);
    // a parsed profile carries its text's fingerprint
    let text = minimal("", "");
    let p = Profile::parse("t.toml", &text, KNOWN).unwrap();
    assert_eq!(p.fingerprint, settings_fingerprint(&text));
}

/// Issue 49 item 3: the settings that define the points leave out how each point is
/// measured. A copy of the standard profile with other sample counts and lengths (what
/// `run --max-time` shortens) has the same point settings; one with another working-set rule
/// or another family parameter does not, in that part only; a family added is a part of its
/// own, the others unchanged.
#[test]
fn point_settings_leave_out_sample_counts_and_lengths() {
    let text = STANDARD_TOML;
    let base = point_settings(text).expect("the standard profile is TOML");
    assert!(base.families.contains_key("mem.bandwidth"), "{base:?}");
    assert_eq!(base.run.len(), 16);
    let sampled = text
        .replacen("samples_max = 7", "samples_max = 2", 1)
        .replacen("samples_min = 3", "samples_min = 2", 1)
        .replacen("sample_min_s = 0.2", "sample_min_s = 0.05", 1)
        .replacen("warmup_s = 0.1\n", "warmup_s = 0.025\n", 1)
        .replacen("target_cv = 0.03", "target_cv = 0.5", 1);
    assert_ne!(sampled, text);
    assert_ne!(settings_fingerprint(&sampled), settings_fingerprint(text));
    assert_eq!(point_settings(&sampled).unwrap(), base);
    // a rule that defines the points changes the run part, and nothing else
    let ws = text.replacen("memory_llc_multiple = 4.0", "memory_llc_multiple = 2.0", 1);
    assert_ne!(ws, text);
    let p = point_settings(&ws).unwrap();
    assert_ne!(p.run, base.run);
    assert_eq!(p.families, base.families);
    // a family parameter changes that family's part only
    let kernels = text.replacen(
        "kernels = [\"integer\", \"floating_point\"]",
        "kernels = [\"integer\"]",
        1,
    );
    assert_ne!(kernels, text);
    let p = point_settings(&kernels).unwrap();
    assert_eq!(p.run, base.run);
    let changed: Vec<&String> = p
        .families
        .iter()
        .filter(|(id, fp)| base.families.get(*id) != Some(*fp))
        .map(|(id, _)| id)
        .collect();
    assert_eq!(changed, ["cpu.scaling"]);
    // a family taken out (as in a build before cpu.clock) leaves the others' parts as they were
    let start = text.find("[families.\"cpu.clock\"]").unwrap();
    let end = start + text[start..].find("[families.\"cpu.scaling\"]").unwrap();
    let without = format!("{}{}", &text[..start], &text[end..]);
    let p = point_settings(&without).unwrap();
    assert!(!p.families.contains_key("cpu.clock"));
    let mut expected = base.families.clone();
    expected.remove("cpu.clock");
    assert_eq!((p.run, p.families), (base.run.clone(), expected));
    // a parsed profile carries its text's point settings
    let text = minimal("", "");
    let p = Profile::parse("t.toml", &text, KNOWN).unwrap();
    assert_eq!(p.point_settings, point_settings(&text));
    assert!(p.point_settings.is_some());
}
