//! `cargo xtask forkcost`: what the series costs fork and exit.
//!
//! The leader mark is set in `alloc_pid()` and cleared in `free_pid()`, so
//! its price is paid by every fork and every thread. `bench/forkcost.c` times
//! a fork+exit+wait loop and a pthread_create+join loop; this command runs it
//! on the unpatched and the patched kernel, alternating boots, and compares.
//!
//! Wall-clock time under TCG moves ±12 % from one boot of the same kernel to
//! the next, four times the 3 % bound, so by default the guest clock counts
//! instructions instead ([`GuestClock::Instructions`]). Those boots are
//! deterministic, and the difference between the kernels is exactly the
//! work the series adds to the two paths. What it cannot show is a change in
//! cache misses; `--wall-clock` measures time, which means something on KVM.
//!
//! `--cpus N` boots N vCPUs (default 1) on either clock. On the instruction
//! clock QEMU then runs the vCPUs round-robin on one host thread (icount
//! rules out multi-threaded TCG) and the guest clock counts the
//! instructions of all of them: an iteration's figure is the work of every
//! CPU it involved, wake-ups and IPIs included, not the time one CPU saw.

use crate::bench::stats::median;
use crate::guest;
use crate::guest::qemu::{self, GuestClock};
use crate::kernel;
use crate::kernel::KernelArgs;
use crate::paths::{workspace_root, xtask_dir};
use crate::run::{step, timed};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;

/// The bound: the patched kernel may be at most this much slower.
const MAX_SLOWDOWN: f64 = 0.03;

/// Beyond this spread between boots of one kernel, the guest clock is not
/// counting instructions (TCG wall clock swings ±12 % between boots) and
/// the comparison is not trusted. Counted boots are close but not equal:
/// pthread_create + join, ~50,000 instructions, has differed by up to
/// 1.05 % between boots of one kernel, so the bound is 3 %, and the bound is
/// judged on the boots' extremes, not only their medians.
const MAX_ICOUNT_SPREAD: f64 = 0.03;

#[derive(Args)]
pub struct ForkcostArgs {
    /// Boots of each kernel, alternating unpatched and patched.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub boots: u32,
    /// Time in host nanoseconds instead of counting guest instructions.
    /// Only meaningful on KVM: under TCG boots differ by ±12 %.
    #[arg(long)]
    pub wall_clock: bool,
    /// Exit non-zero unless both loops are less than 3 % slower patched.
    #[arg(long)]
    pub check: bool,
    /// Guest vCPUs of every boot, on either clock. With more than one, the
    /// instruction clock counts the instructions of all of them.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=8))]
    pub cpus: u32,
    /// Use this Linux 7.3 source tree instead of Debian's linux-source-7.3 tarball.
    #[arg(long, value_name = "DIR")]
    pub kernel_src: Option<PathBuf>,
}

/// One boot's medians, per iteration, in the guest clock's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    fork_exit: f64,
    thread: f64,
}

/// The program's one result line:
/// `FORKCOST fork_exit_ns=N ... pthread_create_join_ns=N ...`.
fn parse_sample(log: &str) -> Result<Sample> {
    let line = log
        .lines()
        .find_map(|l| l.trim_end_matches('\r').strip_prefix("FORKCOST "))
        .context("the guest printed no FORKCOST line")?;
    let field = |key: &str| -> Result<f64> {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
            .with_context(|| format!("no {key} in FORKCOST line {line:?}"))?
            .parse()
            .with_context(|| format!("bad {key} in FORKCOST line {line:?}"))
    };
    Ok(Sample {
        fork_exit: field("fork_exit_ns")?,
        thread: field("pthread_create_join_ns")?,
    })
}

/// (max - min) / median: how far boots of one kernel disagree.
fn spread(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    let mid = median(&mut sorted);
    (sorted[sorted.len() - 1] - sorted[0]) / mid
}

/// The fastest and the slowest boot.
fn range(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)))
}

/// One loop's verdict across all boots.
struct Comparison {
    name: &'static str,
    unpatched: f64,
    patched: f64,
    unpatched_range: (f64, f64),
    patched_range: (f64, f64),
    unpatched_spread: f64,
    patched_spread: f64,
    /// The slowest patched boot against the fastest unpatched one.
    worst_slowdown: f64,
}

impl Comparison {
    fn new(name: &'static str, unpatched: &[f64], patched: &[f64]) -> Self {
        Comparison {
            name,
            unpatched: median(&mut unpatched.to_vec()),
            patched: median(&mut patched.to_vec()),
            unpatched_range: range(unpatched),
            patched_range: range(patched),
            unpatched_spread: spread(unpatched),
            patched_spread: spread(patched),
            worst_slowdown: range(patched).1 / range(unpatched).0 - 1.0,
        }
    }

    fn slowdown(&self) -> f64 {
        self.patched / self.unpatched - 1.0
    }

    /// Under the bound even for the least favourable pair of boots.
    fn met(&self) -> bool {
        self.worst_slowdown < MAX_SLOWDOWN
    }
}

/// A median with the boots' min–max.
fn median_cell(median: f64, (lo, hi): (f64, f64)) -> String {
    format!("{median:.0} ({lo:.0}–{hi:.0})")
}

fn markdown_table(rows: &[Comparison], unit: &str) -> String {
    let mut out = format!(
        "| loop | unpatched ({unit}), median (min–max) | patched ({unit}), median (min–max) | change | worst pair of boots | boot spread (unpatched / patched) | target | met |\n\
         |------|----------:|--------:|-------:|-------:|------:|:------:|:---:|\n"
    );
    for row in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {:+.0} ({:+.2} %) | {:+.2} % | {:.2} % / {:.2} % | < {:.0} % | {} |\n",
            row.name,
            median_cell(row.unpatched, row.unpatched_range),
            median_cell(row.patched, row.patched_range),
            row.patched - row.unpatched,
            row.slowdown() * 100.0,
            row.worst_slowdown * 100.0,
            row.unpatched_spread * 100.0,
            row.patched_spread * 100.0,
            MAX_SLOWDOWN * 100.0,
            if row.met() { "yes" } else { "**no**" },
        ));
    }
    out
}

fn kernel_args(args: &ForkcostArgs, unpatched: bool) -> KernelArgs {
    KernelArgs {
        arch: crate::arch::Arch::X86_64,
        debug: false,
        unpatched,
        bpf: false,
        kernel_src: args.kernel_src.clone(),
        timeout: 1200,
        memory: 1024,
        cpus: Some(args.cpus),
    }
}

pub fn run(args: &ForkcostArgs) -> Result<()> {
    let clock = if args.wall_clock {
        GuestClock::Host
    } else {
        GuestClock::Instructions
    };
    let kernels = [kernel_args(args, true), kernel_args(args, false)];
    // Build (or find cached) both kernels before the first boot, so the
    // boots run back to back.
    let prepared = [kernel::prepare(&kernels[0])?, kernel::prepare(&kernels[1])?];
    let headers = prepared[1].headers();
    let src = workspace_root().join("bench").join("forkcost.c");
    let bin = xtask_dir().join("bench").join("forkcost");
    timed("building bench/forkcost.c static", || {
        guest::compile_c(crate::arch::Arch::X86_64, &src, &bin, None, &headers)
    })?;

    let command = vec!["/add/forkcost".to_string()];
    let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    for boot in 1..=args.boots {
        for ((k, kernel), out) in kernels.iter().zip(&prepared).zip(samples.iter_mut()) {
            let flavor = kernel.flavor.name();
            let label = format!("forkcost-{flavor}");
            step(format!("boot {boot}/{}: {flavor}", args.boots));
            let run = qemu::run_in_guest(kernel, k, clock, &bin, &command, &label)?;
            if run.status != 0 {
                bail!(
                    "forkcost exited with status {}; see {}",
                    run.status,
                    run.log_path.display()
                );
            }
            let sample =
                parse_sample(&run.log).with_context(|| format!("in {}", run.log_path.display()))?;
            step(format!("{flavor}: {sample:?}"));
            out.push(sample);
        }
    }

    let [unpatched, patched] = &samples;
    let pick = |s: &[Sample], f: fn(&Sample) -> f64| s.iter().map(f).collect::<Vec<_>>();
    let rows = [
        Comparison::new(
            "fork + exit + wait",
            &pick(unpatched, |s| s.fork_exit),
            &pick(patched, |s| s.fork_exit),
        ),
        Comparison::new(
            "pthread_create + join",
            &pick(unpatched, |s| s.thread),
            &pick(patched, |s| s.thread),
        ),
    ];
    let unit = match clock {
        GuestClock::Instructions => "instructions",
        GuestClock::Host => "ns",
    };
    let how = qemu::clock_setup(clock, args.cpus);
    println!();
    println!(
        "Fork cost per iteration, median of {} boot(s) per kernel ({how}):",
        args.boots
    );
    println!();
    print!("{}", markdown_table(&rows, unit));

    if clock == GuestClock::Instructions {
        for row in &rows {
            let worst = row.unpatched_spread.max(row.patched_spread);
            if worst > MAX_ICOUNT_SPREAD {
                bail!(
                    "{}: boots of one kernel differ by {:.2} %, so instruction counting \
                     was not deterministic and the comparison cannot be trusted",
                    row.name,
                    worst * 100.0
                );
            }
        }
    }
    if args.check {
        let over: Vec<&str> = rows.iter().filter(|r| !r.met()).map(|r| r.name).collect();
        if !over.is_empty() {
            bail!(
                "{} over the {:.0} % bound",
                over.join(" and "),
                MAX_SLOWDOWN * 100.0
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_result_line_among_console_noise() {
        let log = "[    1.0] random: crng init done\r\n\
                   FORKCOST fork_exit_ns=248145 fork_exit_min_ns=244110 \
                   pthread_create_join_ns=50218 pthread_create_join_min_ns=48497 rounds=15\r\n";
        let sample = parse_sample(log).unwrap();
        assert_eq!(
            sample,
            Sample {
                fork_exit: 248145.0,
                thread: 50218.0
            }
        );
    }

    #[test]
    fn a_missing_or_garbled_line_is_an_error() {
        assert!(parse_sample("no result\n").is_err());
        assert!(parse_sample("FORKCOST fork_exit_ns=x pthread_create_join_ns=1\n").is_err());
        assert!(parse_sample("FORKCOST fork_exit_ns=1\n").is_err());
    }

    #[test]
    fn compares_medians_and_judges_the_bar() {
        let within = Comparison::new("loop", &[100.0, 100.0], &[102.0, 102.0]);
        assert!((within.slowdown() - 0.02).abs() < 1e-9);
        assert!(within.met());
        let over = Comparison::new("loop", &[100.0, 100.0, 100.0], &[103.0, 104.0, 200.0]);
        assert!((over.slowdown() - 0.04).abs() < 1e-9);
        assert!(!over.met());
        assert!((over.patched_spread - 97.0 / 104.0).abs() < 1e-9);
        // A median under the bound is not enough: the worst pair must be too.
        let outlier = Comparison::new("loop", &[100.0, 100.0, 100.0], &[102.0, 102.0, 104.0]);
        assert!((outlier.slowdown() - 0.02).abs() < 1e-9);
        assert!((outlier.worst_slowdown - 0.04).abs() < 1e-9);
        assert!(!outlier.met());
        let table = markdown_table(&[within], "instructions");
        assert!(table.contains(
            "| loop | 100 (100–100) | 102 (102–102) | +2 (+2.00 %) | +2.00 % | 0.00 % / 0.00 % | < 3 % | yes |"
        ));
        let table = markdown_table(&[outlier], "ns");
        assert!(table.contains("| 100 (100–100) | 102 (102–104) | +2 (+2.00 %) | +4.00 % |"));
    }
}
