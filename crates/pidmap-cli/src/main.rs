//! `pidmap`: see `pidmap --help`.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = pidmap_cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(pidmap_cli::OutputWriter(stdout.lock()));
    let result = pidmap_cli::run(&cli, &mut out).and_then(|ok| {
        out.flush()?;
        Ok(ok)
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) if pidmap_cli::is_broken_pipe(&e) => {
            // Don't let the drop of `out` try to flush into the closed pipe.
            std::mem::forget(out);
            ExitCode::SUCCESS
        }
        Err(e) => {
            std::mem::forget(out);
            eprintln!("pidmap: {}", pidmap_cli::error_line(&e));
            ExitCode::from(pidmap_cli::exit_status(&e))
        }
    }
}
