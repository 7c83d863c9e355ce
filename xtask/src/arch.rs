//! The guest architectures: how to build a kernel and programs for each, and
//! which QEMU runs it.
//!
//! x86_64 is the full suite. arm64 is cross-built with Debian's
//! `gcc-aarch64-linux-gnu` and runs the C tests only: no Rust target for
//! aarch64 can be installed here, so the crate's tests stay x86_64-only.

use clap::ValueEnum;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Arch {
    /// The host's architecture; the whole suite, Rust tests included.
    #[default]
    #[value(name = "x86_64")]
    X86_64,
    /// Cross-built, booted with qemu-system-aarch64 -M virt; C tests only.
    Arm64,
}

impl Arch {
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Arm64 => "arm64",
        }
    }

    /// `ARCH=` and, when cross-building, `CROSS_COMPILE=` for kbuild and
    /// the kselftests' make.
    pub fn make_vars(self) -> &'static [&'static str] {
        match self {
            Arch::X86_64 => &["ARCH=x86_64"],
            Arch::Arm64 => &["ARCH=arm64", "CROSS_COMPILE=aarch64-linux-gnu-"],
        }
    }

    /// The make target that builds the bootable image, and where it lands.
    pub fn image_target(self) -> &'static str {
        match self {
            Arch::X86_64 => "bzImage",
            Arch::Arm64 => "Image",
        }
    }

    pub fn image_path(self) -> &'static str {
        match self {
            Arch::X86_64 => "arch/x86/boot/bzImage",
            Arch::Arm64 => "arch/arm64/boot/Image",
        }
    }

    /// The config fragment merged after `base.config`.
    pub fn fragment(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64.config",
            Arch::Arm64 => "arm64.config",
        }
    }

    /// The C compiler for static guest programs.
    pub fn cc(self) -> &'static str {
        match self {
            Arch::X86_64 => "gcc",
            Arch::Arm64 => "aarch64-linux-gnu-gcc",
        }
    }

    pub fn qemu(self) -> &'static str {
        match self {
            Arch::X86_64 => "qemu-system-x86_64",
            Arch::Arm64 => "qemu-system-aarch64",
        }
    }

    /// Whether the crate's Rust tests can be built for this guest.
    pub fn runs_rust(self) -> bool {
        self == Arch::X86_64
    }

    /// The kernel's serial console device.
    pub fn console(self) -> &'static str {
        match self {
            Arch::X86_64 => "ttyS0",
            Arch::Arm64 => "ttyAMA0",
        }
    }

    /// The guest device that carries the exact exit status to a host file.
    pub fn status_device(self) -> &'static str {
        match self {
            Arch::X86_64 => "/dev/ttyS1",
            Arch::Arm64 => "/dev/hvc0",
        }
    }
}
