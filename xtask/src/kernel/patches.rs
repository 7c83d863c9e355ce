//! `cargo xtask patches`: checks on the kernel series.

use crate::kernel::{self, series};
use crate::paths::{qemu_dir, xtask_dir};
use crate::run::{self as cmd, step, timed};

use crate::kernel::KernelArgs;
use anyhow::{bail, Result};
use clap::{Subcommand, ValueEnum};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
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
    /// Upstream-clean hunks, then `scripts/checkpatch.pl --strict` on every
    /// patch of the series. Upstream-clean: no hunk's context or removed
    /// line holds a Debian-only line listed in
    /// kernel-patches/debian-changes.txt, so `git am` applies the series on
    /// upstream v7.3.4 as it does on Debian's tree.
    Check {
        /// Run only the upstream-clean hunk check: no kernel tree, no
        /// checkpatch.
        #[arg(long, conflicts_with = "build_each")]
        upstream_clean_only: bool,
        /// Also build each prefix of the series (each patch must build on its
        /// own, with no compiler warning: `KCFLAGS=-Werror`). A prefix built
        /// clean before from the same inputs is not built again.
        #[arg(long)]
        build_each: bool,
        /// The architectures `--build-each` builds for (default: all three).
        #[arg(long, value_enum, value_delimiter = ',', requires = "build_each")]
        build_arch: Vec<BuildArch>,
        /// Build only after the patches of this series (a directory of
        /// kernel-patches/, such as `pid-index`); the series before it are
        /// applied without a build. Default: after every patch.
        #[arg(long, requires = "build_each")]
        series: Option<String>,
        #[command(flatten)]
        kernel: KernelArgs,
    },
    /// Apply the series as commits in a git tree to edit (prints its path).
    Edit {
        #[command(flatten)]
        kernel: KernelArgs,
    },
    /// Regenerate kernel-patches/ from the edit tree with `git format-patch`,
    /// one directory per series as `kernel-patches/series` groups them.
    /// The cover letters are kept as they are. With `--out`, writes the
    /// series as a poster sends it instead: the poster's identity from git
    /// config in place of the tree's marker, To/Cc from get_maintainer.pl,
    /// `base-commit:`; it refuses an unset or placeholder identity.
    Export {
        /// Write the series for posting into this directory.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
        #[command(flatten)]
        kernel: KernelArgs,
    },
}

pub fn run(command: PatchesCommand) -> Result<()> {
    match command {
        PatchesCommand::Check {
            upstream_clean_only,
            build_each,
            build_arch,
            series,
            kernel,
        } => {
            if upstream_clean_only {
                return check_upstream_clean();
            }
            check_series(&kernel)?;
            if build_each {
                let arches = if build_arch.is_empty() {
                    BuildArch::ALL.to_vec()
                } else {
                    build_arch
                };
                for arch in arches {
                    build_each_prefix(&kernel, arch, series.as_deref())?;
                }
            }
            Ok(())
        }
        PatchesCommand::Edit { kernel } => edit(&kernel),
        PatchesCommand::Export { out: None, .. } => export(),
        PatchesCommand::Export {
            out: Some(out),
            kernel,
        } => crate::kernel::posting::export(&kernel, &out),
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

/// Formats the edit tree's commits into kernel-patches/, one directory per
/// group of the series file (numbered from 1 in each, so each series can
/// be posted as it is), keeping each group's cover letter.
fn export() -> Result<()> {
    let tree = kernel::edit_tree()?;
    let dir = crate::paths::patches_dir();
    let groups = crate::kernel::posting::series_groups()?;
    let wanted: usize = groups.iter().map(|(_, n)| n).sum();
    let range = format!("{}..HEAD", kernel::BASE_TAG);
    let commits: Vec<String> = cmd::output(Command::new("git").arg("-C").arg(&tree).args([
        "rev-list",
        "--reverse",
        &range,
    ]))?
    .lines()
    .map(str::to_string)
    .collect();
    if commits.len() != wanted {
        bail!(
            "the edit tree has {} commits on top of {}, but kernel-patches/series lists {wanted}: \
             list each new patch (any name) in the group it belongs to, then export again",
            commits.len(),
            kernel::BASE_TAG
        );
    }
    // Format into a scratch directory first, so a failure leaves the
    // series as it was.
    let scratch = xtask_dir().join("export");
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)?;
    }
    let mut formatted = Vec::new();
    let mut first = 0;
    for (group, n) in &groups {
        let base = if first == 0 {
            kernel::BASE_TAG.to_string()
        } else {
            commits[first - 1].clone()
        };
        let last = &commits[first + n - 1];
        let out = scratch.join(group);
        let prefix = crate::kernel::posting::subject_prefix(
            &dir.join(group).join("0000-cover-letter.patch"),
        )?;
        let names = cmd::output(
            Command::new("git")
                .arg("-C")
                .arg(&tree)
                // Not -q: format-patch names each file it writes.
                // --numbered: a series of one patch is "1/1" too.
                .args(["format-patch", "--numbered", "--start-number", "1"])
                .arg(format!("--subject-prefix={prefix}"))
                .arg("-o")
                .arg(&out)
                .arg(format!("{base}..{last}")),
        )?;
        for line in names.lines() {
            let file = std::path::PathBuf::from(line.trim());
            if file.is_file() {
                formatted.push((group.clone(), file));
            }
        }
        first += n;
    }
    // Every old patch of each group goes, whatever the series file named:
    // only the cover letters stay.
    for (group, _) in &groups {
        if let Ok(entries) = std::fs::read_dir(dir.join(group)) {
            for entry in entries {
                let path = entry?.path();
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                if name.ends_with(".patch") && name != "0000-cover-letter.patch" {
                    std::fs::remove_file(&path)?;
                }
            }
        }
    }
    let mut series = String::new();
    for (group, file) in &formatted {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let rel = if group.is_empty() {
            name.to_string()
        } else {
            format!("{group}/{name}")
        };
        let to = dir.join(&rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::rename(file, &to)?;
        series.push_str(&rel);
        series.push('\n');
    }
    std::fs::write(dir.join("series"), &series)?;
    step(format!(
        "exported {} patches in {} series to {}",
        formatted.len(),
        groups.len(),
        dir.display()
    ));
    Ok(())
}

/// No hunk may need a Debian-only line (kernel-patches/debian-changes.txt),
/// so that the series applies on upstream v7.3.4 unchanged.
fn check_upstream_clean() -> Result<()> {
    crate::kernel::debian::check_series(&crate::paths::patches_dir(), &series()?)
}

/// Checks that the hunks are upstream-clean and that the cover letters'
/// figures are BENCHMARKS.md's, then runs checkpatch on each patch and
/// fails on any error or warning.
pub fn check_series(args: &KernelArgs) -> Result<()> {
    check_upstream_clean()?;
    crate::kernel::figures::check_cover_letters(&crate::paths::workspace_root())?;
    step("cover letters: every figure is one BENCHMARKS.md gives");
    let tree = kernel::pristine_tree(args)?;
    let (patched, _lock) = kernel::patched_tree(args)?;
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
        let mut clean = total.contains(" 0 errors, 0 warnings");
        if !clean {
            let patch_text = std::fs::read_to_string(patch)?;
            if let Some(answers) = crate::kernel::answered::findings(&text, &patch_text, &patched)?
            {
                for answer in answers {
                    step(format!("{name}: {answer}"));
                }
                clean = true;
            }
        }
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
/// With `only`, builds after the patches of that series alone; the series
/// before it are applied unbuilt, and the ones after it are not applied.
fn build_each_prefix(args: &KernelArgs, arch: BuildArch, only: Option<&str>) -> Result<()> {
    let all = series()?;
    let in_group = |patch: &Path| {
        only.is_none_or(|group| {
            patch
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|dir| dir == group)
        })
    };
    let Some(last) = all.iter().rposition(|p| in_group(p)) else {
        bail!(
            "kernel-patches/series has no series {:?}",
            only.unwrap_or("")
        );
    };
    let patches = &all[..=last];
    let built = patches.iter().filter(|p| in_group(p)).count();
    let tree = kernel::scratch_tree(args, "prefix")?;
    let build = xtask_dir().join(format!("linux/build-prefix-{}", arch.name()));
    kernel::configure_with(&tree, &build, arch.make_vars(), &arch.fragments())?;
    let stamps = xtask_dir().join("build-each").join(arch.name());
    fs::create_dir_all(&stamps)?;
    let mut prefix = build_inputs(&tree, arch)?;
    let mut done = 0;
    for patch in patches {
        let name = patch
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        prefix.update(fs::read(patch)?);
        kernel::git_am(&tree, patch)?;
        if !in_group(patch) {
            continue;
        }
        done += 1;
        let stamp = stamps.join(hex(&prefix.clone().finalize()));
        if stamp.exists() {
            step(format!(
                "{} build after {done}/{built}: {name}: built clean before",
                arch.name()
            ));
            continue;
        }
        timed(
            &format!("{} build after {done}/{built}: {name}", arch.name()),
            || {
                cmd::run(
                    kernel::make_with(&tree, &build, arch.make_vars())
                        .args(["-s", "KCFLAGS=-Werror", &kernel::jobs()])
                        .arg(arch.image_target()),
                )
            },
        )?;
        fs::write(&stamp, format!("{name}\n"))?;
    }
    Ok(())
}

/// What a prefix's build depends on besides its patches: the base tree's
/// commit, the compiler, the make variables and the config fragments. A
/// prefix is built again when any of them, or any patch up to it, changed;
/// `target/xtask/build-each/ARCH/` holds one file per prefix built clean
/// (remove it to build every prefix again).
fn build_inputs(tree: &Path, arch: BuildArch) -> Result<Sha256> {
    let mut inputs = Sha256::new();
    let base = cmd::output(
        Command::new("git")
            .arg("-C")
            .arg(tree)
            .args(["rev-parse", kernel::BASE_TAG]),
    )?;
    inputs.update(base.trim());
    let cross = arch
        .make_vars()
        .iter()
        .find_map(|var| var.strip_prefix("CROSS_COMPILE="))
        .unwrap_or("");
    let compiler = cmd::output(Command::new(format!("{cross}gcc")).arg("--version"))?;
    inputs.update(compiler.lines().next().unwrap_or(""));
    for var in arch.make_vars() {
        inputs.update(var);
    }
    inputs.update("KCFLAGS=-Werror");
    inputs.update(arch.image_target());
    for fragment in arch.fragments() {
        inputs.update(fs::read(&fragment)?);
    }
    Ok(inputs)
}

fn hex(digest: &[u8]) -> String {
    digest.iter().map(|byte| format!("{byte:02x}")).collect()
}
