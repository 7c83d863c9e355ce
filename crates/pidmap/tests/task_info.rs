//! Task records ([`TaskInfo`]) from both backends against an independent
//! reading of `/proc/TGID/task/TID/stat` and `status`, parsed here by
//! code of its own (not the crate's `Stat`). The syscall backend's tests
//! skip on a kernel without pidmap(2), unless `PIDMAP_REQUIRE_SYSCALL=1`
//! (the QEMU guest), where a kernel without `PIDMAP_INFO` fails them too.

#![cfg(feature = "fallback")]

mod support;

use std::time::Duration;

use pidmap::{ActiveBackend, InfoFields, Pid, Pidmap, Query, Target, TaskInfo};
use support::*;

/// What /proc says about one task, read with std and parsed here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    tgid: i32,
    ppid: i32,
    state: u8,
    comm: Vec<u8>,
    flags: u32,
    utime: u64,
    stime: u64,
    nice: i32,
    num_threads: u32,
    start: u64,
    rss: u64,
    ruid: u32,
    euid: u32,
}

impl Reference {
    /// `None` once the task is gone.
    fn read(tgid: i32, tid: i32) -> Option<Reference> {
        let dir = format!("/proc/{tgid}/task/{tid}");
        let stat = std::fs::read(format!("{dir}/stat")).ok()?;
        let status = String::from_utf8(std::fs::read(format!("{dir}/status")).ok()?).ok()?;
        let open = stat.iter().position(|&b| b == b'(')?;
        let close = stat.iter().rposition(|&b| b == b')')?;
        let rest = std::str::from_utf8(&stat[close + 2..]).ok()?;
        // f[0] is field 3 (state).
        let f: Vec<&str> = rest.split_whitespace().collect();
        let field = |n: usize| f[n - 3];
        let line = |key: &str| -> Vec<&str> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.split_whitespace().collect())
                .unwrap_or_default()
        };
        Some(Reference {
            tgid: line("Tgid:")[0].parse().ok()?,
            ppid: field(4).parse().ok()?,
            state: field(3).as_bytes()[0],
            comm: stat[open + 1..close].to_vec(),
            flags: field(9).parse().ok()?,
            utime: field(14).parse().ok()?,
            stime: field(15).parse().ok()?,
            nice: field(19).parse().ok()?,
            num_threads: field(20).parse().ok()?,
            start: field(22).parse().ok()?,
            rss: field(24).parse().ok()?,
            ruid: line("Uid:")[0].parse().ok()?,
            euid: line("Uid:")[1].parse().ok()?,
        })
    }

    /// The fields that cannot change while a task exists, with those that
    /// did not change between `self` and `after`.
    fn settled(&self, after: &Reference) -> bool {
        self.ppid == after.ppid
            && self.state == after.state
            && self.comm == after.comm
            && self.flags == after.flags
            && self.nice == after.nice
            && self.num_threads == after.num_threads
            && self.rss == after.rss
            && self.ruid == after.ruid
            && self.euid == after.euid
    }
}

/// Clock ticks per second, asked of libc.
fn hz() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(hz).expect("a positive _SC_CLK_TCK")
}

/// A duration in clock ticks, rounded down as /proc rounds.
fn in_ticks(d: Duration) -> u64 {
    u64::try_from(d.as_nanos() / u128::from(1_000_000_000 / hz())).unwrap()
}

/// Every field of `info` against the readings before and after it: the
/// settled fields exactly, CPU times between the two readings, the start
/// time exactly (in ticks).
fn matches(info: &TaskInfo, before: &Reference, after: &Reference) -> Result<(), String> {
    let want = |what: &str, got: String, want: String| {
        if got == want {
            Ok(())
        } else {
            Err(format!(
                "tid {}: {what}: record {got}, /proc {want}",
                info.tid
            ))
        }
    };
    let s = |v: &dyn std::fmt::Debug| format!("{v:?}");
    want(
        "tgid",
        s(&info.tgid.map(Pid::as_raw)),
        s(&Some(before.tgid)),
    )?;
    want("ppid", s(&info.ppid), s(&Some(before.ppid)))?;
    want("state", s(&info.state), s(&Some(before.state)))?;
    want(
        "comm",
        s(&info.comm.map(|c| c.as_bytes().to_vec())),
        s(&Some(before.comm.clone())),
    )?;
    want("flags", s(&info.flags), s(&Some(before.flags)))?;
    want("nice", s(&info.nice), s(&Some(before.nice)))?;
    want(
        "num_threads",
        s(&info.num_threads),
        s(&Some(before.num_threads)),
    )?;
    want("rss", s(&info.rss_pages), s(&Some(before.rss)))?;
    want(
        "uids",
        s(&(info.ruid, info.euid)),
        s(&(Some(before.ruid), Some(before.euid))),
    )?;
    want(
        "start",
        s(&info.start_time.map(in_ticks)),
        s(&Some(before.start)),
    )?;
    let (u, st) = (
        info.utime.map(in_ticks).ok_or("no utime")?,
        info.stime.map(in_ticks).ok_or("no stime")?,
    );
    if !(before.utime..=after.utime).contains(&u) || !(before.stime..=after.stime).contains(&st) {
        return Err(format!(
            "tid {}: cpu {u}/{st} ticks outside /proc's {}/{} .. {}/{}",
            info.tid, before.utime, before.stime, after.utime, after.stime
        ));
    }
    if info.is_kernel_thread() != Some(before.flags & 0x0020_0000 != 0) {
        return Err(format!("tid {}: is_kernel_thread", info.tid));
    }
    Ok(())
}

/// The records of `q` for the tasks `tids` (of group `tgid`), read between
/// two /proc readings, must match them; retried while /proc moves.
fn records_match_proc(pm: &mut Pidmap, q: Query<'_>, tgid: Pid, tids: &[Pid], what: &str) {
    let mut last = String::new();
    for _ in 0..100 {
        let before: Vec<_> = tids
            .iter()
            .map(|t| Reference::read(tgid.as_raw(), t.as_raw()).expect("a live task"))
            .collect();
        let mut infos = Vec::new();
        pm.fill_info(q, InfoFields::ALL, &mut infos)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let after: Vec<_> = tids
            .iter()
            .map(|t| Reference::read(tgid.as_raw(), t.as_raw()).expect("a live task"))
            .collect();
        assert_ascending(&infos.iter().map(|i| i.tid).collect::<Vec<_>>());
        let r = tids
            .iter()
            .zip(before.iter().zip(&after))
            .try_for_each(|(tid, (b, a))| {
                if !b.settled(a) {
                    return Err(format!("tid {tid} changed during the read"));
                }
                let info = infos
                    .iter()
                    .find(|i| i.tid == *tid)
                    .ok_or_else(|| format!("tid {tid} has no record"))?;
                matches(info, b, a)
            });
        match r {
            Ok(()) => return,
            Err(e) => last = e,
        }
    }
    panic!("{what}: records never matched /proc: {last}");
}

/// The backends to check: /proc always; the syscall where the kernel has
/// it, which in the guest must serve the records itself.
fn backends(test: &str) -> Vec<(&'static str, Pidmap)> {
    let mut v = vec![("procfs", procfs_backend())];
    if let Some(pm) = syscall_backend(test) {
        let via = pm.info_backend();
        if syscall_required() {
            assert_eq!(
                via.as_ref().ok(),
                Some(&ActiveBackend::Syscall),
                "{test}: {REQUIRE_ENV}=1 but the kernel has no PIDMAP_INFO: {via:?}"
            );
        }
        match via {
            Ok(ActiveBackend::Syscall) => v.push(("syscall", pm)),
            other => note(&format!(
                "{test}: no PIDMAP_INFO ({other:?}); syscall records skipped"
            )),
        }
    }
    v
}

#[test]
fn own_threads_match_proc() {
    let parked = ParkedThreads::spawn(4);
    let me = Pid::this_process();
    for (name, mut pm) in backends("own_threads_match_proc") {
        let what = format!("{name}: threads of the caller");
        records_match_proc(
            &mut pm,
            Query::threads(Target::Caller),
            me,
            &parked.tids,
            &what,
        );
        let what = format!("{name}: all tasks");
        records_match_proc(&mut pm, Query::all_tasks(), me, &parked.tids, &what);
        let pidfd = Target::open_pidfd(me).unwrap();
        let what = format!("{name}: threads of a pidfd");
        records_match_proc(&mut pm, Query::threads(&pidfd), me, &parked.tids, &what);
    }
}

#[test]
fn processes_and_children_match_proc() {
    let fam = Family::spawn(3);
    for (name, mut pm) in backends("processes_and_children_match_proc") {
        for &g in &fam.grandchildren {
            let what = format!("{name}: children of the family's child");
            records_match_proc(&mut pm, Query::children(fam.child), g, &[g], &what);
            let what = format!("{name}: processes");
            records_match_proc(&mut pm, Query::processes(), g, &[g], &what);
        }
        let what = format!("{name}: process 1");
        let one = Pid::from_raw(1);
        records_match_proc(&mut pm, Query::processes(), one, &[one], &what);
    }
}

/// The records list exactly the tasks the id listing lists, with and
/// without kernel threads, and only the fields asked for.
#[test]
fn records_follow_the_id_listing() {
    let _parked = ParkedThreads::spawn(3);
    for (name, pm) in backends("records_follow_the_id_listing") {
        let pm = std::cell::RefCell::new(pm);
        for q in [
            Query::processes(),
            Query::processes().without_kthreads(),
            Query::all_tasks(),
            Query::all_tasks().without_kthreads(),
            Query::children(Pid::from_raw(1)),
            Query::threads(Target::Caller),
        ] {
            let mut ids = Vec::new();
            let mut infos = Vec::new();
            let what = format!("{name}: {q:?}");
            agree(
                &what,
                || {
                    pm.borrow_mut().fill(q, &mut ids).unwrap();
                    ids.clone()
                },
                || {
                    pm.borrow_mut()
                        .fill_info(q, InfoFields::STATE, &mut infos)
                        .unwrap();
                    infos.iter().map(|i| i.tid).collect::<Vec<_>>()
                },
            );
            assert!(
                infos.iter().all(|i| i.fields() == InfoFields::STATE),
                "{what}: fields beyond STATE: {:?}",
                infos.iter().find(|i| i.fields() != InfoFields::STATE)
            );
            if q.ignores_kthreads() {
                let mut flagged = Vec::new();
                pm.borrow_mut()
                    .fill_info(q, InfoFields::FLAGS, &mut flagged)
                    .unwrap();
                assert!(
                    flagged.iter().all(|i| i.is_kernel_thread() != Some(true)),
                    "{what}"
                );
            }
        }
    }
}

/// `read_info_chunk` walks the same records with the tid as the cursor.
#[test]
fn chunks_follow_the_cursor() {
    let parked = ParkedThreads::spawn(7);
    for (name, mut pm) in backends("chunks_follow_the_cursor") {
        let q = Query::threads(Target::Caller);
        let mut chunk = Vec::new();
        let mut seen = Vec::new();
        let mut start = 0;
        loop {
            let n = pm
                .read_info_chunk(q, InfoFields::TGID, start, 2, &mut chunk)
                .unwrap();
            assert_eq!(n, chunk.len());
            assert!(n <= 2, "{name}: {n} records for a max of 2");
            if n == 0 {
                break;
            }
            assert!(chunk.iter().all(|i| i.tid.as_raw() >= start));
            seen.extend(chunk.iter().map(|i| i.tid));
            start = chunk[n - 1].tid.as_raw() + 1;
        }
        assert_ascending(&seen);
        for t in &parked.tids {
            assert!(seen.contains(t), "{name}: {t} missing from {seen:?}");
        }
        assert!(pm
            .read_info_chunk(q, InfoFields::TGID, -1, 2, &mut chunk)
            .is_err());
    }
}

/// A target that does not exist is the same error as for the ids.
#[test]
fn missing_target_is_esrch() {
    for (name, mut pm) in backends("missing_target_is_esrch") {
        let mut v = Vec::new();
        let r = pm.fill_info(Query::threads(NO_SUCH_PID), InfoFields::ALL, &mut v);
        assert!(is_esrch(&r), "{name}: {r:?}");
    }
}
