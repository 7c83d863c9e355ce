//! Task records ([`TaskInfo`]) from both backends against an independent
//! reading of what `ps` reads — `/proc/PID/stat` and `status` for a
//! process listing, `/proc/TGID/task/TID/stat` and `status` for a task
//! listing — parsed here by code of its own (not the crate's `Stat`). The syscall backend's tests
//! skip on a kernel without pidmap(2), unless `PIDMAP_REQUIRE_SYSCALL=1`
//! (the QEMU guest), where a kernel without `PIDMAP_INFO` fails them too.

#![cfg(feature = "fallback")]

mod support;

use std::collections::BTreeSet;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pidmap::{
    ActiveBackend, InfoFields, Pid, Pidmap, Query, Target, TaskFlags, TaskInfo, TaskRecord,
};
use support::*;

/// A record of one of our own threads carries our group's thread count
/// and resident set, which every other test in this binary changes as it
/// spawns threads and allocates: so the tests here run one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Holds [`ONE_AT_A_TIME`] for a test (a failed test does not fail the
/// next ones).
fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What /proc says about one task, read with std and parsed here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reference {
    tgid: i32,
    ppid: i32,
    state: u8,
    comm: Vec<u8>,
    /// `PIDMAP_TASK_*` bits of the `PF_*` flags of field 9.
    task_flags: u32,
    /// `PF_KTHREAD` in field 9.
    kthread: bool,
    utime: u64,
    stime: u64,
    nice: i32,
    priority: i32,
    policy: u32,
    num_threads: u32,
    start: u64,
    /// VmRSS in pages (0 without a VmRSS line).
    rss: u64,
    ruid: u32,
    euid: u32,
}

impl Reference {
    /// `None` once the task is gone. `process`: the process's own files
    /// (group totals), else the thread's.
    fn read(process: bool, tgid: i32, tid: i32) -> Option<Reference> {
        let dir = if process {
            format!("/proc/{tid}")
        } else {
            format!("/proc/{tgid}/task/{tid}")
        };
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
            task_flags: task_flags(field(9).parse().ok()?),
            kthread: field(9).parse::<u64>().ok()? & 0x0020_0000 != 0,
            utime: field(14).parse().ok()?,
            stime: field(15).parse().ok()?,
            priority: field(18).parse().ok()?,
            nice: field(19).parse().ok()?,
            policy: field(41).parse().ok()?,
            num_threads: field(20).parse().ok()?,
            start: field(22).parse().ok()?,
            rss: match line("VmRSS:").first() {
                Some(kib) => kib.parse::<u64>().ok()? / page_kib(),
                None => 0,
            },
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
            && self.task_flags == after.task_flags
            && self.nice == after.nice
            && self.priority == after.priority
            && self.policy == after.policy
            && self.num_threads == after.num_threads
            && self.rss == after.rss
            && self.ruid == after.ruid
            && self.euid == after.euid
    }
}

/// The uapi's `PIDMAP_TASK_*` bits of `PF_*` flags (include/linux/sched.h:
/// PF_KTHREAD, PF_USER_WORKER, PF_EXITING, PF_FORKNOEXEC), written out
/// here.
fn task_flags(pf: u64) -> u32 {
    [(0x0020_0000, 1), (0x4000, 2), (0x4, 4), (0x40, 8)]
        .iter()
        .filter(|(bit, _)| pf & bit != 0)
        .fold(0, |acc, (_, f)| acc | f)
}

/// The page size in KiB, asked of libc.
fn page_kib() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page).expect("a positive page size") / 1024
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
    want(
        "ppid",
        s(&info.ppid.map(Pid::as_raw)),
        s(&Some(before.ppid)),
    )?;
    want(
        "state",
        s(&info.state.map(u8::from)),
        s(&Some(before.state)),
    )?;
    want(
        "comm",
        s(&info.comm.map(|c| c.as_bytes().to_vec())),
        s(&Some(before.comm.clone())),
    )?;
    want(
        "flags",
        s(&info.flags.map(TaskFlags::bits)),
        s(&Some(before.task_flags)),
    )?;
    want(
        "sched",
        s(&(info.nice, info.priority, info.policy)),
        s(&(
            Some(before.nice),
            Some(before.priority),
            Some(before.policy),
        )),
    )?;
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
    if info.is_kernel_thread() != Some(before.kthread) {
        return Err(format!("tid {}: is_kernel_thread", info.tid));
    }
    Ok(())
}

/// The records of `q` for the tasks `tids` (of group `tgid`), read between
/// two /proc readings, must match them; retried while /proc moves.
fn records_match_proc(pm: &mut Pidmap, q: Query<'_>, tgid: Pid, tids: &[Pid], what: &str) {
    use pidmap::Listing;
    let process = matches!(q.listing(), Listing::Processes | Listing::Children);
    let mut last = String::new();
    // One buffer for every try, so that the read itself does not move our
    // resident set between the two /proc readings.
    let mut infos = Vec::new();
    let mut converted = Vec::new();
    for _ in 0..100 {
        let before: Vec<_> = tids
            .iter()
            .map(|t| {
                Reference::read(process, tgid.as_raw(), t.as_raw())
                    .unwrap_or_else(|| panic!("{what}: tid {t} of {tgid} is not a live task"))
            })
            .collect();
        // Both forms of the records, TaskInfo and the kernel's, read
        // between the same two /proc readings.
        pm.fill_info(q, InfoFields::ALL, &mut infos)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let records = pm
            .records(q, InfoFields::ALL)
            .unwrap_or_else(|e| panic!("{what}: records: {e}"));
        assert_ascending(&records.iter().map(TaskRecord::tid).collect::<Vec<_>>());
        converted.clear();
        converted.extend(records.iter().map(TaskRecord::to_info));
        let after: Vec<_> = tids
            .iter()
            .map(|t| Reference::read(process, tgid.as_raw(), t.as_raw()).expect("a live task"))
            .collect();
        assert_ascending(&infos.iter().map(|i| i.tid).collect::<Vec<_>>());
        let r = tids
            .iter()
            .zip(before.iter().zip(&after))
            .try_for_each(|(tid, (b, a))| {
                if !b.settled(a) {
                    return Err(format!("tid {tid} changed during the read"));
                }
                for (form, list) in [("TaskInfo", &infos), ("TaskRecord", &converted)] {
                    let info = list
                        .iter()
                        .find(|i| i.tid == *tid)
                        .ok_or_else(|| format!("tid {tid} has no {form}"))?;
                    matches(info, b, a).map_err(|e| format!("{form}: {e}"))?;
                }
                Ok(())
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
                "{test}: {REQUIRE_ENV}=1 but the kernel has no pidmap_info(2): {via:?}"
            );
        }
        match via {
            Ok(ActiveBackend::Syscall) => v.push(("syscall", pm)),
            other => note(&format!(
                "{test}: no pidmap_info(2) ({other:?}); syscall records skipped"
            )),
        }
    }
    v
}

/// The pidfs id of each record is the inode number of a pidfd of its task
/// (one opened with `PIDFD_THREAD` for a thread), and only the syscall
/// backend has it.
#[test]
fn pidfs_ids_name_the_tasks() {
    let _serial = one_at_a_time();
    let parked = ParkedThreads::spawn(3);
    let me = Pid::this_process();
    let ino = |pid: Pid| {
        let fd = Target::open_pidfd(pid).unwrap();
        rustix::fs::fstat(&fd).unwrap().st_ino
    };
    for (name, mut pm) in backends("pidfs_ids_name_the_tasks") {
        let mut v = Vec::new();
        pm.fill_info(Query::threads(Target::Caller), InfoFields::TGID, &mut v)
            .unwrap();
        let mut tids = parked.tids.clone();
        tids.push(me);
        for tid in tids {
            let rec = v.iter().find(|i| i.tid == tid).expect("a record");
            if name == "syscall" {
                assert_eq!(rec.pidfs_id, Some(ino(tid)), "{name}: {rec:?}");
            } else {
                assert_eq!(rec.pidfs_id, None, "{name}: {rec:?}");
            }
        }
        // The leader's id is not a thread's.
        let ids: BTreeSet<Option<u64>> = v.iter().map(|i| i.pidfs_id).collect();
        if name == "syscall" {
            assert_eq!(ids.len(), v.len(), "{name}: distinct pidfs ids");
        }
    }
}

#[test]
fn own_threads_match_proc() {
    let _serial = one_at_a_time();
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
    let _serial = one_at_a_time();
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
    let _serial = one_at_a_time();
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
            let mut records = Vec::new();
            agree(
                &format!("{what}: records"),
                || {
                    pm.borrow_mut().fill(q, &mut ids).unwrap();
                    ids.clone()
                },
                || {
                    let mut pm = pm.borrow_mut();
                    records = pm.records(q, InfoFields::STATE).unwrap().to_vec();
                    records.iter().map(TaskRecord::tid).collect::<Vec<_>>()
                },
            );
            // The ids (tgid) always, else only what was asked for.
            let kept = |r: &TaskRecord| {
                r.fields().contains(InfoFields::STATE)
                    && InfoFields::STATE
                        .union(InfoFields::TGID)
                        .contains(r.fields())
            };
            assert!(
                records.iter().all(kept),
                "{what}: records with fields beyond STATE: {:?}",
                records.iter().find(|r| !kept(r))
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
    let _serial = one_at_a_time();
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
    let _serial = one_at_a_time();
    for (name, mut pm) in backends("missing_target_is_esrch") {
        let mut v = Vec::new();
        let r = pm.fill_info(Query::threads(NO_SUCH_PID), InfoFields::ALL, &mut v);
        assert!(is_esrch(&r), "{name}: {r:?}");
    }
}

/// A process record holds the group's CPU totals, threads that exited
/// included (what `/proc/PID/stat` and `ps` show), not the leader
/// thread's own time.
#[test]
fn process_records_hold_the_group_totals() {
    let _serial = one_at_a_time();
    // Burn CPU in threads that then exit: their time stays in the group's
    // totals only.
    let burners: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(|| {
                let t0 = std::time::Instant::now();
                let mut x = 0u64;
                while t0.elapsed() < Duration::from_millis(150) {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                }
                x
            })
        })
        .collect();
    for b in burners {
        b.join().unwrap();
    }
    let me = Pid::this_process();
    for (name, mut pm) in backends("process_records_hold_the_group_totals") {
        let what = format!("{name}: our process");
        records_match_proc(&mut pm, Query::processes(), me, &[me], &what);
        let mut infos = Vec::new();
        pm.fill_info(Query::processes(), InfoFields::CPU_TIME, &mut infos)
            .unwrap();
        let ours = infos.iter().find(|i| i.tid == me).expect("our record");
        let leader = Reference::read(false, me.as_raw(), me.as_raw()).unwrap();
        let own = leader.utime + leader.stime;
        let total = in_ticks(ours.cpu_time().unwrap());
        // The burners ran 2 x 150 ms: well above the leader's own time.
        assert!(
            total >= own + hz() / 10,
            "{name}: process cpu {total} ticks, leader thread's own {own}"
        );
    }
}

/// Under a real-time policy the nice value means nothing: the record says
/// so through its policy ([`TaskInfo::nice_applies`]), where `ps` shows `-`.
#[test]
fn real_time_tasks_have_no_nice_value() {
    let _serial = one_at_a_time();
    let fam = Family::spawn(1);
    let g = fam.grandchildren[0];
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: setting the policy of our own grandchild.
    if unsafe { libc::sched_setscheduler(g.as_raw(), libc::SCHED_FIFO, &param) } != 0 {
        let e = std::io::Error::last_os_error();
        assert!(!is_root(), "root must be able to set SCHED_FIFO: {e}");
        note(&format!("skipping real_time_tasks_have_no_nice_value: {e}"));
        return;
    }
    each_listing_with_nice(fam.child, |q, infos| {
        let rec = infos.iter().find(|i| i.tid == g).expect("the grandchild");
        assert_eq!(rec.nice_applies(), Some(false), "{q:?}: {rec:?}");
        assert_eq!(rec.policy, Some(libc::SCHED_FIFO.unsigned_abs()), "{q:?}");
        // stat's priority of a SCHED_FIFO task at 1: -2.
        assert_eq!(rec.priority, Some(-2), "{q:?}: {rec:?}");
        assert!(rec.state.is_some(), "{q:?}: {rec:?}");
        // An ordinary task's nice value applies.
        let child = infos.iter().find(|i| i.tid == fam.child);
        if let Some(c) = child {
            assert_eq!(c.nice_applies(), Some(true), "{q:?}: {c:?}");
            assert!(c.nice.is_some(), "{q:?}: {c:?}");
        }
    });
}

/// The nice and state records of every listing that holds `child`'s
/// family (processes, all tasks, `child`'s children), each given to
/// `check` with its query.
fn each_listing_with_nice(child: Pid, mut check: impl FnMut(Query<'_>, &[TaskInfo])) {
    for (_, mut pm) in backends("each_listing_with_nice") {
        for q in [
            Query::processes(),
            Query::all_tasks(),
            Query::children(child),
        ] {
            let mut infos = Vec::new();
            pm.fill_info(q, InfoFields::NICE | InfoFields::STATE, &mut infos)
                .unwrap();
            check(q, &infos);
        }
    }
}

/// `ps` shows a nice value under SCHED_BATCH as under SCHED_OTHER, and `-`
/// under SCHED_IDLE: the records follow it (neither needs privilege).
#[test]
fn idle_tasks_have_no_nice_value_batch_tasks_do() {
    let _serial = one_at_a_time();
    let fam = Family::spawn(2);
    let (idle, batch) = (fam.grandchildren[0], fam.grandchildren[1]);
    let param = libc::sched_param { sched_priority: 0 };
    for (pid, policy) in [(idle, libc::SCHED_IDLE), (batch, libc::SCHED_BATCH)] {
        // SAFETY: setting the policy of our own grandchild.
        let rc = unsafe { libc::sched_setscheduler(pid.as_raw(), policy, &param) };
        assert_eq!(
            rc,
            0,
            "policy {policy}: {}",
            std::io::Error::last_os_error()
        );
    }
    each_listing_with_nice(fam.child, |q, infos| {
        let find = |tid| infos.iter().find(|i| i.tid == tid).expect("a grandchild");
        assert_eq!(
            find(idle).nice_applies(),
            Some(false),
            "{q:?}: {:?}",
            find(idle)
        );
        assert_eq!(
            find(batch).nice_applies(),
            Some(true),
            "{q:?}: {:?}",
            find(batch)
        );
        assert!(find(batch).nice.is_some(), "{q:?}: {:?}", find(batch));
    });
}

/// Kernel threads' names longer than 15 bytes are kept whole, as `stat`
/// (and `ps`) show them.
#[test]
fn long_kernel_thread_names_are_whole() {
    let _serial = one_at_a_time();
    let mut long = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(Result::ok) {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (
            stat.iter().position(|&b| b == b'('),
            stat.iter().rposition(|&b| b == b')'),
        ) else {
            continue;
        };
        let name = stat[open + 1..close].to_vec();
        // Workqueue workers (`kworker/0:1-events`) rename themselves with
        // each piece of work, back and forth: only other kernel threads'
        // names stay put long enough to compare.
        if name.len() > 15 && !name.starts_with(b"kworker/") {
            long.push((Pid::from_raw(pid), name));
        }
    }
    if long.is_empty() {
        note("skipping long_kernel_thread_names_are_whole: no name above 15 bytes here");
        return;
    }
    let mut pm = procfs_backend();
    let mut infos = Vec::new();
    pm.fill_info(Query::processes(), InfoFields::COMM, &mut infos)
        .unwrap();
    let mut checked = 0;
    for (pid, name) in &long {
        // A thread may still rename itself: compare only with a reading
        // that did not move.
        let Some(rec) = infos.iter().find(|i| i.tid == *pid) else {
            continue;
        };
        let got = rec.comm.unwrap();
        if got.as_bytes() != name.as_slice() {
            let again = std::fs::read(format!("/proc/{pid}/stat")).unwrap_or_default();
            if !again.windows(name.len()).any(|w| w == name.as_slice()) {
                continue;
            }
        }
        assert_eq!(
            String::from_utf8_lossy(got.as_bytes()),
            String::from_utf8_lossy(name),
            "pid {pid}"
        );
        checked += 1;
    }
    assert!(checked > 0, "no long-named task stayed put: {long:?}");
}

/// A thread's CPU time as `/proc/self/task/TID/stat` shows it, in ticks,
/// read here independently of the crate.
fn own_thread_ticks(tid: Pid) -> u64 {
    let r = Reference::read(false, Pid::this_process().as_raw(), tid.as_raw()).unwrap();
    r.utime + r.stime
}

/// `CpuSample`'s use of a busy thread between two refreshes lies between
/// what /proc showed just inside and just outside the two refreshes.
#[test]
fn cpu_use_between_refreshes_is_bracketed_by_proc() {
    let _serial = one_at_a_time();
    use pidmap::monitor::CpuSample;
    let (tx, rx) = std::sync::mpsc::channel();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let burner = std::thread::spawn(move || {
        tx.send(Pid::this_thread()).unwrap();
        let mut x = 0u64;
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        x
    });
    let tid = rx.recv().unwrap();
    let mut pm = procfs_backend();
    let fields = InfoFields::TGID | InfoFields::CPU_TIME | InfoFields::START_TIME;
    let mut recs = Vec::new();
    let outer_before = own_thread_ticks(tid);
    pm.fill_info(Query::threads(Target::Caller), fields, &mut recs)
        .unwrap();
    let a = CpuSample::now(&recs);
    let inner_before = own_thread_ticks(tid);
    std::thread::sleep(Duration::from_millis(300));
    let inner_after = own_thread_ticks(tid);
    pm.fill_info(Query::threads(Target::Caller), fields, &mut recs)
        .unwrap();
    let b = CpuSample::now(&recs);
    let outer_after = own_thread_ticks(tid);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    burner.join().unwrap();
    let used = b.tasks_since(&a);
    let t = used.iter().find(|t| t.key.tid == tid).expect("the burner");
    let ticks = in_ticks(t.used);
    assert!(
        (inner_after - inner_before..=outer_after - outer_before).contains(&ticks),
        "used {ticks} ticks, /proc says {}..={}",
        inner_after - inner_before,
        outer_after - outer_before
    );
    let wall = b.taken_at() - a.taken_at();
    let pct = t.percent.expect("a known use");
    let want = t.used.as_secs_f64() / wall.as_secs_f64() * 100.0;
    assert!((pct - want).abs() < 1e-9, "{pct} vs {want}");
    // Some use whenever /proc saw some. No ceiling of one CPU: CPU time
    // is counted in ticks, which a guest under emulation can receive in
    // bursts, so a tick-counted share of a short interval may pass 100 %;
    // the bracket above is the independent bound.
    assert!(
        pct > 0.0 || inner_after == inner_before,
        "{pct} % while /proc saw {} ticks",
        inner_after - inner_before
    );
    let per = b.processes_since(&a);
    assert!(per[&Pid::this_process()] >= pct);
}

/// Our VmRSS in pages, read here from /proc/self/status.
fn own_vm_rss_pages() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("a VmRSS line");
    kib / page_kib()
}

/// In task mode without the uids, a thread group's `status` is read once
/// and its VmRSS given to each of its threads: every thread of ours shows
/// the process's VmRSS, as /proc shows it around the read.
#[test]
fn threads_share_their_groups_exact_rss() {
    let _serial = one_at_a_time();
    let parked = ParkedThreads::spawn(4);
    let me = Pid::this_process();
    let mut pm = procfs_backend();
    let mut recs = Vec::new();
    let mut last = String::new();
    for _ in 0..100 {
        let before = own_vm_rss_pages();
        pm.fill_info(
            Query::all_tasks(),
            InfoFields::TGID | InfoFields::RSS,
            &mut recs,
        )
        .unwrap();
        let after = own_vm_rss_pages();
        let ours: Vec<(Pid, Option<u64>)> = recs
            .iter()
            .filter(|r| r.tgid == Some(me))
            .map(|r| (r.tid, r.rss_pages))
            .collect();
        assert!(parked
            .tids
            .iter()
            .all(|t| ours.iter().any(|(tid, _)| tid == t)));
        let (lo, hi) = (before.min(after), before.max(after));
        if ours
            .iter()
            .all(|(_, rss)| rss.is_some_and(|r| (lo..=hi).contains(&r)))
        {
            return;
        }
        last = format!("{ours:?} outside {lo}..={hi}");
    }
    panic!("thread RSS never matched VmRSS: {last}");
}

/// A forked child whose leader thread has exited, leaving `n` threads: a
/// zombie leader over a live group. Its process record has no mm; its
/// threads' records have the group's. Only glibc calls happen after the
/// fork (glibc resets its locks in the child), no Rust allocation.
struct ZombieLeader {
    pid: Pid,
    tids: Vec<Pid>,
}

impl ZombieLeader {
    fn spawn(n: usize) -> ZombieLeader {
        extern "C" fn park(_: *mut libc::c_void) -> *mut libc::c_void {
            loop {
                // SAFETY: no preconditions; the thread waits to be killed.
                unsafe { libc::pause() };
            }
        }
        // SAFETY: the child makes only libc calls (pthread_create, the
        // exit system call of its leader thread, _exit) and never returns.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            // SAFETY: see above; `t` is a valid pthread_t to write.
            unsafe {
                for _ in 0..n {
                    let mut t: libc::pthread_t = 0;
                    let attr = std::ptr::null();
                    if libc::pthread_create(&mut t, attr, park, std::ptr::null_mut()) != 0 {
                        libc::_exit(3);
                    }
                }
                // The leader thread alone exits: its threads live on.
                libc::syscall(libc::SYS_exit, 0);
                libc::_exit(4);
            }
        }
        // Killed and reaped on drop, the panics below included.
        let mut zombie = ZombieLeader {
            pid: Pid::from_raw(child),
            tids: Vec::new(),
        };
        for _ in 0..1000 {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap();
            let state = stat
                .rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next());
            let tids: Vec<Pid> = std::fs::read_dir(format!("/proc/{child}/task"))
                .unwrap()
                .map(|e| Pid::from_raw(e.unwrap().file_name().to_str().unwrap().parse().unwrap()))
                .collect();
            if state == Some("Z") && tids.len() == n + 1 {
                zombie.tids = tids;
                zombie.tids.sort();
                return zombie;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the child's leader never became a zombie over {n} threads");
    }
}

impl Drop for ZombieLeader {
    fn drop(&mut self) {
        // SAFETY: signalling and reaping our own child (its whole group).
        unsafe {
            libc::kill(self.pid.as_raw(), libc::SIGKILL);
            libc::waitpid(self.pid.as_raw(), std::ptr::null_mut(), 0);
        }
    }
}

/// Tasks per process from which a handle reads the parent and the
/// resident set once per process (`MIN_TASKS_PER_PROCESS` in
/// `src/handle/group_fields.rs`).
const THREADED: usize = 16;

/// With several threads per process, a handle reads the parent and the
/// resident set once per process, and a zombie leader's process record
/// (no mm) stands for none of its live threads: every record of a
/// zombie-led group, and of our own threads, still matches /proc.
#[test]
fn threaded_listings_match_proc_with_a_zombie_leader() {
    let _serial = one_at_a_time();
    let test = "threaded_listings_match_proc_with_a_zombie_leader";
    let zombie = ZombieLeader::spawn(24);
    // Enough threads of ours for the tasks per process from which the
    // handle reads the group fields once per process (16: its
    // `MIN_TASKS_PER_PROCESS`) on this machine.
    let mut processes = Vec::new();
    procfs_backend()
        .fill(Query::processes(), &mut processes)
        .unwrap();
    let parked = ParkedThreads::spawn(THREADED * processes.len() + 8);
    for (name, mut pm) in backends(test) {
        // The first listing has one record per task and sets the shape
        // that the next ones follow: it must be threaded for this test.
        let mut recs = Vec::new();
        pm.fill_info(Query::all_tasks(), InfoFields::ALL, &mut recs)
            .unwrap();
        let leaders = recs.iter().filter(|r| r.tgid == Some(r.tid)).count();
        assert!(
            recs.len() >= THREADED * leaders,
            "{name}: {} tasks of {leaders} processes: too few threads for the test",
            recs.len()
        );
        let what = format!("{name}: a zombie leader's group");
        records_match_proc(&mut pm, Query::all_tasks(), zombie.pid, &zombie.tids, &what);
        let what = format!("{name}: our threads");
        records_match_proc(
            &mut pm,
            Query::all_tasks(),
            Pid::this_process(),
            &parked.tids,
            &what,
        );
        pm.fill_info(Query::all_tasks(), InfoFields::RSS, &mut recs)
            .unwrap();
        for tid in &zombie.tids {
            let rec = recs.iter().find(|r| r.tid == *tid).expect("a record");
            let live_thread = *tid != zombie.pid;
            assert_eq!(
                rec.rss_pages.is_some_and(|p| p > 0),
                live_thread,
                "{name}: {rec:?}"
            );
        }
    }
}
