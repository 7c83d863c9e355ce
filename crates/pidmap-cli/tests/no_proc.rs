//! `pidmap` with /proc unmounted, as in a container: run in a private mount
//! namespace (`unshare(CLONE_NEWNS)`, then `/proc` detached) so the host
//! never notices. With pidmap(2) (the patched guest, where the runner sets
//! `PIDMAP_REQUIRE_SYSCALL=1`), every id is still printed; `--long` shows
//! the columns of the kernel's task records (`PIDMAP_INFO`, required in the
//! guest), or, on a kernel without them, unknown columns and a warning;
//! without pidmap(2), a clear error and exit 1. Also built into the QEMU
//! guest, where the binary is /bin/pidmap.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

use serde_json::Value;

mod support;
use support::bin;

// Whether the kernel has pidmap(2), asked with a raw syscall: the crate's
// tests' own probe, shared by file.
#[path = "../../pidmap/tests/support/raw_probe.rs"]
mod raw_probe;
use raw_probe::{kernel_has_pidmap, NR_PIDMAP_INFO};

/// Whether `pidmap_info(2)` answers, asked with a raw syscall: a valid
/// `PIDMAP_SCOPE_PROCS` request (struct `pidmap_req`, 56 bytes, `info_size`
/// 200) with count 0 answers 0.
fn kernel_has_task_records() -> bool {
    if !kernel_has_pidmap() {
        // Also what a build without `series-syscalls` says: it never
        // issues the number.
        return false;
    }
    // size, scope, last_id (2), pidfd, filter, info_size, __reserved,
    // info_mask (2), procfs_fd, pidns_fd, pidns_id (2).
    let req: [u32; 14] = [56, 0, 0, 0, 0, 0, 200, 0, 0, 0, 0, 0, 0, 0];
    let mut room = [0u64; 25];
    // SAFETY: a readable 56-byte request; a writable 200-byte buffer and
    // count 0, so nothing is written.
    let r = unsafe {
        libc::syscall(
            libc::c_long::from(NR_PIDMAP_INFO),
            req.as_ptr(),
            room.as_mut_ptr(),
            libc::size_t::from(0u8),
            libc::c_ulong::from(0u32),
        )
    };
    r == 0
}

fn without_proc(args: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args).env_remove("PIDMAP_BACKEND");
    // SAFETY: the closure runs in the forked child before exec and only
    // makes async-signal-safe system calls.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWNS) != 0
                || libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                || libc::umount2(c"/proc".as_ptr(), libc::MNT_DETACH) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().expect("running pidmap without /proc")
}

fn proc_ids() -> BTreeSet<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

fn lines(b: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(b)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one scenario, each listing and its check in turn"
)]
fn nothing_is_silently_lost_without_proc() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(
            !std::env::var("PIDMAP_REQUIRE_SYSCALL").is_ok_and(|v| v == "1"),
            "the guest runs the tests as root"
        );
        eprintln!("note: skipping: unmounting /proc needs root");
        return;
    }
    let required = std::env::var("PIDMAP_REQUIRE_SYSCALL").is_ok_and(|v| v == "1");
    let has = kernel_has_pidmap();
    assert!(
        has || !required,
        "PIDMAP_REQUIRE_SYSCALL=1 but the kernel lacks pidmap(2)"
    );
    if !has {
        for args in [
            &["procs"][..],
            &["procs", "--long"],
            &["--json", "tasks", "--long"],
        ] {
            let out = without_proc(args);
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert!(out.stdout.is_empty(), "{args:?}");
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                "pidmap: /proc is not a mounted procfs of this pid namespace\n",
                "{args:?}"
            );
        }
        return;
    }
    let records = kernel_has_task_records();
    assert!(
        records || !required,
        "PIDMAP_REQUIRE_SYSCALL=1 but the kernel's pidmap(2) lacks PIDMAP_INFO"
    );
    // The syscall lists through the kernel's default view: as root, every
    // process of the namespace, which is what /proc shows us out here.
    let mut ok = false;
    for _ in 0..200 {
        let before = proc_ids();
        let plain = without_proc(&["procs"]);
        let long = without_proc(&["procs", "--long"]);
        let after = proc_ids();
        assert_eq!(
            plain.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&plain.stderr)
        );
        assert_eq!(
            long.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&long.stderr)
        );
        let ids: BTreeSet<i32> = lines(&plain.stdout)
            .iter()
            .map(|l| l.parse().unwrap())
            .collect();
        let rows = lines(&long.stdout);
        assert_eq!(
            rows[0].split_whitespace().collect::<Vec<_>>(),
            ["PID", "PPID", "S", "UID", "NI", "NLWP", "RSS", "TIME", "START", "COMMAND"]
        );
        for row in &rows[1..] {
            let cols: Vec<&str> = row.split_whitespace().collect();
            if records {
                // The kernel's records: a ppid, a state letter, a uid.
                assert!(cols.len() >= 10, "{row}");
                assert!(cols[1].parse::<i32>().is_ok(), "{row}");
                assert!("RSDTtXZPI".contains(cols[2]), "{row}");
                assert!(cols[3].parse::<u32>().is_ok(), "{row}");
            } else {
                assert_eq!(&cols[1..], ["?"; 9], "{row}");
            }
        }
        let long_ids: BTreeSet<i32> = rows[1..]
            .iter()
            .map(|r| r.split_whitespace().next().unwrap().parse().unwrap())
            .collect();
        let err = String::from_utf8_lossy(&long.stderr);
        if records {
            assert_eq!(err, "");
        } else {
            assert_eq!(
                err,
                format!(
                    "pidmap: warning: /proc is not a mounted procfs: listing {} ids with unknown columns (shown as ?)\n",
                    rows.len() - 1
                )
            );
        }
        if before == after {
            // Each run adds only its own pidmap process.
            let extra: Vec<_> = ids.difference(&before).collect();
            let extra_long: Vec<_> = long_ids.difference(&before).collect();
            if before.is_subset(&ids)
                && before.is_subset(&long_ids)
                && extra.len() == 1
                && extra_long.len() == 1
            {
                ok = true;
                break;
            }
        }
    }
    assert!(
        ok,
        "the listings without /proc never matched a stable /proc"
    );
    let out = without_proc(&["--json", "tasks", "--long"]);
    assert_eq!(out.status.code(), Some(0));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids = j["ids"].as_array().unwrap();
    let entries = j["entries"].as_array().unwrap();
    assert!(ids.len() > 1 && entries.len() == ids.len() && j["count"] == ids.len());
    if records {
        assert_eq!(j["info_backend"], "syscall");
        assert!(entries
            .iter()
            .all(|e| e["status"] == "ok" && e["comm"].is_string() && e["tgid"].is_number()));
    } else {
        assert!(j["info_backend"].is_null());
        assert!(entries
            .iter()
            .all(|e| e["status"] == "unknown" && e["comm"].is_null()));
    }
}
