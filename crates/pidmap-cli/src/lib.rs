//! The `pidmap` command line (work in progress).
