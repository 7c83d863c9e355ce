//! HTTPS (`-web.config.file` with `tls_server_config`): `rustls` over each
//! accepted TCP connection, on a thread of its own, and HTTP/1.1 read
//! from it as a scrape needs: a request line and headers (at most 16 KiB),
//! a body skipped if one is sent with a length, keep-alive as HTTP/1.1
//! has it. [`Site::reply`] makes the answers, as over plain HTTP. A
//! connection idle (or stuck in its handshake) for a minute is closed.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rustls::{ServerConfig, ServerConnection, StreamOwned};

use crate::server::{Site, MAX_IN_FLIGHT};

/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;
/// The longest request body skipped.
const MAX_BODY: usize = 1024 * 1024;
const IDLE: Duration = Duration::from_secs(60);

/// Accept connections for ever.
pub fn serve(listener: &TcpListener, config: &Arc<ServerConfig>, site: &Arc<Site>) {
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                eprintln!("pidmap-exporter: accepting a connection: {e}");
                // EMFILE and the like: do not spin.
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        if open.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
            open.fetch_sub(1, Ordering::SeqCst);
            continue; // dropped: closed
        }
        let (config, site, open) = (config.clone(), site.clone(), open.clone());
        let spawned = std::thread::Builder::new()
            .name("https".into())
            .spawn(move || {
                // A client that goes away or speaks no TLS ends only its
                // own connection.
                let _ = connection(stream, config, &site);
                open.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            eprintln!("pidmap-exporter: cannot start a thread for a connection: {e}");
        }
    }
}

/// One request's head.
struct Head {
    target: String,
    no_body: bool,
    keep_alive: bool,
    body_len: usize,
    chunked: bool,
    headers: Vec<(String, String)>,
}

fn parse_head(text: &str) -> Option<Head> {
    let mut lines = text.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !version.starts_with("HTTP/1.") {
        return None;
    }
    let mut headers = Vec::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    };
    let connection = get("Connection").map(str::to_ascii_lowercase);
    let keep_alive = match connection.as_deref() {
        Some(c) if c.contains("close") => false,
        Some(c) if c.contains("keep-alive") => true,
        _ => version == "HTTP/1.1",
    };
    let body_len = match get("Content-Length") {
        Some(n) => n.parse().ok()?,
        None => 0,
    };
    let chunked = get("Transfer-Encoding").is_some();
    Some(Head {
        target: target.to_owned(),
        no_body: method == "HEAD",
        keep_alive,
        body_len,
        chunked,
        headers,
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        _ => "",
    }
}

fn write_reply(
    out: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
    with_body: bool,
    keep_alive: bool,
) -> io::Result<()> {
    use std::fmt::Write as _;
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    // Writing to a String cannot fail.
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let _ = write!(head, "Content-Length: {}\r\n", body.len());
    if !keep_alive {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes())?;
    if with_body {
        out.write_all(body)?;
    }
    out.flush()
}

fn connection(stream: TcpStream, config: Arc<ServerConfig>, site: &Site) -> io::Result<()> {
    stream.set_read_timeout(Some(IDLE))?;
    stream.set_write_timeout(Some(IDLE))?;
    let conn = ServerConnection::new(config).map_err(io::Error::other)?;
    let mut tls = StreamOwned::new(conn, stream);
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        // A request head: up to the blank line.
        let head_len = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > MAX_HEAD {
                let text = b"request head too large\n";
                return write_reply(&mut tls, 431, &[], text, true, false);
            }
            let n = tls.read(&mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = std::str::from_utf8(&buf[..head_len])
            .ok()
            .and_then(parse_head);
        let Some(head) = head else {
            return write_reply(&mut tls, 400, &[], b"bad request\n", true, false);
        };
        if head.chunked {
            return write_reply(
                &mut tls,
                501,
                &[],
                b"chunked requests are not served\n",
                true,
                false,
            );
        }
        if head.body_len > MAX_BODY {
            return write_reply(&mut tls, 413, &[], b"request body too large\n", true, false);
        }
        // Skip the body.
        while buf.len() < head_len + head.body_len {
            let n = tls.read(&mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        buf.drain(..head_len + head.body_len);
        let header = |name: &str| {
            head.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let reply = site.reply(&head.target, &header);
        write_reply(
            &mut tls,
            reply.status,
            &reply.headers,
            &reply.body,
            !head.no_body,
            head.keep_alive,
        )?;
        if !head.keep_alive {
            tls.conn.send_close_notify();
            return tls.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads_parse() {
        let h = parse_head(
            "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nauthorization: Basic eA==\r\nContent-Length: 3\r\n\r\n",
        )
        .unwrap();
        assert_eq!(h.target, "/metrics?x=1");
        assert!(h.keep_alive && !h.no_body && !h.chunked);
        assert_eq!(h.body_len, 3);
        assert_eq!(h.headers[1], ("authorization".into(), "Basic eA==".into()));
        let h = parse_head("HEAD / HTTP/1.0\r\n\r\n").unwrap();
        assert!(h.no_body && !h.keep_alive);
        let h = parse_head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
        assert!(!h.keep_alive);
        assert!(parse_head("GET /\r\n\r\n").is_none());
        assert!(parse_head("GET / SPDY/3\r\n\r\n").is_none());
        assert!(parse_head("GET / HTTP/1.1\r\nno colon\r\n\r\n").is_none());
        assert!(parse_head("GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n").is_none());
    }
}
