//! `cargo xtask bench`: the guest benchmarks, side by side in one boot.
//!
//! The benchmark program lives in `bench/`; this module builds it static,
//! boots the kernel with it through [`crate::qemu::run_in_guest`], pulls
//! its JSON out of the console log, and prints the Markdown table.

use crate::guest;
use crate::kernel;
use crate::paths::{workspace_root, xtask_dir};
use crate::qemu;
use crate::run::{step, timed};
use crate::KernelArgs;
use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::{Map, Value};
use std::fs;
use std::path::PathBuf;

const JSON_BEGIN: &str = "PIDMAP-BENCH-JSON-BEGIN";
const JSON_END: &str = "PIDMAP-BENCH-JSON-END";

/// The cases in the order the program runs them; others follow, sorted.
const CASE_ORDER: &[&str] = &[
    "tasks_all_250",
    "tasks_all_10k",
    "tasks_grouped_250",
    "procs_only_10k",
    "fds_4",
    "fds_1000",
    "tgid_scale_100k_threads_pidmap",
    "tgid_scale_100k_threads_readdir",
];

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// A short smoke run: 3 rounds, 1000 processes, 10000 threads.
    #[arg(long)]
    pub quick: bool,
    /// Count guest instructions instead of time (QEMU -icount, one vCPU;
    /// see `cargo xtask forkcost`). Deterministic, so host drift cannot
    /// touch the scale case, whose idle and loaded phases cannot be
    /// interleaved. Every "ns" in the table is then one instruction.
    #[arg(long)]
    pub instructions: bool,
    /// More arguments for the guest program, e.g. `-- --case fds --rounds 5`
    /// (see `bench/pidmap-bench.c --help`).
    #[arg(last = true, value_name = "ARGS")]
    pub extra: Vec<String>,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let kernel = kernel::prepare(&args.kernel)?;
    let flavor = kernel.flavor.name();
    let src = workspace_root().join("bench").join("pidmap-bench.c");
    let bin = xtask_dir().join("bench").join(flavor).join("pidmap-bench");
    timed("building bench/pidmap-bench.c static", || {
        guest::compile_c(&src, &bin, None, &kernel.headers())
    })?;

    let mut command = vec!["/add/pidmap-bench".to_string(), "--json".to_string()];
    if args.quick {
        command.push("--quick".to_string());
    }
    command.extend(args.extra.iter().cloned());
    let label = format!("bench-{flavor}");
    let clock = if args.instructions {
        qemu::GuestClock::Instructions
    } else {
        qemu::GuestClock::Host
    };
    let (outcome, log) =
        qemu::run_in_guest(&kernel, &args.kernel, clock, &[bin], &command, &label)?;
    let status = qemu::guest_exit_status(&outcome)?;
    // A run that failed part-way (a listing that disagreed with /proc)
    // still prints what it measured, then fails.
    let results = extract_json(&log);
    if let Ok(results) = &results {
        println!();
        println!(
            "Kernel: {flavor} 6.12 under QEMU, log {}",
            outcome.log.display()
        );
        if args.instructions {
            println!("Guest clock: instructions (-icount shift=0): 1 ns = 1 instruction.");
        }
        println!();
        print!("{}", markdown_table(results));
    }
    if let (Some(path), Ok(results)) = (&args.json, &results) {
        let text = serde_json::to_string_pretty(&Value::Object(results.clone()))? + "\n";
        fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
        step(format!("wrote {}", path.display()));
    }
    if status != 0 {
        bail!(
            "pidmap-bench exited with status {status} in the guest; see {}",
            outcome.log.display()
        );
    }
    results.with_context(|| format!("no benchmark results in {}", outcome.log.display()))?;
    Ok(())
}

/// The JSON object printed between the markers. Kernel messages that land
/// between the markers on the shared console are dropped: the program's
/// JSON lines start with `{`, `}` or `"`, printk lines with `[`.
fn extract_json(log: &str) -> Result<Map<String, Value>> {
    let mut lines = log.lines().map(|l| l.trim_end_matches('\r'));
    if !lines.by_ref().any(|l| l.trim() == JSON_BEGIN) {
        bail!("the guest printed no {JSON_BEGIN} line");
    }
    let mut text = String::new();
    let mut ended = false;
    for line in lines {
        let trimmed = line.trim();
        if trimmed == JSON_END {
            ended = true;
            break;
        }
        if trimmed.starts_with(['{', '}', '"']) {
            text.push_str(trimmed);
            text.push('\n');
        }
    }
    if !ended {
        bail!("the guest printed no {JSON_END} line (killed mid-run?)");
    }
    match serde_json::from_str(&text).context("the benchmark JSON does not parse")? {
        Value::Object(map) => Ok(map),
        _ => bail!("the benchmark JSON is not an object"),
    }
}

/// Nanoseconds in the unit that keeps three significant digits readable.
fn human_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn int_or_na(v: &Value, key: &str) -> String {
    num(v, key).map_or_else(|| "n/a".to_string(), |x| format!("{x:.0}"))
}

/// One row per case; the syscall side is `n/a` on a kernel without it.
fn markdown_table(results: &Map<String, Value>) -> String {
    let mut names: Vec<&String> = CASE_ORDER
        .iter()
        .filter_map(|c| results.get_key_value(*c).map(|(k, _)| k))
        .collect();
    let mut rest: Vec<&String> = results
        .keys()
        .filter(|k| !CASE_ORDER.contains(&k.as_str()))
        .collect();
    rest.sort();
    names.extend(rest);

    let mut out = String::from(
        "| case | ids | baseline | new | ratio | target | met | syscalls (baseline / new) | bytes (baseline / new) |\n\
         |------|----:|---------:|----:|------:|-------:|:---:|------:|------:|\n",
    );
    for name in names {
        let v = &results[name.as_str()];
        let lower = v.get("better").and_then(Value::as_str) == Some("lower");
        let new = num(v, "new_ns").map_or_else(|| "n/a".to_string(), human_ns);
        let ratio = num(v, "ratio").map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}×"));
        let target = num(v, "target").map_or_else(String::new, |t| {
            format!("{}{t}×", if lower { "≤ " } else { "≥ " })
        });
        let agree = v.get("agree").and_then(Value::as_bool) != Some(false);
        let met = match v.get("met").and_then(Value::as_bool) {
            _ if !agree => "**ids disagree**",
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "n/a",
        };
        out.push_str(&format!(
            "| {name} | {} | {} | {new} | {ratio} | {target} | {met} | {} / {} | {} / {} |\n",
            int_or_na(v, "entries"),
            num(v, "baseline_ns").map_or_else(|| "n/a".to_string(), human_ns),
            int_or_na(v, "baseline_syscalls"),
            int_or_na(v, "syscalls"),
            int_or_na(v, "baseline_bytes"),
            int_or_na(v, "bytes"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_survives_console_noise() {
        let log = "boot\r\nPIDMAP-BENCH-JSON-BEGIN\r\n{\r\n\
                   [   12.3] random: crng init done\r\n\
                   \"fds_4\": {\"baseline_ns\": 100.0, \"new_ns\": 2.0, \"ratio\": 50.0, \
                   \"target\": 30, \"better\": \"higher\", \"met\": true}\r\n}\r\n\
                   PIDMAP-BENCH-JSON-END\r\n";
        let map = extract_json(log).unwrap();
        assert_eq!(map["fds_4"]["ratio"], 50.0);
        let table = markdown_table(&map);
        assert!(table.contains("| fds_4 | n/a | 100 ns | 2 ns | 50.00× | ≥ 30× | yes |"));
    }

    #[test]
    fn missing_end_marker_is_an_error() {
        assert!(extract_json("PIDMAP-BENCH-JSON-BEGIN\n{\n").is_err());
        assert!(extract_json("nothing here\n").is_err());
    }
}
