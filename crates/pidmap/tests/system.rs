//! System totals and user names against independent references: the
//! `procfs` crate's parsers of `/proc/meminfo` and `/proc/stat`,
//! `sysinfo(2)`, `/sys/devices/system/cpu/online`, and the `id` and
//! `getent` commands.

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use pidmap::monitor::{user_id, user_name, CpuTimes, SystemCpu, SystemMemory, UserNames};
use procfs::{Current, CurrentSI};

fn ticks_per_second() -> u64 {
    // SAFETY: sysconf has no preconditions.
    u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).expect("a positive _SC_CLK_TCK")
}

fn ticks(n: u64) -> Duration {
    Duration::from_nanos(n * (1_000_000_000 / ticks_per_second()))
}

#[test]
fn memory_matches_procfs_and_sysinfo() {
    let before = procfs::Meminfo::current().expect("procfs reads /proc/meminfo");
    let ours = SystemMemory::read().unwrap();
    let after = procfs::Meminfo::current().unwrap();
    // SAFETY: all-zero is a valid sysinfo (integers and padding).
    let mut si: libc::sysinfo = unsafe { std::mem::zeroed() };
    // SAFETY: `si` is a valid, writable struct sysinfo.
    assert_eq!(unsafe { libc::sysinfo(&mut si) }, 0);
    let unit = u64::from(si.mem_unit.max(1));

    // Totals do not move: equal exactly.
    assert_eq!(ours.total, before.mem_total);
    assert_eq!(ours.total, si.totalram * unit);
    assert_eq!(ours.swap_total, before.swap_total);
    assert_eq!(ours.swap_total, si.totalswap * unit);
    // The rest move while the test runs: between the two readings, give
    // or take 64 MiB.
    let slack = 64 << 20;
    let between = |ours: u64, a: u64, b: u64, what: &str| {
        assert!(
            ours + slack >= a.min(b) && ours <= a.max(b) + slack,
            "{what}: {ours} is not between {a} and {b}"
        );
    };
    between(ours.free, before.mem_free, after.mem_free, "free");
    let avail = |m: &procfs::Meminfo| m.mem_available.expect("a kernel since 3.14");
    between(ours.available, avail(&before), avail(&after), "available");
    let buff_cache = |m: &procfs::Meminfo| m.buffers + m.cached + m.s_reclaimable.unwrap_or(0);
    between(
        ours.buff_cache,
        buff_cache(&before),
        buff_cache(&after),
        "buff/cache",
    );
    between(
        ours.swap_free,
        before.swap_free,
        after.swap_free,
        "swap free",
    );
    assert!(ours.used() <= ours.total && ours.swap_used() <= ours.swap_total);
}

/// The numbers of the online CPUs, from sysfs (`0-3,5`).
fn online_cpus() -> Vec<u32> {
    let text = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let mut cpus = Vec::new();
    for range in text.trim().split(',') {
        let (a, b) = range.split_once('-').unwrap_or((range, range));
        cpus.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap());
    }
    cpus
}

#[test]
fn cpu_times_match_procfs() {
    let before = procfs::KernelStats::current().expect("procfs reads /proc/stat");
    let ours = SystemCpu::read().unwrap();
    let after = procfs::KernelStats::current().unwrap();

    let numbers: Vec<u32> = ours.per_cpu.iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, online_cpus());
    assert_eq!(ours.per_cpu.len(), before.cpu_time.len());

    // Each counter only grows (but idle and iowait, which may step back a
    // little on some kernels): ours was read between procfs's two.
    let check = |ours: &CpuTimes, a: &procfs::CpuTime, b: &procfs::CpuTime, what: &str| {
        let fields = [
            ("user", ours.user, a.user, b.user),
            ("nice", ours.nice, a.nice, b.nice),
            ("system", ours.system, a.system, b.system),
            ("irq", ours.irq, a.irq.unwrap(), b.irq.unwrap()),
            (
                "softirq",
                ours.softirq,
                a.softirq.unwrap(),
                b.softirq.unwrap(),
            ),
            ("steal", ours.steal, a.steal.unwrap(), b.steal.unwrap()),
        ];
        for (name, ours, a, b) in fields {
            assert!(
                ticks(a) <= ours && ours <= ticks(b),
                "{what} {name}: {ours:?} is not between {a} and {b} ticks"
            );
        }
        let slack = ticks(ticks_per_second()); // a second
        for (name, ours, a, b) in [
            ("idle", ours.idle, a.idle, b.idle),
            ("iowait", ours.iowait, a.iowait.unwrap(), b.iowait.unwrap()),
        ] {
            assert!(
                ticks(a) <= ours + slack && ours <= ticks(b) + slack,
                "{what} {name}: {ours:?} is not between {a} and {b} ticks"
            );
        }
    };
    check(&ours.total, &before.total, &after.total, "all CPUs");
    for (i, (n, times)) in ours.per_cpu.iter().enumerate() {
        check(
            times,
            &before.cpu_time[i],
            &after.cpu_time[i],
            &format!("cpu{n}"),
        );
    }
}

#[test]
fn cpu_percent_of_a_busy_interval() {
    let before = SystemCpu::read().unwrap();
    // Keep a CPU busy for 200 ms.
    let start = std::time::Instant::now();
    let mut x = 0u64;
    while start.elapsed() < Duration::from_millis(200) {
        x = std::hint::black_box(x.wrapping_add(1));
    }
    let now = SystemCpu::read().unwrap();
    let p = now.total.percent_since(&before.total);
    let sum = p.user + p.nice + p.system + p.idle + p.iowait + p.irq + p.softirq + p.steal;
    assert!((sum - 100.0).abs() < 1e-6, "{p:?}");
    // One of the CPUs was busy: at least a share of it (half of one, as
    // the tick accounting is coarse and a VM may steal).
    let cpus = f64::from(u32::try_from(now.per_cpu.len()).unwrap());
    assert!(p.busy() >= 50.0 / cpus, "{p:?} over {cpus} CPUs");
}

fn command(args: &[&str]) -> String {
    let out = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn user_names_match_id() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let name = command(&["id", "-nu"]);
    let name = name.trim();
    assert_eq!(user_name(euid).unwrap(), Some(name.into()));
    assert_eq!(user_id(name).unwrap(), Some(euid));
    assert_eq!(UserNames::new().get(euid), name);
}

/// Every entry of the user database as NSS lists it (`getent passwd`), or,
/// where getent is not installed (the test guest's busybox has none), the
/// /etc/passwd that NSS's files backend reads there.
fn passwd_entries() -> String {
    match Command::new("getent").arg("passwd").output() {
        Ok(out) => {
            assert!(out.status.success(), "getent passwd: {:?}", out.status);
            String::from_utf8(out.stdout).unwrap()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::read_to_string("/etc/passwd").unwrap()
        }
        Err(e) => panic!("getent passwd: {e}"),
    }
}

#[test]
fn user_names_match_getent() {
    // Every user of the database, as NSS lists them; where two entries
    // share a uid (or a name), the first is the one a lookup finds.
    let passwd = passwd_entries();
    let mut by_uid: HashMap<u32, &str> = HashMap::new();
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    for line in passwd.lines() {
        let fields: Vec<&str> = line.split(':').collect();
        let uid: u32 = fields[2].parse().unwrap();
        by_uid.entry(uid).or_insert(fields[0]);
        by_name.entry(fields[0]).or_insert(uid);
    }
    assert!(by_uid.contains_key(&0), "{passwd}");
    let mut names = UserNames::new();
    for (&uid, &name) in &by_uid {
        assert_eq!(user_name(uid).unwrap(), Some(name.into()), "uid {uid}");
        assert_eq!(names.get(uid), name);
    }
    for (&name, &uid) in &by_name {
        assert_eq!(user_id(name).unwrap(), Some(uid), "{name}");
    }
    // A uid no entry has.
    let unused = (1000..u32::MAX).find(|u| !by_uid.contains_key(u)).unwrap();
    assert_eq!(user_name(unused).unwrap(), None);
    assert_eq!(names.get(unused), unused.to_string());
}
