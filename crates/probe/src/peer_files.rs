//! The kernel files that the peers' own tools read, read through a [`SysRoot`] so that they are
//! recorded ([`SysRoot::accessed`]) and `hwsurvey snapshot` archives them beside the files the
//! probe itself read. A snapshot is then a superset of what `lscpu --sysroot DIR` (util-linux)
//! and `lstopo --input DIR` (hwloc's `hwloc-gather-topology` set, CPU, NUMA, cgroup, DMI and PCI
//! parts) read, so a colleague or a vendor can run their tools on it.
//!
//! Found by tracing the tools (`strace -f -e trace=openat lscpu --sysroot DIR`, the same for
//! `lstopo-no-graphics --input DIR` and `lscpu -e`): without the bitmask files
//! (`cache/index*/shared_cpu_map`, `topology/thread_siblings`, `core_siblings`, node `cpumap`)
//! lscpu aborted (`print_cpuset: Assertion 'set' failed`) and hwloc "failed to find sysfs cpu
//! topology directory" on a snapshot of a 16-vCPU KVM guest.
//!
//! Read here (each only where it exists; a file that cannot be read is left out):
//! - `/sys/devices/system/cpu/`: `online`, `possible`, `present`, `offline`, `kernel_max`,
//!   `isolated`, `nohz_full`, `dispatching`, `smt/{control,active}`, `cpufreq/boost`,
//!   `vulnerabilities/*`; per `cpuN/`: `online`, `cpu_capacity`, `address`, `configure`,
//!   `polarization`, [`TOPOLOGY_FILES`] under `topology/`, [`CACHE_FILES`] under each
//!   `cache/indexM/`, [`CPUFREQ_FILES`] under `cpufreq/`;
//! - the links of `/sys/bus/cpu/devices/` and `/sys/bus/node/devices/`;
//! - `/sys/devices/system/node/`: `online`, `possible`, `has_cpu`, `has_memory`,
//!   `has_normal_memory`; per `nodeN/`: `cpumap`, `cpulist`, `meminfo`, `distance`,
//!   `hugepages/*/{nr,free,surplus}_hugepages`, `access{0,1}/initiators/*` and
//!   `memory_side_cache/index*/*` (hwloc's memory attributes);
//! - `/proc/cpuinfo`, `meminfo`, `mounts`, `version`, `cmdline`, `sysinfo` (s390),
//!   `bus/pci/devices`, `sys/kernel/osrelease`, `self/cpuset`, `self/cgroup`,
//!   `hwloc-nofile-info` (uname and page size as hwloc-gather-topology saved them), and the cpuset
//!   files of the process's cgroup in the cgroup mounts ([`crate::cgroup`]; hwloc's
//!   allowed CPUs and nodes);
//! - the DMI strings `/sys/class/dmi/id/*` (SMBIOS Types 0, 1, 2, 3; the serial numbers only
//!   where readable, i.e. as root) and the raw tables `/sys/firmware/dmi/tables/*` (root);
//! - per PCI function of `/sys/bus/pci/devices/`: [`PCI_FILES`] (`config` included: lspci's
//!   sysfs method reads it).
//!
//! At most [`MAX_PEER_FILES`] files are tried, so a machine of thousands of CPUs stays bounded.

use crate::cgroup::CgroupFs;
use crate::SysRoot;

/// Most files [`read_peer_files`] tries (about 80 per CPU: enough for 3000 CPUs).
pub const MAX_PEER_FILES: usize = 250_000;

/// Files of `cpuN/topology/` (ids and both the bitmask and the list form of each set).
pub const TOPOLOGY_FILES: &[&str] = &[
    "physical_package_id",
    "die_id",
    "cluster_id",
    "core_id",
    "book_id",
    "drawer_id",
    "thread_siblings",
    "thread_siblings_list",
    "core_cpus",
    "core_cpus_list",
    "core_siblings",
    "core_siblings_list",
    "cluster_cpus",
    "cluster_cpus_list",
    "die_cpus",
    "die_cpus_list",
    "package_cpus",
    "package_cpus_list",
    "book_siblings",
    "book_siblings_list",
    "drawer_siblings",
    "drawer_siblings_list",
];

/// Files of `cpuN/cache/indexM/`.
pub const CACHE_FILES: &[&str] = &[
    "id",
    "level",
    "type",
    "size",
    "coherency_line_size",
    "number_of_sets",
    "ways_of_associativity",
    "physical_line_partition",
    "shared_cpu_map",
    "shared_cpu_list",
    "allocation_policy",
    "write_policy",
];

/// Files of `cpuN/cpufreq/` (lscpu's MAXMHZ, MINMHZ, MHZ; hwloc's base frequency).
pub const CPUFREQ_FILES: &[&str] = &[
    "cpuinfo_max_freq",
    "cpuinfo_min_freq",
    "scaling_cur_freq",
    "scaling_max_freq",
    "scaling_min_freq",
    "base_frequency",
    "scaling_driver",
    "scaling_governor",
];

/// Files of each `/sys/bus/pci/devices/DDDD:BB:DD.F/`.
pub const PCI_FILES: &[&str] = &[
    "class",
    "vendor",
    "device",
    "subsystem_vendor",
    "subsystem_device",
    "revision",
    "config",
    "local_cpus",
    "local_cpulist",
    "numa_node",
    "current_link_speed",
    "current_link_width",
    "max_link_speed",
    "max_link_width",
];

/// What [`read_peer_files`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerFiles {
    /// Files and links read (each now in [`SysRoot::accessed`]).
    pub read: usize,
    /// Files tried (read or not there).
    pub tried: usize,
    /// True when [`MAX_PEER_FILES`] stopped the reading before the end.
    pub truncated: bool,
}

/// The reader: counts against the bound.
struct Reader<'a> {
    root: &'a SysRoot,
    out: PeerFiles,
}

impl Reader<'_> {
    /// False once the bound is reached.
    fn room(&mut self) -> bool {
        if self.out.tried >= MAX_PEER_FILES {
            self.out.truncated = true;
            return false;
        }
        true
    }

    /// Reads one file (recorded when it was read); errors leave it out.
    fn file(&mut self, path: &str) {
        if !self.room() {
            return;
        }
        self.out.tried += 1;
        if self.root.read_bytes(path).is_ok() {
            self.out.read += 1;
        }
    }

    /// Reads `names` under folder `dir`.
    fn files(&mut self, dir: &str, names: &[&str]) {
        for name in names {
            self.file(&format!("{dir}/{name}"));
        }
    }

    /// Lists folder `dir` (recorded), empty when it is not there.
    fn list(&mut self, dir: &str) -> Vec<String> {
        self.root.list_dir(dir).unwrap_or_default()
    }

    /// Reads every regular file directly in `dir` (no sub-folders).
    fn all_files(&mut self, dir: &str) {
        for name in self.list(dir) {
            let path = format!("{dir}/{name}");
            if !self.room() {
                return;
            }
            self.out.tried += 1;
            if self.root.read_bytes(&path).is_ok() {
                self.out.read += 1;
            }
        }
    }

    /// Records each link of folder `dir` (`/sys/bus/cpu/devices/cpu0 -> ../../../devices/...`).
    fn links(&mut self, dir: &str) {
        for name in self.list(dir) {
            if !self.room() {
                return;
            }
            self.out.tried += 1;
            if self.root.read_link(&format!("{dir}/{name}")).is_ok() {
                self.out.read += 1;
            }
        }
    }
}

/// Whether `name` is `prefix` followed by a decimal number (`cpu12`, `node3`, `index0`).
fn numbered(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Reads the files the peers' tools read (see the module text) under `root`, so that they are
/// recorded in [`SysRoot::accessed`]. Never fails: a file that is not there or cannot be read is
/// left out; at most [`MAX_PEER_FILES`] are tried ([`PeerFiles::truncated`] says so).
pub fn read_peer_files(root: &SysRoot) -> PeerFiles {
    let mut r = Reader {
        root,
        out: PeerFiles::default(),
    };
    cpus(&mut r);
    nodes(&mut r);
    proc_and_cgroups(&mut r);
    firmware(&mut r);
    pci(&mut r);
    r.out
}

fn cpus(r: &mut Reader) {
    const CPU: &str = "/sys/devices/system/cpu";
    r.files(
        CPU,
        &[
            "online",
            "possible",
            "present",
            "offline",
            "kernel_max",
            "isolated",
            "nohz_full",
            "dispatching",
            "smt/control",
            "smt/active",
            "cpufreq/boost",
        ],
    );
    r.all_files(&format!("{CPU}/vulnerabilities"));
    for cpu in r.list(CPU).into_iter().filter(|n| numbered(n, "cpu")) {
        let dir = format!("{CPU}/{cpu}");
        r.files(
            &dir,
            &[
                "online",
                "cpu_capacity",
                "address",
                "configure",
                "polarization",
            ],
        );
        r.files(&format!("{dir}/topology"), TOPOLOGY_FILES);
        let cache = format!("{dir}/cache");
        for index in r.list(&cache).into_iter().filter(|n| numbered(n, "index")) {
            r.files(&format!("{cache}/{index}"), CACHE_FILES);
        }
        r.files(&format!("{dir}/cpufreq"), CPUFREQ_FILES);
        if !r.room() {
            return;
        }
    }
    r.links("/sys/bus/cpu/devices");
}

fn nodes(r: &mut Reader) {
    const NODE: &str = "/sys/devices/system/node";
    r.files(
        NODE,
        &[
            "online",
            "possible",
            "has_cpu",
            "has_memory",
            "has_normal_memory",
        ],
    );
    for node in r.list(NODE).into_iter().filter(|n| numbered(n, "node")) {
        let dir = format!("{NODE}/{node}");
        r.files(&dir, &["cpumap", "cpulist", "meminfo", "distance"]);
        let pools = format!("{dir}/hugepages");
        for pool in r.list(&pools) {
            r.files(
                &format!("{pools}/{pool}"),
                &["nr_hugepages", "free_hugepages", "surplus_hugepages"],
            );
        }
        for access in ["access0", "access1"] {
            r.all_files(&format!("{dir}/{access}/initiators"));
        }
        let side = format!("{dir}/memory_side_cache");
        for index in r.list(&side).into_iter().filter(|n| numbered(n, "index")) {
            r.files(
                &format!("{side}/{index}"),
                &["indexing", "line_size", "size", "write_policy"],
            );
        }
        if !r.room() {
            return;
        }
    }
    r.links("/sys/bus/node/devices");
}

fn proc_and_cgroups(r: &mut Reader) {
    r.files(
        "/proc",
        &[
            "cpuinfo",
            "meminfo",
            "mounts",
            "version",
            "cmdline",
            "sysinfo",
            "bus/pci/devices",
            "sys/kernel/osrelease",
            "self/cpuset",
            "self/cgroup",
            "hwloc-nofile-info",
        ],
    );
    // the cpuset files of the process's cgroup and of its hierarchy's top, in every mount
    // that can hold them (hwloc's allowed CPUs and nodes), from the one walk of crate::cgroup
    let Ok(cgroups) = crate::cgroup::read(r.root) else {
        return;
    };
    for m in &cgroups.mounts {
        let path = cgroups
            .memberships
            .iter()
            .find(|mb| match &m.fs {
                CgroupFs::V2 => mb.is_v2(),
                CgroupFs::V1(_) | CgroupFs::LegacyCpuset => mb.has("cpuset"),
            })
            .map(|mb| mb.path.as_str());
        if !(m.fs == CgroupFs::V2 || m.fs == CgroupFs::LegacyCpuset || m.has("cpuset")) {
            continue;
        }
        let mut dirs = vec![m.mount_point.trim_end_matches('/').to_string()];
        if let Some(p) = path.filter(|p| p.starts_with('/') && *p != "/") {
            dirs.push(m.dir_of(p));
        }
        for dir in dirs {
            r.files(
                &dir,
                &[
                    "cpuset.cpus",
                    "cpuset.mems",
                    "cpuset.cpus.effective",
                    "cpuset.mems.effective",
                ],
            );
        }
    }
}

fn firmware(r: &mut Reader) {
    r.all_files("/sys/class/dmi/id");
    r.files("/sys/firmware/dmi/tables", &["smbios_entry_point", "DMI"]);
}

fn pci(r: &mut Reader) {
    const PCI: &str = "/sys/bus/pci/devices";
    let functions = r.list(PCI);
    for f in functions {
        if !r.room() {
            return;
        }
        let dir = format!("{PCI}/{f}");
        r.out.tried += 1;
        if r.root.read_link(&dir).is_ok() {
            r.out.read += 1;
        }
        r.files(&dir, PCI_FILES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cpuset files of the process's cgroup come from the one reading of its cgroups
    /// (mountinfo's mounts, the path relative to a mount's root): a container's v2 mount of
    /// `/docker/ab` at /sys/fs/cgroup and a legacy cpuset mount, as hwloc reads them.
    #[test]
    fn the_cgroup_cpuset_files_of_the_process() {
        let dir = tempfile::tempdir().unwrap();
        let w = |p: &str, v: &str| {
            let f = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, v).unwrap();
        };
        w(
            "/proc/self/mountinfo",
            "30 23 0:26 /docker/ab /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n\
             31 23 0:27 / /dev/cpuset rw - cpuset none rw\n",
        );
        w("/proc/self/cgroup", "3:cpuset:/batch\n0::/docker/ab/job\n");
        w("/sys/fs/cgroup/cpuset.cpus.effective", "0-7");
        w("/sys/fs/cgroup/job/cpuset.cpus.effective", "2-3");
        w("/dev/cpuset/batch/cpuset.cpus", "4-7");
        let root = SysRoot::new(dir.path());
        read_peer_files(&root);
        let got = root.accessed();
        for f in [
            "/sys/fs/cgroup/cpuset.cpus.effective",
            "/sys/fs/cgroup/job/cpuset.cpus.effective",
            "/dev/cpuset/batch/cpuset.cpus",
            "/proc/self/cgroup",
        ] {
            assert!(got.iter().any(|a| a == f), "{f} not in {got:?}");
        }
    }

    #[test]
    fn numbered_names() {
        assert!(numbered("cpu12", "cpu"));
        assert!(!numbered("cpufreq", "cpu"));
        assert!(!numbered("cpu", "cpu"));
        assert!(numbered("index0", "index"));
    }
}
