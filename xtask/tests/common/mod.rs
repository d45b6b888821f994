//! What the xtask tests share: the workspace as `cargo metadata` describes it.

use std::process::Command;

/// `cargo metadata --format-version 1 --no-deps --offline` of the workspace, as JSON. Panics
/// with cargo's stderr when it fails (a test of the workspace's layout cannot go on without it).
pub fn workspace_metadata() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}
