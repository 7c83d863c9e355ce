//! `ProcessTable` against /proc read independently: the pid set against a
//! readdir of /proc, each row against its `/proc/PID/stat`, a child's
//! CPU % against its own CPU times, and the system totals against
//! `/proc/stat` and `/proc/meminfo`.
#![cfg(feature = "fallback")]

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pidmap::monitor::ProcessTable;
use pidmap::{Backend, Pid, Pidmap, TaskState};

fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).expect("a positive _SC_CLK_TCK")
}

fn ticks(n: u64) -> Duration {
    Duration::from_nanos(n * (1_000_000_000 / ticks_per_second()))
}

/// The numeric names of /proc.
fn readdir_proc() -> BTreeSet<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The fields of `/proc/PID/stat` after the name, and the name; `None`
/// once the process is gone.
fn stat(pid: i32) -> Option<(String, Vec<String>)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text[open + 1..close].to_string();
    let rest = text[close + 2..]
        .split_whitespace()
        .map(str::to_string)
        .collect();
    Some((name, rest))
}

/// `stat`'s field `n` (1-based, as proc(5) numbers them) as a number.
fn field(rest: &[String], n: usize) -> u64 {
    rest[n - 3].parse().unwrap()
}

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(cmd: &mut Command) -> Kill {
    Kill(cmd.stdin(Stdio::null()).spawn().unwrap())
}

fn table() -> ProcessTable {
    ProcessTable::with_handle(Pidmap::with_backend(Backend::Procfs).unwrap())
}

#[test]
fn the_pids_are_those_of_a_readdir_of_proc() {
    let mut t = table();
    let before = readdir_proc();
    t.refresh_processes().unwrap();
    let after = readdir_proc();
    let listed: BTreeSet<i32> = t.processes().map(|p| p.pid.as_raw()).collect();
    assert_eq!(listed.len(), t.len());
    // Alive for both readdirs: alive for the whole refresh.
    for pid in before.intersection(&after) {
        assert!(listed.contains(pid), "{pid} is in /proc but not listed");
    }
    // Listed but in neither readdir: it was born after the first and
    // gone before the second.
    for pid in listed.difference(&before) {
        if !after.contains(pid) {
            assert!(
                stat(*pid).is_none(),
                "{pid} is listed, alive, and not in /proc"
            );
        }
    }
    assert!(listed.contains(&Pid::this_process().as_raw()));
}

#[test]
fn each_row_is_its_stat() {
    let child = spawn(Command::new("sleep").arg("30"));
    let child_pid = i32::try_from(child.0.id()).unwrap();
    // Until the child has exec'd and gone to sleep, its name and state
    // are still changing.
    let deadline = Instant::now() + Duration::from_secs(10);
    while stat(child_pid).is_none_or(|(name, rest)| name != "sleep" || rest[0] != "S") {
        assert!(Instant::now() < deadline, "sleep did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Each process's name, parent, flags and start time before and after
    // the refresh: a row is compared when they did not change (no exec,
    // rename or reparenting raced with it).
    let snapshot = || -> BTreeMap<i32, (String, u64, u64, u64)> {
        readdir_proc()
            .into_iter()
            .filter_map(|pid| {
                let (name, rest) = stat(pid)?;
                Some((
                    pid,
                    (name, field(&rest, 4), field(&rest, 9), field(&rest, 22)),
                ))
            })
            .collect()
    };
    let before = snapshot();
    let mut t = table();
    t.refresh_processes().unwrap();
    let after = snapshot();
    let page = u64::try_from(rustix::param::page_size()).unwrap();
    let mut compared = 0;
    for p in t.processes() {
        let pid = p.pid.as_raw();
        let (Some(then), Some(now)) = (before.get(&pid), after.get(&pid)) else {
            continue; // born or gone meanwhile
        };
        if then != now {
            continue; // changed meanwhile
        }
        let (name, ppid, flags, start) = now;
        // Stable across the refresh: the row must say the same.
        assert_eq!(ticks(*start), p.start_time, "{pid}");
        // A kernel worker's name says what it works on now
        // (`kworker/u8:3-writeback`): it may change and change back.
        if !p.kernel_thread {
            assert_eq!(name.as_bytes(), p.name.as_bytes(), "{pid}");
        }
        assert_eq!(*ppid, u64::try_from(p.ppid.as_raw()).unwrap(), "{pid}");
        assert_eq!(flags & 0x0020_0000 != 0, p.kernel_thread, "{pid}");
        assert!(p.cpu_percent.is_none(), "a first refresh has no CPU %");
        compared += 1;
    }
    assert!(compared > 1, "compared only {compared} rows");

    let kid = t
        .process(Pid::new(child_pid).unwrap())
        .expect("the child is listed");
    assert_eq!(kid.parent(), Some(Pid::this_process()));
    assert_eq!(kid.name.as_bytes(), b"sleep");
    assert_eq!(kid.threads, 1);
    assert_eq!(kid.state, TaskState::Sleeping);
    // SAFETY: getuid and geteuid have no preconditions.
    let (uid, euid) = unsafe { (libc::getuid(), libc::geteuid()) };
    assert_eq!((kid.uid, kid.euid), (Some(uid), Some(euid)));
    let statm = std::fs::read_to_string(format!("/proc/{child_pid}/statm")).unwrap();
    let resident: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_eq!(kid.memory, resident * page);
    let children: Vec<i32> = t
        .children(Pid::this_process())
        .map(|p| p.pid.as_raw())
        .collect();
    assert!(children.contains(&child_pid), "{children:?}");

    // A second refresh: the sleeping child used no CPU in between.
    std::thread::sleep(Duration::from_millis(30));
    t.refresh_processes().unwrap();
    let kid = t.process(Pid::new(child_pid).unwrap()).unwrap();
    assert_eq!(kid.cpu_percent, Some(0.0));
}

#[test]
fn cpu_percent_is_the_growth_of_the_stat_times_over_the_interval() {
    let busy = spawn(Command::new("sh").args(["-c", "while :; do :; done"]));
    let pid = i32::try_from(busy.0.id()).unwrap();
    let cpu = || {
        let (_, rest) = stat(pid).unwrap();
        ticks(field(&rest, 14) + field(&rest, 15))
    };
    let mut t = table();
    let cpu_before = cpu();
    let a = Instant::now();
    t.refresh_processes().unwrap();
    let b = Instant::now();
    std::thread::sleep(Duration::from_millis(400));
    let c = Instant::now();
    t.refresh_processes().unwrap();
    let d = Instant::now();
    let cpu_after = cpu();
    let got = t
        .process(Pid::new(pid).unwrap())
        .unwrap()
        .cpu_percent
        .unwrap();
    // The table's interval lies between the two refreshes' ends and
    // starts; the child's CPU time in it is at most what /proc shows
    // around both, and at least that less what it could use during the
    // two refreshes, give or take a tick at each end.
    let used = (cpu_after - cpu_before).as_secs_f64();
    let tick = ticks(1).as_secs_f64();
    let during_refreshes = ((b - a) + (d - c)).as_secs_f64();
    let high = (used + 2.0 * tick) / (c - b).as_secs_f64() * 100.0;
    let low = (used - during_refreshes - 2.0 * tick) / (d - a).as_secs_f64() * 100.0;
    assert!(
        (low..=high).contains(&got),
        "{got:.1} % outside {low:.1}..{high:.1} (used {used} s)"
    );
    assert!(got > 0.0, "a busy loop used no CPU: {got}");
}

#[test]
fn without_kernel_threads_and_system_totals() {
    let mut t = table().kernel_threads(false);
    assert!(t.cpu_usage().is_none() && t.memory().is_none());
    t.refresh().unwrap();
    assert!(t.cpu_usage().is_none(), "one reading gives no CPU use");
    assert!(t.processes().all(|p| !p.kernel_thread));
    for p in t.processes() {
        if let Some((_, rest)) = stat(p.pid.as_raw()) {
            assert_eq!(field(&rest, 9) & 0x0020_0000, 0, "{} is a kthread", p.pid);
        }
    }
    std::thread::sleep(Duration::from_millis(30));
    t.refresh().unwrap();
    let cpus: BTreeSet<u32> = std::fs::read_to_string("/proc/stat")
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("cpu")?.split(' ').next()?.parse().ok())
        .collect();
    let usage: BTreeSet<u32> = t.cpus_usage().iter().map(|(n, _)| *n).collect();
    assert_eq!(usage, cpus);
    let total = t.cpu_usage().unwrap();
    assert!((total.busy() + total.idle + total.iowait - 100.0).abs() < 0.01);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .parse()
        .unwrap();
    assert_eq!(t.memory().unwrap().total, kib * 1024);
    let me = t.process(Pid::this_process()).unwrap();
    let pct = t.memory_percent(me).unwrap();
    assert!(pct > 0.0 && pct < 100.0, "{pct}");
    let up = t.uptime().unwrap().up;
    assert!(me.run_time(up) <= up && me.start_time <= up);
    assert!(t.load_average().unwrap().tasks > 0);
}

/// What a sysinfo user had: the same processes (less the races) with the
/// same parents, from sysinfo's own reading of /proc.
#[test]
fn the_processes_and_parents_are_sysinfo_s() {
    use sysinfo::{ProcessRefreshKind, ProcessesToUpdate, System};
    let sysinfo_processes = || -> BTreeMap<i32, i32> {
        let mut sys = System::new();
        sys.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing(),
        );
        sys.processes()
            .iter()
            .filter(|(_, p)| p.thread_kind() != Some(sysinfo::ThreadKind::Userland))
            .map(|(pid, p)| {
                let parent = p.parent().map_or(0, sysinfo::Pid::as_u32);
                (
                    i32::try_from(pid.as_u32()).unwrap(),
                    i32::try_from(parent).unwrap(),
                )
            })
            .collect()
    };
    let mut t = table();
    let before = sysinfo_processes();
    t.refresh_processes().unwrap();
    let after = sysinfo_processes();
    let mut compared = 0;
    for (pid, parent) in &before {
        if after.get(pid) != Some(parent) {
            continue; // gone, reused or reparented meanwhile
        }
        let p = t
            .process(Pid::new(*pid).unwrap())
            .unwrap_or_else(|| panic!("{pid} is in sysinfo's listings but not ours"));
        assert_eq!(p.ppid.as_raw(), *parent, "{pid}");
        compared += 1;
    }
    assert!(compared > 1, "compared only {compared}");
    for p in t.processes() {
        let pid = p.pid.as_raw();
        if !before.contains_key(&pid) && !after.contains_key(&pid) {
            assert!(
                stat(pid).is_none(),
                "{pid} is listed, alive, and not in sysinfo's"
            );
        }
    }
}
