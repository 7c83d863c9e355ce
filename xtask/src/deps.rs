//! Host prerequisites: find what is missing and, as root on Debian, install it.
//!
//! Each requirement names a file that proves it is present and the Debian
//! package that provides it, so a non-Debian or non-root user gets the
//! exact list to install instead of a failure deep inside a kernel build.

use crate::arch::Arch;
use crate::paths::workspace_root;
use crate::run::{run, step};
use anyhow::{bail, Result};
use std::path::Path;
use std::process::Command;

pub const KERNEL_TARBALL: &str = "/usr/src/linux-source-7.3.tar.xz";

struct Requirement {
    /// A file whose presence proves the requirement is met.
    probe: &'static str,
    /// The Debian package that provides it.
    package: &'static str,
}

const fn req(probe: &'static str, package: &'static str) -> Requirement {
    Requirement { probe, package }
}

/// What building the kernel and kselftests needs.
const BUILD: &[Requirement] = &[
    req("/usr/bin/make", "make"),
    req("/usr/bin/gcc", "gcc"),
    req("/usr/bin/flex", "flex"),
    req("/usr/bin/bison", "bison"),
    req("/usr/bin/bc", "bc"),
    req("/usr/bin/perl", "perl"),
    req("/usr/bin/xz", "xz-utils"),
    req("/usr/bin/git", "git"),
    req("/usr/include/gelf.h", "libelf-dev"),
    req("/usr/include/openssl/opensslv.h", "libssl-dev"),
    // glibc's static archives, for the static guest programs.
    req("/usr/lib/x86_64-linux-gnu/libc.a", "libc6-dev"),
    // test-all lints the man pages.
    req("/usr/bin/groff", "groff-base"),
];

/// What the guest needs: the emulator, the initramfs packer and a static shell.
const GUEST: &[Requirement] = &[
    req("/usr/bin/qemu-system-x86_64", "qemu-system-x86"),
    req("/usr/bin/cpio", "cpio"),
    req("/bin/busybox", "busybox-static"),
    // The i386 compat tests (guest-tests/m32) are built with the i686 cross
    // compiler: gcc-multilib conflicts with gcc-aarch64-linux-gnu.
    req("/usr/bin/i686-linux-gnu-gcc", "gcc-i686-linux-gnu"),
    req("/usr/i686-linux-gnu/lib/libc.a", "libc6-dev-i386-cross"),
];

/// What an arm64 guest needs on top: the cross compiler, its static libc,
/// the emulator, and dpkg-deb to unpack Debian's arm64 busybox.
const ARM64: &[Requirement] = &[
    req("/usr/bin/aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
    req("/usr/aarch64-linux-gnu/lib/libc.a", "libc6-dev-arm64-cross"),
    req("/usr/bin/qemu-system-aarch64", "qemu-system-arm"),
    req("/usr/bin/dpkg-deb", "dpkg"),
];

/// tools/testing/radix-tree links the userspace RCU library.
const RADIX_TREE: &[Requirement] = &[req("/usr/lib/x86_64-linux-gnu/liburcu.so", "liburcu-dev")];

/// Upstream's clone3 selftests link libcap, statically for the guest.
const UPSTREAM_SELFTESTS: &[Requirement] =
    &[req("/usr/lib/x86_64-linux-gnu/libcap.a", "libcap-dev")];

/// BPF programs (bench/bpf/): clang for `-target bpf`, bpftool for
/// `vmlinux.h` and the skeleton, libbpf's static archive and headers, and
/// the static archives libbpf links (libelf, zlib, zstd); pahole (dwarves)
/// for the BPF kernel's BTF.
const BPF: &[Requirement] = &[
    req("/usr/bin/clang", "clang"),
    req("/usr/sbin/bpftool", "bpftool"),
    req("/usr/lib/x86_64-linux-gnu/libbpf.a", "libbpf-dev"),
    req("/usr/lib/x86_64-linux-gnu/libelf.a", "libelf-dev"),
    req("/usr/lib/x86_64-linux-gnu/libz.a", "zlib1g-dev"),
    req("/usr/lib/x86_64-linux-gnu/libzstd.a", "libzstd-dev"),
    req("/usr/bin/pahole", "dwarves"),
];

const KERNEL_SOURCE: Requirement = req(KERNEL_TARBALL, "linux-source-7.3");

fn missing(reqs: &[&Requirement]) -> Vec<&'static str> {
    let mut packages: Vec<&'static str> = reqs
        .iter()
        .filter(|r| !Path::new(r.probe).exists())
        .map(|r| r.package)
        .collect();
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

/// Makes sure the host has everything, installing with apt-get when allowed.
///
/// `need_tarball` is false when the caller passed `--kernel-src`.
pub fn ensure(need_tarball: bool) -> Result<()> {
    let mut reqs: Vec<&Requirement> = BUILD.iter().chain(GUEST).collect();
    if need_tarball {
        reqs.push(&KERNEL_SOURCE);
    }
    install(&reqs)
}

/// What building for and booting `arch` needs beyond [`ensure`].
pub fn ensure_arch(arch: Arch) -> Result<()> {
    match arch {
        Arch::X86_64 => Ok(()),
        Arch::Arm64 => install(&ARM64.iter().collect::<Vec<_>>()),
    }
}

/// What the host-side radix-tree suite needs.
pub fn ensure_radix_tree() -> Result<()> {
    install(&RADIX_TREE.iter().collect::<Vec<_>>())
}

/// What upstream's guest selftests need beyond [`ensure`].
pub fn ensure_upstream_selftests() -> Result<()> {
    install(&UPSTREAM_SELFTESTS.iter().collect::<Vec<_>>())
}

/// What building and loading the BPF programs needs (host test, BPF kernel).
pub fn ensure_bpf() -> Result<()> {
    install(&BPF.iter().collect::<Vec<_>>())
}

/// Installs the packages of the missing requirements, or says which they are.
fn install(reqs: &[&Requirement]) -> Result<()> {
    let packages = missing(reqs);
    if packages.is_empty() {
        return Ok(());
    }
    let list = packages.join(" ");
    if !(is_root() && is_debian()) {
        bail!("missing host packages: {list}\n  install them with: sudo apt-get install {list}");
    }
    step(format!("installing missing packages: {list}"));
    if packages.contains(&KERNEL_SOURCE.package) {
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
    let still = missing(reqs);
    if !still.is_empty() {
        bail!(
            "apt-get ran but these are still missing: {}",
            still.join(" ")
        );
    }
    Ok(())
}
