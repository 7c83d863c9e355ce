//! htop 3.4.1 for `cargo xtask clients`: its upstream tarball checked
//! against Debian's Sources index, the patches in `clients/htop/` applied,
//! built static against ncursesw; and what its identity test and bench
//! need beside the binary (the terminal htopscreen emulates, the htoprc).
//!
//! Debian's pool serves htop 3.4.1's `.orig` tarball but not its `.dsc` nor
//! its Debian files (404), so `apt-get source --download-only` saves the
//! tarball and then fails. The tarball is taken when it is there and its
//! SHA-256 is the one trixie's Sources index (signed, read through
//! `apt-cache showsrc`) gives for it.

use crate::run::{output, run_quiet, step, timed};
use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The upstream release the patches are made against.
pub const VERSION: &str = "3.4.1";
/// The tarball `apt-get source` leaves (Debian's name for upstream's).
pub const TARBALL: &str = "htop_3.4.1.orig.tar.gz";
/// The configuration of both builds: static (with ncursesw's and tinfo's
/// archives), none of the optional libraries.
const CONFIGURE: [&str; 7] = [
    "--enable-static",
    "--disable-hwloc",
    "--disable-sensors",
    "--disable-capabilities",
    "--disable-delayacct",
    "--disable-unwind",
    "--disable-affinity",
];
/// The terminal htopscreen.c emulates, as a terminfo source.
const TERMINFO_SOURCE: &str = "guest-tests/clients/pidmap-screen.ti";

/// The SHA-256 that `apt-cache showsrc` gives for `file` in a stanza of
/// `package` whose version starts with `version` and a dash.
pub fn indexed_sha256(showsrc: &str, version: &str, file: &str) -> Option<String> {
    for stanza in showsrc.split("\n\n") {
        let in_version = stanza.lines().any(|l| {
            l.strip_prefix("Version: ")
                .is_some_and(|v| v.trim().starts_with(&format!("{version}-")))
        });
        if !in_version {
            continue;
        }
        let mut in_sha256 = false;
        for line in stanza.lines() {
            if !line.starts_with(' ') {
                in_sha256 = line.starts_with("Checksums-Sha256:");
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            if in_sha256 && words.len() == 3 && words[2] == file {
                return Some(words[0].to_string());
            }
        }
    }
    None
}

fn sha256_of(path: &Path) -> Result<String> {
    let bytes = fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// htop's tarball in `dl`, downloaded once with `apt-get source` from
/// `suite` (whose deb-src source the caller has added) and checked.
pub fn fetch(dl: &Path, suite: &str) -> Result<PathBuf> {
    let tarball = dl.join(TARBALL);
    let showsrc = output(Command::new("apt-cache").args(["showsrc", "htop"]))?;
    let Some(want) = indexed_sha256(&showsrc, VERSION, TARBALL) else {
        bail!("apt's Sources index has no htop {VERSION} with {TARBALL}");
    };
    if !tarball.exists() {
        fs::create_dir_all(dl)?;
        // Fails after saving the tarball: the .dsc and the Debian files are
        // not served. The tarball is checked below either way.
        let status = Command::new("apt-get")
            .current_dir(dl)
            .args(["source", "--download-only", "-q"])
            .arg(format!("htop/{suite}"))
            .status()
            .context("cannot start apt-get source")?;
        if !tarball.exists() {
            bail!("apt-get source ({status}) left no {}", tarball.display());
        }
        if !status.success() {
            step(format!(
                "htop: apt-get source saved {TARBALL} only ({status}): checking it against the index"
            ));
        }
    }
    let got = sha256_of(&tarball)?;
    if got != want {
        fs::remove_file(&tarball)?;
        bail!("{TARBALL}: SHA-256 {got}, the Sources index says {want} (removed)");
    }
    Ok(tarball)
}

/// Builds htop from `tarball` with `patches` applied (patch -p1), static,
/// in `src`, and copies the binary to `out/htop`; rebuilt only when the
/// tarball, the patches, the uapi header or the configuration changed.
/// `include` holds the uapi header as `<linux/pidmap.h>`.
pub fn build(
    tarball: &Path,
    patches: &[PathBuf],
    header: &Path,
    include: &Path,
    src: &Path,
    out: &Path,
) -> Result<PathBuf> {
    let name = out
        .file_name()
        .map_or("htop".into(), |n| n.to_string_lossy().into_owned());
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    TARBALL.hash(&mut hasher);
    CONFIGURE.hash(&mut hasher);
    for p in patches.iter().chain(std::iter::once(&header.to_path_buf())) {
        fs::read(p)
            .with_context(|| format!("cannot read {}", p.display()))?
            .hash(&mut hasher);
    }
    let key = format!("{:016x}\n", hasher.finish());
    let stamp = out.join(".built");
    let binary = out.join("htop");
    if fs::read_to_string(&stamp).is_ok_and(|s| s == key) && binary.exists() {
        step(format!("{name}: up to date in {}", out.display()));
        return Ok(binary);
    }
    if src.exists() {
        fs::remove_dir_all(src)?;
    }
    fs::create_dir_all(src)?;
    run_quiet(
        Command::new("tar")
            .arg("xf")
            .arg(tarball)
            .arg("-C")
            .arg(src)
            .args(["--strip-components=1", "--no-same-owner"]),
    )?;
    for patch in patches {
        step(format!("{name}: applying {}", patch.display()));
        run_quiet(
            Command::new("patch")
                .current_dir(src)
                .args([
                    "-p1",
                    "--forward",
                    "--batch",
                    "--no-backup-if-mismatch",
                    "-i",
                ])
                .arg(patch),
        )?;
    }
    // The release tarball has no configure script: autogen.sh's command.
    timed(&format!("{name}: autoreconf"), || {
        run_quiet(
            Command::new("autoreconf")
                .current_dir(src)
                .args(["--force", "--install"]),
        )
    })?;
    timed(&format!("{name}: configure"), || {
        run_quiet(
            Command::new("nice")
                .current_dir(src)
                .args(["-n", "10", "./configure", "-q"])
                .args(CONFIGURE)
                .arg(format!("CPPFLAGS=-I{}", include.display())),
        )
    })?;
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    timed(&format!("{name}: make (static)"), || {
        run_quiet(
            Command::new("nice")
                .current_dir(src)
                .args(["-n", "10", "make"])
                .arg(format!("-j{jobs}"))
                .arg("htop"),
        )
    })?;
    fs::create_dir_all(out)?;
    fs::copy(src.join("htop"), &binary).with_context(|| format!("{name}: no htop after make"))?;
    fs::write(&stamp, key)?;
    step(format!("{name}: htop in {}", out.display()));
    Ok(binary)
}

/// Compiles the terminfo entry htopscreen emulates into `dir` (a
/// terminfo directory: `dir/p/pidmap-screen`).
pub fn terminfo(root: &Path, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir)?;
    run_quiet(
        Command::new("tic")
            .arg("-o")
            .arg(dir)
            .arg(root.join(TERMINFO_SOURCE)),
    )
    .context("cannot compile the pidmap-screen terminfo entry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sha256_is_the_one_of_the_version_asked_for() {
        let showsrc = "Package: htop\nVersion: 3.2.2-2\nChecksums-Sha256:\n \
                       1111 10 htop_3.2.2.orig.tar.gz\n\n\
                       Package: htop\nVersion: 3.4.1-5\nFiles:\n \
                       c3e0 427538 htop_3.4.1.orig.tar.gz\nChecksums-Sha256:\n \
                       2222 2000 htop_3.4.1-5.dsc\n \
                       af9e 427538 htop_3.4.1.orig.tar.gz\nHomepage: https://htop.dev/\n";
        assert_eq!(
            indexed_sha256(showsrc, "3.4.1", "htop_3.4.1.orig.tar.gz").as_deref(),
            Some("af9e")
        );
        assert_eq!(
            indexed_sha256(showsrc, "3.2.2", "htop_3.2.2.orig.tar.gz").as_deref(),
            Some("1111")
        );
        assert_eq!(
            indexed_sha256(showsrc, "3.4", "htop_3.4.1.orig.tar.gz"),
            None
        );
        assert_eq!(
            indexed_sha256(showsrc, "3.4.1", "htop_3.4.1-5.debian.tar.xz"),
            None
        );
    }
}
