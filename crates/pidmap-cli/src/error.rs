//! How the CLI reports what went wrong, in one place: the usage error
//! (exit status 2), the exit status of an error, the one line an error
//! prints (each cause once), and an error's status word and text in the
//! JSON documents. pidmap-exporter reports its usage errors with the same
//! [`UsageError`] and [`exit_status`].

use std::io;

use pidmap::Error as PmError;

/// A usage error found after parsing (exit status 2, as clap's): a bad
/// environment variable, or the exporter's bad config file or refused
/// flag. Its text is the whole line after the program's name.
#[derive(Debug)]
pub struct UsageError(String);

impl UsageError {
    /// A usage error that says `message`.
    pub fn new(message: impl Into<String>) -> UsageError {
        UsageError(message.into())
    }

    /// `e` as a usage error: its text with its causes, as `{:#}` prints
    /// them.
    #[must_use]
    pub fn from_error(e: &anyhow::Error) -> UsageError {
        UsageError(format!("{e:#}"))
    }
}

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

/// Whether an error comes from writing to a closed pipe.
#[must_use]
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

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

/// An error and its causes (`source()` chain), `: `-separated, as
/// anyhow's `{:#}` prints them: a target's error in the JSON documents.
pub fn with_causes(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        line.push_str(": ");
        line.push_str(&c.to_string());
        cause = c.source();
    }
    line
}

/// A target's `status` in the JSON documents.
pub fn error_status(e: &PmError) -> &'static str {
    match e {
        PmError::NoSuchProcess { .. } => "no_such_process",
        PmError::PermissionDenied { .. } => "permission_denied",
        _ => "error",
    }
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
