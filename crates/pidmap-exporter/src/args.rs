//! The command line: this exporter's flags plus process-exporter's, which
//! Go spells with one dash (`-config.path`, `-threads=false`); both
//! spellings are accepted.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

/// The long flags, for the single-dash spelling.
const LONG_FLAGS: &[&str] = &[
    "listen",
    "web.listen-address",
    "web.telemetry-path",
    "once",
    "config.path",
    "threads",
    "children",
    "gather-smaps",
    "recheck",
    "debug",
    "namemapping",
    "procnames",
    "procfs",
    "web.config.file",
    "man",
    "backend",
    "help",
    "version",
];

/// Per-process metrics for Prometheus, a drop-in for process-exporter.
#[derive(Debug, Parser)]
#[command(name = "pidmap-exporter", version)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "process-exporter's boolean flags, one field each"
)]
pub struct Args {
    /// Address to serve /metrics on (":PORT" means every IPv4 address, as
    /// process-exporter's Go spelling does).
    #[arg(
        long,
        visible_alias = "web.listen-address",
        value_name = "ADDR",
        default_value = ":9256"
    )]
    pub listen: String,

    /// Path of the metrics page.
    #[arg(
        long = "web.telemetry-path",
        value_name = "PATH",
        default_value = "/metrics"
    )]
    pub telemetry_path: String,

    /// Print one exposition (Prometheus text format) to stdout and exit.
    #[arg(long)]
    pub once: bool,

    /// process-exporter's YAML config (process_names). Without it, every
    /// process with a command line is grouped by its name.
    #[allow(
        clippy::doc_markdown,
        reason = "the doc comment is the --help text, printed as written: backticks would show"
    )]
    #[arg(long = "config.path", value_name = "FILE")]
    pub config_path: Option<PathBuf>,

    /// Per-thread-name series (thread_count, thread_cpu_seconds_total).
    #[allow(
        clippy::doc_markdown,
        reason = "the doc comment is the --help text, printed as written: backticks would show"
    )]
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub threads: bool,

    /// Put a process no entry matches in the group of its nearest grouped
    /// ancestor.
    #[arg(long, value_name = "BOOL", default_value_t = true, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub children: bool,

    /// Read each grouped process's smaps_rollup for the proportionalResident
    /// and proportionalSwapped memtypes (as process-exporter, on by default).
    #[allow(
        clippy::doc_markdown,
        reason = "the doc comment is the --help text, printed as written: backticks would show"
    )]
    #[arg(long = "gather-smaps", value_name = "BOOL", default_value_t = true, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub gather_smaps: bool,

    /// Name again, on every scrape, the processes no config entry matched
    /// (their name or command line may have changed since).
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub recheck: bool,

    /// TLS and basic authentication: the Prometheus exporter-toolkit's web
    /// config file (tls_server_config, basic_auth_users,
    /// http_server_config headers).
    #[allow(
        clippy::doc_markdown,
        reason = "the doc comment is the --help text, printed as written: backticks would show"
    )]
    #[arg(long = "web.config.file", value_name = "FILE")]
    pub web_config_file: Option<PathBuf>,

    /// Log each new process and the group it joins (stderr).
    #[arg(long, value_name = "BOOL", default_value_t = false, num_args = 0..=1,
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub debug: bool,

    /// process-exporter's flags this exporter refuses, each with its reason
    /// (kept as arguments so that the refusal names the flag).
    #[command(flatten)]
    pub refused: Refused,

    /// Where task records come from.
    // The `pidmap` CLI's parser: its values and help lines, into the
    // library's `Backend` by the library's own `FromStr`.
    #[arg(long, value_parser = pidmap_cli::backend_parser(), default_value = "auto")]
    pub backend: pidmap::Backend,
}

/// process-exporter's flags that are refused, by name, when given.
#[derive(Debug, Default, clap::Args)]
pub struct Refused {
    #[arg(long, value_name = "LIST", hide = true)]
    pub procnames: Option<String>,
    #[arg(long, value_name = "LIST", hide = true)]
    pub namemapping: Option<String>,
    #[arg(long, value_name = "DIR", hide = true)]
    pub procfs: Option<String>,
    #[arg(long, hide = true)]
    pub man: bool,
}

impl Refused {
    /// The first refused flag given, with why and what to do instead.
    pub fn reason(&self) -> Option<&'static str> {
        if self.procnames.is_some() {
            Some("-procnames is not supported: list the names in a config file (-config.path) with a comm: matcher")
        } else if self.namemapping.is_some() {
            Some("-namemapping is not supported: use a config file (-config.path) with a cmdline: regex and {{.Matches.NAME}} in the name")
        } else if self.procfs.is_some() {
            Some("-procfs is not supported: the records always come from this system's /proc or pidmap_info(2)")
        } else if self.man {
            Some("-man is not supported: see --help and the README")
        } else {
            None
        }
    }
}

/// Turn Go's `-flag` into `--flag` for the known long flags.
pub fn normalize(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut out = Vec::new();
    let mut after_double_dash = false;
    for arg in args {
        if after_double_dash {
            out.push(arg);
            continue;
        }
        if arg == "--" {
            after_double_dash = true;
            out.push(arg);
            continue;
        }
        let converted = arg.to_str().and_then(|s| {
            let rest = s.strip_prefix('-').filter(|r| !r.starts_with('-'))?;
            let name = rest.split('=').next()?;
            LONG_FLAGS
                .contains(&name)
                .then(|| OsString::from(format!("-{s}")))
        });
        out.push(converted.unwrap_or(arg));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Args {
        Args::try_parse_from(normalize(args.iter().map(OsString::from))).unwrap()
    }

    #[test]
    fn go_spellings_are_accepted() {
        let a = parse(&[
            "x",
            "-config.path",
            "/etc/pe.yml",
            "-threads=false",
            "-web.listen-address=:9256",
        ]);
        assert_eq!(a.config_path, Some(PathBuf::from("/etc/pe.yml")));
        assert!(!a.threads);
        assert!(a.children);
        assert_eq!(a.listen, ":9256");
    }

    #[test]
    fn defaults() {
        let a = parse(&["x"]);
        assert_eq!(a.listen, ":9256");
        assert!(a.gather_smaps && !a.recheck && !a.debug);
        assert!(a.refused.reason().is_none());
        assert_eq!(a.telemetry_path, "/metrics");
        assert!(a.threads && a.children && !a.once);
        let a = parse(&["x", "--once", "--threads", "--children=false"]);
        assert!(a.once && a.threads && !a.children);
    }

    #[test]
    fn process_exporters_other_flags_parse_and_are_named() {
        let a = parse(&[
            "x",
            "-recheck",
            "-debug",
            "-gather-smaps=false",
            "-web.config.file",
            "web.yml",
        ]);
        assert!(a.recheck && a.debug && !a.gather_smaps);
        assert_eq!(a.web_config_file, Some(PathBuf::from("web.yml")));
        assert!(a.refused.reason().is_none());
        for (flag, value) in [
            ("-namemapping", Some("a,b")),
            ("-procnames", Some("sshd")),
            ("-procfs", Some("/host/proc")),
            ("-man", None),
        ] {
            let mut args = vec!["x", flag];
            args.extend(value);
            let reason = parse(&args).refused.reason().expect(flag);
            assert!(reason.starts_with(flag), "{flag}: {reason}");
        }
    }
}
