//! Where things live. Everything xtask writes is below `target/xtask`.

use std::path::{Path, PathBuf};

/// The workspace root (the parent of the xtask crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// The cargo target directory: honours `CARGO_TARGET_DIR` like cargo does.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("target"),
    }
}

/// xtask's own state: kernel trees, builds, initramfs staging, logs.
pub fn xtask_dir() -> PathBuf {
    target_dir().join("xtask")
}

pub fn patches_dir() -> PathBuf {
    workspace_root().join("kernel-patches")
}

pub fn qemu_dir() -> PathBuf {
    workspace_root().join("qemu")
}
