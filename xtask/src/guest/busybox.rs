//! The static busybox that runs the guest's /init, for each architecture.
//!
//! x86_64 uses the host's `busybox-static`. Debian's arm64 build of the same
//! package is fetched with apt into a private state directory below
//! `target/xtask`: apt reads the host's Debian sources but keeps its own
//! arm64 package lists, so the host's dpkg architectures and lists are left
//! alone, and root is not needed.

use crate::arch::Arch;
use crate::paths::xtask_dir;
use crate::run::{run_quiet, step, timed};
use anyhow::{bail, Context, Result};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Overrides the download with a static aarch64 busybox of the user's.
const ARM64_OVERRIDE: &str = "PIDMAP_ARM64_BUSYBOX";

/// `EM_AARCH64` in an ELF header's `e_machine`.
const EM_AARCH64: u16 = 183;

pub fn path(arch: Arch) -> Result<PathBuf> {
    match arch {
        Arch::X86_64 => Ok(PathBuf::from("/bin/busybox")),
        Arch::Arm64 => arm64(),
    }
}

fn arm64() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(ARM64_OVERRIDE) {
        let path = PathBuf::from(path);
        check_aarch64(&path)?;
        return Ok(path);
    }
    let dir = xtask_dir().join("busybox-arm64");
    let bin = dir.join("busybox");
    if bin.exists() {
        return Ok(bin);
    }
    if !Path::new("/usr/bin/apt-get").exists() {
        bail!(
            "an arm64 guest needs a static aarch64 busybox: this is not a Debian host, \
             so build one and point {ARM64_OVERRIDE} at it"
        );
    }
    timed("fetching Debian's busybox-static for arm64", || {
        fetch_arm64(&dir, &bin)
    })?;
    check_aarch64(&bin)?;
    Ok(bin)
}

fn apt(state: &Path) -> Command {
    let mut cmd = Command::new("apt-get");
    cmd.arg("-q")
        .args(["-o", "APT::Architecture=arm64"])
        .args(["-o", "APT::Architectures::=arm64"])
        .arg("-o")
        .arg(format!(
            "Dir::State::Lists={}",
            state.join("lists").display()
        ))
        .arg("-o")
        .arg(format!(
            "Dir::State::status={}",
            state.join("status").display()
        ))
        .arg("-o")
        .arg(format!("Dir::Cache={}", state.join("cache").display()))
        .current_dir(state);
    cmd
}

fn fetch_arm64(dir: &Path, bin: &Path) -> Result<()> {
    let state = dir.join("apt");
    if state.exists() {
        fs::remove_dir_all(&state)?;
    }
    for sub in ["lists/partial", "cache/archives/partial"] {
        fs::create_dir_all(state.join(sub))?;
    }
    fs::write(state.join("status"), "")?;
    run_quiet(apt(&state).arg("update"))
        .context("apt-get update for the arm64 package lists failed")?;
    run_quiet(apt(&state).args(["download", "busybox-static"]))
        .context("apt-get download busybox-static (arm64) failed")?;
    let deb = fs::read_dir(&state)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .context("apt-get download left no .deb")?;
    let unpacked = dir.join("unpacked");
    if unpacked.exists() {
        fs::remove_dir_all(&unpacked)?;
    }
    run_quiet(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&unpacked))?;
    fs::copy(unpacked.join("bin/busybox"), bin)
        .context("the busybox-static package has no bin/busybox")?;
    step(format!(
        "arm64 busybox from {}",
        deb.file_name().unwrap_or_default().to_string_lossy()
    ));
    Ok(())
}

/// Refuses anything but an aarch64 ELF: a host busybox would only fail
/// later, as a guest that never reaches /init.
fn check_aarch64(path: &Path) -> Result<()> {
    let mut header = [0u8; 20];
    fs::File::open(path)
        .with_context(|| format!("cannot open {}", path.display()))?
        .read_exact(&mut header)
        .with_context(|| format!("{} is not an ELF file", path.display()))?;
    let machine = u16::from_le_bytes([header[18], header[19]]);
    if &header[..4] != b"\x7fELF" || machine != EM_AARCH64 {
        bail!("{} is not an aarch64 ELF executable", path.display());
    }
    Ok(())
}
