//! The kernel: source tree, patch series, configuration and a cached build.
//!
//! Layout below `target/xtask/linux`:
//! - `pristine/`: the 7.3 source as a git repository, tagged `pidmap-base`;
//!   the unpatched kernel is built from it and it is never modified.
//! - `apply/`: a worktree where the series is applied with `git am`.
//! - `patched/`: a worktree that is moved to the commit `git am` produced.
//!   Moving a worktree between commits rewrites only the files that differ,
//!   so one changed patch leaves every other file's mtime alone and the
//!   kernel build stays incremental.
//! - `build-<flavor>/` (x86_64) and `build-arm64-<flavor>/`: `make O=`
//!   output, with a stamp of the cache key.

pub mod abi;
pub mod answered;
pub mod debian;
pub mod figures;
pub mod patches;
pub mod posting;
pub mod radix;

use crate::arch::Arch;
use crate::deps::{self, KERNEL_TARBALL};
use crate::paths::{patches_dir, qemu_dir, xtask_dir};
use crate::run::{output, run, run_quiet, step, timed, with_ccache};
use anyhow::{bail, Context, Result};
use clap::Args;
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Which kernel to boot and where its source comes from.
#[derive(Args, Clone, Debug)]
pub struct KernelArgs {
    /// Guest architecture. arm64 is cross-built with gcc-aarch64-linux-gnu
    /// and booted with qemu-system-aarch64 -M virt; it runs the C tests
    /// (kselftests and guest-tests/) only: no Rust target for aarch64 is
    /// installable here, so the crate's tests and the CLI are x86_64-only.
    #[arg(long, value_enum, default_value_t = crate::arch::Arch::X86_64)]
    pub arch: crate::arch::Arch,
    /// Boot the debug kernel (lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP, KASAN).
    #[arg(long, conflicts_with = "unpatched")]
    pub debug: bool,
    /// Boot a 7.3 kernel built without the series (the "before" kernel).
    #[arg(long)]
    pub unpatched: bool,
    /// Boot the patched kernel built with BPF (qemu/bpf.config: iterators,
    /// kfuncs, BTF), for the BPF comparison. Never built by CI.
    #[arg(long, conflicts_with_all = ["debug", "unpatched"])]
    pub bpf: bool,
    /// Use this Linux 7.3 source tree instead of Debian's linux-source-7.3 tarball.
    #[arg(long, value_name = "DIR")]
    pub kernel_src: Option<PathBuf>,
    /// Hard limit on the guest's run time, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 1200)]
    pub timeout: u64,
    /// Guest memory in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 3072)]
    pub memory: u32,
    /// Guest vCPUs; `None`: the clock's default
    /// ([`crate::guest::qemu::GuestClock::default_cpus`]). Not an option of every
    /// command: set by those that take `--cpus` themselves (forkcost).
    #[arg(skip)]
    pub cpus: Option<u32>,
}

pub const BASE_TAG: &str = "pidmap-base";
/// Bump when the way a tree or build is produced changes, to drop old caches.
const LAYOUT_VERSION: &str = "1";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// The series applied, the normal configuration.
    Patched,
    /// The series applied, lockdep + PROVE_RCU + KASAN + DEBUG_ATOMIC_SLEEP.
    Debug,
    /// Plain 7.3 with the normal configuration: the "before" kernel.
    Unpatched,
    /// The series applied, with BPF (iterators, kfuncs, BTF): `qemu/bpf.config`.
    /// Built only on request (`cargo xtask bench --bpf`), never by CI.
    Bpf,
}

impl Flavor {
    pub fn from_args(args: &KernelArgs) -> Flavor {
        match (args.debug, args.unpatched, args.bpf) {
            (true, _, _) => Flavor::Debug,
            (false, true, _) => Flavor::Unpatched,
            (false, false, true) => Flavor::Bpf,
            (false, false, false) => Flavor::Patched,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Flavor::Patched => "patched",
            Flavor::Debug => "debug",
            Flavor::Unpatched => "unpatched",
            Flavor::Bpf => "bpf",
        }
    }

    pub fn has_series(self) -> bool {
        self != Flavor::Unpatched
    }

    fn fragments(self, arch: Arch) -> Vec<PathBuf> {
        let mut list = vec![
            qemu_dir().join("base.config"),
            qemu_dir().join(arch.fragment()),
        ];
        match self {
            Flavor::Debug => list.push(qemu_dir().join("debug.config")),
            Flavor::Bpf => list.push(qemu_dir().join("bpf.config")),
            Flavor::Patched | Flavor::Unpatched => {}
        }
        list
    }
}

/// A built kernel, ready to boot.
pub struct Kernel {
    pub flavor: Flavor,
    pub arch: Arch,
    /// The source tree it was built from (for the kselftests).
    pub src: PathBuf,
    /// The `make O=` directory.
    pub build: PathBuf,
}

impl Kernel {
    /// The image QEMU boots with `-kernel`.
    pub fn image(&self) -> PathBuf {
        self.build.join(self.arch.image_path())
    }

    /// "patched", or "arm64-patched" for another architecture: names logs
    /// and staging directories.
    pub fn label(&self) -> String {
        match self.arch {
            Arch::X86_64 => self.flavor.name().to_string(),
            arch => format!("{}-{}", arch.name(), self.flavor.name()),
        }
    }

    /// "patched", or "patched arm64" for another architecture, for messages.
    pub fn describe(&self) -> String {
        match self.arch {
            Arch::X86_64 => self.flavor.name().to_string(),
            arch => format!("{} {}", self.flavor.name(), arch.name()),
        }
    }

    /// The uapi headers from `make headers`, for building guest programs.
    pub fn headers(&self) -> PathBuf {
        self.build.join("usr/include")
    }
}

fn linux_dir() -> PathBuf {
    xtask_dir().join("linux")
}

fn git(tree: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(tree)
        .args([
            "-c",
            "user.name=pidmap xtask",
            "-c",
            "user.email=xtask@localhost",
        ])
        .args(["-c", "gc.auto=0", "-c", "advice.detachedHead=false"]);
    cmd
}

fn hash_files(hasher: &mut Sha256, files: &[PathBuf]) -> Result<()> {
    for file in files {
        let bytes = fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        hasher.update(file.file_name().unwrap_or_default().as_encoded_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(())
}

fn hex(hasher: Sha256) -> String {
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The names `kernel-patches/series` lists, in order, without comments.
pub fn series_names() -> Result<Vec<String>> {
    let list = patches_dir().join("series");
    let text = fs::read_to_string(&list)
        .with_context(|| format!("cannot read the series file {}", list.display()))?;
    Ok(text
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect())
}

/// The patch files named by `kernel-patches/series`, in order.
pub fn series() -> Result<Vec<PathBuf>> {
    let dir = patches_dir();
    let list = dir.join("series");
    let mut patches = Vec::new();
    for name in series_names()? {
        let path = dir.join(&name);
        if !path.is_file() {
            bail!("{} names {name}, which does not exist", list.display());
        }
        patches.push(path);
    }
    Ok(patches)
}

/// Where the source comes from, and a string that changes when it does.
struct Source {
    /// A directory to copy, or the tarball to unpack.
    origin: PathBuf,
    is_tarball: bool,
    identity: String,
}

fn source(args: &KernelArgs) -> Result<Source> {
    let (origin, is_tarball) = match &args.kernel_src {
        Some(dir) => (
            fs::canonicalize(dir)
                .with_context(|| format!("--kernel-src {} does not exist", dir.display()))?,
            false,
        ),
        None => (PathBuf::from(KERNEL_TARBALL), true),
    };
    let meta = fs::metadata(&origin)?;
    let mtime = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let mut identity = format!("{} {} {mtime}", origin.display(), meta.len());
    if !is_tarball {
        check_version(&origin)?;
        if origin.join(".git").exists() {
            let head = output(
                Command::new("git")
                    .arg("-C")
                    .arg(&origin)
                    .args(["rev-parse", "HEAD"]),
            )?;
            identity.push_str(head.trim());
        }
        let makefile = fs::metadata(origin.join("Makefile"))?.modified()?;
        identity.push_str(&format!(" {makefile:?}"));
    }
    Ok(Source {
        origin,
        is_tarball,
        identity,
    })
}

/// Refuses a tree that is not Linux 7.3: the series is written for it.
fn check_version(tree: &Path) -> Result<()> {
    let makefile = tree.join("Makefile");
    let text = fs::read_to_string(&makefile)
        .with_context(|| format!("{} is not a kernel tree (no Makefile)", tree.display()))?;
    let field = |name: &str| {
        text.lines()
            .find_map(|l| {
                l.strip_prefix(name)
                    .map(|v| v.trim_start_matches([' ', '=']).trim().to_string())
            })
            .unwrap_or_default()
    };
    let (version, patchlevel) = (field("VERSION"), field("PATCHLEVEL"));
    if (version.as_str(), patchlevel.as_str()) != ("7", "3") {
        bail!(
            "{} is Linux {version}.{patchlevel}, but the series is for Linux 7.3",
            tree.display()
        );
    }
    Ok(())
}

/// Makes `linux/pristine` hold the source as a git repository at `pidmap-base`.
fn ensure_pristine(src: &Source) -> Result<PathBuf> {
    let pristine = linux_dir().join("pristine");
    let stamp = linux_dir().join("pristine.source");
    let wanted = format!("{LAYOUT_VERSION} {}", src.identity);
    if fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str())
        && pristine.join(".git").exists()
    {
        return Ok(pristine);
    }
    // A new source invalidates every tree and build made from the old one.
    let has_old = fs::read_dir(linux_dir()).is_ok_and(|mut d| d.next().is_some());
    if has_old {
        step("kernel source changed: discarding old trees and builds");
    }
    if linux_dir().exists() {
        fs::remove_dir_all(linux_dir())?;
    }
    fs::create_dir_all(&pristine)?;
    timed("unpacking the kernel source", || {
        if src.is_tarball {
            run(Command::new("tar")
                .arg("-C")
                .arg(&pristine)
                .args(["--strip-components=1", "-xf"])
                .arg(&src.origin))
        } else {
            // Copy, never touch the user's tree: `git archive`-like copy of files.
            let mut tar_out = Command::new("tar")
                .arg("-C")
                .arg(&src.origin)
                .args(["--exclude=.git", "-cf", "-", "."])
                .stdout(std::process::Stdio::piped())
                .spawn()?;
            let status = Command::new("tar")
                .arg("-C")
                .arg(&pristine)
                .arg("-xf")
                .arg("-")
                .stdin(tar_out.stdout.take().expect("piped"))
                .status()?;
            if !status.success() || !tar_out.wait()?.success() {
                bail!("copying {} failed", src.origin.display());
            }
            Ok(())
        }
    })?;
    check_version(&pristine)?;
    timed("recording the source in git", || {
        run_quiet(git(&pristine).args(["init", "-q"]))?;
        run_quiet(git(&pristine).args(["add", "-A", "-f", "."]))?;
        run_quiet(git(&pristine).args([
            "commit",
            "-q",
            "--no-verify",
            "-m",
            "Linux 7.3 (pidmap base)",
        ]))?;
        run_quiet(git(&pristine).args(["tag", BASE_TAG]))
    })?;
    fs::write(&stamp, wanted)?;
    Ok(pristine)
}

fn ensure_worktree(pristine: &Path, name: &str) -> Result<PathBuf> {
    let tree = linux_dir().join(name);
    if !tree.join(".git").exists() {
        timed(&format!("creating the {name} worktree"), || {
            run_quiet(git(pristine).args(["worktree", "prune"]))?;
            run_quiet(
                git(pristine)
                    .args(["worktree", "add", "-q", "--detach", "-f"])
                    .arg(&tree)
                    .arg(BASE_TAG),
            )
        })?;
    }
    Ok(tree)
}

/// The `apply` worktree, reset to the pristine base with no `git am` in progress.
fn reset_apply_tree(pristine: &Path) -> Result<PathBuf> {
    let apply = ensure_worktree(pristine, "apply")?;
    // Leave no half-applied state from an interrupted earlier run.
    let _ = git(&apply).args(["am", "--abort"]).output();
    run_quiet(git(&apply).args(["reset", "-q", "--hard", BASE_TAG]))?;
    Ok(apply)
}

/// Applies one patch with `git am`; a failure names the patch and git's reason.
pub fn git_am(tree: &Path, patch: &Path) -> Result<()> {
    let name = patch.file_name().unwrap_or_default().to_string_lossy();
    let out = git(tree)
        .args(["am", "-q", "--keep-cr"])
        .arg(patch)
        .output()?;
    if !out.status.success() {
        let _ = git(tree).args(["am", "--abort"]).output();
        bail!(
            "patch {name} does not apply to Linux 7.3:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

fn series_hash(patches: &[PathBuf]) -> Result<String> {
    let mut hasher = Sha256::new();
    hash_files(&mut hasher, patches)?;
    Ok(hex(hasher))
}

/// Applies the series with `git am` and returns the resulting commit.
fn apply_series(pristine: &Path, patches: &[PathBuf], hash: &str) -> Result<String> {
    let record = linux_dir().join("applied.series");
    if let Ok(text) = fs::read_to_string(&record) {
        if let Some((h, commit)) = text.trim().split_once(' ') {
            if h == hash {
                return Ok(commit.to_string());
            }
        }
    }
    let apply = reset_apply_tree(pristine)?;
    for patch in patches {
        git_am(&apply, patch)?;
    }
    let commit = output(git(&apply).args(["rev-parse", "HEAD"]))?
        .trim()
        .to_string();
    fs::write(&record, format!("{hash} {commit}\n"))?;
    step(format!("applied {} patches", patches.len()));
    Ok(commit)
}

/// The source tree for `flavor`, with the series applied where it should be.
fn source_tree(flavor: Flavor, pristine: &Path, series_hash: &str) -> Result<PathBuf> {
    if !flavor.has_series() {
        return Ok(pristine.to_path_buf());
    }
    let patches = series()?;
    let commit = apply_series(pristine, &patches, series_hash)?;
    let patched = ensure_worktree(pristine, "patched")?;
    let head = output(git(&patched).args(["rev-parse", "HEAD"]))?;
    if head.trim() != commit {
        // Only files that differ between the two commits are rewritten.
        run_quiet(git(&patched).args(["reset", "-q", "--hard", &commit]))?;
    }
    Ok(patched)
}

pub fn jobs() -> String {
    let n = std::thread::available_parallelism().map_or(2, |n| n.get());
    format!("-j{n}")
}

fn make(src: &Path, build: &Path, arch: Arch) -> Command {
    make_with(src, build, arch.make_vars())
}

/// `make -C src O=build` with kbuild variables such as `ARCH=`, through ccache.
pub fn make_with(src: &Path, build: &Path, vars: &[&str]) -> Command {
    let mut cmd = Command::new("make");
    cmd.arg("-C")
        .arg(src)
        .arg(format!("O={}", build.display()))
        .args(vars);
    with_ccache(&mut cmd);
    cmd
}

/// tinyconfig + our fragments, then checks that every requested option stuck.
fn configure(src: &Path, build: &Path, arch: Arch, fragments: &[PathBuf]) -> Result<()> {
    configure_with(src, build, arch.make_vars(), fragments)
}

/// [`configure`] for any kbuild `ARCH=` (build-only targets such as i386).
pub fn configure_with(
    src: &Path,
    build: &Path,
    vars: &[&str],
    fragments: &[PathBuf],
) -> Result<()> {
    fs::create_dir_all(build)?;
    run_quiet(make_with(src, build, vars).arg("tinyconfig"))?;
    run_quiet(
        Command::new(src.join("scripts/kconfig/merge_config.sh"))
            .current_dir(src)
            .arg("-m")
            .arg("-O")
            .arg(build)
            .arg(build.join(".config"))
            .args(fragments),
    )?;
    run_quiet(make_with(src, build, vars).arg("olddefconfig"))?;
    let config = fs::read_to_string(build.join(".config"))?;
    for fragment in fragments {
        for line in fs::read_to_string(fragment)?.lines() {
            let Some((name, value)) = line.split_once('=') else {
                continue;
            };
            let wanted_unset = value == "n";
            let present = config.lines().any(|l| l == line);
            let unset = !config.lines().any(|l| l.starts_with(&format!("{name}=")));
            if !(present || (wanted_unset && unset)) {
                step(format!(
                    "warning: {} asks for {line}, but Kconfig did not keep it",
                    fragment.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
    }
    Ok(())
}

/// Serialises xtasks that touch the kernel trees; released when dropped.
fn lock() -> Result<fs::File> {
    fs::create_dir_all(linux_dir())?;
    let lock = fs::File::create(xtask_dir().join("kernel.lock"))?;
    if lock.try_lock().is_err() {
        step("another xtask is using the kernel trees; waiting for it");
        lock.lock()?;
    }
    Ok(lock)
}

/// The pristine 6.12 tree (for checkpatch and friends), created if needed.
pub fn pristine_tree(args: &KernelArgs) -> Result<PathBuf> {
    deps::ensure(args.kernel_src.is_none())?;
    let src = source(args)?;
    let _lock = lock()?;
    ensure_pristine(&src)
}

/// A scratch worktree `name` reset to the pristine base, for applying
/// patches one by one (`patches edit`, `patches check --build-each`). It is
/// not the tree `prepare` builds from, so edits there survive a qemu-test.
pub fn scratch_tree(args: &KernelArgs, name: &str) -> Result<PathBuf> {
    let pristine = pristine_tree(args)?;
    let _lock = lock()?;
    let tree = ensure_worktree(&pristine, name)?;
    let _ = git(&tree).args(["am", "--abort"]).output();
    run_quiet(git(&tree).args(["reset", "-q", "--hard", BASE_TAG]))?;
    Ok(tree)
}

/// The tree `patches edit` left, without resetting it.
pub fn edit_tree() -> Result<PathBuf> {
    let tree = linux_dir().join("edit");
    if !tree.join(".git").exists() {
        bail!("no edit tree yet: run `cargo xtask patches edit` first");
    }
    Ok(tree)
}

/// The source tree with the series applied, without building a kernel,
/// and the lock that keeps other xtasks from moving it while it is used.
pub fn patched_tree(args: &KernelArgs) -> Result<(PathBuf, fs::File)> {
    deps::ensure(args.kernel_src.is_none())?;
    let src = source(args)?;
    let lock = lock()?;
    let pristine = ensure_pristine(&src)?;
    let hash = series_hash(&series()?)?;
    let tree = source_tree(Flavor::Patched, &pristine, &hash)?;
    Ok((tree, lock))
}

/// Gets, patches, configures and builds the kernel for `args`, from cache when possible.
pub fn prepare(args: &KernelArgs) -> Result<Kernel> {
    let flavor = Flavor::from_args(args);
    let arch = args.arch;
    if arch != Arch::X86_64 && matches!(flavor, Flavor::Debug | Flavor::Bpf) {
        bail!("the {} kernel is built for x86_64 only", flavor.name());
    }
    deps::ensure(args.kernel_src.is_none())?;
    deps::ensure_arch(arch)?;
    if flavor == Flavor::Bpf {
        deps::ensure_bpf()?;
    }
    let src = source(args)?;
    // One build at a time: concurrent xtasks share trees and build dirs.
    let _lock = lock()?;
    let pristine = ensure_pristine(&src)?;
    let series_hash = if flavor.has_series() {
        series_hash(&series()?)?
    } else {
        String::from("none")
    };
    let tree = source_tree(flavor, &pristine, &series_hash)?;

    let fragments = flavor.fragments(arch);
    let mut config_hasher = Sha256::new();
    config_hasher.update(LAYOUT_VERSION);
    config_hasher.update(flavor.name());
    config_hasher.update(arch.name());
    hash_files(&mut config_hasher, &fragments)?;
    let config_key = hex(config_hasher);
    let key = format!("{config_key} {series_hash}");

    let build = linux_dir().join(match arch {
        Arch::X86_64 => format!("build-{}", flavor.name()),
        arch => format!("build-{}-{}", arch.name(), flavor.name()),
    });
    let kernel = Kernel {
        flavor,
        arch,
        src: tree.clone(),
        build: build.clone(),
    };
    let stamp = build.join(".pidmap-key");
    if fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str())
        && kernel.image().exists()
        && kernel.headers().exists()
    {
        step(format!(
            "{} kernel is up to date (cached)",
            kernel.describe()
        ));
        return Ok(kernel);
    }

    fs::create_dir_all(&build)?;
    let config_stamp = build.join(".pidmap-config-key");
    if fs::read_to_string(&config_stamp).ok().as_deref() != Some(config_key.as_str()) {
        timed(
            &format!("configuring the {} kernel", kernel.describe()),
            || configure(&tree, &build, arch, &fragments),
        )?;
        fs::write(&config_stamp, &config_key)?;
    }
    timed(
        &format!("building the {} kernel", kernel.describe()),
        || {
            run(make(&tree, &build, arch)
                .arg(jobs())
                .arg(arch.image_target()))?;
            run_quiet(make(&tree, &build, arch).arg("headers"))
        },
    )?;
    fs::write(&stamp, &key)?;
    Ok(kernel)
}
