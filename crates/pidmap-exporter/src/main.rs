//! pidmap-exporter: per-process metrics for Prometheus, a drop-in for
//! process-exporter, built on the `pidmap` crate. See README.md.

mod args;
mod config;
mod exposition;
mod extras;
mod id_hash;
mod label;
mod read_error;
mod scrape;
mod server;
mod snapshot;
mod source;
mod template;
mod tls;
mod tracker;
mod web_config;

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, Context, Result};
use clap::Parser;
use pidmap_cli::UsageError;

use crate::args::Args;
use crate::config::Config;
use crate::exposition::Format;
use crate::scrape::Exporter;
use crate::server::Site;
use crate::source::Source;
use crate::tracker::{Tracker, TrackerOptions};
use crate::web_config::WebConfig;

fn main() -> ExitCode {
    let args = match Args::try_parse_from(args::normalize(std::env::args_os())) {
        Ok(args) => args,
        Err(e) => {
            // Help and version go to stdout with status 0; errors to
            // stderr with status 2.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pidmap-exporter: {e:#}");
            ExitCode::from(pidmap_cli::exit_status(&e))
        }
    }
}

/// A bad command line or config: exit status 2, as clap's own errors.
fn usage(e: anyhow::Error) -> anyhow::Error {
    UsageError::from_error(&e).into()
}

fn run(args: Args) -> Result<ExitCode> {
    if let Some(reason) = args.refused.reason() {
        return Err(usage(anyhow!(reason)));
    }
    let config = match &args.config_path {
        Some(path) => Config::load(path).map_err(usage)?,
        None => Config::default_by_comm(),
    };
    let web = match &args.web_config_file {
        Some(path) => WebConfig::load(path).map_err(usage)?,
        None => WebConfig::none(),
    };
    let backend = args.backend;
    source::raise_fd_limit();
    let boot_time = source::boot_time().context("cannot read the boot time from /proc/stat")?;
    let source = Source::new(backend).map_err(|e| anyhow!(e.message))?;
    for file in source.missing_files() {
        eprintln!(
            "pidmap-exporter: this kernel has no /proc/PID/{file}: the values read from it are 0"
        );
    }
    let options = TrackerOptions {
        children: args.children,
        threads: args.threads,
        smaps: args.gather_smaps,
        recheck: args.recheck,
        debug: args.debug,
    };
    let mut exporter = Exporter {
        source,
        tracker: Tracker::new(config, options, boot_time),
        threads: args.threads,
    };

    if args.once {
        let snapshot = exporter.tracker.refresh(&mut exporter.source);
        let failed = snapshot.errors.scrape_errors > 0;
        let text = exposition::encode(snapshot, exporter.threads, Format::Prometheus);
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .context("writing to stdout")?;
        return Ok(if failed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }

    let listen = match args.listen.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => args.listen.clone(),
    };
    let backend = exporter.source.backend_name();
    let site = Arc::new(Site {
        exporter: Mutex::new(exporter),
        path: args.telemetry_path,
        auth: web.auth,
        headers: web.headers,
    });
    let auth = if site.auth.is_some() {
        ", basic auth"
    } else {
        ""
    };
    if let Some(tls) = web.tls {
        let listener = std::net::TcpListener::bind(&listen)
            .map_err(|e| anyhow!("cannot listen on {listen}: {e}"))?;
        eprintln!(
            "pidmap-exporter: serving {} on https://{listen} (records from {backend}{auth})",
            site.path
        );
        tls::serve(&listener, &tls, &site);
    } else {
        let server = tiny_http::Server::http(&listen)
            .map_err(|e| anyhow!("cannot listen on {listen}: {e}"))?;
        eprintln!(
            "pidmap-exporter: serving {} on http://{listen} (records from {backend}{auth})",
            site.path
        );
        server::serve(&server, &site);
    }
    Ok(ExitCode::SUCCESS)
}
