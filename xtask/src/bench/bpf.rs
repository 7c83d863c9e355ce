//! The BPF side of the "why not a BPF iterator" comparison:
//! building `bench/bpf/task_record.bpf.c` and a static libbpf loader for a
//! given kernel's BTF, and `cargo xtask bpf-host`, which runs the loader on
//! the host.
//!
//! A build is: `bpftool btf dump file BTF format c` (the kernel's
//! `vmlinux.h`: `/sys/kernel/btf/vmlinux` on the host, the guest kernel's
//! `vmlinux` for the guest), `clang -target bpf` (CO-RE), `bpftool gen
//! skeleton`, then `gcc -static` of the loader with `libbpf.a`. The
//! `BPF_PROG_TYPE_SYSCALL` program with the open-coded task iterator is
//! built only when that BTF has `struct bpf_iter_task` (6.7 and later).
//!
//! `cargo xtask bpf-host` (and test-all's stage of the same name) needs
//! root: it loads the iterator (`bpf-tasks check`: the tasks it spawned,
//! listed with /proc's values; with the SYSCALL program too where the
//! kernel has it) and runs the callers of `bpf-tasks privilege` (uid
//! 65534, CAP_BPF alone, CAP_BPF + CAP_PERFMON, a user namespace's root, a
//! hidepid=invisible /proc), which assert what each gets. `--fidelity`
//! adds the field-by-field count against /proc over every task (a report).
//!
//! `cargo xtask bpf-guest` does the same in one boot of the BPF kernel
//! (the series applied, `qemu/bpf.config`), where the privilege callers
//! also assert what `pidmap_info(2)` gives them and the fidelity report
//! has a `pidmap_info` column (over 100 processes of 100 tasks, spawned
//! for it). Never run by CI.

use crate::deps;
use crate::guest;
use crate::guest::qemu;
use crate::kernel;
use crate::kernel::abi;
use crate::kernel::KernelArgs;
use crate::paths::{workspace_root, xtask_dir};
use crate::run::{output, run, run_quiet, step, timed};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The host kernel's BTF.
const HOST_BTF: &str = "/sys/kernel/btf/vmlinux";

/// The BTF type whose presence means the open-coded task iterator (6.7).
const OPEN_CODED_ITER_TYPE: &str = "struct bpf_iter_task {";

#[derive(Args)]
pub struct BpfHostArgs {
    /// Also count, field by field over every task, where the BPF records
    /// differ from /proc's (a report, not a test).
    #[arg(long)]
    pub fidelity: bool,
}

#[derive(Args)]
pub struct BpfGuestArgs {
    #[command(flatten)]
    pub kernel: KernelArgs,
}

/// What a build produced.
pub struct BpfBuild {
    /// The generated headers: `vmlinux.h`, `task_record.skel.h`.
    pub include: PathBuf,
    /// Whether the SYSCALL program (open-coded iterator) was built.
    pub syscall_prog: bool,
}

fn bpf_dir() -> PathBuf {
    workspace_root().join("bench").join("bpf")
}

/// `vmlinux.h` from `btf`, the BPF object and its skeleton, in `out`.
pub fn build_program(btf: &Path, out: &Path) -> Result<BpfBuild> {
    deps::ensure_bpf()?;
    fs::create_dir_all(out)?;
    let vmlinux_h = output(
        Command::new("bpftool")
            .args(["btf", "dump", "file"])
            .arg(btf)
            .args(["format", "c"]),
    )
    .with_context(|| format!("cannot dump the BTF of {}", btf.display()))?;
    let syscall_prog = vmlinux_h.contains(OPEN_CODED_ITER_TYPE);
    fs::write(out.join("vmlinux.h"), &vmlinux_h)?;

    let object = out.join("task_record.bpf.o");
    let mut clang = Command::new("clang");
    clang
        .args([
            "-g",
            "-O2",
            "-Wall",
            "-target",
            "bpf",
            "-D__TARGET_ARCH_x86",
        ])
        .arg("-I")
        .arg(out)
        .arg("-I")
        .arg(bpf_dir())
        .arg("-I")
        .arg(abi::dir());
    if syscall_prog {
        clang.arg("-DTASK_RECORD_SYSCALL_PROG");
    }
    clang
        .arg("-c")
        .arg(bpf_dir().join("task_record.bpf.c"))
        .arg("-o")
        .arg(&object);
    run_quiet(&mut clang).context("cannot compile bench/bpf/task_record.bpf.c")?;
    let skeleton = output(
        Command::new("bpftool")
            .args(["gen", "skeleton"])
            .arg(&object)
            .args(["name", "task_record_skel"]),
    )?;
    fs::write(out.join("task_record.skel.h"), skeleton)?;
    Ok(BpfBuild {
        include: out.to_path_buf(),
        syscall_prog,
    })
}

/// Compiles the C program made of `srcs` static with the skeleton of
/// `build` and libbpf; `headers`: the uapi headers to put first (the guest
/// kernel's), `defines`: more `-D` flags.
pub fn compile_loader(
    build: &BpfBuild,
    srcs: &[PathBuf],
    out: &Path,
    headers: Option<&Path>,
    defines: &[&str],
) -> Result<()> {
    if let Some(parent) = out.parent() {
        fs::create_dir_all(parent)?;
    }
    let mut cc = Command::new("gcc");
    cc.args(["-static", "-O2", "-g", "-Wall", "-Wextra", "-pthread"])
        .arg("-I")
        .arg(&build.include)
        .arg("-I")
        .arg(bpf_dir())
        .arg("-I")
        .arg(abi::dir());
    if let Some(dir) = headers {
        cc.arg("-isystem").arg(dir);
    }
    if build.syscall_prog {
        cc.arg("-DTASK_RECORD_SYSCALL_PROG");
    }
    for define in defines {
        cc.arg(format!("-D{define}"));
    }
    cc.arg("-o")
        .arg(out)
        .args(srcs)
        .args(["-lbpf", "-lelf", "-lz", "-lzstd"]);
    run_quiet(&mut cc).with_context(|| format!("cannot build {}", guest::sources_label(srcs)))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `cargo xtask bpf-host`: build for the host kernel, then load and check.
pub fn run_host(args: &BpfHostArgs) -> Result<()> {
    if !Path::new(HOST_BTF).exists() {
        bail!("the host kernel has no BTF ({HOST_BTF}): BPF CO-RE programs cannot load here");
    }
    let out = xtask_dir().join("bpf-host");
    let build = timed("building bench/bpf for the host kernel's BTF", || {
        build_program(Path::new(HOST_BTF), &out)
    })?;
    let loader = out.join("bpf-tasks");
    timed("building bench/bpf/bpf-tasks.c static with libbpf", || {
        compile_loader(&build, &[bpf_dir().join("bpf-tasks.c")], &loader, None, &[])
    })?;
    if !is_root() {
        bail!(
            "loading a BPF iterator needs root (CAP_BPF + CAP_PERFMON); {} is built, run it as root",
            loader.display()
        );
    }
    let mut check = Command::new(&loader);
    check.arg("check");
    if build.syscall_prog {
        check.arg("--syscall");
    } else {
        step("the host kernel has no open-coded task iterator (6.7+): iter/task only");
    }
    timed(
        "bpf-tasks check: the spawned tasks, BPF against /proc",
        || run(&mut check),
    )?;
    timed("bpf-tasks privilege: callers and what each gets", || {
        run(Command::new(&loader).arg("privilege"))
    })?;
    if args.fidelity {
        run(Command::new(&loader).arg("fidelity"))?;
    }
    Ok(())
}

/// `cargo xtask bpf-guest`: check, privilege and fidelity in one boot of
/// the BPF kernel.
pub fn run_guest(args: &BpfGuestArgs) -> Result<()> {
    let mut kernel_args = args.kernel.clone();
    kernel_args.bpf = true;
    let kernel = kernel::prepare(&kernel_args)?;
    let out = xtask_dir().join("bpf-guest");
    let build = timed("building bench/bpf for the guest kernel's BTF", || {
        build_program(&kernel.build.join("vmlinux"), &out)
    })?;
    if !build.syscall_prog {
        bail!("the BPF kernel's BTF has no open-coded task iterator");
    }
    let loader = out.join("bpf-tasks");
    timed("building bench/bpf/bpf-tasks.c static with libbpf", || {
        compile_loader(
            &build,
            &[bpf_dir().join("bpf-tasks.c")],
            &loader,
            Some(&kernel.headers()),
            &[],
        )
    })?;
    let script = "/add/bpf-tasks check --syscall && /add/bpf-tasks privilege \
                  && /add/bpf-tasks fidelity --spawn 100 100";
    let command = ["/bin/sh", "-c", script].map(String::from);
    let run = qemu::run_in_guest(
        &kernel,
        &kernel_args,
        qemu::GuestClock::Host,
        &loader,
        &command,
        "bpf-guest",
    )?;
    // The program's own lines, without the kernel's (which start with '[').
    for line in run.log.lines().map(|l| l.trim_end_matches('\r')) {
        if !line.starts_with('[') {
            println!("{line}");
        }
    }
    if run.status != 0 {
        bail!(
            "bpf-tasks failed in the guest (status {}); see {}",
            run.status,
            run.log_path.display()
        );
    }
    step(format!(
        "bpf-tasks passed in the guest; log: {}",
        run.log_path.display()
    ));
    Ok(())
}
