//! Time the syscalls against /proc on this machine: each listing (every
//! process, every task, a top-style refresh of every task's record, the
//! caller's fds) by each method the machine has, and how each compares
//! with the fastest of its listing. Which method is faster comes from the
//! measurement, never from an assumption. Not part of the shipped
//! `pidmap` binary:
//!
//! ```text
//! cargo run --release -p pidmap-cli --example bench -- [--iterations N] [--json]
//!     [--backend auto|syscall|procfs] [--proc-root PATH]
//! ```
//!
//! `--backend procfs` (or `PIDMAP_BACKEND=procfs`) times /proc only, and
//! `syscall` fails on a kernel without the calls. `--json` prints one
//! document (`"command": "bench"`, the CLI's schema).

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Parser;
use pidmap::{ActiveBackend, Backend, Error as PmError, InfoFields, Pidmap, Query, Target};
use serde::Serialize;

/// Time the syscalls against /proc on this machine.
#[derive(Debug, Parser)]
#[command(name = "bench")]
struct Args {
    /// Listings per measurement.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    iterations: u32,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
    /// Which backend to compare with /proc [default: $PIDMAP_BACKEND, else auto].
    #[allow(
        clippy::doc_markdown,
        reason = "the doc comment is the --help text, printed as written: backticks would show"
    )]
    #[arg(long, value_parser = pidmap_cli::backend_parser())]
    backend: Option<Backend>,
    /// Where procfs is mounted.
    #[arg(long, value_name = "PATH", default_value = "/proc")]
    proc_root: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut out = BufWriter::new(io::stdout().lock());
    let result = Backend::from_env()
        .map_err(anyhow::Error::from)
        .and_then(|env| {
            run(
                args.backend.or(env),
                &args.proc_root,
                args.iterations,
                args.json,
                &mut out,
            )
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if pidmap_cli::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: {}", pidmap_cli::error_line(&e));
            ExitCode::from(pidmap_cli::exit_status(&e))
        }
    }
}

/// Write one pretty JSON document and a newline.
fn write_json(out: &mut dyn Write, doc: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, doc).map_err(io::Error::from)?;
    writeln!(out)
}

/// One measurement.
#[derive(Debug, Clone, Serialize)]
struct Row {
    listing: &'static str,
    method: &'static str,
    ids: usize,
    median_us: f64,
    min_us: f64,
}

/// How a method compares with the fastest one of its listing.
#[derive(Debug, Clone, Serialize, PartialEq)]
struct Ratio {
    listing: &'static str,
    slower: &'static str,
    faster: &'static str,
    #[allow(clippy::struct_field_names, reason = "the JSON key `ratio` (schema 2)")]
    ratio: f64,
}

#[derive(Serialize)]
struct Doc {
    schema: u32,
    command: &'static str,
    syscall_available: bool,
    kernel_support: String,
    iterations: u32,
    results: Vec<Row>,
    ratios: Vec<Ratio>,
}

/// Median and minimum of `iterations` timed calls of `f`, after one
/// warm-up call; also the last call's result.
fn time(iterations: u32, mut f: impl FnMut() -> Result<usize>) -> Result<(usize, f64, f64)> {
    let mut n = f()?;
    let mut samples = Vec::with_capacity(usize::try_from(iterations).unwrap_or(0));
    for _ in 0..iterations {
        let t = Instant::now();
        n = f()?;
        samples.push(t.elapsed());
    }
    samples.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let median = samples.get(samples.len() / 2).copied().unwrap_or_default();
    let min = samples.first().copied().unwrap_or_default();
    Ok((n, us(median), us(min)))
}

/// For each listing, every method against the one with the smallest
/// median there.
fn ratios(rows: &[Row]) -> Vec<Ratio> {
    let mut listings: Vec<&'static str> = rows.iter().map(|r| r.listing).collect();
    listings.dedup();
    let mut out = Vec::new();
    for listing in listings {
        let of: Vec<&Row> = rows.iter().filter(|r| r.listing == listing).collect();
        let Some(fastest) = of.iter().min_by(|a, b| a.median_us.total_cmp(&b.median_us)) else {
            continue;
        };
        for r in of.iter().filter(|r| r.method != fastest.method) {
            out.push(Ratio {
                listing,
                slower: r.method,
                faster: fastest.method,
                ratio: r.median_us / fastest.median_us.max(1e-3),
            });
        }
    }
    out
}

fn std_read_dir(path: &Path) -> Result<Vec<i32>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(path).with_context(|| format!("reading {}", path.display()))? {
        if let Some(id) = e?.file_name().to_str().and_then(|s| s.parse().ok()) {
            v.push(id);
        }
    }
    Ok(v)
}

/// Run the benchmark and print it.
#[allow(
    clippy::too_many_lines,
    reason = "the timed cases one after another, then their table: one list, read in order"
)]
fn run(
    requested: Option<Backend>,
    proc_root: &Path,
    iterations: u32,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let support = pidmap::kernel_support();
    if requested == Some(Backend::Syscall) && !support.is_available() {
        return Err(PmError::SyscallUnavailable(support).into());
    }
    let open = |b: Backend| Pidmap::builder().backend(b).proc_root(proc_root).build();
    let mut sc = if support.is_available() && requested != Some(Backend::Procfs) {
        Some(open(Backend::Syscall)?)
    } else {
        None
    };
    let mut pf = open(Backend::Procfs)?;
    let root: PathBuf = proc_root.to_path_buf();
    let mut rows = Vec::new();
    let mut pids = Vec::with_capacity(1 << 16);
    let mut fds = Vec::with_capacity(1 << 12);
    let mut push = |listing, method, (ids, median_us, min_us)| {
        rows.push(Row {
            listing,
            method,
            ids,
            median_us,
            min_us,
        });
    };
    for (name, q) in [("procs", Query::processes()), ("tasks", Query::all_tasks())] {
        if let Some(sc) = sc.as_mut() {
            push(
                name,
                "syscall",
                time(iterations, || {
                    Ok(sc.fill(q, &mut pids).map(|()| pids.len())?)
                })?,
            );
        }
        push(
            name,
            "procfs",
            time(iterations, || {
                Ok(pf.fill(q, &mut pids).map(|()| pids.len())?)
            })?,
        );
        push(
            name,
            "std_read_dir",
            time(iterations, || {
                let ps = std_read_dir(&root)?;
                if name == "procs" {
                    return Ok(ps.len());
                }
                Ok(ps
                    .iter()
                    .map(|p| {
                        std_read_dir(&root.join(p.to_string()).join("task")).map_or(0, |v| v.len())
                    })
                    .sum())
            })?,
        );
    }
    // A top-style refresh: every task with the columns a monitor shows.
    let fields = InfoFields::TGID
        | InfoFields::PPID
        | InfoFields::STATE
        | InfoFields::CPU_TIME
        | InfoFields::START_TIME
        | InfoFields::RSS
        | InfoFields::COMM;
    let mut records = Vec::with_capacity(1 << 16);
    if let Some(sc) = sc
        .as_mut()
        .filter(|sc| sc.info_backend().ok() == Some(ActiveBackend::Syscall))
    {
        push(
            "records",
            "syscall",
            time(iterations, || {
                sc.fill_info(Query::all_tasks(), fields, &mut records)?;
                Ok(records.len())
            })?,
        );
    }
    push(
        "records",
        "procfs",
        time(iterations, || {
            pf.fill_info(Query::all_tasks(), fields, &mut records)?;
            Ok(records.len())
        })?,
    );
    if let Some(sc) = sc.as_mut() {
        push(
            "fds",
            "syscall",
            time(iterations, || {
                Ok(sc.fill_fds(Target::Caller, &mut fds).map(|()| fds.len())?)
            })?,
        );
    }
    push(
        "fds",
        "procfs",
        time(iterations, || {
            Ok(pf.fill_fds(Target::Caller, &mut fds).map(|()| fds.len())?)
        })?,
    );
    push(
        "fds",
        "std_read_dir",
        time(iterations, || {
            Ok(std_read_dir(&root.join("thread-self/fd"))?.len())
        })?,
    );
    let ratios = ratios(&rows);
    let doc = Doc {
        schema: pidmap_cli::SCHEMA,
        command: "bench",
        syscall_available: sc.is_some(),
        kernel_support: support.reason(),
        iterations,
        results: rows,
        ratios,
    };
    if json {
        write_json(out, &doc)?;
    } else {
        if doc.syscall_available {
            writeln!(out, "pidmap(2) is available: comparing it with /proc")?;
        } else {
            writeln!(
                out,
                "no pidmap(2) here ({}): timing the /proc readers only",
                doc.kernel_support
            )?;
        }
        writeln!(
            out,
            "{:<7} {:<13} {:>7} {:>12} {:>12}",
            "listing", "method", "ids", "median µs", "min µs"
        )?;
        for r in &doc.results {
            writeln!(
                out,
                "{:<7} {:<13} {:>7} {:>12.1} {:>12.1}",
                r.listing, r.method, r.ids, r.median_us, r.min_us
            )?;
        }
        for r in &doc.ratios {
            writeln!(
                out,
                "{:<7} {} took {:.2}x the time of {} (fastest here)",
                r.listing, r.slower, r.ratio, r.faster
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(listing: &'static str, method: &'static str, median_us: f64) -> Row {
        Row {
            listing,
            method,
            ids: 1,
            median_us,
            min_us: median_us,
        }
    }

    #[test]
    fn the_fastest_is_measured_not_assumed() {
        // The syscall row is the slowest here: /proc must be named faster.
        let rows = [
            row("procs", "syscall", 30.0),
            row("procs", "procfs", 10.0),
            row("procs", "std_read_dir", 20.0),
            row("fds", "syscall", 1.0),
            row("fds", "procfs", 4.0),
        ];
        let r = ratios(&rows);
        assert_eq!(
            r,
            [
                Ratio {
                    listing: "procs",
                    slower: "syscall",
                    faster: "procfs",
                    ratio: 3.0
                },
                Ratio {
                    listing: "procs",
                    slower: "std_read_dir",
                    faster: "procfs",
                    ratio: 2.0
                },
                Ratio {
                    listing: "fds",
                    slower: "procfs",
                    faster: "syscall",
                    ratio: 4.0
                },
            ]
        );
    }

    #[test]
    fn timer_counts_every_iteration() {
        let mut calls = 0;
        let (n, med, min) = time(5, || {
            calls += 1;
            std::thread::sleep(Duration::from_millis(1));
            Ok(calls)
        })
        .unwrap();
        assert_eq!((calls, n), (6, 6));
        assert!(min >= 1000.0 && med >= min, "{med} {min}");
    }

    #[test]
    fn a_run_names_the_fastest_from_its_own_figures() {
        let mut out = Vec::new();
        run(Some(Backend::Procfs), Path::new("/proc"), 2, true, &mut out).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(doc["command"], "bench");
        assert_eq!(doc["schema"], pidmap_cli::SCHEMA);
        assert_eq!(
            doc["syscall_available"], false,
            "--backend procfs times /proc only"
        );
        let results = doc["results"].as_array().unwrap();
        let listings: Vec<&str> = results
            .iter()
            .filter_map(|r| r["listing"].as_str())
            .collect();
        for l in ["procs", "tasks", "records", "fds"] {
            assert!(listings.contains(&l), "{l} not timed: {listings:?}");
        }
        let ratios = doc["ratios"].as_array().unwrap();
        assert!(!ratios.is_empty());
        for r in ratios {
            let median = |m: &serde_json::Value| {
                results
                    .iter()
                    .find(|x| x["listing"] == r["listing"] && x["method"] == *m)
                    .unwrap()["median_us"]
                    .as_f64()
                    .unwrap()
            };
            assert!(median(&r["faster"]) <= median(&r["slower"]), "{r}");
        }
        let mut text = Vec::new();
        run(
            Some(Backend::Procfs),
            Path::new("/proc"),
            2,
            false,
            &mut text,
        )
        .unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("(fastest here)"), "{text}");
        assert!(text.contains("timing the /proc readers only"), "{text}");
    }

    #[test]
    fn iterations_must_be_positive() {
        assert!(Args::try_parse_from(["bench", "--iterations", "0"]).is_err());
        let a = Args::try_parse_from(["bench", "--backend", "procfs"]).unwrap();
        assert_eq!((a.backend, a.iterations), (Some(Backend::Procfs), 200));
        assert!(Args::try_parse_from(["bench", "--backend", "nope"]).is_err());
    }
}
