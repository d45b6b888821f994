//! Unit tests of the limits parsers and readers (`super`).
use super::*;

#[test]
fn mountinfo_finds_v1_v2_and_legacy_cpuset() {
    let text = "\
30 23 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
35 30 0:31 / /sys/fs/cgroup/memory rw,relatime shared:14 - cgroup cgroup rw,memory
36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
37 30 0:33 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate
38 23 0:34 /docker/ab /dev/my\\040cpuset rw - cpuset cpuset rw
39 30 0:35 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd
";
    let m = parse_mountinfo(text);
    assert_eq!(m.len(), 5);
    assert_eq!(m[0].fs, CgroupFs::V1(vec!["memory".into()]));
    assert_eq!(m[0].mount_point, "/sys/fs/cgroup/memory");
    assert_eq!(m[1].fs, CgroupFs::V1(vec!["cpu".into(), "cpuacct".into()]));
    assert_eq!(m[2].fs, CgroupFs::V2);
    assert_eq!(m[3].fs, CgroupFs::LegacyCpuset);
    assert_eq!(m[3].mount_point, "/dev/my cpuset");
    assert_eq!(m[3].root, "/docker/ab");
    assert_eq!(m[4].fs, CgroupFs::V1(vec!["xattr".into()]));
}

#[test]
fn limit_files_and_rlimits() {
    assert_eq!(parse_limit_bytes("max\n"), Ok(None));
    assert_eq!(parse_limit_bytes("9223372036854771712\n"), Ok(None));
    assert_eq!(parse_limit_bytes("209715200\n"), Ok(Some(200 << 20)));
    assert_eq!(parse_limit_bytes("-1"), Ok(None));
    assert_eq!(parse_limit_bytes("lots"), Err("lots".into()));
    let limits = "\
Limit                     Soft Limit           Hard Limit           Units
Max data size             unlimited            unlimited            bytes
Max address space         1073741824           unlimited            bytes
";
    assert_eq!(
        parse_proc_limits(limits, "Max address space"),
        Some(Some(1 << 30))
    );
    assert_eq!(parse_proc_limits(limits, "Max data size"), Some(None));
    assert_eq!(parse_proc_limits(limits, "Max stack size"), None);
}

#[test]
fn cgroup_dir_is_relative_to_the_mounted_root() {
    let m = CgroupMount {
        fs: CgroupFs::V2,
        root: "/".into(),
        mount_point: "/sys/fs/cgroup/unified".into(),
    };
    assert_eq!(cgroup_dir(&m, "/a/b"), "/sys/fs/cgroup/unified/a/b");
    assert_eq!(cgroup_dir(&m, "/"), "/sys/fs/cgroup/unified");
    let c = CgroupMount {
        root: "/docker/ab".into(),
        mount_point: "/sys/fs/cgroup".into(),
        ..m
    };
    assert_eq!(cgroup_dir(&c, "/docker/ab"), "/sys/fs/cgroup");
    assert_eq!(cgroup_dir(&c, "/docker/ab/x"), "/sys/fs/cgroup/x");
    assert_eq!(cgroup_dir(&c, "/other"), "/sys/fs/cgroup");
    assert_eq!(
        up_to("/sys/fs/cgroup/a/b", "/sys/fs/cgroup"),
        ["/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"]
    );
}

#[test]
fn usable_cpus_intersect_and_name_their_sources() {
    let set = |s: &str| CpuSet::parse_list(s).unwrap();
    let l = Limits {
        mem_available_bytes: Probed::Known(8 << 30),
        memory_limits: vec![
            MemoryLimit {
                bytes: 1 << 30,
                source: "cgroup v2 memory.high (x)".into(),
                in_use_bytes: None,
            },
            MemoryLimit {
                bytes: 200 << 20,
                source: "cgroup v1 memory.limit_in_bytes (y)".into(),
                in_use_bytes: None,
            },
        ],
        cpu_quotas: vec![],
        cpu_limits: vec![
            CpuLimit {
                cpus: set("0-7"),
                source: "sched_getaffinity".into(),
            },
            CpuLimit {
                cpus: set("2-9"),
                source: "/dev/cpuset/a/cpus".into(),
            },
        ],
        problems: vec![],
    };
    let cap = l.memory_cap().unwrap();
    assert_eq!(cap.bytes, 200 << 20);
    assert!(cap.source.starts_with("cgroup v1 memory.limit_in_bytes"));
    assert_eq!(l.cgroup_limit_bytes(), Some(200 << 20));
    let u = l.usable_cpus().unwrap();
    assert_eq!(u.cpus, set("2-7"));
    assert_eq!(u.source, "sched_getaffinity ∩ /dev/cpuset/a/cpus");
}
