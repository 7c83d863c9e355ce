//! Host prerequisites: find what is missing and, as root on Debian, install it.
//!
//! The packages are listed once, in `.ci/packages` (read by `.ci/run`
//! too): each names the group of commands that needs it, the Debian
//! package, and a file that proves it is present, so a non-Debian or
//! non-root user gets the exact list to install instead of a failure deep
//! inside a kernel build.

use crate::arch::Arch;
use crate::paths::workspace_root;
use crate::run::{run, step};
use anyhow::{bail, Result};
use std::path::Path;
use std::process::Command;

pub const KERNEL_TARBALL: &str = "/usr/src/linux-source-7.3.tar.xz";

/// The package list, compiled in so that xtask and `.ci/run` cannot
/// disagree about it.
const PACKAGES: &str = include_str!("../../.ci/packages");

/// A group of `.ci/packages`: the commands that need the same packages.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Group {
    Build,
    KernelSource,
    Guest,
    Arm64,
    Selinux,
    RadixTree,
    Upstream,
    Bpf,
    CargoTest,
    Clients,
    Apparmor,
}

impl Group {
    const ALL: [Group; 11] = [
        Group::Build,
        Group::KernelSource,
        Group::Guest,
        Group::Arm64,
        Group::Selinux,
        Group::RadixTree,
        Group::Upstream,
        Group::Bpf,
        Group::CargoTest,
        Group::Clients,
        Group::Apparmor,
    ];

    fn name(self) -> &'static str {
        match self {
            Group::Build => "build",
            Group::KernelSource => "kernel-source",
            Group::Guest => "guest",
            Group::Arm64 => "arm64",
            Group::Selinux => "selinux",
            Group::RadixTree => "radix-tree",
            Group::Upstream => "upstream",
            Group::Bpf => "bpf",
            Group::CargoTest => "cargo-test",
            Group::Clients => "clients",
            Group::Apparmor => "apparmor",
        }
    }
}

/// One line of `.ci/packages`.
#[derive(Debug)]
struct Requirement {
    group: &'static str,
    package: &'static str,
    /// A file whose presence proves the package is installed.
    probe: &'static str,
}

fn requirements() -> Vec<Requirement> {
    PACKAGES
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let mut words = line.split_whitespace();
            let (Some(group), Some(package), Some(probe), None) =
                (words.next(), words.next(), words.next(), words.next())
            else {
                panic!(".ci/packages: not `GROUP PACKAGE PROBE`: {line}");
            };
            Requirement {
                group,
                package,
                probe,
            }
        })
        .collect()
}

fn missing(groups: &[Group]) -> Vec<&'static str> {
    let mut packages: Vec<&'static str> = requirements()
        .into_iter()
        .filter(|r| groups.iter().any(|g| g.name() == r.group))
        .filter(|r| !Path::new(r.probe).exists())
        .map(|r| r.package)
        .collect();
    packages.sort_unstable();
    packages.dedup();
    packages
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn is_debian() -> bool {
    Path::new("/etc/debian_version").exists() && Path::new("/usr/bin/apt-get").exists()
}

/// What building the kernel and booting an x86_64 guest need.
///
/// `need_tarball` is false when the caller passed `--kernel-src`.
pub fn ensure(need_tarball: bool) -> Result<()> {
    if need_tarball {
        install(&[Group::Build, Group::Guest, Group::KernelSource])
    } else {
        install(&[Group::Build, Group::Guest])
    }
}

/// What building for and booting `arch` needs beyond [`ensure`].
pub fn ensure_arch(arch: Arch) -> Result<()> {
    match arch {
        Arch::X86_64 => Ok(()),
        Arch::Arm64 => install(&[Group::Arm64]),
    }
}

/// What the host-side radix-tree suite needs.
pub fn ensure_radix_tree() -> Result<()> {
    install(&[Group::RadixTree])
}

/// What upstream's guest selftests need beyond [`ensure`].
pub fn ensure_upstream_selftests() -> Result<()> {
    install(&[Group::Upstream])
}

/// What building and loading the BPF programs needs (host test, BPF kernel).
pub fn ensure_bpf() -> Result<()> {
    install(&[Group::Bpf])
}

/// What compiling the SELinux boot's policy needs.
pub fn ensure_selinux() -> Result<()> {
    install(&[Group::Selinux])
}

/// The AppArmor boot's policy compiler, the probe of the `apparmor` group.
pub const APPARMOR_PARSER: &str = "/usr/sbin/apparmor_parser";

/// What compiling the AppArmor boot's profile needs.
pub fn ensure_apparmor() -> Result<()> {
    install(&[Group::Apparmor])
}

/// What fetching, patching and building procps-ng and htop need.
pub fn ensure_clients() -> Result<()> {
    install(&[Group::Build, Group::Clients])
}

/// Everything `cargo xtask test-all` runs: every group, or with
/// `host_only` the groups of its host stages.
pub fn ensure_test_all(host_only: bool) -> Result<()> {
    if host_only {
        install(&[Group::Build, Group::Bpf, Group::CargoTest])
    } else {
        install(&Group::ALL)
    }
}

/// Installs the missing packages of `groups`, or says which they are.
fn install(groups: &[Group]) -> Result<()> {
    let packages = missing(groups);
    if packages.is_empty() {
        return Ok(());
    }
    let list = packages.join(" ");
    if !(is_root() && is_debian()) {
        bail!("missing host packages: {list}\n  install them with: sudo apt-get install {list}");
    }
    step(format!("installing missing packages: {list}"));
    if groups.contains(&Group::KernelSource) {
        // linux-source-7.3 comes from trixie-backports, through a source
        // pinned so that nothing else is taken from that suite.
        run(&mut Command::new(
            workspace_root().join(".ci/apt-backports"),
        ))?;
    }
    run(Command::new("apt-get").args(["update", "-q"]))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-q", "--no-install-recommends"])
        .args(&packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    let still = missing(groups);
    if !still.is_empty() {
        bail!(
            "apt-get ran but these are still missing: {}",
            still.join(" ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Programs of the packages every Debian system has: `Essential: yes`
    /// (coreutils, tar, findutils, dash, libc-bin, dpkg, sed, grep,
    /// util-linux) and apt, which is how packages arrive at all.
    const ESSENTIAL: &[&str] = &[
        "apt-get",
        "apt-cache",
        "dpkg-deb",
        "find",
        "getent",
        "sh",
        "/bin/sh",
        "sleep",
        "tar",
        "true",
        "sed",
        "grep",
        "cat",
        "env",
        "id",
        "nice",
        "unshare",
    ];

    #[test]
    fn every_line_has_a_known_group_and_an_absolute_probe() {
        let reqs = requirements();
        assert!(reqs.len() > 20, "only {} packages read", reqs.len());
        for r in &reqs {
            assert!(
                Group::ALL.iter().any(|g| g.name() == r.group),
                "{r:?}: unknown group"
            );
            assert!(r.probe.starts_with('/'), "{r:?}: probe is not a path");
        }
        for g in Group::ALL {
            assert!(
                reqs.iter().any(|r| r.group == g.name()),
                "group {} has no package",
                g.name()
            );
        }
    }

    #[test]
    fn the_apparmor_parser_is_the_apparmor_probe() {
        let reqs = requirements();
        assert!(reqs
            .iter()
            .any(|r| r.group == "apparmor" && r.probe == APPARMOR_PARSER));
    }

    #[test]
    fn kernel_tarball_is_the_kernel_source_probe() {
        let reqs = requirements();
        let source: Vec<_> = reqs.iter().filter(|r| r.group == "kernel-source").collect();
        assert_eq!(source.len(), 1);
        assert_eq!(source[0].probe, KERNEL_TARBALL);
    }

    /// Every program xtask and the crates' tests start by a literal name
    /// is one the list provides (a probe ending in its name) or one that
    /// every Debian system has.
    #[test]
    fn the_list_covers_every_program_the_stages_run() {
        let root = workspace_root();
        let mut sources = Vec::new();
        let mut dirs = vec![root.join("xtask/src"), root.join("crates")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push(path);
                }
            }
        }
        assert!(sources.len() > 20, "found only {} sources", sources.len());
        let provided: BTreeSet<&str> = requirements()
            .iter()
            .filter_map(|r| r.probe.rsplit('/').next())
            .collect();
        let mut programs = BTreeSet::new();
        for path in &sources {
            let text = std::fs::read_to_string(path).unwrap();
            for rest in text.split("Command::new(\"").skip(1) {
                let program = rest.split('"').next().unwrap();
                programs.insert((program.to_string(), path.clone()));
            }
        }
        assert!(programs.iter().any(|(p, _)| p == "checkpolicy"));
        let uncovered: Vec<_> = programs
            .iter()
            .filter(|(p, _)| !ESSENTIAL.contains(&p.as_str()))
            .filter(|(p, _)| !provided.contains(p.rsplit('/').next().unwrap()))
            .collect();
        assert!(
            uncovered.is_empty(),
            "programs run but not in .ci/packages: {uncovered:?}"
        );
    }
}
