//! `cargo xtask test-all`: the README's test command and what CI runs.

use crate::arch::Arch;
use crate::kernel::KernelArgs;
use crate::paths::{target_dir, workspace_root};
use crate::run::{run, step};
use crate::suites::suite;
use anyhow::{bail, Result};
use clap::Args;
use std::process::Command;
use std::time::Instant;

#[derive(Args)]
pub struct TestAllArgs {
    /// Skip the QEMU suites (host checks only).
    #[arg(long)]
    pub host_only: bool,
    /// Skip the debug-kernel suite.
    #[arg(long)]
    pub no_debug: bool,
    /// Skip the arm64 guest (cross-built kernel, C tests under
    /// qemu-system-aarch64).
    #[arg(long)]
    pub no_arm64: bool,
}

fn cargo(args: &[&str]) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(Command::new(cargo).current_dir(workspace_root()).args(args))
}

fn kernel(debug: bool, unpatched: bool) -> KernelArgs {
    on(Arch::X86_64, debug, unpatched)
}

fn on(arch: Arch, debug: bool, unpatched: bool) -> KernelArgs {
    KernelArgs {
        arch,
        debug,
        unpatched,
        bpf: false,
        kernel_src: None,
        timeout: 1800,
        memory: 3072,
        cpus: None,
    }
}

fn suite(args: &KernelArgs) -> Result<()> {
    match suite::qemu_test(args)? {
        0 => Ok(()),
        _ => bail!("the guest suite failed"),
    }
}

/// `cargo package -p pidmap`, then the packaged crate's own tests, built
/// from the unpacked `.crate` as a workspace of its own: what a user of
/// the published crate (or crater) runs.
fn package_and_test() -> Result<()> {
    cargo(&["package", "-p", "pidmap", "--no-verify", "--allow-dirty"])?;
    let manifest = std::fs::read_to_string(workspace_root().join("crates/pidmap/Cargo.toml"))?;
    let Some(version) = manifest
        .lines()
        .find_map(|l| l.strip_prefix("version = "))
        .map(|v| v.trim().trim_matches('"').to_string())
    else {
        bail!("crates/pidmap/Cargo.toml has no version line");
    };
    let packages = target_dir().join("package");
    let unpacked = packages.join(format!("pidmap-{version}"));
    if unpacked.exists() {
        std::fs::remove_dir_all(&unpacked)?;
    }
    run(Command::new("tar")
        .current_dir(&packages)
        .arg("xzf")
        .arg(format!("pidmap-{version}.crate")))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let tests_dir = target_dir().join("package-tests");
    // The archive gives every file one fixed mtime, older than the last
    // build of an earlier package: without this, cargo would take that
    // build's pidmap for up to date and test the new sources against it.
    run(Command::new(&cargo)
        .current_dir(&unpacked)
        .args(["clean", "-p", "pidmap", "--target-dir"])
        .arg(&tests_dir))?;
    run(Command::new(&cargo)
        .current_dir(&unpacked)
        .args(["test", "--locked", "--target-dir"])
        .arg(&tests_dir))
}

/// Renders each man page and fails on any groff warning.
fn lint_man_pages() -> Result<()> {
    crate::deps::ensure(false)?;
    let dir = workspace_root().join("man");
    let mut pages: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "2"))
        .collect();
    pages.sort();
    if pages.is_empty() {
        bail!("no man pages in {}", dir.display());
    }
    for page in &pages {
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(page)
            .output()?;
        let warnings = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() || !warnings.trim().is_empty() {
            bail!("{} does not render cleanly:\n{warnings}", page.display());
        }
        step(format!("{}: renders with no warnings", page.display()));
    }
    Ok(())
}

/// A stage of test-all: its name and what it runs.
type Stage = (&'static str, Box<dyn Fn() -> Result<()>>);

pub fn test_all(args: &TestAllArgs) -> Result<()> {
    // Everything the stages run, installed up front from .ci/packages, so
    // that the README's test command works on a fresh Debian machine.
    crate::deps::ensure_test_all(args.host_only)?;
    run_stages(&stages(args))
}

/// The stages test-all runs with `args`, in order.
fn stages(args: &TestAllArgs) -> Vec<Stage> {
    let mut stages: Vec<Stage> = vec![
        (
            "cargo fmt --check",
            Box::new(|| cargo(&["fmt", "--all", "--", "--check"])),
        ),
        (
            "cargo clippy -D warnings",
            Box::new(|| {
                cargo(&[
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ])
            }),
        ),
        ("cargo test", Box::new(|| cargo(&["test", "--workspace"]))),
        (
            "cargo test (pidmap, syscall-only build)",
            Box::new(|| {
                cargo(&[
                    "test",
                    "-p",
                    "pidmap",
                    "--no-default-features",
                    "--lib",
                    "--tests",
                ])
            }),
        ),
        (
            "cargo package (pidmap) and its tests",
            Box::new(package_and_test),
        ),
        ("man pages (groff -ww)", Box::new(lint_man_pages)),
        (
            "bpf-host: iter/task built, loaded and checked against /proc",
            Box::new(|| {
                crate::bench::bpf::run_host(&crate::bench::bpf::BpfHostArgs { fidelity: false })
            }),
        ),
    ];
    if !args.host_only {
        stages.push((
            "upstream-clean hunks, checkpatch --strict",
            Box::new(|| crate::kernel::patches::check_series(&kernel(false, false))),
        ));
        stages.push((
            "patches export --out: git am applies it, with the poster, Cc and base-commit",
            Box::new(|| crate::kernel::posting::check(&kernel(false, false))),
        ));
        stages.push((
            "radix-tree suite (host, patched tree)",
            Box::new(|| {
                crate::kernel::radix::run(&crate::kernel::radix::RadixArgs { kernel_src: None })
            }),
        ));
        stages.push((
            "qemu-test (patched)",
            Box::new(|| suite(&kernel(false, false))),
        ));
        // The patched kernel is built by the stage above; about 5 min on a
        // fresh clone (two static procps and two static htop builds, one
        // short boot).
        stages.push((
            "clients: procps and htop identical with and without the calls (host, patched guest)",
            Box::new(|| {
                crate::suites::clients::run_clients(&crate::suites::clients::ClientsArgs {
                    host_test: true,
                    guest_test: true,
                    bench: false,
                    wall_clock: false,
                    runs: 5,
                    only: None,
                })
            }),
        ));
        stages.push((
            "qemu-test (unpatched: crate fallback)",
            Box::new(|| suite(&kernel(false, true))),
        ));
        let upstream_on_debug = !args.no_debug;
        stages.push((
            if upstream_on_debug {
                "upstream selftests, unpatched vs patched and patched debug"
            } else {
                "upstream selftests, unpatched vs patched"
            },
            Box::new(move || {
                crate::suites::upstream::run(&crate::suites::upstream::UpstreamArgs {
                    kernel_src: None,
                    debug: upstream_on_debug,
                })
            }),
        ));
        // Deterministic instruction counts, so a gate cannot flake on host
        // noise; both kernels are built and cached by the stages above.
        stages.push((
            "forkcost --check (fork/exit cost < 3 %)",
            Box::new(|| {
                crate::bench::forkcost::run(&crate::bench::forkcost::ForkcostArgs {
                    boots: 2,
                    wall_clock: false,
                    check: true,
                    cpus: 1,
                    kernel_src: None,
                })
            }),
        ));
        if !args.no_arm64 {
            stages.push((
                "qemu-test --arch arm64 (C tests)",
                Box::new(|| suite(&on(Arch::Arm64, false, false))),
            ));
        }
        if !args.no_debug {
            stages.push((
                "qemu-test --debug",
                Box::new(|| suite(&kernel(true, false))),
            ));
        }
    }
    stages
}

fn run_stages(stages: &[Stage]) -> Result<()> {
    let mut timings = Vec::new();
    let mut failure = None;
    for (name, body) in stages {
        step(format!("=== stage: {name}"));
        let start = Instant::now();
        let result = body();
        let secs = start.elapsed().as_secs_f64();
        let ok = result.is_ok();
        timings.push((*name, secs, ok));
        if let Err(err) = result {
            failure = Some(format!("{name}: {err:#}"));
            break;
        }
    }
    step("stage timings:");
    for (name, secs, ok) in &timings {
        eprintln!(
            "    {:>8.1} s  {}  {name}",
            secs,
            if *ok { "ok  " } else { "FAIL" }
        );
    }
    let passed = timings.iter().filter(|(_, _, ok)| *ok).count();
    println!("stages: {passed} passed, {} failed", timings.len() - passed);
    match failure {
        Some(why) => bail!("{why}"),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's "### The stages" list: the name in backticks of each
    /// `- ` line, up to the next heading.
    fn readme_stages() -> Vec<String> {
        let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
        readme
            .lines()
            .skip_while(|l| l.trim() != "### The stages")
            .skip(1)
            .take_while(|l| !l.starts_with('#'))
            .filter_map(|l| l.strip_prefix("- `"))
            .filter_map(|l| l.split_once('`').map(|(name, _)| name.to_string()))
            .collect()
    }

    #[test]
    fn the_readme_lists_the_stages_test_all_runs() {
        let all = TestAllArgs {
            host_only: false,
            no_debug: false,
            no_arm64: false,
        };
        let names: Vec<String> = stages(&all).iter().map(|(n, _)| n.to_string()).collect();
        assert!(names.len() > 10, "only {} stages", names.len());
        assert_eq!(
            readme_stages(),
            names,
            "README.md's \"### The stages\" differs from test-all's stages"
        );
    }
}
