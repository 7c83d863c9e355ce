//! Helpers shared by the integration tests: processes that are killed when
//! the test ends, free loopback ports, HTTP through `minreq`.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::net::TcpListener;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The exporter binary cargo built for these tests.
pub fn exporter() -> &'static str {
    env!("CARGO_BIN_EXE_pidmap-exporter")
}

/// Children killed and reaped on drop.
#[derive(Default)]
pub struct Children(pub Vec<Child>);

impl Children {
    pub fn spawn(&mut self, cmd: &mut Command) -> u32 {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
        let pid = child.id();
        self.0.push(child);
        pid
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A loopback port nobody listens on (right now).
pub fn free_port() -> u16 {
    free_ports::<1>()[0]
}

/// `N` loopback ports free now and distinct from each other: all are held
/// until the last is chosen, since a port let go may be the next one given.
pub fn free_ports<const N: usize>() -> [u16; N] {
    let held: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("binding a loopback port"))
        .collect();
    std::array::from_fn(|i| {
        held[i]
            .local_addr()
            .expect("a bound listener's address")
            .port()
    })
}

/// A copy of `sleep` under `name` in `dir` (the exec'd file's name is the
/// process's comm).
pub fn sleep_named(dir: &Path, name: &[u8]) -> PathBuf {
    let path = dir.join(OsStr::from_bytes(name));
    let sleep = ["/usr/bin/sleep", "/bin/sleep"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("sleep(1) is installed");
    std::fs::copy(sleep, &path).expect("copying sleep");
    path
}

/// Wait until `f` gives `Some`, up to `timeout`.
pub fn wait_for<T>(timeout: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// GET `url`; the status and body, or `None` if nobody answered.
pub fn get(url: &str, accept: Option<&str>) -> Option<minreq::Response> {
    let mut req = minreq::get(url).with_timeout(10);
    if let Some(a) = accept {
        req = req.with_header("Accept", a);
    }
    req.send().ok()
}

/// The value of the sample `name{labels}` in a text exposition, where
/// `labels` is the exact label text between the braces.
pub fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.trim().parse().expect("a number"))
}

/// `Threads:` of `/proc/PID/status`: the kernel's own count.
pub fn proc_threads(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .expect("a Threads line")
        .trim()
        .parse()
        .expect("a number")
}

/// How many fds `/proc/PID/fd` lists.
pub fn proc_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd dir")
        .count() as u64
}

/// Debian's `prometheus` server binary; the test fails (it does not skip)
/// without it.
pub fn prometheus_binary() -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin")])
        .map(|dir| dir.join("prometheus"))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "the prometheus server binary is not installed: this test needs it \
             (Debian: apt-get install prometheus; CI installs it in .ci/run)"
        )
    })
}

/// Starts the Prometheus server `binary` with `config` on a free loopback
/// port, its data and its log (`prometheus.log`) in `dir`, and waits up to
/// 60 s for it to be ready; its base URL.
pub fn start_prometheus(kids: &mut Children, binary: &Path, dir: &Path, config: &Path) -> String {
    let port = free_port();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    kids.spawn(
        Command::new(binary)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stderr(log),
    );
    let base = format!("http://127.0.0.1:{port}");
    let ready = Instant::now() + Duration::from_secs(60);
    while get(&format!("{base}/-/ready"), None).is_none_or(|r| r.status_code != 200) {
        assert!(
            Instant::now() < ready,
            "Prometheus did not get ready:\n{}",
            prometheus_log(dir)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    base
}

/// What the Prometheus of [`start_prometheus`] logged in `dir`.
pub fn prometheus_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default()
}

/// Run an instant query against the Prometheus at `base`; the result
/// vector.
pub fn query(base: &str, promql: &str) -> Vec<serde_json::Value> {
    let r = minreq::get(format!("{base}/api/v1/query"))
        .with_param("query", promql)
        .with_timeout(10)
        .send()
        .expect("Prometheus answers");
    let body: serde_json::Value = serde_json::from_str(r.as_str().unwrap()).expect("JSON");
    assert_eq!(body["status"], "success", "{promql}: {body}");
    body["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The value of a one-element result, if there is one.
pub fn scalar(result: &[serde_json::Value]) -> Option<f64> {
    match result {
        [one] => one["value"][1].as_str().and_then(|v| v.parse().ok()),
        _ => None,
    }
}
