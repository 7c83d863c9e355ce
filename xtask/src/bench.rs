//! `cargo xtask bench`: the guest benchmarks, side by side in one boot.
//!
//! The benchmark program lives in `bench/`; this module builds it static,
//! boots the kernel with it through [`crate::qemu::run_in_guest`], pulls
//! its JSON out of the console log, and prints the Markdown table.

use crate::KernelArgs;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let _ = (&args.kernel, &args.json);
    bail!("cargo xtask bench is not wired up yet (bench/ has no program)")
}
