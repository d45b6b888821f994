//! A run inside a cgroup v1 or v2 memory limit: the plan's memory cap follows the limit (and
//! says so), and a memory run stays inside it (never OOM-killed). Before, the cap came from
//! cgroup v2 and MemAvailable only: under a 512 MiB v1 limit `run --plan-only` said 11.5 GiB,
//! and `run --only mem.bandwidth` under 200 MiB was killed by the OOM killer (exit 137).
//!
//! Needs root and a cgroup v1 memory hierarchy at /sys/fs/cgroup/memory (as on this CI host),
//! or a cgroup v2 mount whose `cgroup.controllers` offers `memory` (a host booted with the
//! unified hierarchy; on a hybrid host such as CI's, v2 at /sys/fs/cgroup/unified has no
//! memory controller, which is bound to v1); otherwise each test prints SKIPPED with the
//! reason. The child joins the cgroup through a `sh` wrapper that writes its own pid into
//! `cgroup.procs` and then `exec`s hwsurvey.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const LIMIT_BYTES: u64 = 200 << 20;
const V1_MEMORY: &str = "/sys/fs/cgroup/memory";

/// A v1 memory cgroup created for one test, removed on drop (after its processes exited).
struct Cgroup(PathBuf);

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

fn v1_cgroup(name: &str) -> Option<Cgroup> {
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1);
    if uid != 0 {
        println!("SKIPPED: creating a cgroup needs root");
        return None;
    }
    let base = Path::new(V1_MEMORY);
    if !base.join("memory.limit_in_bytes").is_file() {
        println!("SKIPPED: no cgroup v1 memory hierarchy at {V1_MEMORY}");
        return None;
    }
    if !hwsurvey_testkit::have("sh") {
        println!("SKIPPED: no sh");
        return None;
    }
    let dir = base.join(format!("hwsurvey-test-{name}-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&dir) {
        println!("SKIPPED: cannot create {}: {e}", dir.display());
        return None;
    }
    std::fs::write(dir.join("memory.limit_in_bytes"), LIMIT_BYTES.to_string())
        .expect("set memory.limit_in_bytes");
    // Without swap accounting there is no memsw file; with it, cap memory+swap too so the
    // limit cannot be dodged by swapping.
    let memsw = dir.join("memory.memsw.limit_in_bytes");
    if memsw.is_file() {
        let _ = std::fs::write(&memsw, LIMIT_BYTES.to_string());
    }
    Some(Cgroup(dir))
}

/// The first cgroup2 mount point under /sys/fs/cgroup in /proc/self/mountinfo.
fn cgroup2_mount() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    text.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mount_point = left.split_whitespace().nth(4)?;
        (right.split_whitespace().next() == Some("cgroup2")
            && mount_point.starts_with("/sys/fs/cgroup"))
        .then(|| PathBuf::from(mount_point))
    })
}

/// A v2 cgroup limited to [`LIMIT_BYTES`] by `memory.max` (swap off, where swap is
/// accounted), created at the top of the v2 hierarchy, or `None` after saying why not.
fn v2_cgroup(name: &str) -> Option<Cgroup> {
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(1);
    if uid != 0 {
        println!("SKIPPED: creating a cgroup needs root");
        return None;
    }
    let Some(mount) = cgroup2_mount() else {
        println!("SKIPPED: no cgroup v2 mount under /sys/fs/cgroup in /proc/self/mountinfo");
        return None;
    };
    let controllers = std::fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default();
    if !controllers.split_whitespace().any(|c| c == "memory") {
        println!(
            "SKIPPED: the cgroup v2 hierarchy at {} offers no memory controller \
             (cgroup.controllers: {:?}); on this host it is bound to a cgroup v1 hierarchy",
            mount.display(),
            controllers.trim()
        );
        return None;
    }
    if !hwsurvey_testkit::have("sh") {
        println!("SKIPPED: no sh");
        return None;
    }
    // children of the top cgroup get a memory.max only once the top enables the controller
    if let Err(e) = std::fs::write(mount.join("cgroup.subtree_control"), "+memory") {
        println!(
            "SKIPPED: cannot enable memory in {}: {e}",
            mount.join("cgroup.subtree_control").display()
        );
        return None;
    }
    let dir = mount.join(format!("hwsurvey-test-v2-{name}-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir(&dir) {
        println!("SKIPPED: cannot create {}: {e}", dir.display());
        return None;
    }
    let cg = Cgroup(dir);
    std::fs::write(cg.0.join("memory.max"), LIMIT_BYTES.to_string()).expect("set memory.max");
    let swap = cg.0.join("memory.swap.max");
    if swap.is_file() {
        let _ = std::fs::write(&swap, "0");
    }
    Some(cg)
}

/// Runs hwsurvey with `args` inside the cgroup (through the target's runner under qemu).
fn run_in(cg: &Cgroup, args: &[&str]) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("hwsurvey");
    let runner = hwsurvey_testkit::target_runner();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("echo $$ > \"$0\" && exec \"$@\"")
        .arg(cg.0.join("cgroup.procs"))
        .args(&runner)
        .arg(&bin)
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."));
    cmd.output().expect("run sh")
}

fn oom_kills(cg: &Cgroup) -> Option<u64> {
    let text = std::fs::read_to_string(cg.0.join("memory.oom_control")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn plan_cap_follows_a_v1_memory_limit() {
    let Some(cg) = v1_cgroup("plan") else {
        return;
    };
    let out = run_in(&cg, &["run", "--plan-only", "--profile", "quick"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("memory cap "))
        .unwrap_or_else(|| panic!("no memory cap line:\n{stdout}"));
    let want_file = cg.0.join("memory.limit_in_bytes");
    assert!(
        line.contains(&format!(
            "cgroup v1 memory.limit_in_bytes ({})",
            want_file.display()
        )) || line.contains("memory.memsw.limit_in_bytes"),
        "{line}"
    );
    // "memory cap 100.0 MiB (from ...)": the cap is the profile's fraction of 200 MiB.
    let cap = line
        .split("memory cap ")
        .nth(1)
        .and_then(|r| r.split(" MiB").next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("cap in MiB: {line}"));
    assert!(cap > 0.0 && cap <= 200.0, "{line}");
}

/// The same under a cgroup v2 `memory.max`: the cap names that file and stays under the limit.
#[test]
fn plan_cap_follows_a_v2_memory_limit() {
    let Some(cg) = v2_cgroup("plan") else {
        return;
    };
    let out = run_in(&cg, &["run", "--plan-only", "--profile", "quick"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("memory cap "))
        .unwrap_or_else(|| panic!("no memory cap line:\n{stdout}"));
    let want_file = cg.0.join("memory.max");
    assert!(
        line.contains(&format!("cgroup v2 memory.max ({})", want_file.display())),
        "{line}"
    );
    let cap = line
        .split("memory cap ")
        .nth(1)
        .and_then(|r| r.split(" MiB").next())
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("cap in MiB: {line}"));
    assert!(cap > 0.0 && cap <= 200.0, "{line}");
}

/// Runs the quick profile's `mem.bandwidth` inside `cg` with a result file; asserts a clean
/// exit (137 would be the OOM killer) and returns the loaded result file.
fn quick_bandwidth_run(cg: &Cgroup) -> hwsurvey_result::ResultFile {
    let dir = tempfile::tempdir().expect("tempdir");
    let result = dir.path().join("r.json");
    let result_s = result.to_string_lossy().into_owned();
    let out = run_in(
        cg,
        &[
            "run",
            "--profile",
            "quick",
            "--only",
            "mem.bandwidth",
            "-o",
            &result_s,
        ],
    );
    assert!(
        out.status.success(),
        "exit {:?} (137 = killed)\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    hwsurvey_result::load(&result).expect("result file")
}

/// A memory run under a cgroup v2 `memory.max` of 200 MiB: measured, never OOM-killed
/// (`memory.events` oom_kill 0).
#[test]
fn memory_run_under_a_v2_limit_is_not_oom_killed() {
    let Some(cg) = v2_cgroup("run") else {
        return;
    };
    let file = quick_bandwidth_run(&cg);
    let events = std::fs::read_to_string(cg.0.join("memory.events")).unwrap_or_default();
    let kills = events
        .lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|v| v.trim().parse::<u64>().ok());
    assert_eq!(kills, Some(0), "memory.events:\n{events}");
    assert!(
        file.plan.memory_cap_bytes.is_some_and(|b| b <= LIMIT_BYTES),
        "{:?}",
        file.plan.memory_cap_bytes
    );
}

#[test]
fn memory_run_under_a_v1_limit_is_not_oom_killed() {
    let Some(cg) = v1_cgroup("run") else {
        return;
    };
    let file = quick_bandwidth_run(&cg);
    if let Some(kills) = oom_kills(&cg) {
        assert_eq!(kills, 0, "OOM kills in {}", cg.0.display());
    }
    let usage_path = cg.0.join("memory.max_usage_in_bytes");
    let usage_text = std::fs::read_to_string(&usage_path)
        .unwrap_or_else(|e| panic!("{}: {e}", usage_path.display()));
    let max_usage: u64 = usage_text
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{}: {usage_text:?}: {e}", usage_path.display()));
    assert!(max_usage <= LIMIT_BYTES, "peak {max_usage} bytes");
    assert!(
        file.tests
            .iter()
            .any(|t| t.outcome == hwsurvey_result::Outcome::Measured),
        "no measured test"
    );
    assert!(
        file.plan.memory_cap_bytes.is_some_and(|b| b <= LIMIT_BYTES),
        "{:?}",
        file.plan.memory_cap_bytes
    );
}

/// `run --plan-only` under an address-space limit (`ulimit -v`, RLIMIT_AS) that leaves 24 MiB
/// above what the process maps at planning: the plan names RLIMIT_AS as its cap and the run
/// exits 0. Before 2026-12-04 the fixed-work measurement before planning allocated its
/// buffers and 16 thread stacks regardless, and the run aborted ("memory allocation of
/// 4194304 bytes failed") under `ulimit -v` 40 MiB; it now uses the reference figures when
/// the limits leave too little room to measure.
#[test]
fn plan_runs_under_a_tight_address_space_limit() {
    if !hwsurvey_testkit::target_runner().is_empty() {
        println!("SKIPPED: under qemu-user the emulator's own mappings count against RLIMIT_AS");
        return;
    }
    if !hwsurvey_testkit::have("sh") {
        println!("SKIPPED: no sh");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("hwsurvey");
    let plan_under = |kib: u64| {
        Command::new("sh")
            .arg("-c")
            .arg("ulimit -v \"$0\" && exec \"$@\"")
            .arg(kib.to_string())
            .arg(&bin)
            .args(["run", "--plan-only", "--profile", "quick"])
            .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
            .output()
            .expect("run sh")
    };
    // what the process maps at planning: "(from RLIMIT_AS (/proc/self/limits): limit 4 GiB,
    // N MiB in use)" under a roomy limit
    let in_use_mib = |out: &Output| -> f64 {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find(|l| l.contains("memory cap "))
            .unwrap_or_else(|| panic!("no memory cap line:\n{stdout}"));
        assert!(
            line.contains("from RLIMIT_AS (/proc/self/limits): limit "),
            "{line}"
        );
        let used = line
            .rsplit(", ")
            .next()
            .and_then(|t| t.strip_suffix(" in use)"))
            .unwrap_or_else(|| panic!("no \"in use\": {line}"));
        let (n, unit) = used.split_once(' ').unwrap();
        let n: f64 = n.parse().unwrap();
        match unit {
            "MiB" => n,
            "GiB" => n * 1024.0,
            "KiB" => n / 1024.0,
            _ => panic!("unit of {used}"),
        }
    };
    let roomy = plan_under(4 << 20);
    assert!(roomy.status.success(), "{roomy:?}");
    let used = in_use_mib(&roomy);
    let tight_kib = ((used + 24.0) * 1024.0) as u64;
    let out = plan_under(tight_kib);
    assert!(
        out.status.success(),
        "under ulimit -v {tight_kib} ({used:.1} MiB in use + 24 MiB): exit {:?}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = in_use_mib(&out);
    // qualify under the same limit: reading its own binary (larger than 24 MiB in a debug
    // build) fails, and that is a finding not evaluated, naming the size, not an abort
    // ("memory allocation of 15949921 bytes failed" under ulimit -v 30000: breaker finding)
    let size = std::fs::metadata(&bin).unwrap().len();
    let q = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v \"$0\" && exec \"$@\"")
        .arg(tight_kib.to_string())
        .arg(&bin)
        .arg("qualify")
        .output()
        .expect("run sh");
    let text = String::from_utf8_lossy(&q.stdout);
    // a verdict (0, 1, 2; 4: incomplete, as binary.arch and the DIMM rules are not evaluated
    // here; 5: emulated), never an abort
    assert!(
        matches!(q.status.code().unwrap_or(-1), 0..=2 | 4 | 5),
        "qualify under ulimit -v {tight_kib}: {:?}\n{text}\n{}",
        q.status,
        String::from_utf8_lossy(&q.stderr)
    );
    if size > 24 << 20 {
        assert!(
            text.contains(&format!("cannot allocate {} bytes to read it", size + 1)),
            "{text}"
        );
    }
}
