//! The command line: subcommands, their flags, and how a PID is spelled.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
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
    /// Print one JSON document (schema 1, see the README) on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Which backend to use; `syscall` fails instead of falling back
    /// [default: $PIDMAP_BACKEND, else auto].
    #[arg(long, global = true, value_enum)]
    pub backend: Option<BackendArg>,
    /// Where procfs is mounted (also the view pidmap(2) lists through).
    #[arg(long, global = true, value_name = "PATH")]
    pub proc_root: Option<PathBuf>,
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
    /// /proc only; the syscalls are never issued.
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

/// Output options of the listing subcommands.
#[derive(Debug, Clone, Copy, Args)]
pub struct Columns {
    /// Add columns: ppid, state, uid, nice, threads, rss, cpu time, start
    /// and name (tasks and threads also the TGID), like `ps`; for fds the
    /// fd's target, like `lsof`.
    #[arg(long, short = 'l')]
    pub long: bool,
    /// Leave out the header line of --long.
    #[arg(long)]
    pub no_headers: bool,
}

/// `--no-kthreads`, where it means something.
#[derive(Debug, Clone, Copy, Args)]
pub struct Kthreads {
    /// Leave kernel threads out.
    #[arg(long)]
    pub no_kthreads: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// List processes (thread-group ids).
    Procs {
        #[command(flatten)]
        columns: Columns,
        #[command(flatten)]
        kthreads: Kthreads,
    },
    /// List every task id (threads included).
    Tasks {
        #[command(flatten)]
        columns: Columns,
        #[command(flatten)]
        kthreads: Kthreads,
    },
    /// List the threads of processes.
    Threads {
        /// Process ids (any thread id names its process), or `self`.
        #[arg(required = true, value_name = "PID", value_parser = parse_pid_arg)]
        pids: Vec<PidArg>,
        #[command(flatten)]
        columns: Columns,
        #[command(flatten)]
        kthreads: Kthreads,
    },
    /// List the children of processes.
    Children {
        /// Process ids, or `self`.
        #[arg(required = true, value_name = "PID", value_parser = parse_pid_arg)]
        pids: Vec<PidArg>,
        #[command(flatten)]
        columns: Columns,
        #[command(flatten)]
        kthreads: Kthreads,
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
    /// Tasks sorted by the CPU time they used since the last refresh, like
    /// `top -b`: one table per refresh.
    Top {
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
        interval: Duration,
        /// Stop after this many refreshes, like `top -n` [default: never].
        #[arg(
            short = 'n',
            long,
            value_name = "N",
            allow_negative_numbers = true,
            value_parser = clap::value_parser!(u32).range(1..)
        )]
        iterations: Option<u32>,
        #[command(flatten)]
        kthreads: Kthreads,
    },
    /// Time the syscalls against /proc on this machine.
    Bench {
        /// Listings per measurement.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
        iterations: u32,
    },
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
    pub fn spelling(self) -> String {
        match self {
            PidArg::Myself => "self".into(),
            PidArg::Pid(p) => p.to_string(),
        }
    }
}

/// The longest `--watch` interval: a day.
const MAX_INTERVAL_SECS: f64 = 86_400.0;

fn parse_interval(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a number of seconds between 0.01 and 86400 (like 2 or 0.5)");
    let secs: f64 = s.trim().parse().map_err(|_| bad())?;
    if !(0.01..=MAX_INTERVAL_SECS).contains(&secs) {
        return Err(bad());
    }
    Duration::try_from_secs_f64(secs).map_err(|_| bad())
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
