//! The HTTP side: `tiny_http` parses requests on its own threads; each
//! request is answered on a thread of its own, so a client that reads its
//! response slowly (or never) holds only that thread. Scrapes are
//! serialised on the exporter's lock, which is released before the body
//! is written.

use std::io::Cursor;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tiny_http::{Header, Request, Response, Server};

use crate::exposition::Format;
use crate::scrape::Exporter;

/// Requests answered at once; beyond that a request gets a 503 at once.
const MAX_IN_FLIGHT: usize = 64;

pub fn serve(server: &Server, exporter: &Arc<Mutex<Exporter>>, path: String) {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let path = Arc::new(path);
    for request in server.incoming_requests() {
        if in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_IN_FLIGHT {
            in_flight.fetch_sub(1, Ordering::SeqCst);
            // A short response fits the socket buffer: this cannot block.
            let _ = request.respond(
                Response::from_string("too many requests in flight\n").with_status_code(503),
            );
            continue;
        }
        let (exporter, in_flight, path) = (exporter.clone(), in_flight.clone(), path.clone());
        let spawned = std::thread::Builder::new()
            .name("scrape".into())
            .spawn(move || {
                answer(request, &exporter, &path);
                in_flight.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            eprintln!("pidmap-exporter: cannot start a thread for a request: {e}");
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("a valid header")
}

fn answer(request: Request, exporter: &Mutex<Exporter>, path: &str) {
    let url = request.url().split('?').next().unwrap_or("");
    let response = if url == path {
        let accept = request
            .headers()
            .iter()
            .find(|h| h.field.equiv("Accept"))
            .map(|h| h.value.as_str().to_owned());
        let format = Format::from_accept(accept.as_deref());
        let body = {
            // A scrape that panicked cannot leave the tracker half updated
            // in a way later scrapes would trust less than a restart, so
            // go on with the inner value.
            let mut exporter = exporter
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            exporter.scrape(format)
        };
        let len = body.len();
        Response::new(
            200.into(),
            vec![header("Content-Type", format.content_type())],
            Cursor::new(body.into_bytes()),
            Some(len),
            None,
        )
    } else if url == "/" {
        let page = format!(
            "<html><head><title>pidmap-exporter</title></head><body>\
             <h1>pidmap-exporter</h1><p><a href=\"{path}\">Metrics</a></p></body></html>\n"
        );
        let len = page.len();
        Response::new(
            200.into(),
            vec![header("Content-Type", "text/html; charset=utf-8")],
            Cursor::new(page.into_bytes()),
            Some(len),
            None,
        )
    } else {
        let body = "404 page not found\n";
        Response::new(
            404.into(),
            vec![],
            Cursor::new(body.as_bytes().to_vec()),
            Some(body.len()),
            None,
        )
    };
    // The client may have gone: nothing to do about it.
    let _ = request.respond(response);
}
