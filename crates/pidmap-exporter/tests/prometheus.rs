//! The exporter scraped by a real Prometheus server (Debian's `prometheus`
//! package) on loopback, and queried through Prometheus's HTTP API: exact
//! process and thread counts of groups this test spawned, the rate of a
//! group that burns CPU, and a group whose name is not UTF-8.
//!
//! Needs the `prometheus` binary (CI installs it through `.ci/run`); the
//! test fails, never skips, without it.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{
    exporter, free_port, proc_threads, prometheus_binary, query, scalar, sleep_named,
    start_prometheus, wait_for, Children,
};

/// utime + stime of `pid` in seconds, from `/proc/PID/stat`.
#[allow(
    clippy::cast_precision_loss,
    reason = "clock ticks (and ticks per second): exact below 2^53"
)]
fn proc_cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_comm.split(' ').collect();
    // Fields 14 and 15 of stat; 3 is the first after the comm.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no memory effects.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one end-to-end scenario: start, scrape, then each query in turn"
)]
#[allow(
    clippy::cast_precision_loss,
    reason = "a thread count, compared as the query's f64: exact below 2^53"
)]
fn prometheus_scrapes_and_queries_spawned_groups() {
    let prometheus = prometheus_binary();
    let dir = tempfile::tempdir().unwrap();
    let token = format!("pmx{}", std::process::id() % 100_000);
    let mut kids = Children::default();

    // Two processes that burn CPU, two idle multi-threaded ones, and one
    // whose name (comm) is not UTF-8.
    let burners: Vec<u32> = (0..2)
        .map(|_| {
            kids.spawn(Command::new("/bin/sh").args([
                "-c",
                "while :; do :; done",
                &format!("burn-{token}"),
            ]))
        })
        .collect();
    let threaded: Vec<u32> = (0..2)
        .map(|_| {
            kids.spawn(
                Command::new(exporter())
                    .args([
                        "--listen",
                        "127.0.0.1:0",
                        "--web.telemetry-path",
                        &format!("/threads-{token}"),
                    ])
                    .stderr(Stdio::null()),
            )
        })
        .collect();
    let mut odd_name = b"u\xff\xfe".to_vec();
    odd_name.extend_from_slice(token.as_bytes());
    let odd = sleep_named(dir.path(), &odd_name);
    kids.spawn(Command::new(&odd).arg("600"));

    let config = dir.path().join("pe.yml");
    write(
        &config,
        &format!(
            "process_names:\n\
             \x20 - name: '{{{{.Comm}}}}'\n    cmdline: ['{token} 600$']\n\
             \x20 - name: 'burn-{token}'\n    cmdline: ['done burn-{token}$']\n\
             \x20 - name: 'threads-{token}'\n    cmdline: ['/threads-{token}$']\n"
        ),
    );
    let exporter_port = free_port();
    kids.spawn(
        Command::new(exporter())
            .args([
                "--listen",
                &format!("127.0.0.1:{exporter_port}"),
                "--config.path",
            ])
            .arg(&config),
    );

    let prom_config = dir.path().join("prometheus.yml");
    write(
        &prom_config,
        &format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: pidmap-exporter\n    static_configs:\n\
             \x20     - targets: ['127.0.0.1:{exporter_port}']\n"
        ),
    );
    let base = start_prometheus(&mut kids, &prometheus, dir.path(), &prom_config);

    // Exact counts, once the first scrape is in.
    let procs = |group: &str| {
        let q = format!("namedprocess_namegroup_num_procs{{groupname=\"{group}\"}}");
        scalar(&query(&base, &q))
    };
    let burn = format!("burn-{token}");
    let threads_group = format!("threads-{token}");
    wait_for(
        Duration::from_secs(60),
        "a scrape with the burn group",
        || procs(&burn),
    );
    assert_eq!(procs(&burn), Some(2.0));
    assert_eq!(procs(&threads_group), Some(2.0));
    let num_threads = |group: &str| {
        scalar(&query(
            &base,
            &format!("namedprocess_namegroup_num_threads{{groupname=\"{group}\"}}"),
        ))
    };
    assert_eq!(num_threads(&burn), Some(2.0));
    let want: u64 = threaded.iter().map(|&p| proc_threads(p)).sum();
    assert!(want > 2, "the idle exporters have threads: {want}");
    assert_eq!(num_threads(&threads_group), Some(want as f64));

    // The group that burned CPU: its rate over the last 10 s against
    // the rate /proc shows over the same 10 s (the window's edges are a
    // scrape interval apart at most), and the latest counter against /proc
    // read just after. Both busy loops share the machine with whatever
    // else runs, so the rate is compared, not fixed.
    let cpu = || burners.iter().map(|&p| proc_cpu_seconds(p)).sum::<f64>();
    let rate_q =
        format!("sum(rate(namedprocess_namegroup_cpu_seconds_total{{groupname=\"{burn}\"}}[10s]))");
    let (t0, cpu0) = (Instant::now(), cpu());
    std::thread::sleep(Duration::from_secs(10));
    let rate = scalar(&query(&base, &rate_q)).expect("a rate over 10 s of scrapes");
    let proc_rate = (cpu() - cpu0) / t0.elapsed().as_secs_f64();
    assert!(rate > 0.01, "the busy loops used no CPU? rate {rate}");
    assert!(
        (rate - proc_rate).abs() <= 0.3 * proc_rate + 0.05,
        "Prometheus's rate {rate} CPUs, /proc's {proc_rate}"
    );
    let total_q = format!("sum(namedprocess_namegroup_cpu_seconds_total{{groupname=\"{burn}\"}})");
    let counted = scalar(&query(&base, &total_q)).unwrap();
    let on_proc = cpu();
    assert!(
        counted <= on_proc && on_proc - counted < 2.0 * 2.0,
        "Prometheus has {counted} s, /proc says {on_proc} s"
    );

    // The name that is not UTF-8: its bytes \xff \xfe as `\xff\xfe`.
    let odd_label = format!("u\\xff\\xfe{token}");
    let by_regex = query(
        &base,
        &format!("namedprocess_namegroup_num_procs{{groupname=~\".*{token}\"}}"),
    );
    let labels: Vec<&str> = by_regex
        .iter()
        .filter_map(|r| r["metric"]["groupname"].as_str())
        .collect();
    assert!(labels.contains(&odd_label.as_str()), "{labels:?}");
    // And selected exactly: PromQL escapes the backslashes.
    let exact = format!("namedprocess_namegroup_num_procs{{groupname=\"u\\\\xff\\\\xfe{token}\"}}");
    assert_eq!(scalar(&query(&base, &exact)), Some(1.0));

    // Nothing went wrong on the way.
    let errors = query(&base, "sum(pidmap_exporter_errors_total) or vector(0)");
    assert_eq!(scalar(&errors), Some(0.0), "errors: {errors:?}");
    let up = query(&base, "up{job=\"pidmap-exporter\"}");
    assert_eq!(scalar(&up), Some(1.0));
}
