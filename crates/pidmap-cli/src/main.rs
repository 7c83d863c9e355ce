//! `pidmap`: see `pidmap --help`.

use std::io::{self, BufWriter};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = pidmap_cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match pidmap_cli::run(&cli, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if pidmap_cli::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // Don't let a failing flush of `out` print anything.
            std::mem::forget(out);
            eprintln!("pidmap: {}", pidmap_cli::error_line(&e));
            ExitCode::FAILURE
        }
    }
}
