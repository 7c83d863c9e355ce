//! `cargo xtask radix-tree`: the kernel's userspace IDR/XArray suite
//! (`tools/testing/radix-tree`) on the host, for the patched tree.
//!
//! The suite compiles `lib/radix-tree.c`, `lib/idr.c` and `lib/xarray.c`
//! from the tree against userspace shims (liburcu), with ASan and UBSan, so
//! a change to the IDR or the XArray is tested without booting anything.
//! `SHIFT=6` gives the kernel's real 64-slot nodes (the Makefile's default
//! is 3, for denser trees).

use crate::deps;
use crate::kernel;
use crate::kernel::KernelArgs;
use crate::run::{run_quiet, step, timed, with_ccache};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The programs run, with what they cover. `main` (radix-tree regression
/// tests, about as long as the rest together) and `maple` (the maple tree,
/// which the series does not touch) are built by the Makefile but not run.
const PROGRAMS: &[(&str, &str)] = &[
    (
        "idr-test",
        "IDR and IDA, including tags across growth (lib/idr.c)",
    ),
    ("xarray", "lib/test_xarray.c on the userspace XArray"),
    ("multiorder", "multi-order entries and tagged iteration"),
];

/// Node size the suite is built with: the kernel's own (64 slots).
const SHIFT: u32 = 6;

/// A hard limit per program, far above its run time on 2 loaded cores.
const TIMEOUT: Duration = Duration::from_secs(900);

#[derive(Args)]
pub struct RadixArgs {
    /// Use this Linux 7.3 source tree instead of Debian's linux-source-7.3 tarball.
    #[arg(long, value_name = "DIR")]
    pub kernel_src: Option<PathBuf>,
}

pub fn run(args: &RadixArgs) -> Result<()> {
    deps::ensure_radix_tree()?;
    let kernel_args = KernelArgs {
        arch: crate::arch::Arch::X86_64,
        debug: false,
        unpatched: false,
        bpf: false,
        kernel_src: args.kernel_src.clone(),
        timeout: 0,
        memory: 0,
        cpus: None,
    };
    let (tree, _lock) = kernel::patched_tree(&kernel_args)?;
    let dir = tree.join("tools/testing/radix-tree");
    timed("building tools/testing/radix-tree (SHIFT=6)", || {
        build(&dir)
    })?;
    let mut failed = Vec::new();
    for (program, what) in PROGRAMS {
        let result = timed(&format!("radix-tree/{program}: {what}"), || {
            run_program(&dir, program)
        });
        if let Err(err) = result {
            step(format!("FAILED: radix-tree/{program}: {err:#}"));
            failed.push(*program);
        }
    }
    if !failed.is_empty() {
        bail!("radix-tree suite: {} failed", failed.join(", "));
    }
    println!("radix-tree suite: {} programs passed", PROGRAMS.len());
    Ok(())
}

/// Builds in the tree (the Makefile knows no O=). The generated node-size
/// header is made once per SHIFT, so a tree built with another SHIFT is
/// cleaned first.
fn build(dir: &Path) -> Result<()> {
    let shift_header = dir.join("generated/map-shift.h");
    if let Ok(text) = std::fs::read_to_string(&shift_header) {
        let built = text.split_whitespace().last().unwrap_or_default();
        if built != SHIFT.to_string() {
            run_quiet(Command::new("make").arg("-C").arg(dir).arg("clean"))?;
        }
    }
    run_quiet(
        with_ccache(&mut Command::new("make"))
            .arg("-C")
            .arg(dir)
            .arg(format!("SHIFT={SHIFT}"))
            .arg(kernel::jobs()),
    )
}

/// Runs one program; its last lines go to the console, all of it on failure.
fn run_program(dir: &Path, program: &str) -> Result<()> {
    let start = Instant::now();
    let mut child = Command::new(dir.join(program))
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let err = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{program} did not finish within {} s", TIMEOUT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    let summary: Vec<&str> = out.lines().filter(|l| l.contains("tests passed")).collect();
    for line in &summary {
        step(format!("{program}: {line}"));
    }
    // ASan and UBSan report on stderr; UBSan does not change the exit status.
    let sanitizer = err
        .lines()
        .any(|l| l.contains("runtime error:") || l.contains("ERROR: AddressSanitizer"));
    if !status.success() || sanitizer {
        eprint!("{out}{err}");
        bail!(
            "{program} failed ({status}{})",
            if sanitizer { ", sanitizer report" } else { "" }
        );
    }
    // "N of M tests passed": every program that counts must count them all.
    for line in summary {
        let words: Vec<&str> = line.split_whitespace().collect();
        if let Some(i) = words.iter().position(|w| *w == "of") {
            if i >= 1 && i + 1 < words.len() && words[i - 1] != words[i + 1] {
                bail!("{program}: {line}");
            }
        }
    }
    Ok(())
}
