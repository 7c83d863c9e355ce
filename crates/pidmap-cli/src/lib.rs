//! The `pidmap` command line, as a library so that `cargo xtask` can
//! generate shell completions and a man page from [`command`].
//!
//! Exit codes: 0 success, 1 runtime error (no such process, permission
//! denied, syscall backend unavailable, /proc not mounted), 2 usage error
//! (clap's full message). A closed stdout (`pidmap procs | head -1`) exits
//! 0 quietly.
//!
//! This file parses and dispatches; each subcommand, with its JSON
//! documents, is a module of its own: `listing` (`procs`, `tasks`),
//! `targeted` (`threads`, `children`, `fds`), `info` and `top` (a folder:
//! the interactive screen and the batch output). `backend` opens the
//! handle every command uses from `--backend`, `PIDMAP_BACKEND` and
//! `--proc-root`; `error` formats every error, `report` the warnings.

mod args;
mod backend;
mod clock;
mod cmdline;
mod columns;
mod error;
mod host;
mod info;
mod listing;
mod output;
mod report;
mod targeted;
mod tasks;
mod top;
mod unlisted;
mod users;

use std::io::Write;

use anyhow::Result;
use clap::{CommandFactory, Parser};
use pidmap::Query;

pub use args::{
    backend_parser, ArgsColumn, Cli, Cmd, Columns, Kthreads, PidArg, TaskListing, TopArgs,
};
pub use error::{error_line, exit_status, is_broken_pipe, UsageError};
use listing::with_kthreads;
pub use output::{escape, OutputWriter, SCHEMA};
use targeted::What;

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

/// Every subcommand's entry point.
fn run_command(cli: &Cli, out: &mut dyn Write) -> Result<bool> {
    match &cli.command {
        Cmd::Procs { listing } => listing::run(
            cli,
            "procs",
            with_kthreads(Query::processes(), listing.kthreads),
            listing.columns(),
            out,
        ),
        Cmd::Tasks { listing } => listing::run(
            cli,
            "tasks",
            with_kthreads(Query::all_tasks(), listing.kthreads),
            listing.columns(),
            out,
        ),
        Cmd::Threads { pids, listing } => targeted::run(
            cli,
            What::Threads(listing.kthreads.no_kthreads),
            pids,
            listing.columns(),
            out,
        ),
        Cmd::Children { pids, listing } => targeted::run(
            cli,
            What::Children(listing.kthreads.no_kthreads),
            pids,
            listing.columns(),
            out,
        ),
        Cmd::Fds { pids, columns } => targeted::run(cli, What::Fds, pids, *columns, out),
        Cmd::Info => info::run(cli, out),
        Cmd::Top(args) => top::run(cli, args, out),
    }
}
