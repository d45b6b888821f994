//! One host is one machine, not one name: the runs filed under one host name are pooled only
//! when they ran on the same machine, judged by the first of these both runs know: the DMI
//! product UUID, the DMI serial, `/etc/machine-id` (all kept hashed by the probe:
//! [`hwsurvey_machine::os::host_id`]), else the architecture, CPU model and topology (present
//! hardware threads; packages when no CPU is offline). Runs of different machines under one
//! name become separate hosts (`localhost`, `localhost [machine 2]`), and the fleet says why.

use hwsurvey_machine::os::host_id::HostId;

use crate::facts::Identity;

/// What tells the machine of a run: its hashed identity (`machine.os.host_id`) and its
/// hardware identity ([`crate::facts::identity`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MachineKey<'a> {
    pub host_id: &'a HostId,
    pub identity: &'a Identity,
}

/// `x86_64 AMD EPYC 7451, 2 packages, 96 threads`: the hardware words compared when no
/// identity is known to both runs (packages only when `packages` is true).
fn hardware(i: &Identity, packages: bool) -> String {
    let n = |v: Option<u32>, what: &str| match v {
        Some(v) => hwsurvey_model::units::plural(u64::from(v), what),
        None => format!("{what}s unknown"),
    };
    if packages {
        format!(
            "{} {}, {}, {}",
            i.arch,
            i.cpu_model,
            n(i.sockets, "package"),
            n(i.threads, "thread")
        )
    } else {
        format!("{} {}, {}", i.arch, i.cpu_model, n(i.threads, "thread"))
    }
}

/// Whether runs `a` and `b` ran on one machine, and the words saying by what (`DMI product
/// UUID differs`, `CPU model and topology differ: x86_64 AMD EPYC, ... vs ...`).
pub(crate) fn same_machine(a: MachineKey, b: MachineKey) -> (bool, String) {
    if let Some((kind, same)) = a.host_id.same_machine(b.host_id) {
        let words = if same {
            format!("the same {}", kind.words())
        } else {
            format!("{} differs", kind.words())
        };
        return (same, words);
    }
    let (x, y) = (a.identity, b.identity);
    let packages = x.cpus_offline == 0 && y.cpus_offline == 0;
    let (hx, hy) = (hardware(x, packages), hardware(y, packages));
    if hx == hy {
        (true, "the same CPU model and topology".into())
    } else {
        (
            false,
            format!("CPU model and topology differ: {hx} vs {hy}"),
        )
    }
}

/// Splits the runs filed under host `name` into machines: each run joins the first machine
/// whose first run is [`same_machine`], else starts a new one. The first machine keeps
/// `name`, the others are `<name> [machine N]`, N from the machine's place on, the first
/// that is not in `taken` (the fleet's names: a real folder `web [machine 2]` beside two
/// machines in `web` makes the second one `web [machine 3]`), each added to `taken`. With
/// more than one machine, also the note that says so and why.
pub(crate) fn split<T>(
    name: &str,
    runs: Vec<T>,
    key: impl Fn(&T) -> MachineKey,
    taken: &mut std::collections::BTreeSet<String>,
) -> (Vec<(String, Vec<T>)>, Option<String>) {
    let mut machines: Vec<Vec<T>> = Vec::new();
    let mut why: Vec<String> = Vec::new();
    for run in runs {
        let mut reasons = Vec::new();
        let mut home = None;
        for (i, m) in machines.iter().enumerate() {
            let (same, words) = same_machine(key(&m[0]), key(&run));
            if same {
                home = Some(i);
                break;
            }
            reasons.push(words);
        }
        match home {
            Some(i) => machines[i].push(run),
            None => {
                if let Some(first) = reasons.into_iter().next() {
                    why.push(first);
                }
                machines.push(vec![run]);
            }
        }
    }
    let named: Vec<(String, Vec<T>)> = machines
        .into_iter()
        .enumerate()
        .map(|(i, runs)| {
            if i == 0 {
                return (name.to_string(), runs);
            }
            let n = (i + 1..)
                .map(|k| format!("{name} [machine {k}]"))
                .find(|n| !taken.contains(n))
                .expect("an unused number");
            taken.insert(n.clone());
            (n, runs)
        })
        .collect();
    let note = (named.len() > 1).then(|| {
        let names: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
        format!(
            "{name}: runs of {} machines under one host name, not pooled ({}); shown as {}",
            named.len(),
            why.join("; "),
            names.join(", ")
        )
    });
    (named, note)
}
