//! `cargo xtask`: the project's build-and-boot harness.
//!
//! It takes a fresh Debian machine from nothing to "patched 7.3 kernel
//! booted under QEMU, our tests ran inside it, pass/fail known" in one
//! command. Every subcommand lives in its own module; this file only parses
//! the command line and dispatches.

mod arch;
mod bench;
mod deps;
mod docs;
mod guest;
mod kernel;
mod modgraph;
mod paths;
mod run;
mod suites;

use bench::{bpf, forkcost};
use guest::{qemu, selinux};
use kernel::{abi, patches, radix};
use suites::{ci, clients, suite, upstream};

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "pidmap build, boot and test harness")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the patched kernel and the guest tests, boot under QEMU, run the suite.
    /// `--arch arm64` runs the C tests only (no Rust target for aarch64 here).
    QemuTest(qemu::QemuTestArgs),
    /// Boot the kernel and run one command in the guest; exits with its status.
    QemuRun(qemu::QemuRunArgs),
    /// Boot the kernel and give an interactive busybox shell on the console.
    QemuShell(kernel::KernelArgs),
    /// Work on the kernel patch series.
    Patches {
        #[command(subcommand)]
        command: patches::PatchesCommand,
    },
    /// Run the guest benchmarks side by side in one boot and print the table.
    Bench(bench::BenchArgs),
    /// What the series costs fork+exit and pthread_create+join, patched vs unpatched.
    Forkcost(forkcost::ForkcostArgs),
    /// Upstream's proc, pidfd, clone3 and pid_namespace selftests on the
    /// unpatched and the patched kernel; fails on any result that differs.
    UpstreamSelftests(upstream::UpstreamArgs),
    /// The kernel's userspace IDR/XArray suite (tools/testing/radix-tree,
    /// SHIFT=6) on the host, for the patched tree.
    RadixTree(radix::RadixArgs),
    /// Build bench/bpf (iter/task and an open-coded task iterator, CO-RE,
    /// static libbpf loader) for the host kernel, load it as root and check
    /// its records and its privilege rules against /proc.
    BpfHost(bpf::BpfHostArgs),
    /// The same in one boot of the BPF kernel (qemu/bpf.config), with
    /// pidmap_info(2) beside the BPF programs for each caller. Not in CI.
    BpfGuest(bpf::BpfGuestArgs),
    /// procps-ng's ps, top, pgrep and pidof, and htop, on pidmap: fetch the
    /// upstream tarballs, apply clients/procps/ and clients/htop/, build
    /// static; with --host-test, --guest-test, --bench (--only PROGRAM):
    /// the identity tests and the measurements.
    Clients(clients::ClientsArgs),
    /// Write the series' uapi headers and syscall-table lines into
    /// crates/pidmap/abi, the one copy the crate, the guest tests and the
    /// bench build against; `--check` only compares.
    Abi(abi::AbiArgs),
    /// Everything CI runs: fmt, clippy, cargo test, and the QEMU suites.
    TestAll(ci::TestAllArgs),
    /// Generate the CLI's man page and shell completions into target/dist.
    Docs,
    /// Print the pidmap library's module graph and its cycles; fails on a
    /// cycle (the modules must form a DAG).
    ModuleGraph {
        /// The `src` directory of another crate (or of an older tree).
        #[arg(long, value_name = "DIR")]
        src: Option<PathBuf>,
    },
}

fn main() {
    let cli = Cli::parse();
    let result: Result<i32> = match cli.command {
        Command::QemuTest(args) if args.selinux_only => selinux::test_only(&args.kernel),
        Command::QemuTest(args) => suite::qemu_test(&args.kernel),
        Command::QemuRun(args) => qemu::qemu_run(&args),
        Command::QemuShell(args) => qemu::qemu_shell(&args).map(|()| 0),
        Command::Patches { command } => patches::run(command).map(|()| 0),
        Command::Bench(args) => bench::run(&args).map(|()| 0),
        Command::Forkcost(args) => forkcost::run(&args).map(|()| 0),
        Command::UpstreamSelftests(args) => upstream::run(&args).map(|()| 0),
        Command::RadixTree(args) => radix::run(&args).map(|()| 0),
        Command::BpfHost(args) => bpf::run_host(&args).map(|()| 0),
        Command::BpfGuest(args) => bpf::run_guest(&args).map(|()| 0),
        Command::Clients(args) => clients::run_clients(&args).map(|()| 0),
        Command::Abi(args) => abi::run(&args).map(|()| 0),
        Command::TestAll(args) => ci::test_all(&args).map(|()| 0),
        Command::Docs => docs::generate().map(|()| 0),
        Command::ModuleGraph { src } => modgraph::run(src.as_deref()).map(|()| 0),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            std::process::exit(1);
        }
    }
}
