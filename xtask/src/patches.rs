//! `cargo xtask patches`: checks on the kernel series.

use crate::kernel::{self, series};
use crate::paths::{qemu_dir, xtask_dir};
use crate::run::{self as cmd, step, timed};

use crate::KernelArgs;
use anyhow::{bail, Result};
use clap::{Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::Command;

/// An architecture every patch must build for, booted or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BuildArch {
    #[value(name = "x86_64")]
    X86_64,
    /// 32-bit x86: catches frame sizes and `long`/pointer widths.
    I386,
    Arm64,
}

impl BuildArch {
    const ALL: [BuildArch; 3] = [BuildArch::X86_64, BuildArch::I386, BuildArch::Arm64];

    fn name(self) -> &'static str {
        match self {
            BuildArch::X86_64 => "x86_64",
            BuildArch::I386 => "i386",
            BuildArch::Arm64 => "arm64",
        }
    }

    fn make_vars(self) -> &'static [&'static str] {
        match self {
            BuildArch::X86_64 => &["ARCH=x86_64"],
            BuildArch::I386 => &["ARCH=i386"],
            BuildArch::Arm64 => &["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-"],
        }
    }

    /// The guests' fragments; i386 is build-only and takes the base alone.
    fn fragments(self) -> Vec<PathBuf> {
        let own = match self {
            BuildArch::X86_64 => Some("x86_64.config"),
            BuildArch::I386 => None,
            BuildArch::Arm64 => Some("arm64.config"),
        };
        std::iter::once("base.config")
            .chain(own)
            .map(|name| qemu_dir().join(name))
            .collect()
    }

    fn image_target(self) -> &'static str {
        match self {
            BuildArch::X86_64 | BuildArch::I386 => "bzImage",
            BuildArch::Arm64 => "Image",
        }
    }
}

#[derive(Subcommand)]
pub enum PatchesCommand {
    /// `scripts/checkpatch.pl --strict` on every patch of the series.
    Check {
        /// Also build each prefix of the series (each patch must build on its
        /// own, with no compiler warning: `KCFLAGS=-Werror`).
        #[arg(long)]
        build_each: bool,
        /// The architectures `--build-each` builds for (default: all three).
        #[arg(long, value_enum, value_delimiter = ',', requires = "build_each")]
        build_arch: Vec<BuildArch>,
        #[command(flatten)]
        kernel: KernelArgs,
    },
    /// Apply the series as commits in a git tree to edit (prints its path).
    Edit {
        #[command(flatten)]
        kernel: KernelArgs,
    },
    /// Regenerate kernel-patches/ from the edit tree with `git format-patch`.
    /// The cover letter is kept as it is.
    Export,
}

pub fn run(command: PatchesCommand) -> Result<()> {
    match command {
        PatchesCommand::Check {
            build_each,
            build_arch,
            kernel,
        } => {
            check_series(&kernel)?;
            if build_each {
                let arches = if build_arch.is_empty() {
                    BuildArch::ALL.to_vec()
                } else {
                    build_arch
                };
                for arch in arches {
                    build_each_prefix(&kernel, arch)?;
                }
            }
            Ok(())
        }
        PatchesCommand::Edit { kernel } => edit(&kernel),
        PatchesCommand::Export => export(),
    }
}

fn edit(args: &KernelArgs) -> Result<()> {
    let tree = kernel::scratch_tree(args, "edit")?;
    for patch in series()? {
        kernel::git_am(&tree, &patch)?;
    }
    step(format!(
        "the series is applied as commits on top of tag {} in\n    {}\n  edit with git (commit --amend, rebase -i), then run `cargo xtask patches export`",
        kernel::BASE_TAG,
        tree.display()
    ));
    Ok(())
}

fn export() -> Result<()> {
    let tree = kernel::edit_tree()?;
    let dir = crate::paths::patches_dir();
    // Format into a scratch directory first, so a failure leaves the
    // series as it was.
    let scratch = xtask_dir().join("export");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)?;
    }
    let range = format!("{}..HEAD", kernel::BASE_TAG);
    let names = cmd::output(
        Command::new("git")
            .arg("-C")
            .arg(&tree)
            // Not -q: format-patch names each file it writes, and those
            // names are the new series.
            .args(["format-patch", "-o"])
            .arg(&scratch)
            .arg(&range),
    )?;
    let files: Vec<std::path::PathBuf> = names
        .lines()
        .map(|l| std::path::PathBuf::from(l.trim()))
        .filter(|p| p.is_file())
        .collect();
    if files.is_empty() {
        bail!("git format-patch {range} wrote no patch; the series is unchanged");
    }
    for old in series()? {
        std::fs::remove_file(old)?;
    }
    let mut series = String::new();
    for file in &files {
        let name = file.file_name().unwrap_or_default();
        std::fs::rename(file, dir.join(name))?;
        series.push_str(&name.to_string_lossy());
        series.push('\n');
    }
    std::fs::write(dir.join("series"), &series)?;
    step(format!(
        "exported {} patches to {}",
        files.len(),
        dir.display()
    ));
    Ok(())
}

/// Runs checkpatch on each patch and fails on any error or warning.
pub fn check_series(args: &KernelArgs) -> Result<()> {
    let tree = kernel::pristine_tree(args)?;
    let patches = series()?;
    let mut dirty = Vec::new();
    for patch in &patches {
        let name = patch
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let out = Command::new(tree.join("scripts/checkpatch.pl"))
            .args(["--strict", "--show-types"])
            .arg(patch)
            .current_dir(&tree)
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let total = text
            .lines()
            .find(|l| l.starts_with("total:"))
            .unwrap_or("total: (checkpatch printed no summary)")
            .to_string();
        step(format!("{name}: {total}"));
        let clean = total.contains(" 0 errors, 0 warnings");
        if !clean {
            eprint!("{text}");
            dirty.push(name);
        }
    }
    if !dirty.is_empty() {
        bail!(
            "checkpatch --strict reports errors or warnings in: {}",
            dirty.join(", ")
        );
    }
    step(format!(
        "checkpatch --strict: {} patches clean",
        patches.len()
    ));
    Ok(())
}

/// Builds the kernel for `arch` after each patch, so a bisect never lands on
/// a broken tree, and fails on any warning (checksyscalls' `#warning` too).
fn build_each_prefix(args: &KernelArgs, arch: BuildArch) -> Result<()> {
    let patches = series()?;
    let tree = kernel::scratch_tree(args, "prefix")?;
    let build = xtask_dir().join(format!("linux/build-prefix-{}", arch.name()));
    kernel::configure_with(&tree, &build, arch.make_vars(), &arch.fragments())?;
    for (i, patch) in patches.iter().enumerate() {
        let name = patch
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        kernel::git_am(&tree, patch)?;
        timed(
            &format!(
                "{} build after {}/{}: {name}",
                arch.name(),
                i + 1,
                patches.len()
            ),
            || {
                cmd::run(
                    kernel::make_with(&tree, &build, arch.make_vars())
                        .args(["-s", "KCFLAGS=-Werror", &kernel::jobs()])
                        .arg(arch.image_target()),
                )
            },
        )?;
    }
    Ok(())
}
