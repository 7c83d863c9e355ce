//! TOMOYO in the guest: it stacks with AppArmor in 7.3, so it rides in the
//! AppArmor boot (`lsm=landlock,apparmor,tomoyo`) rather than costing a
//! boot of its own, and guest-tests/lsm.c runs its TOMOYO mode there after
//! the AppArmor one.
//!
//! TOMOYO stays inactive (every check disabled) until its activation
//! trigger is executed, when it runs its policy loader and then checks that
//! every domain's profile is defined. The boot names a loader that does
//! nothing and a trigger path no other program uses: guest-tests/lsm.c
//! writes the profile and the domain policy through securityfs (which root
//! may do before activation), then executes the trigger. The policy is in
//! lsm.c: one domain, entered through `self_domain`, whose profile enforces
//! `file open` and whose `file read` entries allow the `stat` file, the
//! `fd/` and `task/` directories and the `children` file of odd-numbered
//! tasks only, the same files the AppArmor profile denies for even ones.

/// The LSM list of the boot TOMOYO shares with AppArmor.
pub const LSM_LIST: &str = "lsm=landlock,apparmor,tomoyo";

/// The loader TOMOYO runs at the trigger: any program that exists will do,
/// since the policy is already written when the trigger runs.
const LOADER: &str = "/bin/true";

/// The trigger guest-tests/lsm.c executes (a symlink it makes to
/// `/bin/true`): TOMOYO compares the name execve() was given.
const TRIGGER: &str = "/tmp/pidmap-tomoyo-activate";

/// The `PIDMAP_LSM` that tells guest-tests/lsm.c to run its AppArmor and
/// TOMOYO modes.
pub const PIDMAP_LSM: &str = "apparmor,tomoyo";

/// The kernel command line of the boot: the LSMs, TOMOYO's loader and
/// trigger.
pub fn cmdline() -> String {
    format!("{LSM_LIST} TOMOYO_loader={LOADER} TOMOYO_trigger={TRIGGER}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boot_activates_tomoyo_only_through_lsm_c_s_trigger() {
        let line = cmdline();
        assert!(line.starts_with("lsm=") && line.contains(",apparmor,tomoyo"));
        assert!(line.contains("TOMOYO_trigger=/tmp/pidmap-tomoyo-activate"));
        // The trigger is not a program the guest's init or suites run.
        assert!(!line.contains("TOMOYO_trigger=/sbin/init"));
        let lsm_c =
            std::fs::read_to_string(crate::paths::workspace_root().join("guest-tests/lsm.c"))
                .unwrap();
        assert!(lsm_c.contains(&format!("#define TOMOYO_TRIGGER \"{TRIGGER}\"")));
        assert!(lsm_c.contains(&format!("\"{PIDMAP_LSM}\"")));
    }
}
