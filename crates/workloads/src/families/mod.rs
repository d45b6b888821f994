//! The test families of the fixed profile and their registry. Each implements the engine's
//! [`Family`] trait and is held as a [`DynFamily`] (how to add one: the docs of `hwsurvey_engine::family`).

use hwsurvey_engine::family::check_sections;
pub use hwsurvey_engine::family::{DynFamily, Family};
use hwsurvey_engine::profile::{Profile, ProfileError};

pub mod c2c_latency;
pub mod cpu_clock;
pub mod cpu_scaling;
pub mod mem_bandwidth;
pub mod mem_latency;
pub mod mem_loaded_latency;
pub mod raid_parity;
pub mod service_point_select;
pub mod storage_iops;
pub mod sync_contention;

/// Every family, in run order. Add one line per family.
pub fn registry() -> Vec<&'static dyn DynFamily> {
    vec![
        &mem_bandwidth::MemBandwidth,
        &raid_parity::RaidParity,
        &storage_iops::StorageIops,
        &mem_latency::MemLatency,
        &mem_loaded_latency::MemLoadedLatency,
        &cpu_clock::CpuClock,
        &cpu_scaling::CpuScaling,
        &c2c_latency::C2cLatency,
        &sync_contention::SyncContention,
        &service_point_select::ServicePointSelect,
    ]
}

/// Ids of every registered family.
pub fn ids() -> Vec<&'static str> {
    registry().iter().map(|f| f.id()).collect()
}

/// Loads a profile (built-in name or path) and checks every family section.
pub fn load_profile(name_or_path: &str) -> Result<Profile, ProfileError> {
    let ids = ids();
    let profile = Profile::load(name_or_path, &ids)?;
    check_profile(&profile)?;
    Ok(profile)
}

/// Checks each family section of `profile` with its family.
pub fn check_profile(profile: &Profile) -> Result<(), ProfileError> {
    check_sections(profile, &registry())
}
