//! The `pidmap` command line, as a library so that `cargo xtask` can
//! generate shell completions and a man page from [`command`].
//!
//! Exit codes: 0 success, 1 runtime error (no such process, permission
//! denied, syscall backend unavailable, /proc not mounted), 2 usage error
//! (clap's full message). A closed stdout (`pidmap procs | head -1`) exits
//! 0 quietly.

mod args;
mod bench;
mod clock;
mod cmdline;
mod columns;
mod host;
mod output;
mod report;
mod tasks;
mod top;
mod top_actions;
mod top_columns;
mod top_input;
mod top_meters;
mod top_model;
mod top_row;
mod top_state;
mod top_ui;
mod top_view;
mod unlisted;
mod users;

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{CommandFactory, Parser};
use pidmap::{ActiveBackend, Backend, Error as PmError, KernelSupport, Pid, Pidmap, Query, Target};
use serde::Serialize;

pub use args::{ArgsColumn, BackendArg, Cli, Cmd, Columns, Kthreads, PidArg, TaskListing};
use columns::Reader;
pub use output::{escape, OutputWriter, SCHEMA};
pub use report::error_line;
use report::warn;
use tasks::TaskRows;

/// The clap command, for completions and man pages.
#[must_use]
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parse the arguments; clap prints its whole usage error and exits 2, or
/// prints `--help`/`--version` and exits 0.
#[must_use]
pub fn parse() -> Cli {
    Cli::parse()
}

/// Whether an error comes from writing to a closed pipe.
#[must_use]
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

fn open(cli: &Cli) -> Result<Pidmap> {
    open_with(cli, false)
}

/// The handle, keeping the fallback's files open between full refreshes
/// when `keep_files` (`pidmap top`, which refreshes every task in a loop).
fn open_with(cli: &Cli, keep_files: bool) -> Result<Pidmap> {
    let mut b = Pidmap::builder().keep_files(keep_files);
    if let Some(backend) = requested_backend(cli)? {
        b = b.backend(backend);
    }
    if let Some(root) = &cli.proc_root {
        b = b.proc_root(root);
    }
    Ok(b.build()?)
}

/// A usage error found after parsing (exit status 2, as clap's).
#[derive(Debug)]
pub struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The exit status for an error: 2 for a usage error, else 1.
#[must_use]
pub fn exit_status(e: &anyhow::Error) -> u8 {
    if e.downcast_ref::<UsageError>().is_some() {
        2
    } else {
        1
    }
}

/// `--backend`, else `PIDMAP_BACKEND` (the library reads it only when
/// asked), else `None` (auto). A bad `PIDMAP_BACKEND` is a usage error.
fn requested_backend(cli: &Cli) -> Result<Option<Backend>> {
    if let Some(b) = cli.backend {
        return Ok(Some(b.into()));
    }
    Backend::from_env().map_err(|_| {
        let value = std::env::var_os(pidmap::BACKEND_ENV).unwrap_or_default();
        anyhow::Error::new(UsageError(format!(
            "{}={:?} is not a backend: use auto, syscall or procfs",
            pidmap::BACKEND_ENV,
            value.to_string_lossy()
        )))
    })
}

fn proc_root(cli: &Cli) -> PathBuf {
    cli.proc_root
        .clone()
        .unwrap_or_else(|| PathBuf::from("/proc"))
}

/// Run a parsed command, writing to `out`. `Ok(false)`: some targets
/// failed (each said so on stderr), or, with `--strict`, something could
/// not be listed or read (a warning said so); the exit status is then 1.
///
/// # Errors
///
/// What stopped the command as a whole: a bad `PIDMAP_BACKEND` (a usage
/// error), a backend that cannot be opened, a listing that failed, or a
/// failed write to `out`; [`exit_status`] gives its exit status.
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<bool> {
    let ok = run_command(cli, out)?;
    Ok(ok && !(cli.strict && report::warned()))
}

fn run_command(cli: &Cli, out: &mut dyn Write) -> Result<bool> {
    let kq = |q: Query<'static>, k: &Kthreads| {
        if k.no_kthreads {
            q.without_kthreads()
        } else {
            q
        }
    };
    match &cli.command {
        Cmd::Procs { listing } => untargeted(
            cli,
            "procs",
            kq(Query::processes(), &listing.kthreads),
            listing.columns(),
            out,
        ),
        Cmd::Tasks { listing } => untargeted(
            cli,
            "tasks",
            kq(Query::all_tasks(), &listing.kthreads),
            listing.columns(),
            out,
        ),
        Cmd::Threads { pids, listing } => targeted(
            cli,
            What::Threads(listing.kthreads.no_kthreads),
            pids,
            listing.columns(),
            out,
        ),
        Cmd::Children { pids, listing } => targeted(
            cli,
            What::Children(listing.kthreads.no_kthreads),
            pids,
            listing.columns(),
            out,
        ),
        Cmd::Fds { pids, columns } => targeted(cli, What::Fds, pids, *columns, out),
        Cmd::Info => info(cli, out),
        Cmd::Top {
            interval,
            iterations,
            kthreads,
            batch,
            pids,
            user,
            threads,
        } => {
            let filter = top_model::Filter {
                pids: pids.clone(),
                euid: user.as_deref().map(users::uid_of).transpose()?,
                ..top_model::Filter::default()
            };
            if top_ui::wanted(*batch, cli.json) {
                let opts = top_ui::Options {
                    interval: *interval,
                    iterations: *iterations,
                    threads: *threads,
                    no_kthreads: kthreads.no_kthreads,
                    filter,
                    proc_root: proc_root(cli),
                };
                return top_ui::run(open_with(cli, true)?, opts).map(|()| true);
            }
            top::run(
                open_with(cli, true)?,
                kq(Query::all_tasks(), kthreads),
                top::Options {
                    interval: *interval,
                    iterations: *iterations,
                    json: cli.json,
                    uids: filter.euid.is_some(),
                },
                &|info| filter.keeps(info),
                out,
            )
            .map(|()| true)
        }
        Cmd::Bench { iterations } => {
            let requested = requested_backend(cli)?;
            bench::run(requested, &proc_root(cli), *iterations, cli.json, out).map(|()| true)
        }
    }
}

/// The `--long` rows of `q`, warning when columns cannot be read; every
/// id keeps its row. With `args`, the command lines too.
fn task_rows(cli: &Cli, pm: &mut Pidmap, q: Query<'_>, args: bool) -> Result<TaskRows, PmError> {
    let mut rows = tasks::read(pm, q)?;
    if args {
        let root = pm.proc_root().map(Path::to_path_buf);
        if let Some(w) = cmdline::fill(&mut rows.rows, root.as_deref()) {
            warn(&w);
        }
    }
    let unknown = rows.unknown();
    if rows.info_backend.is_none() {
        warn_no_proc(cli, rows.rows.len());
    } else if unknown > 0 {
        warn(&format!(
            "the columns of {unknown} of {} tasks could not be read (shown as ?)",
            rows.rows.len()
        ));
    }
    Ok(rows)
}

fn warn_no_proc(cli: &Cli, ids: usize) {
    warn(&format!(
        "{} is not a mounted procfs: listing {ids} ids with unknown columns (shown as ?)",
        proc_root(cli).display()
    ));
}

#[derive(Serialize)]
struct ListingDoc<E: Serialize> {
    schema: u32,
    command: &'static str,
    backend: ActiveBackend,
    /// With `--long`: where the columns came from (`null`: unknown).
    #[allow(
        clippy::option_option,
        reason = "absent from the JSON (None), null (Some(None)) or a value"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    info_backend: Option<Option<ActiveBackend>>,
    count: usize,
    ids: Vec<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entries: Option<Vec<E>>,
}

fn untargeted(
    cli: &Cli,
    name: &'static str,
    q: Query<'_>,
    columns: Columns,
    out: &mut dyn Write,
) -> Result<bool> {
    let mut pm = open(cli)?;
    let tgid = name == "tasks";
    let (ids, rows) = if columns.long {
        let rows = task_rows(cli, &mut pm, q, columns.args)?;
        (rows.ids(), Some(rows))
    } else {
        let mut ids = Vec::new();
        pm.fill(q, &mut ids)?;
        (ids.into_iter().map(i32::from).collect::<Vec<i32>>(), None)
    };
    if tgid {
        // Every task: say so if the view kept some processes' tasks back.
        if let Some(w) = unlisted::left_out(&mut pm, &ids)?.warning() {
            warn(&w);
        }
    }
    if cli.json {
        let doc = ListingDoc {
            schema: SCHEMA,
            command: name,
            backend: pm.active(),
            info_backend: rows.as_ref().map(|r| r.info_backend),
            count: ids.len(),
            entries: rows.as_ref().map(|rows| {
                rows.rows
                    .iter()
                    .map(|r| output::TaskEntry::new(r, tgid))
                    .collect()
            }),
            ids,
        };
        output::json(out, &doc)?;
    } else if let Some(rows) = rows {
        output::task_table(out, &rows.rows, tgid, !columns.no_headers)?;
    } else {
        for id in ids {
            writeln!(out, "{id}")?;
        }
    }
    out.flush()?;
    Ok(true)
}

/// A targeted listing.
#[derive(Debug, Clone, Copy)]
enum What {
    Threads(bool),
    Children(bool),
    Fds,
}

impl What {
    fn name(self) -> &'static str {
        match self {
            What::Threads(_) => "threads",
            What::Children(_) => "children",
            What::Fds => "fds",
        }
    }
}

#[derive(Serialize)]
struct TargetDoc {
    target: String,
    pid: i32,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    count: usize,
    ids: Vec<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    entries: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct TargetedDoc {
    schema: u32,
    command: &'static str,
    backend: ActiveBackend,
    targets: Vec<TargetDoc>,
}

/// An error and its causes (`source()` chain), `: `-separated, as
/// anyhow's `{:#}` prints them.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&c.to_string());
        cause = c.source();
    }
    line
}

fn error_status(e: &PmError) -> &'static str {
    match e {
        PmError::NoSuchProcess { .. } => "no_such_process",
        PmError::PermissionDenied { .. } => "permission_denied",
        _ => "error",
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "one loop over the targets collects the documents and rows that the output after it reads"
)]
fn targeted(
    cli: &Cli,
    what: What,
    pids: &[PidArg],
    columns: Columns,
    out: &mut dyn Write,
) -> Result<bool> {
    let mut pm = open(cli)?;
    let reader = Reader::new(pm.proc_root());
    if columns.long && matches!(what, What::Fds) && !reader.available() {
        warn_no_proc(cli, 0);
    }
    let mut all_ok = true;
    let mut docs = Vec::new();
    let mut task_rows_all = Vec::new();
    let mut fd_rows_all = Vec::new();
    let mut plain = Vec::new();
    for &arg in pids {
        let (target, pid) = match arg {
            PidArg::Myself => (Target::Caller, Pid::this_process()),
            PidArg::Pid(p) => (Target::Pid(p), p),
        };
        let mut ids: Vec<i32> = Vec::new();
        let mut rows = None;
        let r = match what {
            What::Threads(k) | What::Children(k) => {
                let q = if matches!(what, What::Threads(_)) {
                    Query::threads(target)
                } else {
                    Query::children(target)
                };
                let q = if k { q.without_kthreads() } else { q };
                if columns.long {
                    task_rows(cli, &mut pm, q, columns.args).map(|r| {
                        ids = r.ids();
                        rows = Some(r);
                    })
                } else {
                    let mut v = Vec::new();
                    pm.fill(q, &mut v)
                        .map(|()| ids = v.into_iter().map(i32::from).collect())
                }
            }
            What::Fds => pm.fill_fds(target, &mut ids),
        };
        let mut doc = TargetDoc {
            target: arg.spelling(),
            pid: pid.as_raw(),
            status: "ok",
            error: None,
            count: 0,
            ids: Vec::new(),
            entries: None,
        };
        if let Err(e) = r {
            let line = with_causes(&e);
            eprintln!("pidmap: {line}");
            doc.status = error_status(&e);
            doc.error = Some(line);
            all_ok = false;
            docs.push(doc);
            continue;
        }
        if columns.long {
            match what {
                What::Fds => {
                    // The caller's fds are the calling thread's table.
                    let dir = match arg {
                        PidArg::Myself => "thread-self".to_string(),
                        PidArg::Pid(p) => p.to_string(),
                    };
                    let rows: Vec<_> = ids
                        .iter()
                        .map(|&fd| reader.fd(&dir, pid.as_raw(), fd))
                        .collect();
                    if reader.available() {
                        if let Some(w) = columns::unreadable_targets(pid.as_raw(), &rows) {
                            warn(&w);
                        }
                    }
                    let entries: Vec<_> = rows.iter().map(output::FdEntry::new).collect();
                    doc.entries = Some(serde_json::to_value(entries)?);
                    fd_rows_all.extend(rows);
                }
                What::Threads(_) | What::Children(_) => {
                    let tgid = matches!(what, What::Threads(_));
                    let rows = rows.map(|r| r.rows).unwrap_or_default();
                    let entries: Vec<_> = rows
                        .iter()
                        .map(|r| output::TaskEntry::new(r, tgid))
                        .collect();
                    doc.entries = Some(serde_json::to_value(entries)?);
                    task_rows_all.extend(rows);
                }
            }
        }
        doc.count = ids.len();
        plain.extend(ids.iter().map(|&id| (pid.as_raw(), id)));
        doc.ids = ids;
        docs.push(doc);
    }
    // Every target failed (each said why on stderr): no table header
    // above nothing.
    let any_listed = docs.iter().any(|d| d.status == "ok");
    if cli.json {
        let doc = TargetedDoc {
            schema: SCHEMA,
            command: what.name(),
            backend: pm.active(),
            targets: docs,
        };
        output::json(out, &doc)?;
    } else if !any_listed {
    } else if columns.long {
        match what {
            What::Fds => output::fd_table(out, &fd_rows_all, !columns.no_headers)?,
            What::Threads(_) => output::task_table(out, &task_rows_all, true, !columns.no_headers)?,
            What::Children(_) => {
                output::task_table(out, &task_rows_all, false, !columns.no_headers)?;
            }
        }
    } else if pids.len() > 1 {
        // Several targets: say whose each id is.
        let heading = match what {
            What::Threads(_) => ["PID", "TID"],
            What::Children(_) => ["PPID", "PID"],
            What::Fds => ["PID", "FD"],
        };
        output::labelled_ids(out, heading, &plain, !columns.no_headers)?;
    } else {
        for (_, id) in plain {
            writeln!(out, "{id}")?;
        }
    }
    out.flush()?;
    Ok(all_ok)
}

fn support_name(s: Option<KernelSupport>) -> &'static str {
    match s {
        None => "not probed",
        Some(KernelSupport::Available) => "available",
        Some(KernelSupport::Missing) => "missing",
        Some(KernelSupport::Blocked) => "blocked",
        Some(KernelSupport::NotBuilt) => "not_built",
        Some(_) => "unexpected",
    }
}

#[derive(Serialize)]
struct InfoDoc {
    schema: u32,
    command: &'static str,
    requested: Backend,
    backend: Option<ActiveBackend>,
    kernel_support: &'static str,
    reason: String,
    proc_root: String,
    procfs_view: bool,
    syscall_numbers: Option<Numbers>,
    /// Where task records (`--long`, `top`) come from; `null` when they
    /// cannot be read.
    info_backend: Option<ActiveBackend>,
    version: &'static str,
}

#[derive(Serialize)]
struct Numbers {
    pidmap: i64,
    pidmap_info: i64,
    fdmap: i64,
}

fn info(cli: &Cli, out: &mut dyn Write) -> Result<bool> {
    let requested: Backend = requested_backend(cli)?.unwrap_or_default();
    // The kernel's answer, unless the user said not to probe.
    let support = (requested != Backend::Procfs).then(pidmap::kernel_support);
    let built = open(cli);
    let (backend, reason, view) = match &built {
        Ok(pm) => (
            Some(pm.active()),
            pm.detection().reason(),
            pm.proc_root().is_some(),
        ),
        // Whether the proc root is a mounted procfs does not depend on
        // the backend that failed: ask a /proc handle.
        Err(e) => (None, error_line(e), procfs_view(cli)),
    };
    let doc = InfoDoc {
        schema: SCHEMA,
        command: "info",
        requested,
        backend,
        kernel_support: support_name(support),
        reason,
        proc_root: proc_root(cli).display().to_string(),
        procfs_view: view,
        info_backend: built.as_ref().ok().and_then(|pm| pm.info_backend().ok()),
        syscall_numbers: pidmap::SYSCALL_NUMBERS.map(|n| Numbers {
            pidmap: n.pidmap,
            pidmap_info: n.pidmap_info,
            fdmap: n.fdmap,
        }),
        version: env!("CARGO_PKG_VERSION"),
    };
    if cli.json {
        output::json(out, &doc)?;
    } else {
        let backend = doc
            .backend
            .map_or_else(|| "none".to_string(), |b| b.to_string());
        writeln!(out, "backend:        {backend}")?;
        writeln!(out, "requested:      {}", doc.requested)?;
        match support {
            Some(s) => writeln!(
                out,
                "kernel support: {} ({})",
                doc.kernel_support,
                s.reason()
            )?,
            None => writeln!(out, "kernel support: not probed (--backend procfs)")?,
        }
        writeln!(out, "reason:         {}", doc.reason)?;
        let records = match doc.info_backend {
            Some(ActiveBackend::Syscall) => "pidmap_info(2)".to_string(),
            Some(b) => format!("{b} (stat and status files)"),
            None => "unavailable".to_string(),
        };
        writeln!(out, "task records:   {records}")?;
        writeln!(
            out,
            "proc root:      {}{}",
            doc.proc_root,
            if view { "" } else { " (not a mounted procfs)" }
        )?;
        match &doc.syscall_numbers {
            Some(n) => writeln!(
                out,
                "syscalls:       pidmap = {}, pidmap_info = {}, fdmap = {}",
                n.pidmap, n.pidmap_info, n.fdmap
            )?,
            None => writeln!(out, "syscalls:       not wired on this architecture")?,
        }
    }
    out.flush()?;
    // A failure is in the report (`reason`), on stdout; it is not said
    // again on stderr, and the exit status is 1.
    Ok(built.is_ok())
}

/// Whether the proc root is a mounted procfs of this pid namespace, as a
/// /proc handle finds it.
fn procfs_view(cli: &Cli) -> bool {
    let mut b = Pidmap::builder().backend(Backend::Procfs);
    if let Some(root) = &cli.proc_root {
        b = b.proc_root(root);
    }
    b.build().is_ok_and(|pm| pm.proc_root().is_some())
}
