//! The HTTP side. Plain HTTP: `tiny_http` parses requests on its own
//! threads; each request is answered on a thread of its own, so a client
//! that reads its response slowly (or never) holds only that thread. TLS
//! (`-web.config.file`): [`crate::tls`] serves each connection on a
//! thread of its own. Either way [`Site::reply`] makes the answer, and
//! scrapes are serialised on the exporter's lock, which is released
//! before the body is written.

use std::io::Cursor;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tiny_http::{Header, Request, Response, Server};

use crate::exposition::Format;
use crate::scrape::Exporter;
use crate::web_config::BasicAuth;

/// Requests (plain HTTP) or connections (TLS) served at once; beyond
/// that a request gets a 503 at once (a TLS connection is closed).
pub const MAX_IN_FLIGHT: usize = 64;

/// What the server serves, and to whom.
pub struct Site {
    pub exporter: Mutex<Exporter>,
    pub path: String,
    pub auth: Option<BasicAuth>,
    /// Added to every response (`http_server_config.headers`).
    pub headers: Vec<(String, String)>,
}

/// One response.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Site {
    /// The answer to a request for `url`; `header` gives a request
    /// header's value by name (any case).
    pub fn reply(&self, url: &str, header: &dyn Fn(&str) -> Option<String>) -> Reply {
        let mut reply = self.answer(url, header);
        reply.headers.extend(self.headers.iter().cloned());
        reply
    }

    fn answer(&self, url: &str, header: &dyn Fn(&str) -> Option<String>) -> Reply {
        if let Some(auth) = &self.auth {
            if !auth.allows(header("Authorization").as_deref()) {
                return Reply {
                    status: 401,
                    headers: vec![
                        ("WWW-Authenticate".into(), "Basic".into()),
                        ("Content-Type".into(), "text/plain; charset=utf-8".into()),
                    ],
                    body: b"Unauthorized\n".to_vec(),
                };
            }
        }
        let url = url.split('?').next().unwrap_or("");
        if url == self.path {
            let format = Format::from_accept(header("Accept").as_deref());
            let body = {
                // A scrape that panicked cannot leave the tracker half
                // updated in a way later scrapes would trust less than a
                // restart, so go on with the inner value.
                let mut exporter = self
                    .exporter
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                exporter.scrape(format)
            };
            Reply {
                status: 200,
                headers: vec![("Content-Type".into(), format.content_type().into())],
                body: body.into_bytes(),
            }
        } else if url == "/" {
            let page = format!(
                "<html><head><title>pidmap-exporter</title></head><body>\
                 <h1>pidmap-exporter</h1><p><a href=\"{}\">Metrics</a></p></body></html>\n",
                self.path
            );
            Reply {
                status: 200,
                headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
                body: page.into_bytes(),
            }
        } else {
            Reply {
                status: 404,
                headers: vec![],
                body: b"404 page not found\n".to_vec(),
            }
        }
    }
}

pub fn serve(server: &Server, site: &Arc<Site>) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    for request in server.incoming_requests() {
        if in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
            in_flight.fetch_sub(1, Ordering::SeqCst);
            // A short response fits the socket buffer: this cannot block.
            let _ = request.respond(
                Response::from_string("too many requests in flight\n").with_status_code(503),
            );
            continue;
        }
        let (site, in_flight) = (site.clone(), in_flight.clone());
        let spawned = std::thread::Builder::new()
            .name("scrape".into())
            .spawn(move || {
                answer(request, &site);
                in_flight.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            eprintln!("pidmap-exporter: cannot start a thread for a request: {e}");
        }
    }
}

fn answer(request: Request, site: &Site) {
    let header = |name: &str| {
        request
            .headers()
            .iter()
            .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str().to_owned())
    };
    let reply = site.reply(request.url(), &header);
    // Names and values come from this crate or a checked web config; one
    // that tiny_http would still refuse is left out.
    let headers = reply
        .headers
        .iter()
        .filter_map(|(n, v)| Header::from_bytes(n.as_bytes(), v.as_bytes()).ok())
        .collect();
    let len = reply.body.len();
    let response = Response::new(
        reply.status.into(),
        headers,
        Cursor::new(reply.body),
        Some(len),
        None,
    );
    // The client may have gone: nothing to do about it.
    let _ = request.respond(response);
}
