//! SELinux and AppArmor in the guest: `qemu-test` boots the patched and
//! the debug kernel a second time with `lsm=landlock,selinux` and a third
//! time with `lsm=landlock,apparmor,tomoyo` (Smack, SELinux and AppArmor
//! exclude each other in 7.3; TOMOYO stacks with them, see
//! [`super::tomoyo`]) and runs guest-tests/lsm.c there in its SELinux,
//! AppArmor and TOMOYO modes.
//!
//! The policy is a minimal one made for the kernel it runs on: the kernel's
//! own `scripts/selinux/mdp` writes a policy with every class and
//! permission of that kernel and one domain, `base_t`, that may do
//! everything; we add a second domain, `secret_t`, and compile it with
//! Debian's `checkpolicy`. `base_t` may do everything to `secret_t` except
//! read its files and search, read or open its directories: exactly what
//! reading `/proc/PID/*` of a `secret_t` task needs, since procfs labels a
//! task's directory with the task's own context.

use crate::arch::Arch;
use crate::guest::{self, Stage};
use crate::kernel::Kernel;
use crate::kernel::KernelArgs;
use crate::paths::{workspace_root, xtask_dir};
use crate::run::{run_quiet, step};
use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the guest finds the compiled policy (guest-tests/lsm.c loads it).
const POLICY_IN_GUEST: &str = "etc/pidmap-selinux.policy";

/// SELinux stacked with Landlock, as 7.3 allows; no Smack in this boot.
const CMDLINE: &str = "lsm=landlock,selinux";

/// Whether `qemu-test` gives `kernel` its SELinux boot: the x86_64 kernels
/// with the series (the arm64 guest is there for the ABI and the C tests).
pub fn boots_with(kernel: &Kernel) -> bool {
    kernel.arch == Arch::X86_64 && kernel.flavor.has_series()
}

/// `cargo xtask qemu-test --selinux-only`: the SELinux and the AppArmor and
/// TOMOYO boots alone.
pub fn test_only(args: &KernelArgs) -> Result<i32> {
    let kernel = crate::kernel::prepare(args)?;
    if !boots_with(&kernel) {
        bail!("the SELinux and AppArmor boots are for the x86_64 kernels with the series");
    }
    let selinux = test_boot(&kernel, args)?;
    let apparmor = apparmor_test_boot(&kernel, args)?;
    Ok(i32::from(selinux != 0 || apparmor != 0))
}

/// Boots `kernel` with SELinux and runs the LSM test under the policy;
/// returns the suite's exit code.
pub fn test_boot(kernel: &Kernel, args: &KernelArgs) -> Result<i32> {
    let policy = build_policy(kernel)?;
    let label = format!("selinux-{}", kernel.label());
    step(format!(
        "SELinux boot ({CMDLINE}): guest-tests/lsm.c under a two-domain policy"
    ));
    lsm_boot(
        kernel,
        args,
        &label,
        CMDLINE,
        "selinux",
        (&policy, POLICY_IN_GUEST),
    )
}

/// Boots `kernel` with `cmdline` (an `lsm=` list), the compiled `policy`
/// at its path in the guest, and guest-tests/lsm.c told which LSM
/// enforces (`PIDMAP_LSM`); returns the suite's exit code.
fn lsm_boot(
    kernel: &Kernel,
    args: &KernelArgs,
    label: &str,
    cmdline: &str,
    lsm: &str,
    (policy, policy_in_guest): (&Path, &str),
) -> Result<i32> {
    crate::guest::qemu::boot_suite_with_cmdline(kernel, args, label, cmdline, 1, |stage: &Stage| {
        stage.add_file(policy, policy_in_guest)?;
        stage.set_env("PIDMAP_LSM", lsm)?;
        let tests = workspace_root().join("guest-tests");
        guest::compile_c(
            kernel.arch,
            &tests.join("lsm.c"),
            &stage.path("tests/c/lsm"),
            Some(&tests.join("include")),
            &kernel.headers(),
        )
    })
}

/// Writes the policy for `kernel` with mdp and compiles it with checkpolicy.
fn build_policy(kernel: &Kernel) -> Result<PathBuf> {
    crate::deps::ensure_selinux()?;
    let mdp = kernel.build.join("scripts/selinux/mdp/mdp");
    if !mdp.is_file() {
        bail!(
            "{} is missing: the kernel is built without CONFIG_SECURITY_SELINUX",
            mdp.display()
        );
    }
    let dir = xtask_dir().join("selinux").join(kernel.label());
    fs::create_dir_all(&dir)?;
    let generated = dir.join("mdp.conf");
    run_quiet(
        Command::new(&mdp)
            .arg(&generated)
            .arg(dir.join("file_contexts")),
    )
    .context("scripts/selinux/mdp failed")?;
    let mut conf = with_secret_domain(&fs::read_to_string(&generated)?)?;
    let source = dir.join("policy.conf");
    let binary = dir.join("policy.bin");
    // mdp lists every policy capability the kernel knows; Debian's
    // checkpolicy may be older and reject the newest. None of them matters
    // to a policy of two domains, so an unknown one is left out.
    for _ in 0..64 {
        fs::write(&source, &conf)?;
        let out = Command::new("checkpolicy")
            .arg("-o")
            .arg(&binary)
            .arg(&source)
            .output()
            .context("cannot run checkpolicy (Debian package checkpolicy)")?;
        if out.status.success() {
            return Ok(binary);
        }
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let Some(cap) = unknown_capability(&text) else {
            bail!("checkpolicy failed on {}:\n{text}", source.display());
        };
        step(format!(
            "checkpolicy does not know policy capability {cap}: left out"
        ));
        conf = without_capability(&conf, &cap);
    }
    bail!("checkpolicy kept rejecting policy capabilities")
}

/// Adds `secret_t` to mdp's policy: it may do everything, and `base_t` may
/// do everything to it but read its files and search, read or open its
/// directories.
fn with_secret_domain(conf: &str) -> Result<String> {
    const TYPE: &str = "type base_t;\n";
    const ROLE: &str = "role base_r types { base_t };\n";
    if !conf.contains(TYPE) || !conf.contains(ROLE) {
        bail!("mdp's policy has no `{}` or `{}`", TYPE.trim(), ROLE.trim());
    }
    let classes: Vec<&str> = conf
        .lines()
        .filter_map(|line| line.strip_prefix("class "))
        .map(str::trim)
        .filter(|name| !name.is_empty() && !name.contains(char::is_whitespace))
        .collect();
    for needed in ["file", "dir", "process"] {
        if !classes.contains(&needed) {
            bail!("mdp's policy declares no class {needed}");
        }
    }
    let mut rules = String::from("role base_r types { base_t secret_t };\n");
    for class in &classes {
        rules.push_str(&format!(
            "allow secret_t {{ base_t secret_t }}:{class} *;\n"
        ));
        let to_secret = match *class {
            "file" => "~{ read open }",
            "dir" => "~{ search read open }",
            _ => "*",
        };
        rules.push_str(&format!("allow base_t secret_t:{class} {to_secret};\n"));
    }
    Ok(conf
        .replacen(TYPE, &format!("{TYPE}type secret_t;\n"), 1)
        .replacen(ROLE, &rules, 1))
}

/// The capability checkpolicy names in "invalid policy capability name X".
fn unknown_capability(output: &str) -> Option<String> {
    let rest = output.split("invalid policy capability name ").nth(1)?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

fn without_capability(conf: &str, cap: &str) -> String {
    let line = format!("policycap {cap};");
    conf.lines()
        .filter(|l| l.trim() != line)
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Where the guest finds the compiled AppArmor policy (guest-tests/lsm.c
/// loads it through securityfs).
const APPARMOR_POLICY_IN_GUEST: &str = "etc/pidmap-apparmor.policy";

/// The profile guest-tests/lsm.c's reader changes to: everything allowed but
/// opening the stat file, the fd and task directories and the children file
/// of a task whose id is even, by /proc/PID/... or /proc/PID/task/TID/...,
/// so that every call must tell one task from its neighbour by path, as the
/// opens do. Compiled against AppArmor 3.0's feature ABI, which the guest
/// kernel's AppArmor accepts.
const APPARMOR_PROFILE: &str = "abi <abi/3.0>,

profile pidmap_reader {
  file,
  signal,
  ptrace,
  unix,
  network,
  deny /proc/*[02468]/stat r,
  deny /proc/*[02468]/fd/ r,
  deny /proc/*[02468]/task/ r,
  deny /proc/*/task/*[02468]/stat r,
  deny /proc/*/task/*[02468]/fd/ r,
  deny /proc/*/task/*[02468]/children r,
}
";

/// The feature ABI the profile is compiled for (Debian's apparmor package).
const APPARMOR_ABI: &str = "/etc/apparmor.d/abi/3.0";

/// Boots `kernel` with AppArmor and TOMOYO (stacked with Landlock; no
/// Smack or SELinux in this boot) and runs the LSM test under the profile,
/// then under the TOMOYO domain; returns the suite's exit code.
pub fn apparmor_test_boot(kernel: &Kernel, args: &KernelArgs) -> Result<i32> {
    let policy = build_apparmor_policy(kernel)?;
    let label = format!("apparmor-{}", kernel.label());
    let cmdline = super::tomoyo::cmdline();
    step(format!(
        "AppArmor and TOMOYO boot ({}): guest-tests/lsm.c under a profile, then a domain, \
         that deny the /proc files of even-numbered tasks",
        super::tomoyo::LSM_LIST
    ));
    lsm_boot(
        kernel,
        args,
        &label,
        &cmdline,
        super::tomoyo::PIDMAP_LSM,
        (&policy, APPARMOR_POLICY_IN_GUEST),
    )
}

/// `apparmor_parser`, from Debian's `apparmor` package (.ci/packages).
fn apparmor_parser() -> Result<PathBuf> {
    crate::deps::ensure_apparmor()?;
    Ok(PathBuf::from(crate::deps::APPARMOR_PARSER))
}

/// Compiles [`APPARMOR_PROFILE`] with apparmor_parser into a binary policy
/// for `kernel`'s guest, without loading it into the host.
fn build_apparmor_policy(kernel: &Kernel) -> Result<PathBuf> {
    let parser = apparmor_parser()?;
    let dir = xtask_dir().join("apparmor").join(kernel.label());
    fs::create_dir_all(&dir)?;
    let source = dir.join("pidmap_reader");
    let binary = dir.join("policy.bin");
    fs::write(&source, APPARMOR_PROFILE)?;
    run_quiet(
        Command::new(&parser)
            // Compile only: no kernel load, no cache, for the 3.0 ABI.
            .args(["-Q", "-K", "-M", APPARMOR_ABI, "-o"])
            .arg(&binary)
            .arg(&source),
    )
    .context("apparmor_parser failed")?;
    Ok(binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MDP: &str = "class security\nclass process\nclass file\nclass dir\n\
        sid kernel\ncommon file { read }\nclass file inherits file { open }\n\
        policycap open_perms;\npolicycap memfd_class;\n\
        type base_t;\nrole base_r;\nrole base_r types { base_t };\n\
        user user_u roles { base_r };\n";

    #[test]
    fn secret_t_is_readable_in_everything_but_files_and_directories() {
        let conf = with_secret_domain(MDP).unwrap();
        assert!(conf.contains("type base_t;\ntype secret_t;\n"));
        assert!(conf.contains("role base_r types { base_t secret_t };\n"));
        assert!(!conf.contains("role base_r types { base_t };"));
        assert!(conf.contains("allow base_t secret_t:file ~{ read open };\n"));
        assert!(conf.contains("allow base_t secret_t:dir ~{ search read open };\n"));
        assert!(conf.contains("allow base_t secret_t:process *;\n"));
        assert!(conf.contains("allow secret_t { base_t secret_t }:security *;\n"));
        // "class file inherits file { open }" declares no new class.
        assert_eq!(conf.matches("allow base_t secret_t:file").count(), 1);
    }

    #[test]
    fn a_policy_without_mdps_anchors_is_an_error() {
        assert!(with_secret_domain("class file\nclass dir\n").is_err());
        let no_dir = MDP.replace("class dir\n", "");
        assert!(with_secret_domain(&no_dir).is_err());
    }

    #[test]
    fn an_unknown_capability_is_named_and_left_out() {
        let out = "policy.conf:9:ERROR 'invalid policy capability name memfd_class' at token ';'";
        assert_eq!(unknown_capability(out).as_deref(), Some("memfd_class"));
        assert_eq!(unknown_capability("syntax error"), None);
        let conf = without_capability(MDP, "memfd_class");
        assert!(!conf.contains("memfd_class"));
        assert!(conf.contains("policycap open_perms;"));
    }
}
