//! What a guest boots, fetched on the host: Debian's kernel, its modules and busybox-static
//! (`apt-get download` into `target/guests/cache/<debian-arch>/`, unpacked with `dpkg-deb -x`),
//! and the static dist binary of hwsurvey for the guest's architecture.

use super::*;

pub(crate) fn run_cmd(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    if !out.status.success() {
        bail!(
            "{cmd:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `target/guests/cache/<debian-arch>`.
pub(crate) fn cache_dir(arch: &str) -> PathBuf {
    workspace_root().join("target/guests/cache").join(arch)
}

/// Downloads (once) and unpacks a package of `arch` into the cache; returns its folder.
pub(crate) fn fetch_package(arch: &str, package: &str) -> Result<PathBuf> {
    let cache = cache_dir(arch);
    let unpacked = cache.join(package);
    if unpacked.join(".complete").exists() {
        return Ok(unpacked);
    }
    fs::create_dir_all(&cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let spec = format!("{package}:{arch}");
    run_cmd(
        Command::new("apt-get")
            .args(["download", "-q", &spec])
            .current_dir(&cache),
    )
    .with_context(|| {
        format!(
            "cannot download {spec} (for {arch}: `dpkg --add-architecture {arch} && apt-get update`, as scripts/lib.sh's set-up does)"
        )
    })?;
    let prefix = format!("{package}_");
    let deb = fs::read_dir(&cache)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".deb"))
        })
        .with_context(|| {
            format!(
                "apt-get download {spec} left no {prefix}*.deb in {}",
                cache.display()
            )
        })?;
    let _ = fs::remove_dir_all(&unpacked);
    run_cmd(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&unpacked))?;
    fs::write(unpacked.join(".complete"), deb.display().to_string())?;
    Ok(unpacked)
}

/// The versioned kernel package the meta package `linux-image-<arch>` depends on. Asked of
/// apt-cache once per architecture and process (a guest's kernel and each of its modules ask
/// again; apt-cache takes seconds on a loaded host).
fn kernel_package(arch: &str) -> Result<String> {
    static KNOWN: std::sync::Mutex<BTreeMap<String, String>> =
        std::sync::Mutex::new(BTreeMap::new());
    if let Some(p) = KNOWN.lock().ok().and_then(|k| k.get(arch).cloned()) {
        return Ok(p);
    }
    let package = kernel_package_uncached(arch)?;
    if let Ok(mut k) = KNOWN.lock() {
        k.insert(arch.to_owned(), package.clone());
    }
    Ok(package)
}

fn kernel_package_uncached(arch: &str) -> Result<String> {
    let meta = format!("linux-image-{arch}:{arch}");
    let text = run_cmd(Command::new("apt-cache").args(["depends", &meta])).with_context(|| {
        format!(
            "cannot resolve {meta} (for arm64: `dpkg --add-architecture arm64 && apt-get update`)"
        )
    })?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Depends:"))
        .map(|d| d.trim().trim_end_matches(&format!(":{arch}")).to_owned())
        .find(|d| d.starts_with("linux-image-") && d.ends_with(&format!("-{arch}")))
        .with_context(|| {
            format!("apt-cache depends {meta} names no linux-image-<abi>-{arch}:\n{text}")
        })
}

/// The kernel image of `arch`: `boot/vmlinuz-*` of Debian's current kernel package.
pub fn kernel_image(arch: &str) -> Result<PathBuf> {
    let package = kernel_package(arch)?;
    let dir = fetch_package(arch, &package)?.join("boot");
    fs::read_dir(&dir)
        .with_context(|| format!("{}: no boot folder in {package}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("vmlinuz-"))
        })
        .with_context(|| format!("{package} holds no {}/vmlinuz-*", dir.display()))
}

/// The module file `<name>.ko` of the Debian kernel package of `arch`
/// (`lib/modules/<version>/kernel/...`).
pub fn kernel_module(arch: &str, name: &str) -> Result<PathBuf> {
    let package = kernel_package(arch)?;
    let modules = fetch_package(arch, &package)?.join("lib/modules");
    let file = format!("{name}.ko");
    let mut stack = vec![modules.clone()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
            let p = e?.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().and_then(|n| n.to_str()) == Some(file.as_str()) {
                return Ok(p);
            }
        }
    }
    bail!("{package} holds no {file} under {}", modules.display())
}

/// busybox of `arch`, from Debian's busybox-static.
pub fn busybox(arch: &str) -> Result<PathBuf> {
    let path = fetch_package(arch, "busybox-static")?.join("bin/busybox");
    if !path.exists() {
        bail!("busybox-static:{arch} holds no {}", path.display());
    }
    Ok(path)
}

/// The static dist binary of `guest`; built with `cargo xtask dist <arch>` when missing.
pub fn dist_binary(guest: &Guest) -> Result<PathBuf> {
    let root = workspace_root();
    let path = root
        .join("target/dist")
        .join(guest.triple())
        .join("hwsurvey");
    if !path.exists() {
        eprintln!(
            "guest: {} missing; building it with `cargo xtask dist {}`",
            path.display(),
            guest.arch
        );
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        run_cmd(
            Command::new(cargo)
                .args(["xtask", "dist", &guest.arch])
                .current_dir(&root),
        )?;
        if !path.exists() {
            bail!(
                "`cargo xtask dist {}` wrote no {}",
                guest.arch,
                path.display()
            );
        }
    }
    Ok(path)
}
