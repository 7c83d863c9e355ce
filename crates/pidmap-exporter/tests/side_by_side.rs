//! The real process-exporter (Debian's `prometheus-process-exporter`)
//! and this exporter, side by side on the same spawned workload with the
//! same config: the same families with the same types, the same series
//! (family and label set), and values within each family's tolerance.
//!
//! It fails, and does not skip, when process-exporter is not installed.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use prometheus_parse::{Scrape, Value};
use support::{exporter, free_ports, get, sleep_named, wait_for, Children};

/// Every family process-exporter 0.7.10 serves with `-threads=true
/// -gather-smaps=true`, and its type.
const FAMILIES: &[(&str, &str)] = &[
    ("namedprocess_namegroup_context_switches_total", "counter"),
    ("namedprocess_namegroup_cpu_seconds_total", "counter"),
    ("namedprocess_namegroup_major_page_faults_total", "counter"),
    ("namedprocess_namegroup_memory_bytes", "gauge"),
    ("namedprocess_namegroup_minor_page_faults_total", "counter"),
    ("namedprocess_namegroup_num_procs", "gauge"),
    ("namedprocess_namegroup_num_threads", "gauge"),
    ("namedprocess_namegroup_oldest_start_time_seconds", "gauge"),
    ("namedprocess_namegroup_open_filedesc", "gauge"),
    ("namedprocess_namegroup_read_bytes_total", "counter"),
    ("namedprocess_namegroup_states", "gauge"),
    (
        "namedprocess_namegroup_thread_context_switches_total",
        "counter",
    ),
    ("namedprocess_namegroup_thread_count", "gauge"),
    ("namedprocess_namegroup_thread_cpu_seconds_total", "counter"),
    ("namedprocess_namegroup_thread_io_bytes_total", "counter"),
    (
        "namedprocess_namegroup_thread_major_page_faults_total",
        "counter",
    ),
    (
        "namedprocess_namegroup_thread_minor_page_faults_total",
        "counter",
    ),
    ("namedprocess_namegroup_threads_wchan", "gauge"),
    ("namedprocess_namegroup_worst_fd_ratio", "gauge"),
    ("namedprocess_namegroup_write_bytes_total", "counter"),
    ("namedprocess_scrape_errors", "counter"),
    ("namedprocess_scrape_partial_errors", "counter"),
    ("namedprocess_scrape_procread_errors", "counter"),
];

/// process-exporter's binary: Debian's name, or upstream's.
fn process_exporter() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["prometheus-process-exporter", "process-exporter"] {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "process-exporter is not installed (Debian: apt-get install prometheus-process-exporter); \
         this test compares against it and does not skip"
    );
}

/// One series: family, sorted labels.
type Key = (String, Vec<(String, String)>);

struct Exposition {
    kinds: BTreeMap<String, &'static str>,
    values: BTreeMap<Key, f64>,
}

fn parse(text: &str, groups: &BTreeSet<String>) -> Exposition {
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("a valid exposition");
    let mut kinds = BTreeMap::new();
    let mut values = BTreeMap::new();
    for s in scrape.samples {
        if !s.metric.starts_with("namedprocess_") {
            continue;
        }
        let (kind, value) = match s.value {
            Value::Counter(v) => ("counter", v),
            Value::Gauge(v) => ("gauge", v),
            Value::Untyped(v) => ("untyped", v),
            _ => ("other", f64::NAN),
        };
        kinds.insert(s.metric.clone(), kind);
        // Only the workload's groups (and the group-less scrape counters).
        if let Some(g) = s.labels.get("groupname") {
            if !groups.contains(g) {
                continue;
            }
        }
        let mut labels: Vec<(String, String)> = s
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        labels.sort();
        values.insert((s.metric, labels), value);
    }
    Exposition { kinds, values }
}

/// Whether `ours` is close enough to `theirs` for this family; the
/// reason if not.
fn within(key: &Key, ours: f64, theirs: f64, ours_all: &BTreeMap<Key, f64>) -> Result<(), String> {
    let (family, labels) = key;
    let label = |name: &str| {
        labels
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    };
    let close =
        |rel: f64, abs: f64| (ours - theirs).abs() <= rel * theirs.abs().max(ours.abs()) + abs;
    let ok = match family.as_str() {
        // Counts of things that do not change while the workload idles.
        "namedprocess_namegroup_num_procs"
        | "namedprocess_namegroup_num_threads"
        | "namedprocess_namegroup_open_filedesc"
        | "namedprocess_namegroup_thread_count"
        | "namedprocess_namegroup_states"
        | "namedprocess_namegroup_threads_wchan" => (ours - theirs).abs() < 0.5,
        // Whole seconds since the epoch, from the same boot time.
        "namedprocess_namegroup_oldest_start_time_seconds" => close(0.0, 1.0),
        "namedprocess_namegroup_worst_fd_ratio" => close(1e-9, 0.0),
        // `stat`'s rss (process-exporter) against `status`'s VmRSS (here)
        // may differ by the per-CPU counters' slack; the rest is read
        // from the same lines.
        "namedprocess_namegroup_memory_bytes" => match label("memtype") {
            "resident" | "proportionalResident" => close(0.1, 4.0 * 1024.0 * 1024.0),
            _ => close(0.01, 0.0),
        },
        "namedprocess_namegroup_cpu_seconds_total" => close(0.0, 0.1),
        "namedprocess_namegroup_major_page_faults_total"
        | "namedprocess_namegroup_minor_page_faults_total"
        | "namedprocess_namegroup_context_switches_total" => close(0.1, 50.0),
        "namedprocess_namegroup_read_bytes_total" | "namedprocess_namegroup_write_bytes_total" => {
            close(0.1, 65536.0)
        }
        // process-exporter counts a thread's usage from its first scrape
        // on; this exporter from the thread's start. So here at least as
        // much, and no more than the whole group's counter.
        f if f.starts_with("namedprocess_namegroup_thread_") => {
            let group_family = match f {
                "namedprocess_namegroup_thread_cpu_seconds_total" => {
                    "namedprocess_namegroup_cpu_seconds_total"
                }
                "namedprocess_namegroup_thread_context_switches_total" => {
                    "namedprocess_namegroup_context_switches_total"
                }
                "namedprocess_namegroup_thread_major_page_faults_total" => {
                    "namedprocess_namegroup_major_page_faults_total"
                }
                "namedprocess_namegroup_thread_minor_page_faults_total" => {
                    "namedprocess_namegroup_minor_page_faults_total"
                }
                _ => match label("iomode") {
                    "read" => "namedprocess_namegroup_read_bytes_total",
                    _ => "namedprocess_namegroup_write_bytes_total",
                },
            };
            let group_labels: Vec<(String, String)> = labels
                .iter()
                .filter(|(k, _)| k != "threadname" && k != "iomode")
                .cloned()
                .collect();
            let group_total = ours_all
                .get(&(group_family.to_owned(), group_labels))
                .copied()
                .unwrap_or(f64::NAN);
            let slack = if f.contains("cpu") { 0.1 } else { 50.0 };
            ours + slack >= theirs && ours <= group_total + slack
        }
        // Error counts: process-exporter also counts files of processes
        // it does not group; only the type is compared.
        f if f.starts_with("namedprocess_scrape_") => ours >= 0.0,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{family}{labels:?}: here {ours}, process-exporter {theirs}"
        ))
    }
}

fn compare(ours: &Exposition, theirs: &Exposition) -> Vec<String> {
    let mut problems = Vec::new();
    let our_keys: BTreeSet<&Key> = ours.values.keys().collect();
    let their_keys: BTreeSet<&Key> = theirs.values.keys().collect();
    for k in their_keys.difference(&our_keys) {
        problems.push(format!("missing here: {k:?}"));
    }
    for k in our_keys.difference(&their_keys) {
        problems.push(format!("not in process-exporter: {k:?}"));
    }
    for (k, &v) in &ours.values {
        if let Some(&t) = theirs.values.get(k) {
            if let Err(e) = within(k, v, t, &ours.values) {
                problems.push(e);
            }
        }
    }
    problems
}

fn scrape(port: u16) -> String {
    let url = format!("http://127.0.0.1:{port}/metrics");
    let resp = get(&url, None).unwrap_or_else(|| panic!("no answer from {url}"));
    assert_eq!(resp.status_code, 200, "{url}");
    resp.as_str().expect("UTF-8").to_owned()
}

fn copy_named(dir: &Path, from: &str, name: &str) -> PathBuf {
    let path = dir.join(OsStr::from_bytes(name.as_bytes()));
    std::fs::copy(from, &path).expect("copying a binary");
    path
}

#[test]
fn families_labels_and_values_match_process_exporter() {
    let pe = process_exporter();
    let dir = tempfile::tempdir().unwrap();
    let tag = std::process::id() % 100_000;
    let sleeper = format!("pmxsbs{tag}");
    let shell = format!("pmxsh{tag}");
    let path = format!("sbs{tag}");
    let config = dir.path().join("config.yml");
    std::fs::write(
        &config,
        format!(
            "process_names:\n\
             \x20 - name: sleepers\n    comm: [{sleeper}]\n\
             \x20 - name: 'exe:{{{{.ExeBase}}}}'\n    exe: [{shell}]\n\
             \x20 - name: '{{{{.Comm}}}}:{{{{.Matches.path}}}}'\n    cmdline: ['--web.telemetry-path /(?P<path>{path})']\n"
        ),
    )
    .unwrap();
    let groups: BTreeSet<String> = [
        "sleepers".to_owned(),
        format!("exe:{shell}"),
        format!("pidmap-exporter:{path}"),
    ]
    .into();

    let mut kids = Children::default();
    let [pe_port, our_port] = free_ports();
    kids.spawn(
        Command::new(&pe)
            .arg("-config.path")
            .arg(&config)
            .arg(format!("-web.listen-address=127.0.0.1:{pe_port}"))
            .stderr(Stdio::null()),
    );
    kids.spawn(
        Command::new(exporter())
            .arg("-config.path")
            .arg(&config)
            .arg(format!("-web.listen-address=127.0.0.1:{our_port}"))
            .stderr(Stdio::null()),
    );
    // Both up, and past their first reading of the system: the workload
    // starts after it, so both count its whole usage.
    for (name, port) in [("process-exporter", pe_port), ("pidmap-exporter", our_port)] {
        let what = format!("{name} to answer on port {port}");
        wait_for(Duration::from_secs(20), &what, || {
            get(&format!("http://127.0.0.1:{port}/metrics"), None).filter(|r| r.status_code == 200)
        });
    }

    // process-exporter dates a process from the boot time in whole
    // seconds, up to a second early: one started within a second of its
    // first reading would count as already running (from 0 on).
    std::thread::sleep(Duration::from_secs(2));

    // The workload: two sleepers, a shell that waits for a child, and an
    // idle multi-threaded process (this exporter, serving nobody).
    let sleep_bin = sleep_named(dir.path(), sleeper.as_bytes());
    for _ in 0..2 {
        kids.spawn(Command::new(&sleep_bin).arg("600"));
    }
    let sh = copy_named(dir.path(), "/bin/sh", &shell);
    kids.spawn(Command::new(&sh).args(["-c", "sleep 600; :"]));
    kids.spawn(
        Command::new(exporter())
            .args(["--listen", "127.0.0.1:0", "--web.telemetry-path"])
            .arg(format!("/{path}"))
            .stderr(Stdio::null()),
    );
    // Let them exec and settle (sleeping, their threads started).
    std::thread::sleep(Duration::from_millis(1500));

    let mut problems = Vec::new();
    for attempt in 0..3 {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(700));
        }
        let theirs = parse(&scrape(pe_port), &groups);
        let ours = parse(&scrape(our_port), &groups);

        // The families and their types, whatever the values.
        let expected: BTreeMap<String, &str> = FAMILIES
            .iter()
            .map(|(n, k)| ((*n).to_owned(), *k))
            .collect();
        assert_eq!(
            theirs.kinds, expected,
            "process-exporter's own families changed?"
        );
        assert_eq!(ours.kinds, expected, "families and types here");
        // The workload's groups are there, in both.
        for g in &groups {
            let key = (
                "namedprocess_namegroup_num_procs".to_owned(),
                vec![("groupname".to_owned(), g.clone())],
            );
            assert!(
                theirs.values.get(&key).is_some_and(|&v| v >= 1.0),
                "process-exporter has no group {g}"
            );
        }
        problems = compare(&ours, &theirs);
        if problems.is_empty() {
            return;
        }
    }
    panic!(
        "differences from process-exporter (3 attempts; the last):\n{}",
        problems.join("\n")
    );
}

/// The group names of `{{.StartTime}}`, `{{.Cgroups}}` and a missing
/// capture (`<no value>`) are process-exporter's, byte for byte.
#[test]
fn templates_render_as_process_exporter_renders_them() {
    let pe = process_exporter();
    let dir = tempfile::tempdir().unwrap();
    let sleeper = format!("pmxtpl{}", std::process::id() % 100_000);
    let config = dir.path().join("config.yml");
    std::fs::write(
        &config,
        format!(
            "process_names:\n  - name: '{{{{.Comm}}}}|{{{{.StartTime}}}}|{{{{.Cgroups}}}}|{{{{.Matches.missing}}}}|{{{{.PID}}}}'\n    comm: [{sleeper}]\n"
        ),
    )
    .unwrap();
    let mut kids = Children::default();
    let [pe_port, our_port] = free_ports();
    kids.spawn(
        Command::new(&pe)
            .arg("-config.path")
            .arg(&config)
            .arg(format!("-web.listen-address=127.0.0.1:{pe_port}"))
            .stderr(Stdio::null()),
    );
    kids.spawn(
        Command::new(exporter())
            .arg("-config.path")
            .arg(&config)
            .arg(format!("-web.listen-address=127.0.0.1:{our_port}"))
            .stderr(Stdio::null()),
    );
    for (name, port) in [("process-exporter", pe_port), ("pidmap-exporter", our_port)] {
        let what = format!("{name} to answer on port {port}");
        wait_for(Duration::from_secs(20), &what, || {
            get(&format!("http://127.0.0.1:{port}/metrics"), None).filter(|r| r.status_code == 200)
        });
    }
    let bin = sleep_named(dir.path(), sleeper.as_bytes());
    kids.spawn(Command::new(&bin).arg("600"));
    std::thread::sleep(Duration::from_millis(500));
    let names = |text: &str| -> BTreeSet<String> {
        let scrape =
            Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("a valid exposition");
        scrape
            .samples
            .into_iter()
            .filter(|s| s.metric == "namedprocess_namegroup_num_procs")
            .filter(|s| matches!(s.value, Value::Gauge(v) if v >= 1.0))
            .filter_map(|s| s.labels.get("groupname").map(str::to_owned))
            .collect()
    };
    let theirs = names(&scrape(pe_port));
    let ours = names(&scrape(our_port));
    assert_eq!(theirs.len(), 1, "{theirs:?}");
    let name = theirs.iter().next().unwrap();
    assert!(
        name.starts_with(&format!("{sleeper}|")) && name.contains("|<no value>|"),
        "{name}"
    );
    assert_eq!(ours, theirs);
}
