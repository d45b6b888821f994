//! CPUs: the kernel's CPU sets, the process's allowed CPUs, topology (package, die, cluster,
//! core, thread), core kinds on hybrid parts, caches, TLBs and CPU identity per architecture,
//! as the probe records them ([`Cpu`]); the parsers of `/proc/cpuinfo` ([`cpuinfo`]) and of
//! the arm64 MIDR ([`midr`]); lscpu's op-modes, address sizes and byte order ([`modes`]); the decoders of the x86 cpuid TLB leaves ([`tlb`]).

pub mod cpuinfo;
pub mod midr;
pub mod modes;
pub mod nominal;
pub mod sets;
pub mod tlb;
mod types;
pub mod x86;

pub use cpuinfo::{Arch, Cpuinfo};
pub use midr::Midr;
pub use types::{
    Allowed, Cache, CacheType, CoreKind, Cpu, Identity, LogicalCpu, PackageCounts, Topology,
    NO_CLUSTER_LEVEL,
};
