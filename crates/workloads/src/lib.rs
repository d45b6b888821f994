//! The test families of the fixed profile and what they drive: the storage engine, the
//! in-memory service table, RAID-6 parity.
//!
//! Each family implements the engine's [`hwsurvey_engine::Family`] trait and is listed once in
//! [`families::registry`]; how to add one is in the docs of `hwsurvey_engine::family`, with
//! `mem.bandwidth` as the worked example. The engine (profile, plan, runner, run loop) is the
//! `hwsurvey-engine` crate, which names no family.

pub mod clock;
pub mod families;
pub mod raid6;
pub mod service;
pub mod soak;
pub mod storage;
pub mod watch_clock;
