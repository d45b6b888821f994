//! The cargo arguments that decide which compiled units a cross dist build (`cargo xtask dist`)
//! shares with scripts/cross-test's suites (both with `/usr/bin/cargo -Zbuild-std --release`).
//! Read by `xtask dist` and by xtask/tests/dist_reuses_cross_build.rs, which fails when a dist
//! build would compile a unit that the suites' builds did not.

/// One feature resolution for the whole workspace (scripts/cross-test passes the same).
pub const UNIFY: [&str; 3] = [
    "-Zfeature-unification",
    "--config",
    "resolver.feature-unification=\"workspace\"",
];

/// What a cross dist build names, after `--package hwsurvey`: the binary, and the CLI's `run`
/// suite, whose naming brings in the dev-dependencies' features (nix `term`; through proptest,
/// rand's getrandom `std` and `sys_rng`, once_cell `default`) as the suites' builds have them.
/// Without it, the binary and every crate above nix, getrandom and once_cell hash differently
/// and compile a second time (92 crates, 287 s for aarch64 on a 2-vCPU Zen 2, 2026-12-06).
pub const DIST_TARGETS: [&str; 4] = ["--bin", "hwsurvey", "--test", "run"];
