//! Warnings on stderr: something could not be listed or read; the
//! command goes on, and `--strict` turns them into a failure.

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
