//! What loading one result file costs, counted by the allocator of this test binary: at most
//! `LOAD_COST_FACTOR` times the file's size at the peak, for the costliest shape a file may
//! have (one-key objects, 22 bytes each on disk), and the files that runs write cost far less.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the bytes live on each thread and their peak (per thread: the tests of this binary
/// run side by side).
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

// SAFETY: System does the work; the counters are thread-local cells that never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let _ = LIVE.try_with(|l| {
                l.set(l.get() + layout.size() as isize);
                let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
            });
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        let _ = LIVE.try_with(|l| l.set(l.get() - layout.size() as isize));
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Peak bytes allocated on this thread while `f` runs, above what was live before.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get) - base;
    (out, peak.max(0) as usize)
}

fn example(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../reports/examples/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

/// The vm example with `pad` (compact JSON) as the free-form details of its first test.
/// The JSON objects of `v`, itself included.
fn objects_in(v: &serde_json::Value) -> usize {
    match v {
        serde_json::Value::Object(m) => 1 + m.values().map(objects_in).sum::<usize>(),
        serde_json::Value::Array(a) => a.iter().map(objects_in).sum(),
        _ => 0,
    }
}

fn padded(pad: serde_json::Value) -> Vec<u8> {
    let mut doc: serde_json::Value =
        serde_json::from_str(&example("vm-x86_64-standard.json")).unwrap();
    doc["tests"][0]["details"]["pad"] = pad;
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn loading_costs_at_most_the_stated_factor_of_the_file() {
    let factor = hwsurvey_result::LOAD_COST_FACTOR as f64;
    // the costliest shapes: one-key objects as dense as the loader takes them (one per 64
    // bytes: each padded with a 52-byte name), and numbers as dense (one per 8 bytes)
    let name = "n".repeat(52);
    for (what, bytes) in [
        (
            "objects",
            padded(serde_json::Value::Array(
                (0..120_000)
                    .map(|_| serde_json::json!({ &name: 1 }))
                    .collect(),
            )),
        ),
        (
            "numbers",
            padded(serde_json::Value::Array(
                (0..1_000_000).map(|_| serde_json::json!(1234567)).collect(),
            )),
        ),
    ] {
        let (file, peak) = peak_of(|| hwsurvey_result::parse("pad.json", &bytes).unwrap());
        let x = peak as f64 / bytes.len() as f64;
        println!("{what}: {} bytes, peak {peak} bytes, {x:.1} x", bytes.len());
        assert!(x <= factor, "{what}: {x:.1} x");
        drop(file);
    }
    // a run's own file
    let real = example("guest-x86-2s4n-smt-standard.json");
    let (_file, peak) = peak_of(|| hwsurvey_result::parse("real.json", real.as_bytes()).unwrap());
    let x = peak as f64 / real.len() as f64;
    println!("real: {} bytes, peak {peak} bytes, {x:.1} x", real.len());
    assert!(x <= factor / 4.0, "{x:.1} x");
}

/// Denser than one object per 64 bytes (the 60 MB file of small objects took 1 GB in
/// compare; `{"a":1}` is 8 bytes on disk and about 600 in memory) is refused before the
/// document is built, with the count and the bound; the cost stays at the bytes read.
#[test]
fn a_file_of_small_objects_is_refused_before_it_is_built() {
    let bytes = padded(serde_json::Value::Array(
        (0..1_000_000)
            .map(|_| serde_json::json!({"a": 1}))
            .collect(),
    ));
    let (e, peak) = peak_of(|| hwsurvey_result::parse("dense.json", &bytes).unwrap_err());
    let e = e.to_string();
    // the million objects and the example's own
    let example: serde_json::Value =
        serde_json::from_str(&example("vm-x86_64-standard.json")).unwrap();
    let objects = 1_000_000 + objects_in(&example);
    assert!(
        e.starts_with(&format!("dense.json: holds {objects} JSON objects in "))
            && e.contains("one per 64 bytes, and 65536 more; a run's file holds one per 200 bytes): refusing it, as loading takes 600 bytes of memory for each"),
        "{e}"
    );
    assert!(peak < 1 << 20, "{peak} bytes allocated to refuse it");
    // and numbers denser than one per 8 bytes
    let bytes = padded(serde_json::Value::Array(
        (0..4_000_000).map(|_| serde_json::json!(1)).collect(),
    ));
    let e = hwsurvey_result::parse("dense.json", &bytes)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("JSON values in") && e.contains("one per 8 bytes"),
        "{e}"
    );
}
