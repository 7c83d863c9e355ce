//! The `pidmap` command line, as a library so that `cargo xtask` can
//! generate shell completions and a man page from [`command`].
//!
//! Exit codes: 0 success, 1 runtime error (no such process, permission
//! denied, syscall backend unavailable, /proc not mounted), 2 usage error.
//! A closed stdout (`pidmap procs | head -1`) exits 0 quietly.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use pidmap::{Backend, Error as PmError, KernelSupport, Pid, Pidmap, Query};
use serde::Serialize;

/// List processes, threads, children and fds via pidmap(2)/fdmap(2), or
/// /proc when the kernel lacks them.
#[derive(Debug, Parser)]
#[command(
    name = "pidmap",
    version,
    about,
    after_help = "Exit status: 0 success, 1 runtime error, 2 usage error.\n\
                  Without a patched kernel the /proc backend is used; `cargo xtask qemu-shell` boots one."
)]
pub struct Cli {
    /// Print one JSON document on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Which backend to use; `syscall` fails instead of falling back.
    #[arg(long, global = true, value_enum, default_value_t = BackendArg::Auto)]
    pub backend: BackendArg,
    /// Add ppid, state and comm (or, for fds, the target) from /proc.
    #[arg(long, short = 'l', global = true)]
    pub long: bool,
    /// Where procfs is mounted.
    #[arg(long, global = true, value_name = "PATH", default_value = "/proc")]
    pub proc_root: PathBuf,
    #[command(subcommand)]
    pub command: Cmd,
}

/// `--backend` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// The syscalls if the kernel has them, else /proc.
    Auto,
    /// pidmap(2)/fdmap(2) only.
    Syscall,
    /// /proc only.
    Procfs,
}

impl From<BackendArg> for Backend {
    fn from(b: BackendArg) -> Backend {
        match b {
            BackendArg::Auto => Backend::Auto,
            BackendArg::Syscall => Backend::Syscall,
            BackendArg::Procfs => Backend::Procfs,
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// List processes (thread-group ids).
    Procs {
        /// Leave kernel threads out.
        #[arg(long)]
        no_kthreads: bool,
    },
    /// List every task id (threads included).
    Tasks {
        /// Leave kernel threads out.
        #[arg(long)]
        no_kthreads: bool,
    },
    /// List the threads of a process.
    Threads {
        /// Process id (0: pidmap itself).
        #[arg(value_parser = parse_pid, allow_hyphen_values = true)]
        pid: Pid,
    },
    /// List the children of a process.
    Children {
        /// Process id (0: pidmap itself).
        #[arg(value_parser = parse_pid, allow_hyphen_values = true)]
        pid: Pid,
    },
    /// List the open file descriptors of a process.
    Fds {
        /// Process id (0: pidmap itself).
        #[arg(value_parser = parse_pid, allow_hyphen_values = true)]
        pid: Pid,
    },
    /// Show the backend in use, the kernel's support and why.
    Info,
    /// Time the syscall against /proc on this machine.
    Bench {
        /// Listings per measurement.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
        iterations: u32,
    },
}

fn parse_pid(s: &str) -> std::result::Result<Pid, String> {
    s.parse::<Pid>().map_err(|e| match e {
        PmError::InvalidArgument(m) => m.to_string(),
        e => e.to_string(),
    })
}

/// The clap command, for completions and man pages.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parse the arguments; on a usage error print one line and exit 2, on
/// `--help`/`--version` print them and exit 0.
pub fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) => {
            let rendered = e.render().to_string();
            let line = rendered
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("error: invalid usage");
            eprintln!("pidmap: {}", line.trim_start_matches("error: "));
            std::process::exit(2);
        }
    }
}

/// Whether an error comes from writing to a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// One line for an error, with a hint for the missing syscall.
pub fn error_line(e: &anyhow::Error) -> String {
    if let Some(PmError::SyscallUnavailable(s)) = e.downcast_ref::<PmError>() {
        return format!(
            "the running kernel lacks pidmap(2)/fdmap(2) ({}); boot a patched kernel with \
             `cargo xtask qemu-shell`, or apply kernel-patches/ to Linux 6.12",
            s.reason()
        );
    }
    format!("{e:#}")
}

fn open(cli: &Cli, backend: Backend) -> Result<Pidmap> {
    Ok(Pidmap::builder()
        .backend(backend)
        .proc_root(&cli.proc_root)
        .build()?)
}

/// Run a parsed command, writing to `out`.
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<()> {
    match &cli.command {
        Cmd::Procs { no_kthreads } => {
            let q = kq(Query::processes(), *no_kthreads);
            list_pids(cli, "procs", q, out)
        }
        Cmd::Tasks { no_kthreads } => {
            let q = kq(Query::all_tasks(), *no_kthreads);
            list_pids(cli, "tasks", q, out)
        }
        Cmd::Threads { pid } => list_pids(cli, "threads", Query::threads(*pid), out),
        Cmd::Children { pid } => list_pids(cli, "children", Query::children(*pid), out),
        Cmd::Fds { pid } => list_fds(cli, *pid, out),
        Cmd::Info => info(cli, out),
        Cmd::Bench { iterations } => bench(cli, *iterations, out),
    }
}

fn kq(q: Query, no_kthreads: bool) -> Query {
    if no_kthreads {
        q.without_kthreads()
    } else {
        q
    }
}

#[derive(Serialize)]
struct Listing<'a, T: Serialize> {
    command: &'a str,
    backend: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pid: Option<i32>,
    count: usize,
    ids: Vec<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entries: Option<Vec<T>>,
}

#[derive(Serialize)]
struct TaskEntry {
    pid: i32,
    ppid: i32,
    state: String,
    comm: String,
}

#[derive(Serialize)]
struct FdEntry {
    fd: i32,
    target: Option<String>,
}

/// `(ppid, state, comm)` from `<root>/<id>/stat`, `None` if it vanished.
fn stat_of(root: &Path, id: i32) -> Option<(i32, String, String)> {
    let s = std::fs::read(root.join(id.to_string()).join("stat")).ok()?;
    let open = s.iter().position(|&b| b == b'(')?;
    let close = s.iter().rposition(|&b| b == b')')?;
    let comm = String::from_utf8_lossy(&s[open + 1..close]).into_owned();
    let rest = std::str::from_utf8(&s[close + 1..]).ok()?;
    let mut f = rest.split_whitespace();
    let state = f.next()?.to_string();
    let ppid = f.next()?.parse().ok()?;
    Some((ppid, state, comm))
}

fn list_pids(cli: &Cli, name: &str, q: Query, out: &mut dyn Write) -> Result<()> {
    let mut pm = open(cli, cli.backend.into())?;
    let mut ids = Vec::new();
    pm.fill(q, &mut ids)?;
    let pid = match q.listing {
        pidmap::Listing::Threads(p) | pidmap::Listing::Children(p) => Some(p.as_raw()),
        _ => None,
    };
    let ids: Vec<i32> = ids.into_iter().map(i32::from).collect();
    let entries = cli.long.then(|| {
        ids.iter()
            .filter_map(|&id| {
                let (ppid, state, comm) = stat_of(&cli.proc_root, id)?;
                Some(TaskEntry {
                    pid: id,
                    ppid,
                    state,
                    comm,
                })
            })
            .collect::<Vec<_>>()
    });
    if cli.json {
        let doc = Listing {
            command: name,
            backend: pm.active().to_string(),
            pid,
            count: ids.len(),
            ids,
            entries,
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else if let Some(entries) = entries {
        writeln!(out, "{:>8} {:>8} S COMMAND", "PID", "PPID")?;
        for e in entries {
            writeln!(out, "{:>8} {:>8} {} {}", e.pid, e.ppid, e.state, e.comm)?;
        }
    } else {
        for id in ids {
            writeln!(out, "{id}")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn list_fds(cli: &Cli, pid: Pid, out: &mut dyn Write) -> Result<()> {
    let mut pm = open(cli, cli.backend.into())?;
    let mut fds = Vec::new();
    pm.fill_fds(pid, &mut fds)?;
    let dir = cli.proc_root.join(if pid.as_raw() == 0 {
        "self".to_string()
    } else {
        pid.to_string()
    });
    let entries = cli.long.then(|| {
        fds.iter()
            .map(|&fd| FdEntry {
                fd,
                target: std::fs::read_link(dir.join("fd").join(fd.to_string()))
                    .ok()
                    .map(|p| p.to_string_lossy().into_owned()),
            })
            .collect::<Vec<_>>()
    });
    if cli.json {
        let doc = Listing {
            command: "fds",
            backend: pm.active().to_string(),
            pid: Some(pid.as_raw()),
            count: fds.len(),
            ids: fds,
            entries,
        };
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else if let Some(entries) = entries {
        writeln!(out, "{:>6} TARGET", "FD")?;
        for e in entries {
            writeln!(out, "{:>6} {}", e.fd, e.target.as_deref().unwrap_or("?"))?;
        }
    } else {
        for fd in fds {
            writeln!(out, "{fd}")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn support_name(s: KernelSupport) -> &'static str {
    match s {
        KernelSupport::Available => "available",
        KernelSupport::Missing => "missing",
        KernelSupport::Blocked => "blocked",
        KernelSupport::Unexpected { .. } => "unexpected",
        _ => "unknown",
    }
}

#[derive(Serialize)]
struct Info {
    requested: String,
    backend: Option<String>,
    kernel_support: &'static str,
    reason: String,
    proc_root: String,
    syscall_numbers: Numbers,
    version: &'static str,
}

#[derive(Serialize)]
struct Numbers {
    pidmap: libc::c_long,
    fdmap: libc::c_long,
}

fn info(cli: &Cli, out: &mut dyn Write) -> Result<()> {
    let requested: Backend = cli.backend.into();
    // Info always reports the kernel's answer, even for --backend procfs.
    let support = pidmap::kernel_support();
    let built = open(cli, requested);
    let (backend, reason) = match &built {
        Ok(pm) => (Some(pm.active().to_string()), pm.detection().reason()),
        Err(e) => (None, error_line(e)),
    };
    let doc = Info {
        requested: requested.to_string(),
        backend,
        kernel_support: support_name(support),
        reason,
        proc_root: cli.proc_root.display().to_string(),
        syscall_numbers: Numbers {
            pidmap: pidmap::sys::NR.pidmap,
            fdmap: pidmap::sys::NR.fdmap,
        },
        version: env!("CARGO_PKG_VERSION"),
    };
    if cli.json {
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "backend:        {}",
            doc.backend.as_deref().unwrap_or("none")
        )?;
        writeln!(out, "requested:      {}", doc.requested)?;
        writeln!(
            out,
            "kernel support: {} ({})",
            doc.kernel_support,
            support.reason()
        )?;
        writeln!(out, "reason:         {}", doc.reason)?;
        writeln!(out, "proc root:      {}", doc.proc_root)?;
        writeln!(
            out,
            "syscalls:       pidmap = {}, fdmap = {}",
            doc.syscall_numbers.pidmap, doc.syscall_numbers.fdmap
        )?;
    }
    out.flush()?;
    built.map(|_| ())
}

#[derive(Serialize)]
struct BenchRow {
    listing: &'static str,
    method: &'static str,
    ids: usize,
    median_us: f64,
    min_us: f64,
}

#[derive(Serialize)]
struct Ratio {
    listing: &'static str,
    slower: &'static str,
    faster: &'static str,
    ratio: f64,
}

#[derive(Serialize)]
struct BenchDoc {
    syscall_available: bool,
    kernel_support: String,
    iterations: u32,
    results: Vec<BenchRow>,
    ratios: Vec<Ratio>,
}

fn time(iterations: u32, mut f: impl FnMut() -> Result<usize>) -> Result<(usize, f64, f64)> {
    let mut n = f()?; // warm-up
    let mut samples = Vec::with_capacity(iterations as usize);
    for _ in 0..iterations {
        let t = Instant::now();
        n = f()?;
        samples.push(t.elapsed());
    }
    samples.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    Ok((n, us(samples[samples.len() / 2]), us(samples[0])))
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

fn bench(cli: &Cli, iterations: u32, out: &mut dyn Write) -> Result<()> {
    let support = pidmap::kernel_support();
    if cli.backend == BackendArg::Syscall && !support.is_available() {
        return Err(PmError::SyscallUnavailable(support).into());
    }
    let mut sc = if support.is_available() && cli.backend != BackendArg::Procfs {
        Some(open(cli, Backend::Syscall)?)
    } else {
        None
    };
    let mut pf = open(cli, Backend::Procfs)?;
    let root = cli.proc_root.clone();
    let mut rows = Vec::new();
    let mut pids = Vec::with_capacity(1 << 16);
    let mut fds = Vec::with_capacity(1 << 12);
    type Listing = (&'static str, Query);
    let listings: [Listing; 2] = [("procs", Query::processes()), ("tasks", Query::all_tasks())];
    for (name, q) in listings {
        if let Some(sc) = sc.as_mut() {
            let (n, med, min) = time(iterations, || {
                Ok(sc.fill(q, &mut pids).map(|_| pids.len())?)
            })?;
            rows.push(BenchRow {
                listing: name,
                method: "syscall",
                ids: n,
                median_us: med,
                min_us: min,
            });
        }
        let (n, med, min) = time(iterations, || {
            Ok(pf.fill(q, &mut pids).map(|_| pids.len())?)
        })?;
        rows.push(BenchRow {
            listing: name,
            method: "procfs",
            ids: n,
            median_us: med,
            min_us: min,
        });
        let (n, med, min) = time(iterations, || {
            let ps = std_read_dir(&root)?;
            if name == "procs" {
                return Ok(ps.len());
            }
            let mut total = 0;
            for p in ps {
                total +=
                    std_read_dir(&root.join(p.to_string()).join("task")).map_or(0, |v| v.len());
            }
            Ok(total)
        })?;
        rows.push(BenchRow {
            listing: name,
            method: "std_read_dir",
            ids: n,
            median_us: med,
            min_us: min,
        });
    }
    if let Some(sc) = sc.as_mut() {
        let (n, med, min) = time(iterations, || {
            Ok(sc.fill_fds(Pid::CALLER, &mut fds).map(|_| fds.len())?)
        })?;
        rows.push(BenchRow {
            listing: "fds",
            method: "syscall",
            ids: n,
            median_us: med,
            min_us: min,
        });
    }
    let (n, med, min) = time(iterations, || {
        Ok(pf.fill_fds(Pid::CALLER, &mut fds).map(|_| fds.len())?)
    })?;
    rows.push(BenchRow {
        listing: "fds",
        method: "procfs",
        ids: n,
        median_us: med,
        min_us: min,
    });
    let (n, med, min) = time(
        iterations,
        || Ok(std_read_dir(&root.join("self/fd"))?.len()),
    )?;
    rows.push(BenchRow {
        listing: "fds",
        method: "std_read_dir",
        ids: n,
        median_us: med,
        min_us: min,
    });

    let mut ratios = Vec::new();
    for listing in ["procs", "tasks", "fds"] {
        let get = |m: &str| rows.iter().find(|r| r.listing == listing && r.method == m);
        let fastest = get("syscall")
            .or_else(|| get("procfs"))
            .expect("procfs row");
        for r in rows
            .iter()
            .filter(|r| r.listing == listing && r.method != fastest.method)
        {
            ratios.push(Ratio {
                listing,
                slower: r.method,
                faster: fastest.method,
                ratio: r.median_us / fastest.median_us.max(1e-3),
            });
        }
    }
    let doc = BenchDoc {
        syscall_available: sc.is_some(),
        kernel_support: support.reason(),
        iterations,
        results: rows,
        ratios,
    };
    if cli.json {
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        if doc.syscall_available {
            writeln!(out, "syscall backend available: comparing it with /proc")?;
        } else {
            writeln!(
                out,
                "no pidmap(2) on this kernel ({}): benchmarking the /proc backends only",
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
                "{:<7} {} is {:.2}x the time of {}",
                r.listing, r.slower, r.ratio, r.faster
            )?;
        }
    }
    out.flush()?;
    Ok(())
}
