//! `cargo xtask bench`: the guest benchmarks, side by side in each boot,
//! over several boots.
//!
//! The benchmark program lives in `bench/pidmap-bench/` (its `*.c` files,
//! one program); this module builds it static,
//! boots the kernel with it through [`crate::guest::qemu::run_in_guest`] `--boots`
//! times, pulls each boot's JSON out of the console log, and prints one
//! Markdown table of medians over the boots with each ratio's min–max.
//! Timed TCG ratios swing 2–3× from one boot of the same code to the next,
//! so one boot's figure is never the result.
//!
//! `--json PATH` writes an object with `clock`, `boots` (one object per
//! boot, as the program printed it) and `median` (per case, the
//! boot-median of every numeric field, plus `RATIO_min` and `RATIO_max` for
//! every ratio, and `boots`).
//!
//! The program speaks the series' ABI (`pidmap(2)`, `pidmap_info(2)`,
//! `fdmap(2)`, with the series' uapi headers from `crates/pidmap/abi/`, so
//! it also builds against the unpatched kernel's headers); it probes the calls at
//! run time and times the /proc side alone where they are missing.
//!
//! The refresh cases (a top-style refresh of every task's stat fields) time
//! more than two variants: besides `baseline_ns` (the /proc walk reading
//! each task's stat) and `new_ns` (the `pidmap_info(2)` records through the
//! view of the guest's /proc) they carry, each as `<key>_ns` and
//! `<key>_ratio` (the walk's time ÷ the variant's): `walk_status` (the walk
//! reading stat and status, for the exact rss the records give; the records
//! against it are `new_vs_walk_status_ratio`), `pidmap` (pidmap ids +
//! `/proc/TID/stat`), `pidmap_grouped`, `bulk_default` (the records in the
//! default view), `bulk_call` (the records' calls alone) and `pidfd_info`:
//! the per-task route of 7.3 without the records (ids from pidmap, or from
//! the /proc readdirs where `pidfd_info_ids` is `"proc"`, then
//! `pidfd_open(PIDFD_THREAD)` + `PIDFD_GET_INFO` + `close` per task).
//! PIDFD_GET_INFO has no comm, state, CPU time, rss or start time, so that
//! figure is a lower bound of the per-task route's cost. A second table
//! shows them side by side.
//!
//! `--bpf` boots the BPF kernel (`qemu/bpf.config`) and builds the program
//! with `-DPIDMAP_BENCH_BPF` against libbpf and the skeleton of
//! `bench/bpf/task_record.bpf.c`, made from that kernel's BTF
//! ([`crate::bench::bpf`]): the refresh then also times `bpf_iter` (iter/task,
//! read in 64 KiB chunks) and `bpf_syscall` (the open-coded task iterator
//! in a `BPF_PROG_TYPE_SYSCALL` program, one `BPF_PROG_RUN`), with their
//! one-off load + verify + attach cost (`bpf_load_ns`, `bpf_attach_ns`),
//! and a third refresh shape, `refresh_10k_1000x10`. A third table shows
//! the BPF comparison.
//!
//! `lsof_1000x16` lists every fd of every process with its link target,
//! as lsof does (readdir `/proc`, each `/proc/PID/fd`, a readlink of each
//! `/proc/PID/fd/N`), against `pidmap(2)` + per process `pidfd_open` +
//! `fdmap(2)` + the same readlinks + `close`; `proc_ids` and `fdmap_ids`
//! are both without the readlinks, `ids_ratio` the one against the other,
//! `readlink_share` the readlinks' part of the /proc walk. It has no threshold
//! (`target` null). A fourth table shows it.

pub mod bpf;
pub mod forkcost;
pub mod stats;

use crate::bench::stats::median;
use crate::guest;
use crate::guest::qemu;
use crate::kernel::KernelArgs;
use crate::kernel::{self, Flavor};
use crate::paths::{workspace_root, xtask_dir};
use crate::run::{step, timed};
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
    "tasks_all_100x100",
    "tasks_grouped_250",
    "procs_only_10k",
    "refresh_250",
    "refresh_10k",
    "refresh_10k_1000x10",
    "lsof_1000x16",
    "fds_4",
    "fds_1000",
    "tgid_scale_100k_threads_pidmap",
    "tgid_scale_100k_threads_readdir",
];

/// The ratios whose min–max over the boots the summary keeps.
const RATIO_KEYS: &[&str] = &[
    "ratio",
    "walk_status_ratio",
    "new_vs_walk_status_ratio",
    "pidmap_ratio",
    "pidmap_grouped_ratio",
    "bulk_default_ratio",
    "bulk_call_ratio",
    "pidfd_info_ratio",
    "bpf_iter_ratio",
    "bpf_syscall_ratio",
    "proc_ids_ratio",
    "fdmap_ids_ratio",
    "ids_ratio",
];

/// The refresh's variants besides the walk and the records, in the order
/// of the second table: JSON key and column title.
const REFRESH_VARIANTS: &[(&str, &str)] = &[
    ("walk_status", "stat + status walk"),
    ("pidmap", "pidmap + /proc/TID/stat"),
    ("pidmap_grouped", "pidmap grouped + task stat"),
    ("bulk_default", "records, default view"),
    ("bulk_call", "records' calls alone"),
    (
        "pidfd_info",
        "pidfd + PIDFD_GET_INFO per task (lower bound)",
    ),
];

/// The per-record columns: the keys of `<key>_ns_per_record`.
const PER_RECORD_KEYS: &[&str] = &[
    "baseline",
    "walk_status",
    "pidmap",
    "new",
    "bulk_default",
    "bulk_call",
    "pidfd_info",
];

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Also write the results as JSON to this file: every boot's values and
    /// the medians.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Boots of the kernel; the table gives each figure's median over them
    /// and each ratio's min–max.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub boots: u32,
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
    /// (see `pidmap-bench --help`, built from `bench/pidmap-bench/`).
    #[arg(last = true, value_name = "ARGS")]
    pub extra: Vec<String>,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let kernel = kernel::prepare(&args.kernel)?;
    let flavor = kernel.label();
    let srcs = bench_sources()?;
    let bin = xtask_dir().join("bench").join(&flavor).join("pidmap-bench");
    if kernel.flavor == Flavor::Bpf {
        let out = xtask_dir().join("bench").join(&flavor).join("bpf");
        let build = timed("building bench/bpf for the guest kernel's BTF", || {
            bpf::build_program(&kernel.build.join("vmlinux"), &out)
        })?;
        timed(
            "building bench/pidmap-bench/ static with the BPF variants",
            || {
                bpf::compile_loader(
                    &build,
                    &srcs,
                    &bin,
                    Some(&kernel.headers()),
                    &["PIDMAP_BENCH_BPF"],
                )
            },
        )?;
    } else {
        timed("building bench/pidmap-bench/ static", || {
            guest::compile_c_files(kernel.arch, &srcs, &bin, None, &kernel.headers())
        })?;
    }

    let mut command = vec!["/add/pidmap-bench".to_string(), "--json".to_string()];
    if args.quick {
        command.push("--quick".to_string());
    }
    command.extend(args.extra.iter().cloned());
    let clock = if args.instructions {
        qemu::GuestClock::Instructions
    } else {
        qemu::GuestClock::Host
    };
    let mut boots = Vec::new();
    let mut failure = None;
    for boot in 1..=args.boots {
        step(format!("benchmark boot {boot} of {}", args.boots));
        let label = format!("bench-{flavor}-{boot}");
        let run = qemu::run_in_guest(&kernel, &args.kernel, clock, &bin, &command, &label)?;
        // A run that failed part-way (a listing that disagreed with /proc)
        // still prints what it measured, then fails.
        match extract_json(&run.log) {
            Ok(results) => boots.push(results),
            Err(err) => {
                failure = Some(err.context(format!(
                    "no benchmark results in {}",
                    run.log_path.display()
                )));
                break;
            }
        }
        if run.status != 0 {
            failure = Some(anyhow::anyhow!(
                "pidmap-bench exited with status {} in the guest; see {}",
                run.status,
                run.log_path.display()
            ));
            break;
        }
    }
    if !boots.is_empty() {
        let median = summarize(&boots);
        println!();
        println!(
            "Kernel: {flavor} 7.3 under QEMU; median of {} boot(s), ratio range min–max",
            boots.len()
        );
        if args.instructions {
            println!(
                "Guest clock: instructions ({}): 1 ns = 1 instruction.",
                qemu::clock_setup(clock, clock.default_cpus())
            );
        } else {
            println!("Guest clock: time (TCG; boots differ, so read the range).");
        }
        println!();
        print!("{}", markdown_table(&median));
        let refresh = refresh_table(&median);
        if !refresh.is_empty() {
            println!();
            print!("{refresh}");
        }
        let bpf = bpf_table(&median);
        if !bpf.is_empty() {
            println!();
            print!("{bpf}");
        }
        let lsof = lsof_table(&median);
        if !lsof.is_empty() {
            println!();
            print!("{lsof}");
        }
        if let Some(path) = &args.json {
            let json = serde_json::json!({
                "clock": if args.instructions { "instructions" } else { "time" },
                "boots": boots.iter().cloned().map(Value::Object).collect::<Vec<_>>(),
                "median": Value::Object(median),
            });
            let text = serde_json::to_string_pretty(&json)? + "\n";
            fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
            step(format!("wrote {}", path.display()));
        }
    }
    match failure {
        Some(err) => Err(err),
        None => Ok(()),
    }
}

/// The benchmark's sources: every `*.c` of `bench/pidmap-bench/`, which
/// share its headers; one static program.
fn bench_sources() -> Result<Vec<PathBuf>> {
    let dir = workspace_root().join("bench").join("pidmap-bench");
    let srcs = guest::c_sources(&dir);
    if !srcs.iter().any(|s| s.ends_with("main.c")) {
        bail!("no benchmark sources (main.c) in {}", dir.display());
    }
    Ok(srcs)
}

/// One object per case: the median over the boots of every numeric field,
/// `ratio_min`/`ratio_max`, `met` judged on the median ratio, `agree` only
/// if every boot agreed, and `boots`, the number of boots with the case.
/// Other fields are taken from the first boot that has the case.
fn summarize(boots: &[Map<String, Value>]) -> Map<String, Value> {
    let mut names: Vec<&String> = Vec::new();
    for boot in boots {
        for name in boot.keys() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let mut out = Map::new();
    for name in names {
        let cases: Vec<&Map<String, Value>> = boots
            .iter()
            .filter_map(|b| b.get(name.as_str()).and_then(Value::as_object))
            .collect();
        let mut merged = cases[0].clone();
        for (key, value) in merged.iter_mut() {
            let mut values: Vec<f64> = cases
                .iter()
                .filter_map(|c| c.get(key).and_then(Value::as_f64))
                .collect();
            if value.is_number() && !values.is_empty() {
                *value = Value::from(median(&mut values));
            }
        }
        for key in RATIO_KEYS {
            let mut ratios: Vec<f64> = cases
                .iter()
                .filter_map(|c| c.get(*key).and_then(Value::as_f64))
                .collect();
            ratios.sort_by(f64::total_cmp);
            if let (Some(min), Some(max)) = (ratios.first(), ratios.last()) {
                merged.insert(format!("{key}_min"), Value::from(*min));
                merged.insert(format!("{key}_max"), Value::from(*max));
            }
        }
        let lower = merged.get("better").and_then(Value::as_str) == Some("lower");
        if let (Some(ratio), Some(target)) = (num(&merged, "ratio"), num(&merged, "target")) {
            let met = if lower {
                ratio <= target
            } else {
                ratio >= target
            };
            merged.insert("met".into(), Value::from(met));
        }
        let agree = cases
            .iter()
            .all(|c| c.get("agree").and_then(Value::as_bool) != Some(false));
        merged.insert("agree".into(), Value::from(agree));
        merged.insert("boots".into(), Value::from(cases.len()));
        out.insert(name.clone(), Value::Object(merged));
    }
    out
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

fn num(v: &Map<String, Value>, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn int_or_na(v: &Map<String, Value>, key: &str) -> String {
    num(v, key).map_or_else(|| "n/a".to_string(), |x| format!("{x:.0}"))
}

/// The case names in [`CASE_ORDER`], then the others sorted.
fn ordered_names(results: &Map<String, Value>) -> Vec<&String> {
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
    names
}

/// One row per case; the syscall side is `n/a` on a kernel without it.
fn markdown_table(results: &Map<String, Value>) -> String {
    let names = ordered_names(results);

    let mut out = String::from(
        "| case | ids | baseline | new | ratio (median) | min–max | target | met | syscalls (baseline / new) | bytes (baseline / new) |\n\
         |------|----:|---------:|----:|------:|------:|-------:|:---:|------:|------:|\n",
    );
    for name in names {
        let Some(v) = results[name.as_str()].as_object() else {
            continue;
        };
        let lower = v.get("better").and_then(Value::as_str) == Some("lower");
        let new = num(v, "new_ns").map_or_else(|| "n/a".to_string(), human_ns);
        let ratio = num(v, "ratio").map_or_else(|| "n/a".to_string(), |r| format!("{r:.2}×"));
        let range = match (num(v, "ratio_min"), num(v, "ratio_max")) {
            (Some(lo), Some(hi)) => format!("{lo:.2}–{hi:.2}×"),
            _ => "n/a".to_string(),
        };
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
            "| {name} | {} | {} | {new} | {ratio} | {range} | {target} | {met} | {} / {} | {} / {} |\n",
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

/// A ratio's median with its min–max over the boots, or `n/a`.
fn ratio_cell(v: &Map<String, Value>, key: &str) -> String {
    match (
        num(v, key),
        num(v, &format!("{key}_min")),
        num(v, &format!("{key}_max")),
    ) {
        (Some(r), Some(lo), Some(hi)) => format!("{r:.2}× ({lo:.2}–{hi:.2})"),
        (Some(r), _, _) => format!("{r:.2}×"),
        _ => "n/a".to_string(),
    }
}

/// A variant's time with its ratio to the walk (median and min–max over
/// the boots), or `n/a` with the reason the program gave.
fn variant_cell(v: &Map<String, Value>, key: &str, absent: Option<&str>) -> String {
    let ns_key = if key == "new" {
        "new_ns".to_string()
    } else {
        format!("{key}_ns")
    };
    let ratio_key = if key == "new" {
        "ratio".to_string()
    } else {
        format!("{key}_ratio")
    };
    match (num(v, &ns_key), absent) {
        (Some(ns), _) => format!("{} ({})", human_ns(ns), ratio_cell(v, &ratio_key)),
        (None, Some(why)) => format!("n/a ({why})"),
        (None, None) => "n/a".to_string(),
    }
}

/// The refresh cases, every variant side by side (empty without them):
/// the /proc walk reading stat, then each variant's time with its ratio to
/// that walk: the records (`pidmap_info(2)` through the guest's /proc
/// view), the walk reading stat and status (the exact rss the records
/// give) and the records against it, pidmap ids + `/proc/TID/stat`,
/// pidmap grouped + task stat, the records in the default view, the
/// records' calls alone, and per task `pidfd_open` + `PIDFD_GET_INFO` +
/// `close` (a lower bound of that route: it has no comm, state, CPU time,
/// rss or start time); then the cost per record above the small case
/// (the calls alone are the kernel's cost per record).
fn refresh_table(results: &Map<String, Value>) -> String {
    let rows = rows_with(results, "pidmap_ns");
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("| case | tasks | /proc walk (stat) | records (ratio, min–max) | records vs the stat + status walk |");
    for (_, title) in REFRESH_VARIANTS {
        out.push_str(&format!(" {title} (ratio, min–max) |"));
    }
    out.push_str(&format!(
        " target | per record: {} |\n|------|----:|----:|----:|----:|",
        PER_RECORD_KEYS.join(" / ")
    ));
    out.push_str(&"----:|".repeat(REFRESH_VARIANTS.len() + 2));
    out.push('\n');
    for (name, v) in rows {
        let bulk = v
            .get("bulk")
            .and_then(Value::as_str)
            .filter(|s| *s != "present");
        let mut cells = vec![
            num(v, "baseline_ns").map_or_else(|| "n/a".to_string(), human_ns),
            variant_cell(v, "new", bulk),
            ratio_cell(v, "new_vs_walk_status_ratio"),
        ];
        for (key, _) in REFRESH_VARIANTS {
            let cell = match *key {
                "pidfd_info" => {
                    let absent = v.get("pidfd_info_state").and_then(Value::as_str);
                    let cell = variant_cell(v, key, absent);
                    if v.get("pidfd_info_ids").and_then(Value::as_str) == Some("proc") {
                        format!("{cell}, ids from /proc")
                    } else {
                        cell
                    }
                }
                "bulk_default" | "bulk_call" => variant_cell(v, key, bulk),
                _ => variant_cell(v, key, None),
            };
            cells.push(cell);
        }
        cells.push(num(v, "target").map_or_else(String::new, |t| format!("≥ {t}×")));
        cells.push(if v.contains_key("baseline_ns_per_record") {
            PER_RECORD_KEYS
                .iter()
                .map(|key| {
                    num(v, &format!("{key}_ns_per_record"))
                        .map_or_else(|| "n/a".to_string(), |x| format!("{x:.1}"))
                })
                .collect::<Vec<_>>()
                .join(" / ")
        } else {
            "—".to_string()
        });
        let agree = v.get("agree").and_then(Value::as_bool) != Some(false);
        out.push_str(&format!(
            "| {name}{} | {} | {} |\n",
            if agree { "" } else { " (**records disagree**)" },
            int_or_na(v, "entries"),
            cells.join(" | ")
        ));
    }
    out
}

/// The cases of `results` (in table order) whose figures include `key`,
/// for a table that only those cases have columns for.
fn rows_with<'r>(
    results: &'r Map<String, Value>,
    key: &str,
) -> Vec<(&'r String, &'r Map<String, Value>)> {
    ordered_names(results)
        .into_iter()
        .filter_map(|name| results[name.as_str()].as_object().map(|v| (name, v)))
        .filter(|(_, v)| v.contains_key(key))
        .collect()
}

/// The lsof-style listing (`lsof_1000x16`), one row per such case: every
/// fd of every process with its link target, the /proc walk lsof does
/// against `pidmap(2)` + per process `pidfd_open` + `fdmap(2)` + the same
/// readlinks + `close`, then both without the readlinks (the fd numbers
/// alone), each with its ratio to the /proc walk; the listings alone
/// against each other; the readlinks' share of the /proc walk; the
/// syscalls of one listing. Empty when no case has these figures.
fn lsof_table(results: &Map<String, Value>) -> String {
    let rows = rows_with(results, "proc_ids_ns");
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "| case | processes | fds | /proc: readdir + readlink per fd | \
         pidmap + fdmap + readlink per fd (ratio, min–max) | /proc readdirs alone (ratio) | \
         pidmap + fdmap alone (ratio) | the listings alone: /proc ÷ fdmap | \
         readlinks' share of the /proc walk | syscalls (/proc / fdmap) |\n\
         |------|----:|----:|----:|----:|----:|----:|----:|----:|----:|\n",
    );
    for (name, v) in rows {
        let agree = v.get("agree").and_then(Value::as_bool) != Some(false);
        let share = num(v, "readlink_share")
            .map_or_else(|| "n/a".to_string(), |s| format!("{:.1} %", s * 100.0));
        out.push_str(&format!(
            "| {name}{} | {} | {} | {} | {} | {} | {} | {} | {share} | {} / {} |\n",
            if agree { "" } else { " (**fds disagree**)" },
            int_or_na(v, "processes"),
            int_or_na(v, "entries"),
            num(v, "baseline_ns").map_or_else(|| "n/a".to_string(), human_ns),
            variant_cell(v, "new", None),
            variant_cell(v, "proc_ids", None),
            variant_cell(v, "fdmap_ids", None),
            ratio_cell(v, "ids_ratio"),
            int_or_na(v, "baseline_syscalls"),
            int_or_na(v, "syscalls"),
        ));
    }
    out
}

/// The BPF comparison (`--bpf`), one row per refresh case: the walks,
/// `pidmap_info(2)` in both views, the two BPF programs and the per-task
/// pidfd route, each with its ratio to the stat walk, then the BPF setup
/// and how many tasks' raw CPU times differ from /proc's. Empty when no
/// case has BPF figures.
fn bpf_table(results: &Map<String, Value>) -> String {
    let rows = rows_with(results, "bpf");
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "| case | tasks | stat walk | stat + status walk (ratio) | pidmap_info, procfs view | \
         pidmap_info, default view | BPF iter/task, 64 KiB reads | BPF open-coded iterator, \
         BPF_PROG_RUN | pidfd + PIDFD_GET_INFO per task | BPF load + verify / attach | \
         tasks whose raw CPU time differs (iter / syscall) |\n\
         |------|----:|----:|----:|----:|----:|----:|----:|----:|----:|----:|\n",
    );
    for (name, v) in rows {
        let absent = v
            .get("bpf")
            .and_then(Value::as_str)
            .filter(|s| *s != "present");
        let bulk = v
            .get("bulk")
            .and_then(Value::as_str)
            .filter(|s| *s != "present");
        let setup = match (num(v, "bpf_load_ns"), num(v, "bpf_attach_ns")) {
            (Some(load), Some(attach)) => format!("{} / {}", human_ns(load), human_ns(attach)),
            _ => format!("n/a ({})", absent.unwrap_or("absent")),
        };
        let agree = v.get("agree").and_then(Value::as_bool) != Some(false);
        out.push_str(&format!(
            "| {name}{} | {} | {} | {} | {} | {} | {} | {} | {} | {setup} | {} / {} |\n",
            if agree { "" } else { " (**records disagree**)" },
            int_or_na(v, "entries"),
            num(v, "baseline_ns").map_or_else(|| "n/a".to_string(), human_ns),
            variant_cell(v, "walk_status", None),
            variant_cell(v, "new", bulk),
            variant_cell(v, "bulk_default", bulk),
            variant_cell(v, "bpf_iter", absent),
            variant_cell(v, "bpf_syscall", absent),
            variant_cell(v, "pidfd_info", None),
            int_or_na(v, "bpf_iter_cputime_differs"),
            int_or_na(v, "bpf_syscall_cputime_differs"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_sources_are_one_program_with_shared_headers() {
        let srcs = bench_sources().unwrap();
        assert!(srcs.len() > 1, "{srcs:?}");
        let dir = workspace_root().join("bench").join("pidmap-bench");
        assert!(srcs.iter().all(|s| s.parent() == Some(dir.as_path())));
        for header in ["common.h", "refresh.h"] {
            assert!(dir.join(header).is_file(), "{header}");
        }
        // Exactly one main(): the old single file must not come back beside it.
        assert!(!workspace_root().join("bench/pidmap-bench.c").exists());
        let mains = srcs
            .iter()
            .filter(|s| fs::read_to_string(s).unwrap().contains("\nint main("))
            .count();
        assert_eq!(mains, 1);
    }

    #[test]
    fn json_survives_console_noise() {
        let log = "boot\r\nPIDMAP-BENCH-JSON-BEGIN\r\n{\r\n\
                   [   12.3] random: crng init done\r\n\
                   \"fds_4\": {\"baseline_ns\": 100.0, \"new_ns\": 2.0, \"ratio\": 50.0, \
                   \"target\": 30, \"better\": \"higher\", \"met\": true}\r\n}\r\n\
                   PIDMAP-BENCH-JSON-END\r\n";
        let map = extract_json(log).unwrap();
        assert_eq!(map["fds_4"]["ratio"], 50.0);
        let table = markdown_table(&summarize(&[map]));
        assert!(
            table.contains("| fds_4 | n/a | 100 ns | 2 ns | 50.00× | 50.00–50.00× | ≥ 30× | yes |")
        );
    }

    fn boot(ratio: f64, base: f64, agree: bool) -> Map<String, Value> {
        let v = serde_json::json!({"fds_4": {"baseline_ns": base, "new_ns": 1.0,
            "ratio": ratio, "target": 30, "better": "higher", "met": ratio >= 30.0,
            "agree": agree}});
        v.as_object().unwrap().clone()
    }

    #[test]
    fn medians_over_boots_with_the_ratio_range() {
        let boots = [
            boot(20.0, 20.0, true),
            boot(90.0, 90.0, true),
            boot(40.0, 40.0, true),
        ];
        let m = summarize(&boots);
        let c = m["fds_4"].as_object().unwrap();
        assert_eq!(c["ratio"], 40.0);
        assert_eq!(c["baseline_ns"], 40.0);
        assert_eq!(c["ratio_min"], 20.0);
        assert_eq!(c["ratio_max"], 90.0);
        assert_eq!(c["met"], true);
        assert_eq!(c["boots"], 3);
        // Two boots: the mean of the middle two; the best boot does not decide.
        let m = summarize(&boots[..2]);
        assert_eq!(m["fds_4"]["ratio"], 55.0);
        let m = summarize(&[boot(20.0, 1.0, true), boot(25.0, 1.0, true)]);
        assert_eq!(m["fds_4"]["met"], false);
    }

    #[test]
    fn one_disagreeing_boot_marks_the_case() {
        let m = summarize(&[boot(50.0, 1.0, true), boot(50.0, 1.0, false)]);
        assert_eq!(m["fds_4"]["agree"], false);
        assert!(markdown_table(&m).contains("**ids disagree**"));
    }

    fn refresh_boot(bulk: Option<f64>, pidmap: f64) -> Map<String, Value> {
        let new = bulk.map_or(Value::Null, Value::from);
        let ratio = bulk.map_or(Value::Null, |b| Value::from(1000.0 / b));
        let status_ratio = bulk.map_or(Value::Null, |b| Value::from(2000.0 / b));
        let v = serde_json::json!({"refresh_10k": {"baseline_ns": 1000.0, "new_ns": new,
            "ratio": ratio, "target": 10, "better": "higher", "entries": 10000,
            "walk_status_ns": 2000.0, "walk_status_ratio": 0.5,
            "new_vs_walk_status_ratio": status_ratio,
            "pidmap_ns": pidmap, "pidmap_ratio": 1000.0 / pidmap,
            "pidmap_grouped_ns": null, "pidmap_grouped_ratio": null,
            "bulk_default_ns": null, "bulk_default_ratio": null,
            "bulk_call_ns": null, "bulk_call_ratio": null,
            "pidfd_info_ns": 250.0, "pidfd_info_ratio": 4.0, "pidfd_info_ids": "pidmap",
            "bulk": if bulk.is_some() { "present" } else { "absent: no pidmap_info (ENOSYS)" },
            "baseline_ns_per_record": 99.5}});
        v.as_object().unwrap().clone()
    }

    #[test]
    fn refresh_rows_show_every_variant_with_ranges() {
        let m = summarize(&[
            refresh_boot(Some(100.0), 800.0),
            refresh_boot(Some(50.0), 1000.0),
            refresh_boot(Some(40.0), 500.0),
        ]);
        let c = m["refresh_10k"].as_object().unwrap();
        assert_eq!(c["ratio"], 20.0);
        assert_eq!(c["pidmap_ratio_min"], 1.0);
        assert_eq!(c["pidmap_ratio_max"], 2.0);
        assert_eq!(c["new_vs_walk_status_ratio_max"], 50.0);
        assert_eq!(c["met"], true);
        let table = refresh_table(&m);
        assert!(table.contains(
            "| refresh_10k | 10000 | 1.0 µs | 50 ns (20.00× (10.00–25.00)) | 40.00× (20.00–50.00) | \
             2.0 µs (0.50× (0.50–0.50)) | 800 ns (1.25× (1.00–2.00)) | n/a | n/a | n/a | \
             250 ns (4.00× (4.00–4.00)) | ≥ 10× | 99.5 / n/a / n/a / n/a / n/a / n/a / n/a |"
        ), "{table}");
        // Every row has as many cells as the header.
        let cells: Vec<usize> = table.lines().map(|l| l.matches('|').count()).collect();
        assert!(cells.iter().all(|&n| n == cells[0]), "{table}");
        // Cases without a pidmap_ns key have no refresh table.
        assert!(refresh_table(&summarize(&[boot(50.0, 1.0, true)])).is_empty());
    }

    #[test]
    fn refresh_without_records_says_why() {
        let m = summarize(&[refresh_boot(None, 800.0)]);
        let table = refresh_table(&m);
        assert!(
            table.contains("| n/a (absent: no pidmap_info (ENOSYS)) | n/a |"),
            "{table}"
        );
        assert!(
            table.contains(
                "| n/a (absent: no pidmap_info (ENOSYS)) | n/a (absent: no pidmap_info (ENOSYS)) |"
            ),
            "{table}"
        );
        assert!(m["refresh_10k"]
            .get("met")
            .and_then(Value::as_bool)
            .is_none());
    }

    #[test]
    fn refresh_pidfd_info_says_where_its_ids_came_from_or_why_absent() {
        let mut b = refresh_boot(Some(50.0), 800.0);
        let c = b["refresh_10k"].as_object_mut().unwrap();
        c.insert("pidfd_info_ids".into(), Value::from("proc"));
        let table = refresh_table(&summarize(&[b]));
        assert!(
            table.contains("| 250 ns (4.00× (4.00–4.00)), ids from /proc |"),
            "{table}"
        );
        let mut b = refresh_boot(Some(50.0), 800.0);
        let c = b["refresh_10k"].as_object_mut().unwrap();
        c.insert("pidfd_info_ns".into(), Value::Null);
        c.insert("pidfd_info_ratio".into(), Value::Null);
        c.remove("pidfd_info_ids");
        c.insert(
            "pidfd_info_state".into(),
            Value::from("absent: no PIDFD_GET_INFO (ENOTTY)"),
        );
        let m = summarize(&[b]);
        assert!(m["refresh_10k"].get("pidfd_info_ratio_min").is_none());
        let table = refresh_table(&m);
        assert!(
            table.contains("| n/a (absent: no PIDFD_GET_INFO (ENOTTY)) | ≥ 10× |"),
            "{table}"
        );
    }

    #[test]
    fn bpf_table_only_with_bpf_figures() {
        assert!(bpf_table(&summarize(&[refresh_boot(Some(50.0), 800.0)])).is_empty());
        let mut b = refresh_boot(Some(50.0), 800.0);
        let c = b["refresh_10k"].as_object_mut().unwrap();
        for (key, value) in [
            ("bpf", Value::from("present")),
            ("bpf_iter_ns", Value::from(100.0)),
            ("bpf_iter_ratio", Value::from(10.0)),
            ("bpf_syscall_ns", Value::from(125.0)),
            ("bpf_syscall_ratio", Value::from(8.0)),
            ("bpf_load_ns", Value::from(2.5e7)),
            ("bpf_attach_ns", Value::from(1.0e4)),
            ("bpf_iter_cputime_differs", Value::from(3)),
            ("bpf_syscall_cputime_differs", Value::from(4)),
        ] {
            c.insert(key.into(), value);
        }
        let table = bpf_table(&summarize(&[b]));
        assert!(
            table.contains(
                "| refresh_10k | 10000 | 1.0 µs | 2.0 µs (0.50× (0.50–0.50)) | \
                 50 ns (20.00× (20.00–20.00)) | n/a | 100 ns (10.00× (10.00–10.00)) | \
                 125 ns (8.00× (8.00–8.00)) | 250 ns (4.00× (4.00–4.00)) | 25.00 ms / 10.0 µs | 3 / 4 |"
            ),
            "{table}"
        );
        let cells: Vec<usize> = table.lines().map(|l| l.matches('|').count()).collect();
        assert!(cells.iter().all(|&n| n == cells[0]), "{table}");
    }

    fn lsof_boot(new: Option<f64>, fdmap_ids: Option<f64>) -> Map<String, Value> {
        let opt = |x: Option<f64>| x.map_or(Value::Null, Value::from);
        let v = serde_json::json!({"lsof_1000x16": {"baseline_ns": 1000.0,
            "new_ns": opt(new), "ratio": opt(new.map(|n| 1000.0 / n)),
            "target": null, "better": "higher", "met": null, "entries": 16500,
            "baseline_syscalls": 21000, "syscalls": new.map_or(Value::Null, |_| Value::from(19000)),
            "proc_ids_ns": 250.0, "proc_ids_ratio": 4.0,
            "fdmap_ids_ns": opt(fdmap_ids), "fdmap_ids_ratio": opt(fdmap_ids.map(|n| 1000.0 / n)),
            "ids_ratio": opt(fdmap_ids.map(|n| 250.0 / n)),
            "readlink_share": 0.75, "processes": 1030}});
        v.as_object().unwrap().clone()
    }

    #[test]
    fn lsof_rows_show_every_variant_with_ranges() {
        let m = summarize(&[
            lsof_boot(Some(800.0), Some(100.0)),
            lsof_boot(Some(500.0), Some(125.0)),
            lsof_boot(Some(1000.0), Some(50.0)),
        ]);
        let c = m["lsof_1000x16"].as_object().unwrap();
        assert_eq!(c["ids_ratio_min"], 2.0);
        assert_eq!(c["ids_ratio_max"], 5.0);
        // No threshold: reported, not judged.
        assert!(c["met"].is_null(), "{c:?}");
        assert!(markdown_table(&m)
            .contains("| lsof_1000x16 | 16500 | 1.0 µs | 800 ns | 1.25× | 1.00–2.00× |  | n/a |"));
        let table = lsof_table(&m);
        assert!(
            table.contains(
                "| lsof_1000x16 | 1030 | 16500 | 1.0 µs | 800 ns (1.25× (1.00–2.00)) | \
                 250 ns (4.00× (4.00–4.00)) | 100 ns (10.00× (8.00–20.00)) | 2.50× (2.00–5.00) | \
                 75.0 % | 21000 / 19000 |"
            ),
            "{table}"
        );
        let cells: Vec<usize> = table.lines().map(|l| l.matches('|').count()).collect();
        assert!(cells.iter().all(|&n| n == cells[0]), "{table}");
        // Other cases have no lsof table.
        assert!(lsof_table(&summarize(&[boot(50.0, 1.0, true)])).is_empty());
    }

    #[test]
    fn lsof_without_fdmap_shows_the_proc_side_only() {
        let m = summarize(&[lsof_boot(None, None)]);
        let table = lsof_table(&m);
        assert!(
            table.contains(
                "| 1.0 µs | n/a | 250 ns (4.00× (4.00–4.00)) | n/a | n/a | 75.0 % | 21000 / n/a |"
            ),
            "{table}"
        );
    }

    #[test]
    fn missing_end_marker_is_an_error() {
        assert!(extract_json("PIDMAP-BENCH-JSON-BEGIN\n{\n").is_err());
        assert!(extract_json("nothing here\n").is_err());
    }
}
