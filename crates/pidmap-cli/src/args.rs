//! The command line: subcommands, their flags, and how a PID is spelled.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use pidmap::{Backend, Pid};

/// List processes, threads, children and fds via pidmap(2)/fdmap(2), or
/// /proc when the kernel lacks them.
#[derive(Debug, Parser)]
#[command(
    name = "pidmap",
    version,
    about,
    after_help = "PID is a positive process id, or `self` for pidmap itself.\n\
                  Environment: PIDMAP_BACKEND=auto|syscall|procfs is the default for --backend;\n\
                  `procfs` never issues the new system calls (for seccomp sandboxes).\n\
                  Exit status: 0 success, 1 runtime error, 2 usage error."
)]
pub struct Cli {
    /// Print one JSON document (schema 2, see the README) on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Which backend to use; `syscall` fails instead of falling back
    /// [default: $PIDMAP_BACKEND, else auto].
    #[allow(
        clippy::doc_markdown,
        reason = "the doc comment is the --help text, printed as written: backticks would show"
    )]
    #[arg(long, global = true, value_parser = backend_parser())]
    pub backend: Option<Backend>,
    /// Exit 1 when anything could not be listed or read (each case is
    /// also a warning on stderr; without --strict the exit status is 0).
    #[arg(long, global = true)]
    pub strict: bool,
    /// Where procfs is mounted (also the view pidmap(2) lists through).
    #[arg(long, global = true, value_name = "PATH")]
    pub proc_root: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Cmd,
}

/// `--backend`'s values, parsed into the library's [`Backend`] by its
/// own parser (the one `PIDMAP_BACKEND` goes through), each with its
/// help line.
#[must_use]
pub fn backend_parser() -> impl TypedValueParser<Value = Backend> {
    PossibleValuesParser::new([
        PossibleValue::new("auto").help("The syscalls if the kernel has them, else /proc"),
        PossibleValue::new("syscall").help("pidmap(2)/fdmap(2) only"),
        PossibleValue::new("procfs").help("/proc only; the syscalls are never issued"),
    ])
    .try_map(|s| s.parse::<Backend>())
}

/// Output options of the listing subcommands.
#[derive(Debug, Clone, Copy, Args)]
pub struct Columns {
    /// Add columns: ppid, state, uid, nice, threads, rss, cpu time, start
    /// and name (tasks and threads also the TGID), like `ps`; for fds the
    /// fd's target, like `lsof`.
    #[arg(long, short = 'l')]
    pub long: bool,
    /// Leave out the header line (of --long, and of the ids of several
    /// PIDs).
    #[arg(long)]
    pub no_headers: bool,
    /// Set by `--args` where it exists (never a flag of its own).
    #[arg(skip)]
    pub args: bool,
}

/// `--args`, for task listings.
#[derive(Debug, Clone, Copy, Args)]
pub struct ArgsColumn {
    /// Show each task's command line as COMMAND, like `ps -o args`
    /// (/proc/PID/cmdline; `[name]` when empty, as for kernel threads);
    /// implies --long.
    #[arg(long)]
    pub args: bool,
}

/// `--no-kthreads`, where it means something.
#[derive(Debug, Clone, Copy, Args)]
pub struct Kthreads {
    /// Leave kernel threads out.
    #[arg(long)]
    pub no_kthreads: bool,
}

/// The options every task listing takes: its columns, `--no-kthreads`
/// and `--args`.
#[derive(Debug, Clone, Copy, Args)]
pub struct TaskListing {
    #[command(flatten)]
    pub columns: Columns,
    #[command(flatten)]
    pub kthreads: Kthreads,
    #[command(flatten)]
    pub args: ArgsColumn,
}

impl TaskListing {
    /// The columns to print: `--args` implies `--long`.
    #[must_use]
    pub fn columns(&self) -> Columns {
        Columns {
            long: self.columns.long || self.args.args,
            args: self.args.args,
            ..self.columns
        }
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// List processes (thread-group ids).
    Procs {
        #[command(flatten)]
        listing: TaskListing,
    },
    /// List every task id (threads included).
    Tasks {
        #[command(flatten)]
        listing: TaskListing,
    },
    /// List the threads of processes.
    Threads {
        /// Process ids (any thread id names its process), or `self`.
        #[arg(required = true, value_name = "PID", value_parser = parse_pid_arg)]
        pids: Vec<PidArg>,
        #[command(flatten)]
        listing: TaskListing,
    },
    /// List the children of processes.
    Children {
        /// Process ids, or `self`.
        #[arg(required = true, value_name = "PID", value_parser = parse_pid_arg)]
        pids: Vec<PidArg>,
        #[command(flatten)]
        listing: TaskListing,
    },
    /// List the open file descriptors of processes.
    Fds {
        /// Process ids, or `self`.
        #[arg(required = true, value_name = "PID", value_parser = parse_pid_arg)]
        pids: Vec<PidArg>,
        #[command(flatten)]
        columns: Columns,
    },
    /// Show the backend in use, the kernel's support and why.
    Info,
    /// Processes sorted by CPU use, like `top`: interactive on a terminal
    /// (htop's and top's keys: h lists them, q or F10 quits); with -b,
    /// --json or a stdout that is not a terminal, every task, one table
    /// per refresh, like `top -b`.
    Top(TopArgs),
}

/// `pidmap top`'s flags.
#[derive(Debug, Clone, Args)]
pub struct TopArgs {
    /// Batch mode: print refreshes instead of drawing the screen.
    #[arg(short = 'b', long)]
    pub batch: bool,
    /// Only these processes (comma-separated or repeated), like `top -p`.
    #[arg(
    short = 'p',
    long = "pid",
    value_name = "PID",
    value_delimiter = ',',
    value_parser = parse_pid
    )]
    pub pids: Vec<Pid>,
    /// Only tasks of this user (name or uid; the effective uid), like
    /// `top -u`.
    #[arg(short = 'u', long, value_name = "USER")]
    pub user: Option<String>,
    /// Start interactive mode showing threads, like `top -H` (batch
    /// mode always lists every task).
    #[arg(short = 'H', long)]
    pub threads: bool,
    /// Seconds between refreshes (the first one too, so that it shows
    /// a delta), like `top -d`.
    #[arg(
    short = 'd',
    long = "watch",
    value_name = "SECONDS",
    default_value = "3",
    allow_negative_numbers = true,
    value_parser = parse_interval
    )]
    pub interval: Duration,
    /// Stop after this many refreshes, like `top -n` [default: never].
    #[arg(
    short = 'n',
    long,
    value_name = "N",
    allow_negative_numbers = true,
    value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub iterations: Option<u32>,
    #[command(flatten)]
    pub kthreads: Kthreads,
}

/// A PID argument: a positive id, or `self`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidArg {
    /// `self`: pidmap itself.
    Myself,
    /// A process id.
    Pid(Pid),
}

impl PidArg {
    /// How it was spelled, for output.
    #[must_use]
    pub fn spelling(self) -> String {
        match self {
            PidArg::Myself => "self".into(),
            PidArg::Pid(p) => p.to_string(),
        }
    }
}

/// The longest `--watch` interval: a day.
const MAX_INTERVAL_SECS: f64 = 86_400.0;

pub(crate) fn parse_interval(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a number of seconds between 0.01 and 86400 (like 2 or 0.5)");
    let secs: f64 = s.trim().parse().map_err(|_| bad())?;
    if !(0.01..=MAX_INTERVAL_SECS).contains(&secs) {
        return Err(bad());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
}

fn parse_pid(s: &str) -> Result<Pid, String> {
    match parse_pid_arg(s)? {
        PidArg::Pid(p) => Ok(p),
        PidArg::Myself => Ok(Pid::this_process()),
    }
}

fn parse_pid_arg(s: &str) -> Result<PidArg, String> {
    if s == "self" {
        return Ok(PidArg::Myself);
    }
    if s == "0" {
        return Err("0 is not a process id (use `self` for pidmap itself)".into());
    }
    s.parse::<Pid>().map(PidArg::Pid).map_err(|e| match e {
        pidmap::Error::InvalidArgument(m) => m.to_string(),
        e => e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals() {
        assert_eq!(parse_interval("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_interval("0.25"), Ok(Duration::from_millis(250)));
        for bad in ["0", "-1", "abc", "nan", "inf", "1e9", "0.001", ""] {
            assert!(parse_interval(bad).is_err(), "{bad}");
        }
    }
}
