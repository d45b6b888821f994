//! Figures no machine could give are refused by the loader with the field's JSON path, each
//! point held against the file's own machine: a point of 1048576 threads in a
//! 2-CPU run ("fp peak 2.33G @1048576" above a table of 2 threads), workers on CPUs 4095 and
//! 100000 of a 2-CPU machine, samples 10^4 times faster than measured ("int 1 thread 94.6T
//! ops/s"), a latency below one cycle, a memory bandwidth beyond twice the DIMMs' peak. The
//! example files, real runs, load as they are.

use serde_json::{json, Value};

/// A real run of this repository: the 2-vCPU Zen 2 VM (schema 2, CPUs 0-1).
fn vm() -> Value {
    example("vm-x86_64-standard.json")
}

fn example(name: &str) -> Value {
    let path = format!(
        "{}/../../reports/examples/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn load(doc: &Value) -> Result<hwsurvey_result::ResultFile, String> {
    hwsurvey_result::parse("r.json", doc.to_string().as_bytes()).map_err(|e| e.to_string())
}

/// Index of the test `family` `id` in `doc`.
fn test_index(doc: &Value, family: &str, id: &str) -> usize {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .position(|t| t["point"]["family"] == family && t["point"]["id"] == id)
        .unwrap_or_else(|| panic!("no test {family} {id}"))
}

/// Every sample and statistic of test `i`'s metrics times `factor` (statistics stay those of
/// the samples, so only the bound can refuse it).
fn scale_test(doc: &mut Value, i: usize, factor: f64) {
    for m in doc["tests"][i]["metrics"].as_array_mut().unwrap() {
        for v in m["samples"].as_array_mut().unwrap() {
            *v = json!(v.as_f64().unwrap() * factor);
        }
        if let Some(p) = m.get("peak").and_then(Value::as_f64) {
            m["peak"] = json!(p * factor);
        }
        let s = &mut m["summary"];
        for k in [
            "median",
            "min",
            "max",
            "mean",
            "std_dev",
            "median_ci95_low",
            "median_ci95_high",
        ] {
            let v = s[k].as_f64().unwrap();
            s[k] = json!(v * factor);
        }
    }
}

#[test]
fn the_examples_load() {
    for name in [
        "vm-x86_64-standard.json",
        "guest-x86-2s4n-smt-standard.json",
        "guest-arm64-2n-clusters-standard.json",
        "v1/x86_64-standard.json",
        "v1/aarch64-qemu-quick.json",
        "v1/sparc64-qemu-quick.json",
    ] {
        load(&example(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn a_point_of_more_threads_than_the_machine_runs_is_refused() {
    let mut doc = vm();
    let i = test_index(&doc, "cpu.scaling", "floating_point/threads=2");
    doc["tests"][i]["point"]["threads"] = json!(1_048_576);
    let e = load(&doc).unwrap_err();
    assert_eq!(
        e,
        format!(
            "r.json: at tests[{i}].point.threads (test \"cpu.scaling\" \
             \"floating_point/threads=2\"): 1048576 is not a number of worker threads (1 to \
             4096)"
        )
    );
    // 5 threads on 2 CPUs with a factor of 2: one too many
    let mut doc = vm();
    doc["tests"][i]["point"]["threads"] = json!(5);
    assert_eq!(
        load(&doc).unwrap_err(),
        format!(
            "r.json: at tests[{i}].point.threads (test \"cpu.scaling\" \
             \"floating_point/threads=2\"): 5 threads on this file's machine: a point runs \
             at most 2 online CPUs (machine.cpu.online) x 2 (the profile's \
             oversubscription_factor) threads"
        )
    );
    // the plan's points too
    let mut doc = vm();
    doc["plan"]["families"][0]["points"][0]["threads"] = json!(4096);
    assert!(load(&doc)
        .unwrap_err()
        .contains("at plan.families[0].points[0].threads: 4096 threads on this file's machine"),);
    // 512 client threads of a service test on the same machine are what the profile asks
    let clients = test_index(
        &vm(),
        "service.point_select",
        "closed/pages=base/clients=512",
    );
    assert_eq!(vm()["tests"][clients]["point"]["threads"], 512);
}

#[test]
fn workers_on_cpus_the_machine_does_not_have_are_refused() {
    let mut doc = vm();
    let i = test_index(&doc, "cpu.scaling", "integer/threads=2");
    doc["tests"][i]["point"]["cpus"] = json!([4095, 100000]);
    let e = load(&doc).unwrap_err();
    assert_eq!(
        e,
        format!(
            "r.json: at tests[{i}].point.cpus[0] (test \"cpu.scaling\" \
             \"integer/threads=2\"): CPU 4095 is not one of the machine's CPUs \
             (machine.cpu.possible 0-1)"
        )
    );
    let mut doc = vm();
    doc["tests"][i]["point"]["cpus"] = json!([1, 2]);
    assert!(load(&doc).unwrap_err().contains("point.cpus[1]"));
    // nor may the run's usable CPUs widen the bound of the threads
    let mut doc = vm();
    doc["environment"]["usable_cpus"] = json!("0-4095");
    assert_eq!(
        load(&doc).unwrap_err(),
        "r.json: at environment.usable_cpus: CPU 2 is not one of the machine's CPUs \
         (machine.cpu.possible 0-1)"
    );
}

/// The VM example records its TSC's 2.60 GHz as the nominal clock: 5 times that is above
/// 10 GHz, so its bound is 10 GHz; without a clock recorded the bound is 10 GHz too, and says
/// the file records none.
#[test]
fn a_rate_beyond_what_the_clock_allows_is_refused() {
    let mut doc = vm();
    let i = test_index(&doc, "cpu.scaling", "integer/threads=1");
    scale_test(&mut doc, i, 1e4);
    let e = load(&doc).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "r.json: at tests[{i}].metrics[0].samples[0] (test \"cpu.scaling\" \
             \"integer/threads=1\"): 102701647001774.95 ops_per_s is more than this file's \
             machine can do: 1 CPU x 10 GHz, above any CPU's clock x 64 operations a cycle = \
             640000000000"
        )),
        "{e}"
    );
    // no clock recorded
    let mut doc = vm();
    let i = test_index(&doc, "cpu.scaling", "integer/threads=1");
    doc["machine"]["cpu"]["nominal_clock"] = serde_json::Value::Null;
    scale_test(&mut doc, i, 1e4);
    let e = load(&doc).unwrap_err();
    assert!(
        e.contains("1 CPU x 10 GHz, above any CPU's clock (the file records none) x 64"),
        "{e}"
    );
    // with a nominal clock recorded the bound is 5 times it: 1 GHz allows 3.2e11 a CPU
    let mut doc = vm();
    let i = test_index(&doc, "cpu.scaling", "integer/threads=1");
    doc["machine"]["cpu"]["nominal_clock"] =
        json!({"hz": 1e9, "kind": "tsc", "source": "a test's clock"});
    doc["machine"]["unknown"]
        .as_object_mut()
        .unwrap()
        .remove("/cpu/nominal_clock");
    scale_test(&mut doc, i, 40.0);
    let e = load(&doc).unwrap_err();
    assert!(
        e.contains("is more than this file's machine can do: 1 CPU x 5 GHz, 5 x the nominal clock 1 GHz x 64 operations a cycle = 320000000000"),
        "{e}"
    );
    // and bandwidth: 1e4 times STREAM Triad
    let mut doc = vm();
    let i = test_index(&doc, "mem.bandwidth", "stream.triad/threads=2");
    scale_test(&mut doc, i, 1e4);
    let e = load(&doc).unwrap_err();
    assert!(
        e.contains(&format!("at tests[{i}].metrics[0].samples[0]"))
            && e.contains(
                "2 CPUs x 10 GHz, above any CPU's clock x 512 bytes a cycle = 10240000000000"
            ),
        "{e}"
    );
}

#[test]
fn a_latency_below_one_cycle_is_refused() {
    let mut doc = vm();
    let i = test_index(&doc, "mem.latency", "full_random/base/ws=16KiB");
    scale_test(&mut doc, i, 1e-4);
    let e = load(&doc).unwrap_err();
    assert!(
        e.contains(&format!("at tests[{i}].metrics[0].samples[0]"))
            && e.contains("ns is less than one cycle of this file's machine: 0.1 ns at 10 GHz"),
        "{e}"
    );
}

#[test]
fn memory_bandwidth_beyond_twice_the_dimms_peak_is_refused() {
    // the 2-socket guest: 32 MiB of L3, STREAM over 256 MiB at up to 8.4 GB/s (copy)
    let with_peak = |bytes_per_s: u64| {
        let mut doc = example("guest-x86-2s4n-smt-standard.json");
        doc["machine"]["memory"]["population"]["peak_bandwidth"] = json!({
            "bandwidth_bytes_per_s": bytes_per_s,
            "populated_channels": 1,
            "speed_mt_per_s": bytes_per_s / 8_000_000,
            "bytes_per_transfer": 8,
            "derivation": "a test's peak"
        });
        doc["machine"]["unknown"]
            .as_object_mut()
            .unwrap()
            .remove("/memory/population/peak_bandwidth");
        doc
    };
    load(&with_peak(8_000_000_000)).unwrap();
    let e = load(&with_peak(1_000_000_000)).unwrap_err();
    assert!(
        e.contains("(4 x the last-level cache or more) is more than 2 x the memory's theoretical peak of 1000000000 bytes/s (machine.memory.population.peak_bandwidth)"),
        "{e}"
    );
    assert!(e.contains(".metrics[0].samples["), "{e}");
}
