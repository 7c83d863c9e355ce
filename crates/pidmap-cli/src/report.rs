//! How the CLI reports what went wrong: one line per error, with each
//! cause once, and warnings on stderr that `--strict` turns into a
//! failure.

use pidmap::Error as PmError;

/// One line for an error.
#[must_use]
pub fn error_line(e: &anyhow::Error) -> String {
    if let Some(PmError::TaskInfoUnsupported) = e.downcast_ref::<PmError>() {
        return "this kernel's pidmap_info(2) does not serve task records; \
                --backend auto reads the columns from /proc instead"
            .into();
    }
    if let Some(PmError::SyscallUnavailable(s)) = e.downcast_ref::<PmError>() {
        // The reason says what is missing; the line says it once.
        return format!(
            "the syscall backend cannot be used: {}; \
             --backend auto or procfs reads /proc instead",
            s.reason()
        );
    }
    chain_line(e)
}

/// An error and its causes joined by `: `, as `{:#}` does, but leaving
/// out a cause whose text the line already holds (an error that prints
/// its source and also returns it from `source()` would say it twice).
fn chain_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Whether a warning was printed (`--strict` then exits 1).
static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A warning on stderr: something could not be listed or read.
pub fn warn(msg: &str) {
    WARNED.store(true, std::sync::atomic::Ordering::Relaxed);
    eprintln!("pidmap: warning: {msg}");
}

/// Whether [`warn`] has printed anything.
pub fn warned() -> bool {
    WARNED.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    /// An error that both prints and returns its source.
    #[derive(Debug)]
    struct Wrapping(io::Error);

    impl std::fmt::Display for Wrapping {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "opening /proc/self: {}", self.0)
        }
    }

    impl std::error::Error for Wrapping {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn error_lines_say_each_cause_once() {
        let e = anyhow::Error::new(Wrapping(io::Error::from_raw_os_error(libc::EMFILE)));
        let line = error_line(&e);
        assert_eq!(line.matches("Too many open files").count(), 1, "{line}");
        assert!(
            line.starts_with("opening /proc/self: Too many open files"),
            "{line}"
        );
        // Distinct causes are all kept, outermost first.
        let e = anyhow::Error::new(io::Error::from_raw_os_error(libc::ENOENT)).context("reading x");
        assert_eq!(
            error_line(&e),
            format!("reading x: {}", io::Error::from_raw_os_error(libc::ENOENT))
        );
    }
}
