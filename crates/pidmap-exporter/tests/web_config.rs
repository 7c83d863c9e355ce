//! `-web.config.file`: HTTPS with a self-signed certificate made here
//! (rcgen), basic auth accepted and refused (401) over HTTPS and plain
//! HTTP, a real Prometheus server scraping through TLS with the same
//! users, and bad web configs refused in one line.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use assert_cmd::Command as AssertCommand;
use base64::Engine;
use rustls::pki_types::{CertificateDer, ServerName};
use support::{
    exporter, free_port, get, prometheus_binary, prometheus_log, query, scalar, start_prometheus,
    wait_for, Children,
};

/// A self-signed certificate for `localhost` and 127.0.0.1, written as
/// `cert.pem` and `key.pem` in `dir`; its DER form.
fn self_signed(dir: &Path) -> CertificateDer<'static> {
    let rcgen::CertifiedKey { cert, key_pair } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key_pair.serialize_pem()).unwrap();
    cert.der().clone()
}

/// A web config with the certificate (relative paths: the toolkit reads
/// them from the config's directory) and user `prom` with `password`.
fn web_config(dir: &Path, tls: bool, password: &str) -> std::path::PathBuf {
    let hash = bcrypt::hash(password, 4).unwrap();
    let mut yaml = String::new();
    if tls {
        yaml.push_str("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n");
    }
    yaml.push_str(
        "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n\
         basic_auth_users:\n  prom: '",
    );
    yaml.push_str(&hash);
    yaml.push_str("'\n");
    let path = dir.join("web.yml");
    std::fs::write(&path, yaml).unwrap();
    path
}

fn basic(user: &str, password: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {b64}")
}

/// A TLS client that trusts only `cert`.
fn client(cert: &CertificateDer<'static>) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert.clone()).unwrap();
    Arc::new(
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

/// One response: status, head, body.
struct Answer {
    status: u16,
    head: String,
    body: String,
}

/// Read one response with a `Content-Length` from `stream`.
fn read_answer(stream: &mut impl Read) -> Answer {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "the response head ends");
        buf.push(byte[0]);
    }
    let head = String::from_utf8(buf).unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("a Content-Length")
        .trim()
        .parse()
        .unwrap();
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).unwrap();
    Answer {
        status,
        head,
        body: String::from_utf8(body).unwrap(),
    }
}

/// GET `paths` over one HTTPS connection (keep-alive), with
/// `authorization` if given.
fn https_get(
    port: u16,
    config: &Arc<rustls::ClientConfig>,
    paths: &[&str],
    authorization: Option<&str>,
) -> Vec<Answer> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    paths
        .iter()
        .map(|path| {
            let auth = authorization.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
            write!(tls, "GET {path} HTTP/1.1\r\nHost: localhost\r\n{auth}\r\n").unwrap();
            tls.flush().unwrap();
            read_answer(&mut tls)
        })
        .collect()
}

/// Start the exporter with `web` on a free port; wait until it listens.
fn start(kids: &mut Children, web: &Path) -> u16 {
    let port = free_port();
    kids.spawn(
        Command::new(exporter())
            .args([
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--web.config.file",
            ])
            .arg(web)
            .stderr(Stdio::null()),
    );
    wait_for(Duration::from_secs(20), "the exporter to listen", || {
        TcpStream::connect(("127.0.0.1", port)).ok()
    });
    port
}

#[test]
fn https_serves_the_user_with_the_password_and_refuses_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let cert = self_signed(dir.path());
    let web = web_config(dir.path(), true, "s3cret");
    let mut kids = Children::default();
    let port = start(&mut kids, &web);
    let config = client(&cert);

    // Two scrapes on one connection.
    let ok = https_get(
        port,
        &config,
        &["/metrics", "/metrics"],
        Some(&basic("prom", "s3cret")),
    );
    for a in &ok {
        assert_eq!(a.status, 200, "{}", a.head);
        assert!(
            a.body.contains("namedprocess_namegroup_num_procs"),
            "{}",
            a.body
        );
        assert!(
            a.head.contains("X-Content-Type-Options: nosniff"),
            "{}",
            a.head
        );
    }
    for auth in [
        Some(basic("prom", "wrong")),
        Some(basic("nobody", "s3cret")),
        None,
    ] {
        let [a] = <[Answer; 1]>::try_from(https_get(port, &config, &["/metrics"], auth.as_deref()))
            .ok()
            .unwrap();
        assert_eq!(a.status, 401, "{auth:?}: {}", a.head);
        assert!(a.head.contains("WWW-Authenticate: Basic"), "{}", a.head);
        assert!(!a.body.contains("namedprocess"), "{}", a.body);
    }
    // Plain HTTP to the TLS port gets no metrics.
    let plain = get(&format!("http://127.0.0.1:{port}/metrics"), None);
    assert!(
        plain.is_none_or(|r| r.status_code != 200),
        "plain HTTP must not be served"
    );
    // A client that does not trust the certificate does not connect.
    let other = tempfile::tempdir().unwrap();
    let stranger = client(&self_signed(other.path()));
    let tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let conn = rustls::ClientConnection::new(stranger, ServerName::try_from("localhost").unwrap())
        .unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let sent =
        write!(tls, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n").and_then(|()| tls.flush());
    assert!(sent.is_err(), "the handshake fails with an unknown issuer");
}

#[test]
fn basic_auth_without_tls() {
    let dir = tempfile::tempdir().unwrap();
    let web = web_config(dir.path(), false, "pw");
    let mut kids = Children::default();
    let port = start(&mut kids, &web);
    let url = format!("http://127.0.0.1:{port}/metrics");
    let with = |auth: Option<String>| {
        let mut r = minreq::get(&url).with_timeout(30);
        if let Some(a) = auth {
            r = r.with_header("Authorization", a);
        }
        r.send().unwrap()
    };
    let ok = with(Some(basic("prom", "pw")));
    assert_eq!(ok.status_code, 200);
    assert!(ok
        .as_str()
        .unwrap()
        .contains("namedprocess_namegroup_num_procs"));
    for auth in [Some(basic("prom", "nope")), None] {
        let r = with(auth);
        assert_eq!(r.status_code, 401);
        assert_eq!(
            r.headers.get("www-authenticate").map(String::as_str),
            Some("Basic")
        );
    }
}

#[test]
fn bad_web_configs_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  foo: 1\n",
            "unknown field `foo`",
        ),
        (
            "tls_server_config:\n  cert_file: missing.pem\n  key_file: k.pem\n",
            "missing.pem",
        ),
        ("basic_auth_users:\n  prom: secret\n", "not a bcrypt hash"),
        (
            "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS10\n",
            "TLS10 is not supported",
        ),
    ];
    for (yaml, expected) in cases {
        let path = dir.path().join("web.yml");
        std::fs::write(&path, yaml).unwrap();
        let out = AssertCommand::new(exporter())
            .arg("--once")
            .arg("--web.config.file")
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{yaml:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{yaml:?}: {stderr}");
        assert!(
            stderr.starts_with("pidmap-exporter: web config ") && stderr.contains(expected),
            "{yaml:?}: {stderr}"
        );
    }
    let out = AssertCommand::new(exporter())
        .args(["--once", "--web.config.file", "/nonexistent/web.yml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("No such file or directory"), "{stderr}");
}

/// Prometheus scrapes over HTTPS with the certificate as its CA and the
/// user's password; a second job with a wrong password is down.
#[test]
fn prometheus_scrapes_over_tls_with_basic_auth() {
    let prometheus = prometheus_binary();
    let dir = tempfile::tempdir().unwrap();
    self_signed(dir.path());
    let web = web_config(dir.path(), true, "s3cret");
    let mut kids = Children::default();
    let port = start(&mut kids, &web);

    let prom_config = dir.path().join("prometheus.yml");
    let job = |name: &str, password: &str| {
        format!(
            "  - job_name: {name}\n    scheme: https\n    tls_config:\n      ca_file: {ca}\n\
             \x20   basic_auth:\n      username: prom\n      password: {password}\n\
             \x20   static_configs:\n      - targets: ['127.0.0.1:{port}']\n",
            ca = dir.path().join("cert.pem").display()
        )
    };
    std::fs::write(
        &prom_config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n{}{}",
            job("tls", "s3cret"),
            job("tls-wrong", "nope")
        ),
    )
    .unwrap();
    let base = start_prometheus(&mut kids, &prometheus, dir.path(), &prom_config);
    let prom_log = || prometheus_log(dir.path());
    let up = |job: &str| scalar(&query(&base, &format!("up{{job=\"{job}\"}}")));
    wait_for(Duration::from_secs(60), "both jobs scraped", || {
        up("tls").zip(up("tls-wrong"))
    });
    // A scrape or two later, the states are settled.
    let deadline = Instant::now() + Duration::from_secs(30);
    while up("tls") != Some(1.0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_eq!(up("tls"), Some(1.0), "{}", prom_log());
    assert_eq!(up("tls-wrong"), Some(0.0));
    let procs = query(&base, "namedprocess_namegroup_num_procs{job=\"tls\"}");
    assert!(!procs.is_empty(), "the exporter's series are stored");
    let wrong = query(&base, "namedprocess_namegroup_num_procs{job=\"tls-wrong\"}");
    assert!(
        wrong.is_empty(),
        "nothing from the refused scrape: {wrong:?}"
    );
}
