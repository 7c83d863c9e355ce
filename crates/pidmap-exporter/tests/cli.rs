//! The command line: `--once` against /proc read independently, the
//! config and listen errors, the HTTP endpoint.

mod support;

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

use assert_cmd::Command as Cmd;
use predicates::prelude::*;
use support::{
    exporter, free_port, get, proc_fds, proc_threads, sample, sleep_named, wait_for, Children,
};

fn config(dir: &std::path::Path, text: &str) -> std::path::PathBuf {
    let path = dir.join("config.yml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A unique comm for this test run (at most 15 bytes).
fn unique(prefix: &str) -> String {
    format!("{prefix}{}", std::process::id() % 100_000)
}

#[test]
#[allow(
    clippy::cast_precision_loss,
    reason = "thread and fd counts, compared as the samples' f64: exact below 2^53"
)]
fn once_counts_a_spawned_group_as_proc_does() {
    let dir = tempfile::tempdir().unwrap();
    let name = unique("pmxonce");
    let bin = sleep_named(dir.path(), name.as_bytes());
    let mut kids = Children::default();
    let pids: Vec<u32> = (0..3)
        .map(|_| kids.spawn(Command::new(&bin).arg("600")))
        .collect();
    let cfg = config(
        dir.path(),
        &format!("process_names:\n  - name: 'grp-{{{{.Comm}}}}'\n    comm: [{name}]\n"),
    );
    // Let the children exec (their comm is the copy's name from then on).
    std::thread::sleep(Duration::from_millis(300));
    let out = Cmd::new(exporter())
        .args(["--once", "--config.path"])
        .arg(&cfg)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let g = format!("groupname=\"grp-{name}\"");
    assert_eq!(
        sample(&text, "namedprocess_namegroup_num_procs", &g),
        Some(3.0),
        "{text}"
    );
    let threads: u64 = pids.iter().map(|&p| proc_threads(p)).sum();
    assert_eq!(
        sample(&text, "namedprocess_namegroup_num_threads", &g),
        Some(threads as f64)
    );
    let fds: u64 = pids.iter().map(|&p| proc_fds(p)).sum();
    assert_eq!(
        sample(&text, "namedprocess_namegroup_open_filedesc", &g),
        Some(fds as f64)
    );
    let sleeping = format!("{g},state=\"Sleeping\"");
    assert_eq!(
        sample(&text, "namedprocess_namegroup_states", &sleeping),
        Some(3.0)
    );
    let rss = sample(
        &text,
        "namedprocess_namegroup_memory_bytes",
        &format!("{g},memtype=\"resident\""),
    )
    .unwrap();
    assert!(rss > 0.0, "resident memory {rss}");
    // Started within the last minute, by the wall clock.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start = sample(
        &text,
        "namedprocess_namegroup_oldest_start_time_seconds",
        &g,
    )
    .unwrap();
    assert!(
        (now - 60.0..=now + 1.0).contains(&start),
        "start {start}, now {now}"
    );
    assert!(text.contains("# TYPE namedprocess_namegroup_cpu_seconds_total counter"));
    assert!(sample(&text, "namedprocess_scrape_errors", "").is_none());
    assert!(text.contains("\nnamedprocess_scrape_errors 0\n"), "{text}");
}

#[test]
fn once_escapes_a_name_that_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let token = unique("nu");
    let mut name = b"pmx\xff\xfe".to_vec();
    name.extend_from_slice(token.as_bytes());
    let bin = sleep_named(dir.path(), &name);
    let mut kids = Children::default();
    kids.spawn(Command::new(&bin).arg("600"));
    let cfg = config(
        dir.path(),
        &format!("process_names:\n  - name: '{{{{.Comm}}}}'\n    cmdline: ['{token} 600$']\n"),
    );
    std::thread::sleep(Duration::from_millis(300));
    let out = Cmd::new(exporter())
        .args(["--once", "--config.path"])
        .arg(&cfg)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // `\xff` as four characters, its backslash escaped by the format.
    let g = format!("groupname=\"pmx\\\\xff\\\\xfe{token}\"");
    assert_eq!(
        sample(&text, "namedprocess_namegroup_num_procs", &g),
        Some(1.0),
        "{text}"
    );
}

fn assert_usage_error(args: &[&str], config_text: Option<&str>, wanted: &str) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Cmd::new(exporter());
    cmd.arg("--once").args(args);
    if let Some(text) = config_text {
        cmd.arg("-config.path").arg(config(dir.path(), text));
    }
    let out = cmd.assert().code(2).stdout("");
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains(wanted), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    if config_text.is_some() {
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.starts_with("pidmap-exporter: "), "{stderr}");
    }
}

#[test]
fn bad_configs_are_one_line_and_exit_2() {
    assert_usage_error(
        &["--config.path", "/nonexistent/pe.yml"],
        None,
        "cannot read config /nonexistent/pe.yml",
    );
    assert_usage_error(&[], Some("process_names: [\n"), "config ");
    assert_usage_error(
        &[],
        Some("process_names:\n  - name: x\n"),
        "no matchers provided",
    );
    assert_usage_error(
        &[],
        Some("process_names:\n  - cmdline: ['(']\n"),
        "bad cmdline regex",
    );
    assert_usage_error(
        &[],
        Some("process_names:\n  - name: '{{.Cwd}}'\n    comm: [x]\n"),
        "unsupported action",
    );
    assert_usage_error(
        &[],
        Some("process_names:\n  - comm: [x]\n    cmdlines: [y]\n"),
        "unknown field",
    );
    assert_usage_error(&[], Some("groups: []\n"), "process_names");
}

#[test]
fn bad_flags_exit_2() {
    assert_usage_error(&["--no-such-flag"], None, "--no-such-flag");
    assert_usage_error(&["-threads=maybe"], None, "maybe");
}

#[test]
fn process_exporters_refused_flags_are_named() {
    for (args, wanted) in [
        (
            &["-namemapping", "a,b"][..],
            "-namemapping is not supported",
        ),
        (&["-procnames=sshd"][..], "-procnames is not supported"),
        (&["-procfs", "/host/proc"][..], "-procfs is not supported"),
        (&["-man"][..], "-man is not supported"),
    ] {
        assert_usage_error(args, None, wanted);
    }
}

#[test]
fn process_exporters_other_flags_run() {
    let out = Cmd::new(exporter())
        .args([
            "--once",
            "-recheck",
            "-debug",
            "-gather-smaps=false",
            "-threads=false",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("memtype=\"virtual\""), "{text}");
    assert!(!text.contains("proportionalResident"), "{text}");
    let help = Cmd::new(exporter()).arg("--help").assert().success();
    let help = String::from_utf8(help.get_output().stdout.clone()).unwrap();
    for flag in [
        "--gather-smaps",
        "--recheck",
        "--debug",
        "--web.config.file",
        "[default: :9256]",
    ] {
        assert!(help.contains(flag), "{flag} not in --help:\n{help}");
    }
}

/// Out of fds, the message says so (the cause, not only what failed).
#[test]
fn out_of_fds_the_cause_is_kept() {
    let cmd = format!("ulimit -n 5; exec {} --once", exporter());
    Cmd::new("sh")
        .args(["-c", &cmd])
        .timeout(Duration::from_secs(20))
        .assert()
        .stderr(predicate::str::contains("Too many open files"));
}

#[test]
fn a_port_in_use_is_one_clear_error() {
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    Cmd::new(exporter())
        .args(["--listen", &addr])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(format!(
            "pidmap-exporter: cannot listen on {addr}:"
        )))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
}

/// Start a server on a free port; its URL.
fn serve(kids: &mut Children, extra: &[&str]) -> String {
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    kids.spawn(
        Command::new(exporter())
            .args(["--listen", &addr])
            .args(extra),
    );
    let url = format!("http://{addr}/metrics");
    wait_for(Duration::from_secs(20), "the exporter to listen", || {
        get(&url, None)
    });
    url
}

#[test]
fn http_serves_both_formats() {
    let mut kids = Children::default();
    let url = serve(&mut kids, &[]);
    let plain = get(&url, None).unwrap();
    assert_eq!(plain.status_code, 200);
    assert_eq!(
        plain.headers.get("content-type").map(String::as_str),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let body = plain.as_str().unwrap();
    assert!(body.contains("# TYPE namedprocess_namegroup_num_procs gauge"));
    assert!(!body.contains("# EOF"));
    let prom_accept = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let om = get(&url, Some(prom_accept)).unwrap();
    assert!(om.headers["content-type"].starts_with("application/openmetrics-text"));
    assert!(om.as_str().unwrap().ends_with("# EOF\n"));
    let missing = get(&url.replace("/metrics", "/nope"), None).unwrap();
    assert_eq!(missing.status_code, 404);
}

/// A config that groups nothing: these tests are about HTTP, and a scrape
/// of every process on a busy host can take seconds.
fn light_config(dir: &std::path::Path) -> String {
    config(dir, "process_names:\n  - comm: [pmx-no-such-process]\n")
        .display()
        .to_string()
}

#[test]
fn a_stuck_client_does_not_block_the_next_scrape() {
    let mut kids = Children::default();
    let dir = tempfile::tempdir().unwrap();
    let url = serve(&mut kids, &["--config.path", &light_config(dir.path())]);
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_owned();
    // One client sends half a request and stops; another asks for the
    // metrics and never reads the answer.
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let mut mute = TcpStream::connect(&addr).unwrap();
    mute.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    for _ in 0..3 {
        let started = Instant::now();
        let r = get(&url, None).expect("an answer");
        assert_eq!(r.status_code, 200);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
    }
    drop((half, mute));
}

#[test]
fn concurrent_scrapes_all_succeed() {
    let mut kids = Children::default();
    let dir = tempfile::tempdir().unwrap();
    let url = serve(&mut kids, &["--config.path", &light_config(dir.path())]);
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                get(&url, None).map(|r| (r.status_code, r.as_str().unwrap().len()))
            })
        })
        .collect();
    for h in handles {
        let (status, len) = h.join().unwrap().expect("an answer");
        assert_eq!(status, 200);
        assert!(len > 100);
    }
}
