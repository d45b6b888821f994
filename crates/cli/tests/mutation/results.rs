//! Kind 2 of the mutation campaign: result files with mutated values or text, through the
//! loader, compare, every renderer and plot, and qualify.

use super::*;

struct Source {
    name: String,
    value: serde_json::Value,
    clean: hwsurvey_result::ResultFile,
    /// JSON pointers of every node, and of the nodes the classes live in.
    nodes: Vec<String>,
    hot: Vec<String>,
    /// Output sizes for the clean file: compare formats (terminal, markdown, csv, json,
    /// html), plots, then qualify (stored findings) terminal, markdown, json.
    clean_sizes: Vec<usize>,
}

const HOT_KEYS: &[&str] = &[
    "cv",
    "median",
    "min",
    "max",
    "mean",
    "std_dev",
    "samples",
    "peak",
    "page_size_bytes",
    "working_set_bytes",
    "chase_working_set_bytes",
    "memory_bytes",
    "hostname",
    "kernel_release",
    "mem_total_bytes",
    "outlier_indices",
    "median_ci95_low",
    "median_ci95_high",
    "threads",
    "cpus",
    "page_mode",
];

fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                pointers(
                    c,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        serde_json::Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                pointers(c, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

fn compare_texts(
    clean: &hwsurvey_result::ResultFile,
    file: hwsurvey_result::ResultFile,
    plots: bool,
) -> Result<Vec<(String, String)>, String> {
    use hwsurvey_report::{compare, default_label, plot, render, Format, Input};
    let label = default_label(&file);
    let inputs = vec![
        Input {
            label: "clean".into(),
            file: clean.clone(),
        },
        Input {
            label: if label == "clean" { "x".into() } else { label },
            file,
        },
    ];
    let c = compare(&inputs, None, true).map_err(|e| e.to_string())?;
    let svgs = if plots {
        plot::all_plots(&c)
    } else {
        Vec::new()
    };
    let mut out: Vec<(String, String)> = [
        ("terminal", Format::Terminal),
        ("markdown", Format::Markdown),
        ("csv", Format::Csv),
        ("json", Format::Json),
        ("html", Format::Html),
    ]
    .into_iter()
    .map(|(n, f)| (format!("compare {n}"), render(&c, f, &svgs)))
    .collect();
    out.push((
        "plots".into(),
        svgs.iter().map(|(t, s)| format!("{t}\n{s}")).collect(),
    ));
    for (name, svg) in &svgs {
        out.push((format!("svg {name}"), svg.clone()));
    }
    Ok(out)
}

fn stored_qualify(file: &hwsurvey_result::ResultFile) -> Vec<(&'static str, String)> {
    use hwsurvey_qualify::stored::{findings_of_result, BuiltinRules, RulesRef};
    let report = findings_of_result("r.json", file, &RuleSet::builtin(), &RulesRef::builtin());
    qualify_texts(&report)
}

fn load_sources() -> Vec<Arc<Source>> {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reports/examples/v1");
    let mut texts: Vec<(String, Vec<u8>)> = [
        "x86_64-standard.json",
        "aarch64-qemu-quick.json",
        "sparc64-qemu-quick.json",
    ]
    .iter()
    .map(|n| {
        let p = examples.join(n);
        (
            n.to_string(),
            std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        )
    })
    .collect();
    for (i, f) in hwsurvey_testkit::report_sample::three()
        .into_iter()
        .enumerate()
    {
        texts.push((
            format!("sample-{i}.json"),
            serde_json::to_vec_pretty(&f).unwrap(),
        ));
    }
    texts
        .into_iter()
        .map(|(name, bytes)| {
            let clean = hwsurvey_result::parse(&name, &bytes)
                .unwrap_or_else(|e| panic!("clean {name} must load: {e}"));
            let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let mut nodes = Vec::new();
            pointers(&value, String::new(), &mut nodes);
            let hot = nodes
                .iter()
                .filter(|p| {
                    let mut parts = p.rsplit('/');
                    let last = parts.next().unwrap_or("");
                    let parent = parts.next().unwrap_or("");
                    HOT_KEYS.contains(&last) || HOT_KEYS.contains(&parent)
                })
                .cloned()
                .collect();
            let mut clean_sizes: Vec<usize> = compare_texts(&clean, clean.clone(), true)
                .unwrap_or_else(|e| panic!("clean {name} compares: {e}"))
                .iter()
                .take(6)
                .map(|(_, t)| t.len())
                .collect();
            clean_sizes.extend(stored_qualify(&clean).iter().map(|(_, t)| t.len()));
            Arc::new(Source {
                name,
                value,
                clean,
                nodes,
                hot,
                clean_sizes,
            })
        })
        .collect()
}

fn hostile_string(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => {
            let unit = "evil\u{1b}[2J\u{7}\0<&>\n\u{202e}\u{fffe}\r\t";
            unit.repeat(MIB / unit.len() + 1)
        }
        1 => String::new(),
        2 => "=HYPERLINK(\"http://x\",\"y\")".into(),
        3 => "0-1048575".into(),
        4 => "\u{1b}]0;pwned\u{7}".into(),
        5 => "x".repeat(70_000),
        6 => "-1".into(),
        _ => "hugetlb-18446744073709551615".into(),
    }
}

fn hostile_number(rng: &mut Rng) -> serde_json::Value {
    use serde_json::json;
    match rng.below(12) {
        0 => json!(1.18e21),
        1 => json!(-1),
        2 => json!(0),
        3 => json!(1e308),
        4 => json!(u64::MAX),
        5 => json!(i64::MIN),
        6 => json!(0.5),
        7 => json!(4294967296u64),
        8 => json!(9007199254740993u64),
        9 => json!(-1e-300),
        10 => json!(1048575),
        _ => json!(2.0),
    }
}

/// Applies one mutation at a random node of `v`; returns the words for it.
fn mutate_value(rng: &mut Rng, src: &Source, v: &mut serde_json::Value) -> String {
    use serde_json::Value;
    let ptr = if rng.chance(40) && !src.hot.is_empty() {
        rng.pick(&src.hot).clone()
    } else {
        rng.pick(&src.nodes).clone()
    };
    let Some(node) = v.pointer_mut(&ptr) else {
        return format!("{ptr}: gone (an earlier mutation removed it)");
    };
    let op = rng.below(10);
    let before = cut(&node.to_string());
    let what = match (op, &*node) {
        (0, _) => {
            // remove from the parent
            let (parent, key) = ptr.rsplit_once('/').unwrap_or(("", ""));
            match v.pointer_mut(parent) {
                Some(Value::Object(m)) => {
                    m.remove(&key.replace("~1", "/").replace("~0", "~"));
                }
                Some(Value::Array(a)) => {
                    if let Ok(i) = key.parse::<usize>() {
                        if i < a.len() {
                            a.remove(i);
                        }
                    }
                }
                _ => {}
            }
            return format!("{ptr}: removed");
        }
        (1, _) => {
            *node = Value::Null;
            "null".to_string()
        }
        (_, Value::Number(_)) | (2, _) => {
            *node = hostile_number(rng);
            node.to_string()
        }
        (_, Value::String(_)) | (3, _) => {
            let s = hostile_string(rng);
            let w = cut(&s);
            *node = Value::String(s);
            w
        }
        (_, Value::Bool(b)) => {
            *node = Value::Bool(!b);
            node.to_string()
        }
        (_, Value::Array(a)) if !a.is_empty() && rng.chance(50) => {
            let first = a[0].clone();
            if let Value::Array(a) = node {
                a.push(first);
            }
            "its first element repeated".to_string()
        }
        (_, Value::Array(_)) => {
            *node = Value::Array(Vec::new());
            "[]".to_string()
        }
        (_, Value::Object(_)) => {
            if let Value::Object(m) = node {
                m.insert("unknown_key".into(), hostile_number(rng));
            }
            "an unknown key added".to_string()
        }
        _ => {
            *node = hostile_number(rng);
            node.to_string()
        }
    };
    format!("{ptr}: {before} -> {what}")
}

/// The "silent wrong" classes in a loaded result file: a value that loads but that no run
/// can have measured.
fn result_facts_problems(f: &hwsurvey_result::ResultFile, out: &mut Vec<String>) {
    let mem_total = f.machine.memory.meminfo.known().map(|m| m.mem_total_bytes);
    for t in &f.tests {
        let id = format!("{} {}", t.point.family, t.point.id);
        for m in &t.metrics {
            let Some(s) = &m.summary else { continue };
            if !(s.min <= s.median && s.median <= s.max) {
                out.push(format!("{id} {}: median outside [min, max]", m.name));
            }
            if let (Some(cv), Ok(sample)) = (s.cv, hwsurvey_stats::Sample::new(m.samples.clone())) {
                if let Some(real) = sample.cv() {
                    if (cv - real).abs() > 1e-6 * real.abs().max(1e-3) {
                        out.push(format!(
                            "{id} {}: CV {cv} loaded, the samples give {real}",
                            m.name
                        ));
                    }
                }
            }
        }
        let mut sizes = Vec::new();
        collect_bytes(&t.point.params, "", &mut sizes);
        sizes.push(("memory_bytes".into(), t.point.memory_bytes as f64));
        for (key, b) in sizes {
            if b > (1u64 << 50) as f64 {
                out.push(format!("{id}: {key} {b} bytes (above 1 PiB)"));
            }
            if key.contains("working_set") || key == "memory_bytes" {
                if let Some(mem) = mem_total {
                    if b > 8.0 * mem as f64 {
                        out.push(format!("{id}: {key} {b} bytes on a machine of {mem}"));
                    }
                }
            }
            if key.ends_with("page_size_bytes")
                && !(b >= 4096.0 && b <= (16u64 << 30) as f64 && (b as u64).is_power_of_two())
            {
                out.push(format!("{id}: a page size of {b} bytes"));
            }
        }
    }
    let mut long = Vec::new();
    long_strings(&serde_json::to_value(f).unwrap(), "", &mut long);
    for (at, len) in long {
        out.push(format!("a string of {len} bytes loaded at {at}"));
    }
}

fn collect_bytes(v: &serde_json::Value, at: &str, out: &mut Vec<(String, f64)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                if let (true, Some(n)) = (k.ends_with("_bytes"), c.as_f64()) {
                    out.push((format!("{at}{k}"), n));
                }
                collect_bytes(c, &format!("{at}{k}."), out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|c| collect_bytes(c, at, out)),
        _ => {}
    }
}

fn long_strings(v: &serde_json::Value, at: &str, out: &mut Vec<(String, usize)>) {
    match v {
        serde_json::Value::String(s) if s.len() > 64 << 10 => out.push((at.into(), s.len())),
        serde_json::Value::Object(m) => {
            for (k, c) in m {
                long_strings(c, &format!("{at}/{k}"), out);
            }
        }
        serde_json::Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                long_strings(c, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn mutated_result_files() {
    let start = Instant::now();
    let sources = load_sources();
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let seed = seed();
    let cases = cases(20);
    let mut failures = Vec::new();
    let loaded = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for &index in &cases {
        let mut rng = Rng::for_case(seed, "result", index);
        let src = sources[rng.below(sources.len())].clone();
        let mut what = vec![format!("from {}", src.name)];
        let bytes = if rng.chance(12) {
            let mut bytes = serde_json::to_vec_pretty(&src.value).unwrap();
            if rng.chance(50) {
                let at = rng.below(bytes.len());
                bytes.truncate(at);
                what.push(format!("cut at byte {at}"));
            } else {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(bytes.len());
                    bytes[at] = rng.next() as u8;
                    what.push(format!("byte {at} set to {:#04x}", bytes[at]));
                }
            }
            bytes
        } else {
            let mut v = src.value.clone();
            for _ in 0..1 + rng.below(3) {
                what.push(mutate_value(&mut rng, &src, &mut v));
            }
            if rng.chance(50) {
                serde_json::to_vec(&v).unwrap()
            } else {
                serde_json::to_vec_pretty(&v).unwrap()
            }
        };
        let what = what.join("; ");
        let path = dir.path().join(format!("result-{index}.json"));
        std::fs::write(&path, &bytes).unwrap();
        // plots (plotters, slow in debug builds) for one input in four
        let plots = index % 4 == 0;
        let work = {
            let (src, path, loaded) = (src.clone(), path.clone(), loaded.clone());
            move || check_result(&src, &path, plots, &loaded)
        };
        match bounded(work) {
            Ok(_) => {}
            Err(findings) => failures.push(fail("result", index, &what, &findings, |d| {
                std::fs::copy(&path, d.join("result.json")).unwrap();
            })),
        }
        let _ = std::fs::remove_file(&path);
    }
    println!(
        "result files: {} mutated inputs (seed {seed:#x}), {} still loaded, in {:.1} s",
        cases.len(),
        loaded.load(std::sync::atomic::Ordering::Relaxed),
        start.elapsed().as_secs_f64()
    );
    report("result", cases.len(), &failures);
}

fn check_result(
    src: &Source,
    path: &Path,
    plots: bool,
    loaded: &std::sync::atomic::AtomicUsize,
) -> Result<(), String> {
    let mut out = Vec::new();
    let file = match hwsurvey_result::load(path) {
        Err(e) => {
            check_error_line("load", &e.to_string(), &mut out);
            return if out.is_empty() {
                Ok(())
            } else {
                Err(out.join("\n"))
            };
        }
        Ok(f) => f,
    };
    loaded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    result_facts_problems(&file, &mut out);
    // compare against the clean file, every format (and the plots)
    match compare_texts(&src.clean, file.clone(), plots) {
        Err(e) => check_error_line("compare", &e, &mut out),
        Ok(texts) => {
            for (i, (name, text)) in texts.iter().enumerate() {
                if i < 6 {
                    check_bounded(name, text.len(), src.clean_sizes[i], 256 << 10, &mut out);
                }
                if name != "compare json" {
                    let raw = raw_controls(text);
                    if !raw.is_empty() {
                        out.push(format!("{name}: raw control characters {raw:?}"));
                    }
                }
                if name.starts_with("svg ") {
                    if let Err(e) = roxmltree::Document::parse(text) {
                        out.push(format!("{name}: not XML: {e}"));
                    }
                }
            }
        }
    }
    // qualify of the file: the stored findings, then recomputed from its machine document
    let texts = stored_qualify(&file);
    for (k, (name, text)) in texts.iter().enumerate() {
        check_bounded(
            name,
            text.len(),
            src.clean_sizes[6 + k],
            256 << 10,
            &mut out,
        );
        if *name != "qualify json" {
            let raw = raw_controls(text);
            if !raw.is_empty() {
                out.push(format!("{name}: raw control characters {raw:?}"));
            }
        }
    }
    let mut facts = from_machine(&file.machine);
    facts.result = Probed::Known(hwsurvey_qualify::machine::result_facts("r.json", &file));
    let report = qualify("r.json", &facts, &RuleSet::builtin());
    for (name, text) in qualify_texts(&report) {
        if text.len() > 4 * MIB {
            out.push(format!("recomputed {name}: {} bytes", text.len()));
        }
        if name != "qualify json" {
            let raw = raw_controls(&text);
            if !raw.is_empty() {
                out.push(format!("recomputed {name}: raw control characters {raw:?}"));
            }
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out.join("\n"))
    }
}
