//! What goes into the guest: static test programs, busybox, our /init, and
//! the newc initramfs that carries them.

pub mod busybox;
pub mod console;
pub mod qemu;
pub mod selinux;
pub mod tomoyo;

use crate::arch::Arch;
use crate::kernel::abi;
use crate::kernel::{Flavor, Kernel};
use crate::paths::{qemu_dir, target_dir, workspace_root, xtask_dir};
use crate::run::{run_quiet, step, timed, with_ccache};
use anyhow::{bail, Context, Result};
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const RUST_TARGET: &str = "x86_64-unknown-linux-gnu";

/// What the guest's /init is asked to do.
pub enum Mode {
    /// Run every test under /tests and report pass/fail.
    Test,
    /// Run one command (already shell-quoted) and report its exit status.
    Run(String),
    /// An interactive shell on the console.
    Shell,
}

/// A directory tree that becomes the initramfs.
pub struct Stage {
    root: PathBuf,
}

impl Stage {
    pub fn new(name: &str) -> Result<Stage> {
        let root = xtask_dir().join("stage").join(name);
        if root.exists() {
            fs::remove_dir_all(&root)?;
        }
        for dir in [
            "bin", "etc", "proc", "sys", "dev", "tmp", "root", "add", "tests",
        ] {
            fs::create_dir_all(root.join(dir))?;
        }
        Ok(Stage { root })
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Copies `src` to `rel` inside the guest, keeping it executable.
    pub fn add_file(&self, src: &Path, rel: &str) -> Result<()> {
        let dst = self.root.join(rel);
        if let Some(parent) = dst.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(src, &dst)
            .with_context(|| format!("cannot copy {} into the guest", src.display()))?;
        Ok(())
    }

    pub fn write(&self, rel: &str, text: &str, mode: u32) -> Result<()> {
        let dst = self.root.join(rel);
        if let Some(parent) = dst.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&dst, text)?;
        fs::set_permissions(&dst, fs::Permissions::from_mode(mode))?;
        Ok(())
    }

    /// Adds `export NAME=VALUE` to the boot's /etc/pidmap.env (after [`base`]).
    pub fn set_env(&self, name: &str, value: &str) -> Result<()> {
        use std::io::Write;
        let mut file = fs::OpenOptions::new()
            .append(true)
            .open(self.root.join("etc/pidmap.env"))?;
        writeln!(file, "export {name}={value}")?;
        Ok(())
    }

    /// Packs the tree as a newc cpio archive owned by root.
    pub fn pack(&self) -> Result<PathBuf> {
        let out = self.root.with_extension("cpio");
        let file = fs::File::create(&out)?;
        let mut find = Command::new("find")
            .args([".", "-print0"])
            .current_dir(&self.root)
            .stdout(Stdio::piped())
            .spawn()?;
        let status = Command::new("cpio")
            .args(["--null", "--quiet", "-o", "-H", "newc", "-R", "0:0"])
            .current_dir(&self.root)
            .stdin(find.stdout.take().expect("piped"))
            .stdout(file)
            .status()?;
        if !status.success() || !find.wait()?.success() {
            bail!("packing the initramfs with cpio failed");
        }
        Ok(out)
    }
}

/// Lays down busybox, /init, the exit helper and the run configuration.
pub fn base(stage: &Stage, kernel: &Kernel, mode: &Mode) -> Result<()> {
    stage.add_file(&busybox::path(kernel.arch)?, "bin/busybox")?;
    stage.add_file(&qemu_dir().join("init.sh"), "init")?;
    fs::set_permissions(stage.path("init"), fs::Permissions::from_mode(0o755))?;
    compile_c(
        kernel.arch,
        &qemu_dir().join("guest-exit.c"),
        &stage.path("bin/guest-exit"),
        None,
        &kernel.headers(),
    )?;

    // Runs a program as another uid (with that gid as its only group): the
    // kselftests' uid 65534 runs.
    compile_c(
        kernel.arch,
        &workspace_root().join("guest-tests/helpers/runas.c"),
        &stage.path("bin/runas"),
        None,
        &kernel.headers(),
    )?;

    // A user database for NSS's files backend (static glibc has it built
    // in): the crate's user-name tests and the CLI's USER column look up
    // root and the test user 65534 here, as on any distribution.
    stage.write(
        "etc/passwd",
        "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
        0o644,
    )?;
    stage.write("etc/group", "root:x:0:\nnogroup:x:65534:\n", 0o644)?;
    stage.write("etc/nsswitch.conf", "passwd: files\ngroup: files\n", 0o644)?;

    let mut env = String::from("# written by cargo xtask: what this boot is for\n");
    let (mode_name, command) = match mode {
        Mode::Test => ("test", None),
        Mode::Run(cmd) => ("run", Some(cmd)),
        Mode::Shell => ("shell", None),
    };
    env.push_str(&format!("export PIDMAP_MODE={mode_name}\n"));
    env.push_str(&format!("export PIDMAP_KERNEL={}\n", kernel.flavor.name()));
    env.push_str(&format!("export PIDMAP_ARCH={}\n", kernel.arch.name()));
    env.push_str(&format!(
        "export PIDMAP_STATUS_DEV={}\n",
        kernel.arch.status_device()
    ));
    if kernel.flavor.has_series() {
        // The syscall path must never hide behind the /proc fallback here.
        env.push_str("export PIDMAP_REQUIRE_SYSCALL=1\n");
    } else {
        env.push_str("export PIDMAP_EXPECT_NO_SYSCALL=1\n");
    }
    let stress = if kernel.flavor == Flavor::Debug {
        60
    } else {
        10
    };
    env.push_str(&format!("export PIDMAP_STRESS_SECONDS={stress}\n"));
    // The 100k-thread process; the debug kernel (KASAN, lockdep)
    // creates threads about ten times slower under TCG, so it gets 10k, and
    // so does arm64, whose guest is there for the ABI, not for scale.
    let scale_threads = if kernel.flavor == Flavor::Debug || kernel.arch != Arch::X86_64 {
        10_000
    } else {
        100_000
    };
    env.push_str(&format!("export PIDMAP_SCALE_THREADS={scale_threads}\n"));
    stage.write("etc/pidmap.env", &env, 0o644)?;
    if let Some(cmd) = command {
        stage.write("etc/pidmap.cmd", &format!("{cmd}\n"), 0o755)?;
    }
    Ok(())
}

/// How every guest C program is compiled: static, so the guest needs no shared libraries.
const C_FLAGS: [&str; 6] = ["-static", "-O2", "-g", "-Wall", "-Wextra", "-pthread"];

/// Compiles one C program static for `arch`, as [`compile_c_files`].
pub fn compile_c(
    arch: Arch,
    src: &Path,
    out: &Path,
    include: Option<&Path>,
    headers: &Path,
) -> Result<()> {
    compile_c_files(arch, &[src.to_path_buf()], out, include, headers)
}

/// Compiles the C program made of `srcs` static for `arch`, against the
/// series' uapi headers (crates/pidmap/abi, first) and the kernel's, in
/// one compiler call.
pub fn compile_c_files(
    arch: Arch,
    srcs: &[PathBuf],
    out: &Path,
    include: Option<&Path>,
    headers: &Path,
) -> Result<()> {
    if let Some(parent) = out.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut cmd = Command::new(arch.cc());
    with_ccache(&mut cmd);
    cmd.args(C_FLAGS);
    if let Some(dir) = include {
        cmd.arg("-I").arg(dir);
    }
    cmd.arg("-I")
        .arg(abi::dir())
        .arg("-isystem")
        .arg(headers)
        .arg("-o")
        .arg(out)
        .args(srcs);
    run_quiet(&mut cmd).with_context(|| format!("cannot compile {}", sources_label(srcs)))
}

/// `srcs` for a message: the one file, or the files' folder.
pub fn sources_label(srcs: &[PathBuf]) -> String {
    match srcs {
        [one] => one.display().to_string(),
        _ => match srcs.first().and_then(|s| s.parent()) {
            Some(dir) => format!("{}/*.c", dir.display()),
            None => "no sources".to_string(),
        },
    }
}

/// The `*.c` files directly in `dir`, sorted; none if `dir` is missing.
pub fn c_sources(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut sources: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    sources.sort();
    sources
}

/// Compiles every `*.c` in `dir` for `arch` into `stage/dest/`.
pub fn add_c_programs(
    stage: &Stage,
    arch: Arch,
    dir: &Path,
    dest: &str,
    headers: &Path,
) -> Result<usize> {
    let mut count = 0;
    for src in c_sources(dir) {
        let name = src
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        compile_c(
            arch,
            &src,
            &stage.path(&format!("{dest}/{name}")),
            Some(&dir.join("include")),
            headers,
        )?;
        count += 1;
    }
    Ok(count)
}

/// Compiles guest-tests/debug/*.c, the tests of what only the debug kernel
/// has (failslab), into tests/c/, with the guest tests' shared headers.
fn add_debug_programs(stage: &Stage, kernel: &Kernel) -> Result<usize> {
    let tests = workspace_root().join("guest-tests");
    let sources = c_sources(&tests.join("debug"));
    for src in &sources {
        let name = src.file_stem().unwrap_or_default().to_string_lossy();
        compile_c(
            kernel.arch,
            src,
            &stage.path(&format!("tests/c/{name}")),
            Some(&tests.join("include")),
            &kernel.headers(),
        )?;
    }
    Ok(sources.len())
}

/// Compiles every `*.c` in `dir` as a static i386 program (for the
/// IA32_EMULATION compat path) into `stage/dest/`. gcc-multilib cannot be
/// installed next to the arm64 cross compiler, so this is Debian's
/// `i686-linux-gnu-gcc`; the x86 uapi headers serve both word sizes.
pub fn add_c32_programs(stage: &Stage, dir: &Path, dest: &str, headers: &Path) -> Result<usize> {
    let sources = c_sources(dir);
    for src in &sources {
        let name = src.file_stem().unwrap_or_default().to_string_lossy();
        let mut cmd = Command::new("i686-linux-gnu-gcc");
        cmd.args(C_FLAGS)
            .arg("-I")
            .arg(abi::dir())
            .arg("-isystem")
            .arg(headers)
            .arg("-o")
            .arg(stage.path(&format!("{dest}/{name}")))
            .arg(src);
        run_quiet(&mut cmd)
            .with_context(|| format!("cannot compile {} for i386", src.display()))?;
    }
    Ok(sources.len())
}

fn cargo() -> Command {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root())
        .env("CARGO_TARGET_DIR", target_dir().join("guest"))
        .env("RUSTFLAGS", "-C target-feature=+crt-static");
    cmd
}

/// Runs a cargo build and returns the executables it reports.
fn cargo_executables(cmd: &mut Command, tests_only: bool) -> Result<Vec<PathBuf>> {
    cmd.args([
        "--target",
        RUST_TARGET,
        "--message-format=json-render-diagnostics",
    ])
    .stdout(Stdio::piped());
    let mut child = cmd.spawn().context("cannot run cargo")?;
    let mut found = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let msg: serde_json::Value = match serde_json::from_str(&line?) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        if tests_only && msg["profile"]["test"] != true {
            continue;
        }
        if let Some(exe) = msg["executable"].as_str() {
            found.push(PathBuf::from(exe));
        }
    }
    if !child.wait()?.success() {
        bail!("cargo failed to build the static guest binaries");
    }
    Ok(found)
}

/// The guest runs the series' kernel: its binaries are built to issue
/// pidmap(2)/fdmap(2), which the crates do only with this feature.
const SERIES: [&str; 2] = ["--features", "series-syscalls"];

/// The library's unit and integration tests, built static for the guest.
pub fn add_rust_tests(stage: &Stage) -> Result<usize> {
    let tests = timed("building the crate's tests static for the guest", || {
        let mut tests = cargo_executables(
            cargo()
                .args(["test", "-p", "pidmap", "--no-run"])
                .args(SERIES),
            true,
        )?;
        // The CLI's tests of a guest with /proc unmounted and of the task
        // records (`--long`, `top`); they run /bin/pidmap.
        tests.extend(cargo_executables(
            cargo()
                .args([
                    "test",
                    "-p",
                    "pidmap-cli",
                    "--test",
                    "no_proc",
                    "--test",
                    "records",
                    "--no-run",
                ])
                .args(SERIES),
            true,
        )?);
        Ok(tests)
    })?;
    for exe in &tests {
        let name = exe.file_name().unwrap_or_default().to_string_lossy();
        // `pidmap-0123abcd` -> `pidmap`: the hash only makes the log noisy.
        let short = name.rsplit_once('-').map_or(&*name, |(stem, _)| stem);
        stage.add_file(exe, &format!("tests/rust/{short}"))?;
    }
    Ok(tests.len())
}

/// The `pidmap` CLI, built static, as /bin/pidmap (x86_64 guests only).
pub fn add_cli(stage: &Stage, arch: Arch) -> Result<()> {
    if !arch.runs_rust() {
        step(format!("{}: no /bin/pidmap (no Rust target)", arch.name()));
        return Ok(());
    }
    let bins = cargo_executables(
        cargo()
            .args(["build", "-p", "pidmap-cli", "--bin", "pidmap"])
            .args(SERIES),
        false,
    )?;
    let Some(exe) = bins
        .iter()
        .find(|p| p.file_name().is_some_and(|n| n == "pidmap"))
    else {
        bail!("cargo built no `pidmap` binary");
    };
    stage.add_file(exe, "bin/pidmap")
}

/// The series' kselftest suites (tools/testing/selftests/SUITE).
const KSELFTEST_SUITES: [&str; 2] = ["pidmap", "fdmap"];

/// How the guest runs each kselftest program: (program, uid, extra
/// arguments). uid 65534 runs through /bin/runas; `-F root` filters out
/// the fixtures only root can run.
const KSELFTEST_RUNS: [(&str, u32, &str); 10] = [
    ("fdmap_test", 0, ""),
    ("fdmap_test", 65534, "-F root"),
    ("fdmap_view_test", 0, ""),
    // Smack and Landlock are active in our kernels: their cases must run.
    ("fdmap_lsm_test", 0, ""),
    ("pidmap_test", 0, ""),
    ("pidmap_test", 65534, ""),
    ("pidmap_info_test", 0, ""),
    ("pidmap_info_test", 65534, "-F root"),
    ("pidmap_view_test", 0, ""),
    ("pidmap_lsm_test", 0, ""),
];

/// The programs also built 32-bit (i686) for the x86_64 kernel's compat
/// entry, run as root: (suite, program).
const KSELFTEST_M32: [(&str, &str); 3] = [
    ("fdmap", "fdmap_test"),
    ("pidmap", "pidmap_test"),
    ("pidmap", "pidmap_info_test"),
];

/// One kselftest run as a /tests/kselftest/NAME script. Any exit status
/// but 0 fails, a skip (4) included, and so does any test case the
/// harness reports as skipped (`# SKIP`): in this guest the syscalls must
/// exist, so a test that cannot run is a broken test.
fn kselftest_wrapper(prog: &str, uid: u32, args: &str) -> String {
    let run = if uid == 0 {
        format!("/libexec/kselftest/{prog} {args}")
    } else {
        format!("/bin/runas {uid} /libexec/kselftest/{prog} {args}")
    };
    format!(
        "#!/bin/sh\n\
         # written by cargo xtask: {prog} as uid {uid}\n\
         out=/tmp/kselftest.$$\n\
         {run} >\"$out\" 2>&1\n\
         rc=$?\n\
         cat \"$out\"\n\
         if grep -q '# SKIP' \"$out\"; then\n\
         \techo \"kselftest {prog}: a test case was skipped: a failure here\"\n\
         \t[ \"$rc\" -eq 0 ] && rc=4\n\
         fi\n\
         rm -f \"$out\"\n\
         exit $rc\n",
        run = run.trim_end()
    )
}

/// Builds the series' kselftests (tools/testing/selftests/pidmap and
/// fdmap) static, and on x86_64 the -m32 ones, into /libexec/kselftest;
/// each run of [`KSELFTEST_RUNS`] (and each -m32 program) becomes a
/// script in /tests/kselftest. Returns how many runs.
pub fn add_kselftests(stage: &Stage, kernel: &Kernel) -> Result<usize> {
    let selftests = kernel.src.join("tools/testing/selftests");
    let suites: Vec<&str> = KSELFTEST_SUITES
        .iter()
        .copied()
        .filter(|s| selftests.join(s).exists())
        .collect();
    if suites.len() != KSELFTEST_SUITES.len() {
        bail!(
            "the series lacks a kselftest suite: want {KSELFTEST_SUITES:?} in {}, found {suites:?}",
            selftests.display()
        );
    }
    // With O= the selftests build below <O>/kselftest, next to the headers.
    let out = &kernel.build;
    // The selftests' makefiles do not list the uapi headers among a test's
    // prerequisites: a test whose source did not change would keep the
    // structs of the headers it was built with. So every suite is rebuilt
    // when the series' headers change.
    let stamp = out.join("kselftest/.uapi-headers");
    let mut headers = String::new();
    for header in ["linux/pidmap.h", "linux/fdmap.h"] {
        let path = kernel.headers().join(header);
        headers.push_str(
            &fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        );
    }
    if fs::read_to_string(&stamp).ok().as_deref() != Some(headers.as_str()) {
        for suite in KSELFTEST_SUITES {
            let built = out.join("kselftest").join(suite);
            if built.exists() {
                fs::remove_dir_all(&built)?;
            }
        }
    }
    timed("building the kselftests static", || {
        run_quiet(
            with_ccache(&mut Command::new("make"))
                .arg("-C")
                .arg(&selftests)
                .args(kernel.arch.make_vars())
                .arg(format!("TARGETS={}", KSELFTEST_SUITES.join(" ")))
                .arg(format!("O={}", out.display()))
                .arg(format!(
                    "KHDR_INCLUDES=-isystem {}",
                    kernel.headers().display()
                ))
                .arg("LDFLAGS=-static")
                .arg("all"),
        )
    })?;
    fs::write(&stamp, &headers)?;
    for suite in KSELFTEST_SUITES {
        let built = out.join("kselftest").join(suite);
        let entries = fs::read_dir(&built)
            .with_context(|| format!("the kselftest build left nothing in {}", built.display()))?;
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if is_elf_executable(&path)? {
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                stage.add_file(&path, &format!("libexec/kselftest/{name}"))?;
            }
        }
    }
    let mut count = 0;
    for (prog, uid, args) in KSELFTEST_RUNS {
        if !stage.path(&format!("libexec/kselftest/{prog}")).exists() {
            bail!("the kselftest build made no {prog}");
        }
        let name = if uid == 0 {
            prog.to_string()
        } else {
            format!("{prog}-{uid}")
        };
        stage.write(
            &format!("tests/kselftest/{name}"),
            &kselftest_wrapper(prog, uid, args),
            0o755,
        )?;
        count += 1;
    }
    if kernel.arch == Arch::X86_64 {
        timed("building the -m32 kselftests static", || {
            for (suite, prog) in KSELFTEST_M32 {
                let name = format!("{prog}_m32");
                let mut cmd = Command::new("i686-linux-gnu-gcc");
                cmd.args(["-static", "-O2", "-g", "-Wall", "-pthread"])
                    .arg("-isystem")
                    .arg(kernel.headers())
                    .arg("-isystem")
                    .arg(kernel.src.join("tools/include/uapi"))
                    .arg("-o")
                    .arg(stage.path(&format!("libexec/kselftest/{name}")))
                    .arg(selftests.join(suite).join(format!("{prog}.c")));
                run_quiet(&mut cmd).with_context(|| format!("cannot compile {prog}.c for i386"))?;
                stage.write(
                    &format!("tests/kselftest/{name}"),
                    &kselftest_wrapper(&name, 0, ""),
                    0o755,
                )?;
            }
            Ok(())
        })?;
        count += KSELFTEST_M32.len();
    }
    Ok(count)
}

pub fn is_elf_executable(path: &Path) -> Result<bool> {
    let meta = fs::metadata(path)?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Ok(false);
    }
    let mut magic = [0u8; 4];
    use std::io::Read;
    let n = fs::File::open(path)?.read(&mut magic)?;
    Ok(n == 4 && magic == *b"\x7fELF")
}

/// Copies `--add` files and directories (recursively) to /add/NAME.
pub fn add_user_files(stage: &Stage, files: &[PathBuf]) -> Result<()> {
    for file in files {
        let name = file
            .file_name()
            .with_context(|| format!("--add {} has no file name", file.display()))?;
        let dest = format!("add/{}", name.to_string_lossy());
        if file.is_dir() {
            copy_tree(file, &stage.path(&dest))?;
        } else {
            stage.add_file(file, &dest)?;
        }
    }
    Ok(())
}

/// Copies the directory `src` to `dst` with its files' modes; symbolic
/// links are copied as links, not followed.
fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    fs::create_dir_all(dst)?;
    for entry in fs::read_dir(src).with_context(|| format!("cannot read {}", src.display()))? {
        let entry = entry?;
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&from, &to)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&from)?, &to)?;
        } else {
            fs::copy(&from, &to)
                .with_context(|| format!("cannot copy {} into the guest", from.display()))?;
        }
    }
    Ok(())
}

/// Quotes `args` for busybox sh.
pub fn shell_quote(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Everything `qemu-test` runs, for `kernel`; returns how many tests.
pub fn test_payload(stage: &Stage, kernel: &Kernel) -> Result<usize> {
    let rust = if kernel.arch.runs_rust() {
        let rust = add_rust_tests(stage)?;
        add_cli(stage, kernel.arch)?;
        rust
    } else {
        step(format!(
            "{}: no Rust target installable, so the crate's tests stay x86_64-only",
            kernel.arch.name()
        ));
        0
    };
    let (c, kself) = if kernel.flavor.has_series() {
        let c = timed("building the guest C tests static", || {
            add_c_programs(
                stage,
                kernel.arch,
                &workspace_root().join("guest-tests"),
                "tests/c",
                &kernel.headers(),
            )
        })?;
        // The compat (-m32) tests need an x86_64 kernel with IA32_EMULATION.
        let c32 = if kernel.arch == Arch::X86_64 {
            timed("building the i386 compat tests static", || {
                add_c32_programs(
                    stage,
                    &workspace_root().join("guest-tests/m32"),
                    "tests/c",
                    &kernel.headers(),
                )
            })?
        } else {
            0
        };
        // Fault injection (failslab) is built into the debug kernel only.
        let debug_only = if kernel.flavor == Flavor::Debug {
            add_debug_programs(stage, kernel)?
        } else {
            0
        };
        let c = c + c32 + debug_only;
        (c, add_kselftests(stage, kernel)?)
    } else {
        // The unpatched kernel proves the crate's fallback; the syscall
        // tests have nothing to test there.
        (0, 0)
    };
    step(format!(
        "guest suite: {rust} Rust test binaries, {c} C tests, {kself} kselftests"
    ));
    Ok(rust + c + kself)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kselftest_run_as_a_user_goes_through_runas_and_a_skip_fails() {
        let root = kselftest_wrapper("fdmap_test", 0, "");
        assert!(root.contains("\n/libexec/kselftest/fdmap_test >\"$out\" 2>&1\n"));
        let user = kselftest_wrapper("fdmap_test", 65534, "-F root");
        assert!(user.contains("/bin/runas 65534 /libexec/kselftest/fdmap_test -F root >"));
        assert!(user.contains("grep -q '# SKIP'") && user.contains("rc=4"));
        // Every program of a run (and of the -m32 list) is a selftest the
        // series adds to one of the suites it builds.
        let series: String = crate::kernel::series()
            .unwrap()
            .iter()
            .map(|p| fs::read_to_string(p).unwrap())
            .collect();
        let programs = KSELFTEST_RUNS
            .iter()
            .map(|(prog, _, _)| *prog)
            .chain(KSELFTEST_M32.iter().map(|(_, prog)| *prog));
        for prog in programs {
            assert!(
                KSELFTEST_SUITES.iter().any(|suite| series
                    .contains(&format!("+++ b/tools/testing/selftests/{suite}/{prog}.c"))),
                "{prog} is not a selftest the series adds"
            );
        }
    }

    /// Every guest C program and the bench's compile (`-fsyntax-only`,
    /// the guest build's flags) against this host's headers, which lack
    /// the series: the series' uapi comes from crates/pidmap/abi alone.
    #[test]
    fn the_guest_programs_compile_against_the_abi_folder_alone() {
        let root = workspace_root();
        let tests = root.join("guest-tests");
        assert!(
            !Path::new("/usr/include/linux/pidmap.h").exists(),
            "this host's headers have the series: the test would not show the folder is used"
        );
        let mut programs: Vec<(Vec<PathBuf>, Option<PathBuf>)> = c_sources(&tests)
            .into_iter()
            .chain(c_sources(&tests.join("debug")))
            .map(|src| (vec![src], Some(tests.join("include"))))
            .collect();
        assert!(programs.len() > 8, "{programs:?}");
        programs.push((c_sources(&root.join("bench/pidmap-bench")), None));
        programs.push((vec![root.join("bench/forkcost.c")], None));
        programs.push((vec![root.join("bench/record-costs.c")], None));
        for (srcs, include) in programs {
            let mut cmd = Command::new("gcc");
            cmd.arg("-fsyntax-only")
                .args(C_FLAGS.iter().filter(|f| **f != "-static"));
            if let Some(dir) = include {
                cmd.arg("-I").arg(dir);
            }
            let out = cmd.arg("-I").arg(abi::dir()).args(&srcs).output().unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                sources_label(&srcs),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    #[test]
    fn a_directory_is_copied_recursively_with_modes_and_links() {
        let base = std::env::temp_dir().join(format!("xtask-copy-tree-{}", std::process::id()));
        let src = base.join("suite");
        fs::create_dir_all(src.join("sub/deeper")).unwrap();
        fs::write(src.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(src.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(src.join("sub/deeper/data"), "x").unwrap();
        std::os::unix::fs::symlink("sub/deeper/data", src.join("link")).unwrap();
        let dst = base.join("out/suite");
        copy_tree(&src, &dst).unwrap();
        assert_eq!(
            fs::read_to_string(dst.join("sub/deeper/data")).unwrap(),
            "x"
        );
        let mode = fs::metadata(dst.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            fs::read_link(dst.join("link")).unwrap(),
            Path::new("sub/deeper/data")
        );
        fs::remove_dir_all(&base).unwrap();
    }
}
