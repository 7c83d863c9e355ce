//! `cargo xtask qemu-test`: the guest suite's boots. The kernel's default
//! LSMs (Landlock and Smack) in one boot, then, on the x86_64 kernels
//! with the series, one boot with SELinux and one with AppArmor, which
//! cannot be active beside Smack.

use crate::guest::qemu::{self, GuestClock};
use crate::guest::{self, Mode};
use crate::kernel::{self, KernelArgs};
use anyhow::Result;

/// `cargo xtask qemu-test`: the whole guest suite; exit 0 only if all passed
/// and the kernel log is clean.
pub fn qemu_test(args: &KernelArgs) -> Result<i32> {
    let kernel = kernel::prepare(args)?;
    let label = format!("test-{}", kernel.label());
    let mut expected = 0;
    let outcome = qemu::boot_headless(
        &kernel,
        args,
        GuestClock::Host,
        &Mode::Test,
        &label,
        |stage| {
            expected = guest::test_payload(stage, &kernel)?;
            Ok(())
        },
    )?;
    let verdict = qemu::report_suite(&outcome, expected);
    if !crate::guest::selinux::boots_with(&kernel) {
        return Ok(verdict);
    }
    // Smack, SELinux and AppArmor cannot be active at once: SELinux and
    // AppArmor get a boot each, with the same kernel and their policies.
    let selinux = crate::guest::selinux::test_boot(&kernel, args)?;
    let apparmor = crate::guest::selinux::apparmor_test_boot(&kernel, args)?;
    Ok(i32::from(verdict != 0 || selinux != 0 || apparmor != 0))
}
