//! Running host commands with readable progress and errors that name the cause.

use anyhow::{bail, Context, Result};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Prints a progress line in the xtask's own voice, distinct from tool output.
pub fn step(message: impl AsRef<str>) {
    eprintln!("\x1b[1m[xtask]\x1b[0m {}", message.as_ref());
}

fn describe(cmd: &Command) -> String {
    let mut text = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        text.push(' ');
        text.push_str(&arg.to_string_lossy());
    }
    text
}

/// Debian's ccache puts compiler wrappers in this directory.
const CCACHE_WRAPPERS: &str = "/usr/lib/ccache";

/// Puts ccache's compiler wrappers first in `cmd`'s PATH when ccache is
/// installed, so kernel and guest-program builds hit its cache. A fresh
/// machine without ccache builds as before. `PIDMAP_NO_CCACHE=1` opts out.
pub fn with_ccache(cmd: &mut Command) -> &mut Command {
    if std::env::var_os("PIDMAP_NO_CCACHE").is_some_and(|v| v == "1")
        || !std::path::Path::new(CCACHE_WRAPPERS).is_dir()
    {
        return cmd;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|p| p == std::path::Path::new(CCACHE_WRAPPERS)) {
        return cmd;
    }
    let joined = std::env::join_paths(
        std::iter::once(std::path::PathBuf::from(CCACHE_WRAPPERS))
            .chain(std::env::split_paths(&path)),
    );
    if let Ok(joined) = joined {
        cmd.env("PATH", joined);
    }
    cmd
}

/// Runs `cmd` with inherited output and fails with the command line if it fails.
pub fn run(cmd: &mut Command) -> Result<()> {
    let text = describe(cmd);
    let status = cmd
        .status()
        .with_context(|| format!("cannot start `{text}`"))?;
    if !status.success() {
        bail!("`{text}` failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` and returns its stdout; stderr is passed through.
pub fn output(cmd: &mut Command) -> Result<String> {
    let text = describe(cmd);
    let out = cmd
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot start `{text}`"))?;
    if !out.status.success() {
        bail!("`{text}` failed ({})", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `cmd` quietly, showing its combined output only when it fails.
pub fn run_quiet(cmd: &mut Command) -> Result<()> {
    let text = describe(cmd);
    let out = cmd
        .output()
        .with_context(|| format!("cannot start `{text}`"))?;
    if !out.status.success() {
        eprint!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        bail!("`{text}` failed ({})", out.status);
    }
    Ok(())
}

/// Times a stage and reports how long it took, whatever the outcome.
pub fn timed<T>(what: &str, body: impl FnOnce() -> Result<T>) -> Result<T> {
    let start = Instant::now();
    let result = body();
    let verdict = if result.is_ok() { "done" } else { "FAILED" };
    step(format!(
        "{what}: {verdict} in {:.1} s",
        start.elapsed().as_secs_f64()
    ));
    result
}
