//! SIGTERM during many-thread points (tester report: a 200000-thread `mutex` point spawned
//! 16367 threads, then ignored SIGTERM for 9+ minutes with the status stuck at "running").
//! The hang was a `Barrier` for all threads: when a spawn failed, the threads already started
//! waited at it for ever and the scope never joined. Now the start is a gate that a failed
//! spawn or the cancel flag opens with "abort", and the timed window looks at the flag.

use hwsurvey_probe::run_env::ReadRunEnv as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hwsurvey_engine::env::RunEnv;
use hwsurvey_engine::profile::QUICK_TOML;
use hwsurvey_engine::result::{RunStatus, Tool};
use hwsurvey_engine::run::{run_with_cancel, RunRequest, Silent};
use hwsurvey_engine::runner::RunError;
use hwsurvey_engine::{build_plan, Profile, RunContext, RunOptions};
use hwsurvey_probe::{probe_machine, SysRoot};
use hwsurvey_testkit::under_qemu_user;
use hwsurvey_workloads::families::sync_contention::{
    run_cancellable, ContentionError, Primitive, SyncContention,
};
use hwsurvey_workloads::families::{ids, DynFamily};

/// The many-thread tests run one at a time: two of them at once (640 spinning threads on the
/// CI machine's 2 CPUs, beside the other cross stages) took 103-107 s to drain under
/// qemu-sparc64 (CI of stop 22), where each alone takes under 2 s.
static MANY_THREADS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Spinning threads per CPU of the many-thread tests: the profile's largest (64) natively;
/// under qemu-user, where every guest thread is an emulated CPU and the drain after the stop
/// takes (threads / CPUs) emulated time slices, 8.
fn per_cpu() -> usize {
    if under_qemu_user() {
        8
    } else {
        64
    }
}

/// Sets `flag` after `after` from another thread.
fn cancel_later(flag: &AtomicBool, after: Duration) -> impl FnOnce() + '_ {
    move || {
        std::thread::sleep(after);
        flag.store(true, Ordering::SeqCst);
    }
}

#[test]
fn cancel_ends_a_long_many_thread_window_promptly() {
    let _one = MANY_THREADS.lock().unwrap_or_else(|p| p.into_inner());
    // natively 512 threads on a 60 s window (256 per CPU on 2 CPUs): only the flag can end it
    let threads = if under_qemu_user() { 64 } else { 512 };
    for primitive in [Primitive::Mutex, Primitive::AtomicIncrement] {
        let cancel = AtomicBool::new(false);
        let t0 = Instant::now();
        let r = std::thread::scope(|s| {
            s.spawn(cancel_later(&cancel, Duration::from_millis(300)));
            run_cancellable(
                primitive,
                threads,
                Duration::from_secs(60),
                &|_| {},
                &cancel,
            )
        });
        let took = t0.elapsed();
        assert_eq!(r.unwrap_err(), ContentionError::Cancelled, "{primitive:?}");
        assert!(
            took < Duration::from_secs(20),
            "{primitive:?} with {threads} threads: took {took:?}"
        );
    }
}

#[test]
fn cancel_before_the_start_releases_every_waiting_worker() {
    let cancel = AtomicBool::new(true);
    let pinned = AtomicUsize::new(0);
    let r = run_cancellable(
        Primitive::Mutex,
        64,
        Duration::from_secs(60),
        &|_| {
            pinned.fetch_add(1, Ordering::SeqCst);
        },
        &cancel,
    );
    assert_eq!(r.unwrap_err(), ContentionError::Cancelled);
    assert_eq!(pinned.load(Ordering::SeqCst), 0, "no worker spawned");
}

#[test]
fn run_pinned_does_not_start_workers_once_cancelled() {
    let profile = Profile::load("quick", &ids()).unwrap();
    let env = RunEnv::read(&SysRoot::live());
    let options = RunOptions::default();
    let cancel = AtomicBool::new(true);
    let deadline = Instant::now() + Duration::from_secs(60);
    let ctx = RunContext::new(&profile.run, &env, &options, &cancel, deadline);
    let called = AtomicUsize::new(0);
    let r = ctx.run_pinned(&[0; 8], |w| {
        called.fetch_add(1, Ordering::SeqCst);
        w.barrier.wait();
    });
    assert!(matches!(r, Err(RunError::Cancelled)), "{r:?}");
    assert_eq!(called.load(Ordering::SeqCst), 0);
}

#[test]
fn engine_run_of_sync_contention_stops_on_cancel() {
    let _one = MANY_THREADS.lock().unwrap_or_else(|p| p.into_inner());
    // 20 s samples: without the flag a point would last >= 40 s
    let factor = per_cpu();
    let text = QUICK_TOML
        .replace("sample_min_s = 0.01", "sample_min_s = 20")
        .replace(
            "oversubscription_factor = 2",
            &format!("oversubscription_factor = {factor}"),
        );
    let profile = Profile::parse("slow.toml", &text, &ids()).unwrap();
    assert_eq!(profile.run.sample_min_s, 20.0, "replacements applied");
    let fams: Vec<&dyn DynFamily> = vec![&SyncContention];
    let root = SysRoot::live();
    let machine = probe_machine(&root);
    let env = RunEnv::read(&root);
    let options = RunOptions::default();
    let plan = build_plan(&profile, &fams, &machine, &env, &options, &[]).unwrap();
    let most = plan.families[0]
        .points
        .iter()
        .map(|p| p.threads)
        .max()
        .unwrap();
    assert_eq!(most, (factor * env.cpu_count()).min(4096));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("slow.json");
    let req = RunRequest {
        profile: &profile,
        plan: &plan,
        families: &fams,
        machine: &machine,
        env: &env,
        options: &options,
        output: &out,
        root: &root,
        tool: Tool::this_build(),
        time_limit: None,
        qualifier: None,
        clock: None,
    };
    let cancel = AtomicBool::new(false);
    let t0 = Instant::now();
    let file = std::thread::scope(|s| {
        s.spawn(cancel_later(&cancel, Duration::from_millis(500)));
        run_with_cancel(&req, &mut Silent, &cancel).unwrap()
    });
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(15),
        "{most} threads: took {took:?}"
    );
    assert_eq!(file.status, RunStatus::Interrupted);
    assert!(file
        .tests
        .iter()
        .all(|t| t.outcome != hwsurvey_engine::result::Outcome::Measured));
}

/// The abort path of the tester's hang: workers already waiting at the start gate when the
/// spawning stops (here the cancel flag, set by worker 20 while 5000 are asked; a failed spawn
/// takes the same path) are released and joined, and the call returns.
#[test]
fn workers_waiting_at_the_gate_are_released_when_spawning_stops() {
    let _one = MANY_THREADS.lock().unwrap_or_else(|p| p.into_inner());
    let cancel = AtomicBool::new(false);
    let pinned = AtomicUsize::new(0);
    let t0 = Instant::now();
    let r = run_cancellable(
        Primitive::Mutex,
        5000,
        Duration::from_secs(60),
        &|i| {
            pinned.fetch_add(1, Ordering::SeqCst);
            if i == 20 {
                cancel.store(true, Ordering::SeqCst);
            }
        },
        &cancel,
    );
    assert_eq!(r.unwrap_err(), ContentionError::Cancelled);
    let started = pinned.load(Ordering::SeqCst);
    assert!((21..5000).contains(&started), "{started} workers started");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}
