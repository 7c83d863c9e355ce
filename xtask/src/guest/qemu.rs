//! Booting the guest under QEMU and judging what came back.

use crate::arch::Arch;
use crate::guest::console::{self, LineMender};
use crate::guest::{self, Mode, Stage};
use crate::kernel::KernelArgs;
use crate::kernel::{self, Kernel};
use crate::paths::xtask_dir;
use crate::run::step;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct QemuTestArgs {
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Only the SELinux boot (lsm=landlock,selinux, guest-tests/lsm.c under
    /// a two-domain policy), not the whole suite. x86_64 kernels with the
    /// series only.
    #[arg(long)]
    pub selinux_only: bool,
}

#[derive(Args)]
pub struct QemuRunArgs {
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Copy this host file, or directory (recursively), into the guest as
    /// /add/NAME. Repeatable.
    #[arg(long = "add", value_name = "HOST_PATH")]
    pub add: Vec<PathBuf>,
    /// Run the guest on the instruction clock (TCG `-icount shift=0`, one
    /// vCPU): its clock counts one ns per instruction and a boot repeats
    /// exactly, as for `cargo xtask bench --instructions`.
    #[arg(long)]
    pub instructions: bool,
    /// Appended to the kernel command line, for example `lsm=landlock` to
    /// boot without Smack.
    #[arg(long, value_name = "PARAMS", default_value = "")]
    pub cmdline: String,
    /// The command and its arguments, run by busybox sh in the guest.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// Kernel log lines that mean the kernel is unhappy, whatever the tests say.
/// Lockdep and might_sleep reports do not panic by themselves.
const SPLATS: &[&str] = &[
    "BUG:",
    "WARNING:",
    "KASAN",
    "possible circular locking",
    "suspicious RCU usage",
    "Call Trace",
    "Kernel panic",
    "Oops:",
];

/// KVM only where it really works: /dev/kvm can exist without nested
/// virtualisation, and then `-accel kvm` hangs, so look for vmx/svm too.
/// An arm64 guest on this x86_64 host is always TCG.
fn accelerator(arch: Arch) -> (&'static str, &'static str) {
    if arch == Arch::Arm64 {
        return ("tcg", TCG_CPU_ARM64);
    }
    match std::env::var("PIDMAP_QEMU_ACCEL").as_deref() {
        Ok("tcg") => return ("tcg", "max"),
        Ok("kvm") => return ("kvm", "host"),
        _ => {}
    }
    let kvm_usable = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    let cpu_has_vt = fs::read_to_string("/proc/cpuinfo")
        .map(|c| {
            c.lines()
                .filter(|l| l.starts_with("flags"))
                .any(|l| l.split_whitespace().any(|f| f == "vmx" || f == "svm"))
        })
        .unwrap_or(false);
    if kvm_usable && cpu_has_vt {
        ("kvm", "host")
    } else {
        ("tcg", "max")
    }
}

/// Every feature TCG emulates, but with QEMU's own pointer-authentication
/// algorithm instead of the architected QARMA, which costs TCG several
/// times more per signed return address and tests nothing of ours.
const TCG_CPU_ARM64: &str = "max,pauth-impdef=on";

/// What the guest's clock counts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum GuestClock {
    /// Real time, on KVM where it works, else TCG (multi-threaded: one host
    /// thread per vCPU).
    Host,
    /// Instructions: TCG with `-icount shift=0` ticks the guest clock one
    /// nanosecond per instruction, so a guest "ns" is an instruction. With
    /// one vCPU, KASLR and mmap randomisation off, and the RTC on the same
    /// clock from a fixed date, a boot is deterministic: the same kernel and
    /// payload give the same counts every time, whatever the host is doing.
    /// (With the RTC on host time, boots under host load differed by up to
    /// 1 %.) With more than one vCPU, QEMU runs them round-robin on one
    /// host thread (icount rules out multi-threaded TCG) and the clock
    /// counts the instructions of all of them.
    Instructions,
}

impl GuestClock {
    /// The vCPUs of a boot on this clock unless the caller asks for others
    /// ([`KernelArgs::cpus`]): two timed; one counting instructions.
    pub fn default_cpus(self) -> u32 {
        match self {
            GuestClock::Host => 2,
            GuestClock::Instructions => 1,
        }
    }
}

/// How [`Boot::command`] sets up a boot on `clock` with `cpus` vCPUs, in
/// the words result headers use.
pub fn clock_setup(clock: GuestClock, cpus: u32) -> String {
    let vcpus = if cpus == 1 {
        "one vCPU".to_string()
    } else {
        format!("{cpus} vCPUs")
    };
    match clock {
        GuestClock::Host => format!("host clock, {vcpus}"),
        GuestClock::Instructions => format!("TCG -icount shift=0, {vcpus}, nokaslr norandmaps"),
    }
}

struct Boot<'a> {
    kernel: &'a Kernel,
    initramfs: PathBuf,
    memory: u32,
    interactive: bool,
    clock: GuestClock,
    cpus: u32,
    /// Appended to the kernel command line (for example `lsm=`).
    cmdline: &'a str,
}

const KERNEL_CMDLINE: &str = "panic=-1 oops=panic panic_on_warn=1 \
     softlockup_panic=1 hung_task_panic=1 printk.devkmsg=on";

impl Boot<'_> {
    fn command(&self, status_file: &Path) -> Command {
        let arch = self.kernel.arch;
        let mut cmd = Command::new(arch.qemu());
        cmd.args([
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
        ]);
        if arch == Arch::Arm64 {
            cmd.args(["-M", "virt"]);
        }
        let mut cmdline = format!("console={} {KERNEL_CMDLINE}", arch.console());
        if !self.cmdline.is_empty() {
            cmdline.push(' ');
            cmdline.push_str(self.cmdline);
        }
        match self.clock {
            GuestClock::Host => {
                let (accel, cpu) = accelerator(arch);
                cmd.args(["-accel", accel, "-cpu", cpu]);
            }
            GuestClock::Instructions => {
                // The RTC too runs on the instruction clock, from a fixed
                // date, so no host time leaks into the guest.
                let cpu = match arch {
                    Arch::X86_64 => "max",
                    Arch::Arm64 => TCG_CPU_ARM64,
                };
                cmd.args(["-accel", "tcg", "-cpu", cpu])
                    .args(["-icount", "shift=0,sleep=off"])
                    .args(["-rtc", "base=2026-01-01T00:00:00,clock=vm"]);
                cmdline.push_str(" nokaslr norandmaps");
            }
        }
        cmd.arg("-smp")
            .arg(self.cpus.to_string())
            .arg("-m")
            .arg(self.memory.to_string())
            .arg("-kernel")
            .arg(self.kernel.image())
            .arg("-initrd")
            .arg(&self.initramfs)
            .arg("-append")
            .arg(cmdline)
            .args([
                "-serial",
                if self.interactive {
                    "mon:stdio"
                } else {
                    "stdio"
                },
            ]);
        match arch {
            Arch::X86_64 => {
                // Status on the second UART; the verdict through isa-debug-exit.
                cmd.args(["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"])
                    .arg("-serial")
                    .arg(format!("file:{}", status_file.display()));
            }
            Arch::Arm64 => {
                // virt has one non-secure UART: the status goes through a
                // virtio console (hvc0), the verdict through semihosting's
                // SYS_EXIT, which guest-exit may call from user space.
                cmd.args(["-device", "virtio-serial-device"])
                    .arg("-chardev")
                    .arg(format!("file,id=status,path={}", status_file.display()))
                    .args(["-device", "virtconsole,chardev=status"])
                    .args([
                        "-semihosting-config",
                        "enable=on,target=native,userspace=on",
                    ]);
            }
        }
        cmd
    }
}

/// How a boot ended.
pub struct Outcome {
    /// The exit status the guest wrote to its status port, if it got that far.
    pub guest_status: Option<i32>,
    /// QEMU's own exit status: 1 + 2 * isa-debug-exit value.
    pub debug_exit: Option<u8>,
    pub splats: Vec<String>,
    pub passed: usize,
    pub failed: Vec<String>,
    pub log: PathBuf,
}

/// Boots, streams the console with progress, and enforces the timeout.
fn boot(boot: &Boot, timeout: Duration, label: &str) -> Result<Outcome> {
    let logs = xtask_dir().join("logs");
    fs::create_dir_all(&logs)?;
    let log_path = logs.join(format!("{label}.log"));
    let status_file = logs.join(format!("{label}.status"));
    let _ = fs::remove_file(&status_file);
    let mut log = fs::File::create(&log_path)?;

    let accel = match boot.clock {
        GuestClock::Host => accelerator(boot.kernel.arch).0,
        GuestClock::Instructions => "tcg, icount",
    };
    step(format!(
        "booting the {} kernel under QEMU ({accel}), timeout {} s, log {}",
        boot.kernel.describe(),
        timeout.as_secs(),
        log_path.display()
    ));
    let mut child = boot
        .command(&status_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", boot.kernel.arch.qemu()))?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut mender = LineMender::default();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf).trim_end().replace('\r', "");
                    if mender.push(&line).into_iter().any(|l| tx.send(l).is_err()) {
                        return;
                    }
                }
            }
        }
        if let Some(line) = mender.finish() {
            let _ = tx.send(line);
        }
    });

    let start = Instant::now();
    let deadline = start + timeout;
    let mut outcome = Outcome {
        guest_status: None,
        debug_exit: None,
        splats: Vec::new(),
        passed: 0,
        failed: Vec::new(),
        log: log_path.clone(),
    };
    let mut last_line = String::new();
    loop {
        let now = Instant::now();
        if now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "the guest did not finish within {} s (hung?); last line: {last_line:?}; log: {}",
                timeout.as_secs(),
                log_path.display()
            );
        }
        match rx.recv_timeout(deadline - now) {
            Ok(line) => {
                writeln!(log, "{line}")?;
                observe(&line, &mut outcome, start);
                last_line = line;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let status = child.wait()?;
    outcome.debug_exit = status.code().and_then(|c| u8::try_from(c).ok());
    outcome.guest_status = fs::read_to_string(&status_file)
        .ok()
        .and_then(|s| s.trim().parse().ok());
    Ok(outcome)
}

/// Echoes one console line and updates the running verdict.
fn observe(line: &str, outcome: &mut Outcome, start: Instant) {
    println!("{line}");
    if SPLATS.iter().any(|s| line.contains(s)) {
        outcome.splats.push(line.to_string());
    }
    if let Some(rest) = line.strip_prefix("PIDMAP-TEST-RESULT ") {
        let mut words = rest.split_whitespace();
        let name = words.next().unwrap_or("?").to_string();
        let verdict = words.next().unwrap_or("?");
        if verdict == "pass" {
            outcome.passed += 1;
        } else {
            outcome.failed.push(name.clone());
        }
        step(format!(
            "[{:>4} s] {name}: {verdict} ({} passed, {} failed so far)",
            start.elapsed().as_secs(),
            outcome.passed,
            outcome.failed.len()
        ));
    }
}

fn initramfs_for(
    kernel: &Kernel,
    mode: &Mode,
    label: &str,
    extra: impl FnOnce(&Stage) -> Result<()>,
) -> Result<PathBuf> {
    let stage = Stage::new(label)?;
    guest::base(&stage, kernel, mode)?;
    extra(&stage)?;
    stage.pack()
}

/// Packs the initramfs for `mode` (plus `extra`) and boots it headless.
pub fn boot_headless(
    kernel: &Kernel,
    args: &KernelArgs,
    clock: GuestClock,
    mode: &Mode,
    label: &str,
    extra: impl FnOnce(&Stage) -> Result<()>,
) -> Result<Outcome> {
    boot_headless_with(kernel, args, clock, mode, label, "", extra)
}

/// [`boot_headless`] with `cmdline` appended to the kernel command line.
fn boot_headless_with(
    kernel: &Kernel,
    args: &KernelArgs,
    clock: GuestClock,
    mode: &Mode,
    label: &str,
    cmdline: &str,
    extra: impl FnOnce(&Stage) -> Result<()>,
) -> Result<Outcome> {
    let initramfs = initramfs_for(kernel, mode, label, extra)?;
    boot(
        &Boot {
            kernel,
            initramfs,
            memory: args.memory,
            interactive: false,
            clock,
            cpus: args.cpus.unwrap_or(clock.default_cpus()),
            cmdline,
        },
        Duration::from_secs(args.timeout),
        label,
    )
}

/// Boots `kernel` in test mode with `cmdline` appended and the payload
/// `extra` lays down; judged as a suite of `expected` tests.
pub fn boot_suite_with_cmdline(
    kernel: &Kernel,
    args: &KernelArgs,
    label: &str,
    cmdline: &str,
    expected: usize,
    extra: impl FnOnce(&Stage) -> Result<()>,
) -> Result<i32> {
    let outcome = boot_headless_with(
        kernel,
        args,
        GuestClock::Host,
        &Mode::Test,
        label,
        cmdline,
        extra,
    )?;
    Ok(report_suite(&outcome, expected))
}

/// Boots `kernel` in test mode with the payload `extra` lays down, for
/// stages that judge the per-test results themselves.
pub fn boot_tests(
    kernel: &Kernel,
    args: &KernelArgs,
    label: &str,
    extra: impl FnOnce(&Stage) -> Result<()>,
) -> Result<Outcome> {
    boot_headless(kernel, args, GuestClock::Host, &Mode::Test, label, extra)
}

/// Whether guest-exit ended QEMU (status 0 or 1), rather than a panic, a
/// crash or a missing exit device.
pub fn guest_reported(outcome: &Outcome) -> bool {
    matches!(
        (outcome.debug_exit, outcome.guest_status),
        (Some(1), Some(0)) | (Some(3), Some(_))
    )
}

/// Prints the verdict and the one summary line; returns the exit code.
pub fn report_suite(outcome: &Outcome, expected: usize) -> i32 {
    let mut passed = outcome.passed;
    let mut failed = outcome.failed.len();
    // The kernel log is checked like a test: a splat fails the run.
    if outcome.splats.is_empty() {
        passed += 1;
    } else {
        failed += 1;
        step(format!(
            "kernel log has {} splat line(s):",
            outcome.splats.len()
        ));
        for line in &outcome.splats {
            eprintln!("    {line}");
        }
    }
    let reported = guest_reported(outcome);
    if !reported {
        failed += 1;
        step(format!(
            "the guest did not report through its exit device (qemu exit {:?}, status {:?}): \
             kernel panic or crash; see {}",
            outcome.debug_exit,
            outcome.guest_status,
            outcome.log.display()
        ));
    }
    let seen = outcome.passed + outcome.failed.len();
    if reported && seen == 0 {
        failed += 1;
        step("the guest ran no test");
    } else if reported && seen < expected {
        // A status of 0 says every test passed, but a result that never
        // reached the console cannot be checked here: fail rather than trust.
        failed += 1;
        step(format!(
            "only {seen} of {expected} test results reached the console (cut short?); see {}",
            outcome.log.display()
        ));
    }
    let log = if outcome.failed.is_empty() {
        String::new()
    } else {
        fs::read_to_string(&outcome.log).unwrap_or_default()
    };
    for name in &outcome.failed {
        step(format!("FAILED: {name}"));
        // CI shows the end of the output only: repeat the test's own lines.
        for line in failed_test_lines(&log, name, FAILED_TEST_LINES) {
            eprintln!("    | {line}");
        }
    }
    println!("{passed} passed, {failed} failed");
    i32::from(failed != 0)
}

/// How many lines of a failed test's output the summary repeats.
const FAILED_TEST_LINES: usize = 40;

/// The last `max` console lines test `name` printed, kernel messages
/// (a timestamp at column 0, as `LineMender` leaves them) excluded.
fn failed_test_lines<'a>(log: &'a str, name: &str, max: usize) -> Vec<&'a str> {
    let start = format!("PIDMAP-TEST-START {name}");
    let mut lines = Vec::new();
    let mut inside = false;
    for line in log.lines().map(|l| l.trim_end_matches('\r')) {
        if line == start {
            inside = true;
            lines.clear();
        } else if inside && line.starts_with("PIDMAP-TEST-RESULT ") {
            inside = false;
        } else if inside && !console::starts_with_timestamp(line) {
            lines.push(line);
        }
    }
    let skip = lines.len().saturating_sub(max);
    lines.split_off(skip)
}

/// `cargo xtask qemu-run`: one command in the guest, its exit status is ours.
pub fn qemu_run(run: &QemuRunArgs) -> Result<i32> {
    let args = &run.kernel;
    let clock = if run.instructions {
        GuestClock::Instructions
    } else {
        GuestClock::Host
    };
    let kernel = kernel::prepare(args)?;
    let label = format!("run-{}", kernel.label());
    let mode = Mode::Run(guest::shell_quote(&run.command));
    let outcome = boot_headless_with(&kernel, args, clock, &mode, &label, &run.cmdline, |stage| {
        guest::add_cli(stage, kernel.arch)?;
        guest::add_user_files(stage, &run.add)
    })?;
    guest_exit_status(&outcome)
}

/// The command's exit status, or an error if the guest died first or its
/// kernel log has a splat.
pub fn guest_exit_status(outcome: &Outcome) -> Result<i32> {
    let Some(status) = outcome.guest_status else {
        bail!(
            "the guest died before reporting a status (qemu exit {:?}); see {}",
            outcome.debug_exit,
            outcome.log.display()
        );
    };
    if !outcome.splats.is_empty() {
        for line in &outcome.splats {
            eprintln!("    {line}");
        }
        bail!("the kernel log has {} splat line(s)", outcome.splats.len());
    }
    Ok(status)
}

/// What one program left after a run in the guest.
pub struct GuestRun {
    /// Its exit status.
    pub status: i32,
    /// The console log.
    pub log: String,
    /// Where the console log is, for messages.
    pub log_path: PathBuf,
}

/// Boots `kernel` (already prepared: the callers need it before the boot
/// for its headers) with `program` in the payload, for other xtask commands
/// (the benchmarks). `command` runs under busybox sh in the guest. An error
/// if the guest died before the command's status or its kernel log has a
/// splat ([`guest_exit_status`]).
pub fn run_in_guest(
    kernel: &Kernel,
    args: &KernelArgs,
    clock: GuestClock,
    program: &Path,
    command: &[String],
    label: &str,
) -> Result<GuestRun> {
    let mode = Mode::Run(guest::shell_quote(command));
    let outcome = boot_headless(kernel, args, clock, &mode, label, |stage| {
        guest::add_user_files(stage, &[program.to_path_buf()])
    })?;
    let status = guest_exit_status(&outcome)?;
    let log = fs::read_to_string(&outcome.log)?;
    Ok(GuestRun {
        status,
        log,
        log_path: outcome.log,
    })
}

/// `cargo xtask qemu-shell`: QEMU owns the terminal until the guest powers off.
pub fn qemu_shell(args: &KernelArgs) -> Result<()> {
    let kernel = kernel::prepare(args)?;
    let label = format!("shell-{}", kernel.label());
    let initramfs = initramfs_for(&kernel, &Mode::Shell, &label, |stage| {
        guest::add_cli(stage, kernel.arch)
    })?;
    let boot = Boot {
        kernel: &kernel,
        initramfs,
        memory: args.memory,
        interactive: true,
        clock: GuestClock::Host,
        cpus: args.cpus.unwrap_or(GuestClock::Host.default_cpus()),
        cmdline: "",
    };
    let status_file = xtask_dir().join("logs").join(format!("{label}.status"));
    fs::create_dir_all(xtask_dir().join("logs"))?;
    step("booting an interactive guest; leave with `exit` or Ctrl-A X");
    boot.command(&status_file)
        .status()
        .with_context(|| format!("cannot start {}", kernel.arch.qemu()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_setup_names_the_vcpus() {
        assert_eq!(
            clock_setup(GuestClock::Instructions, 1),
            "TCG -icount shift=0, one vCPU, nokaslr norandmaps"
        );
        assert_eq!(
            clock_setup(GuestClock::Instructions, 2),
            "TCG -icount shift=0, 2 vCPUs, nokaslr norandmaps"
        );
        assert_eq!(clock_setup(GuestClock::Host, 2), "host clock, 2 vCPUs");
        assert_eq!(GuestClock::Instructions.default_cpus(), 1);
        assert_eq!(GuestClock::Host.default_cpus(), 2);
    }

    fn clean_exit(passed: usize) -> Outcome {
        Outcome {
            guest_status: Some(0),
            debug_exit: Some(1),
            splats: Vec::new(),
            passed,
            failed: Vec::new(),
            log: PathBuf::from("test.log"),
        }
    }

    #[test]
    fn a_failed_test_repeats_its_own_last_lines() {
        let log = "PIDMAP-TEST-START c/a\r\none\r\nPIDMAP-TEST-RESULT c/a pass rc=0\n\
                   PIDMAP-TEST-START c/b\nfirst\n[   1.0] kernel line\nsecond\n[case 3] third\n\
                   PIDMAP-TEST-RESULT c/b FAIL rc=1\nafter\n";
        assert_eq!(
            failed_test_lines(log, "c/b", 2),
            ["second", "[case 3] third"]
        );
        assert_eq!(failed_test_lines(log, "c/a", 5), ["one"]);
        assert!(failed_test_lines(log, "c/none", 5).is_empty());
    }

    #[test]
    fn every_result_seen_passes() {
        assert_eq!(report_suite(&clean_exit(4), 4), 0);
    }

    #[test]
    fn a_result_lost_from_the_console_fails_despite_status_0() {
        assert_eq!(report_suite(&clean_exit(3), 4), 1);
    }

    #[test]
    fn a_splat_fails_a_clean_run() {
        let mut outcome = clean_exit(4);
        outcome.splats.push("WARNING: CPU: 0 PID: 1".to_string());
        assert_eq!(report_suite(&outcome, 4), 1);
    }
}
