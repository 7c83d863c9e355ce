//! A snapshot in the Prometheus text format (0.0.4) or OpenMetrics text,
//! through the Prometheus project's `prometheus-client` encoders.
//!
//! Metric and label names are process-exporter's. Its three
//! `namedprocess_scrape_*` counters have no `_total` suffix, which
//! OpenMetrics requires of a counter (and `prometheus-client` adds), so
//! they are gauges here with the same names and values that only grow.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeGaugeValue, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::snapshot::{GroupSnapshot, Snapshot};

/// Which text format to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Prometheus,
    OpenMetrics,
}

impl Format {
    /// OpenMetrics when the `Accept` header lists it, as Prometheus sends
    /// it; the classic text format otherwise.
    pub fn from_accept(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Prometheus,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => prometheus_client::encoding::prometheus_text::CONTENT_TYPE,
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// What to expose.
#[derive(Debug)]
struct Exposition {
    snapshot: Snapshot,
    threads: bool,
}

/// Encode `snapshot`; `threads` adds the per-thread-name series.
pub fn encode(snapshot: Snapshot, threads: bool, format: Format) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Exposition { snapshot, threads }));
    let mut out = String::new();
    let written = match format {
        Format::Prometheus => {
            prometheus_client::encoding::prometheus_text::encode(&mut out, &registry)
        }
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, &registry),
    };
    // Writing to a String cannot fail, and every name here is valid.
    written.expect("encoding to a String");
    out
}

type Labels<'a> = Vec<(&'static str, &'a str)>;

fn gauge<'a, V: EncodeGaugeValue + std::fmt::Debug>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (Labels<'a>, V)>,
) -> std::fmt::Result {
    let mut family =
        encoder.encode_descriptor(name, help, None, ConstGauge::new(0.0).metric_type())?;
    for (labels, value) in samples {
        ConstGauge::new(value).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

fn counter<'a>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (Labels<'a>, f64)>,
) -> std::fmt::Result {
    let mut family =
        encoder.encode_descriptor(name, help, None, ConstCounter::new(0.0).metric_type())?;
    for (labels, value) in samples {
        ConstCounter::new(value).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Collector for Exposition {
    #[allow(
        clippy::too_many_lines,
        reason = "the metric families one after another, in the exposition's order"
    )]
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        let groups = &self.snapshot.groups;
        let per_group = |value: fn(&GroupSnapshot) -> f64| {
            groups
                .iter()
                .map(move |g| (vec![("groupname", g.name.as_str())], value(g)))
        };
        let count_per_group = |value: fn(&GroupSnapshot) -> u64| {
            groups
                .iter()
                .map(move |g| (vec![("groupname", g.name.as_str())], value(g)))
        };
        gauge(
            &mut e,
            "namedprocess_namegroup_num_procs",
            "number of processes in this group",
            count_per_group(|g| g.procs),
        )?;
        gauge(
            &mut e,
            "namedprocess_namegroup_num_threads",
            "Number of threads",
            count_per_group(|g| g.threads),
        )?;
        counter(
            &mut e,
            "namedprocess_namegroup_cpu_seconds",
            "Cpu user usage in seconds",
            groups.iter().flat_map(|g| {
                [
                    (
                        vec![("groupname", g.name.as_str()), ("mode", "system")],
                        g.cpu_system,
                    ),
                    (
                        vec![("groupname", g.name.as_str()), ("mode", "user")],
                        g.cpu_user,
                    ),
                ]
            }),
        )?;
        gauge(
            &mut e,
            "namedprocess_namegroup_memory_bytes",
            "number of bytes of memory in use",
            groups.iter().map(|g| {
                (
                    vec![("groupname", g.name.as_str()), ("memtype", "resident")],
                    g.resident_bytes,
                )
            }),
        )?;
        gauge(
            &mut e,
            "namedprocess_namegroup_oldest_start_time_seconds",
            "start time in seconds since 1970/01/01 of oldest process in group",
            per_group(|g| g.oldest_start),
        )?;
        gauge(
            &mut e,
            "namedprocess_namegroup_open_filedesc",
            "number of open file descriptors for this group",
            count_per_group(|g| g.open_fds),
        )?;
        gauge(
            &mut e,
            "namedprocess_namegroup_worst_fd_ratio",
            "the worst (closest to 1) ratio between open fds and max fds among all procs in this group",
            per_group(|g| g.worst_fd_ratio),
        )?;
        gauge(
            &mut e,
            "namedprocess_namegroup_states",
            "Number of tasks in states Running, Sleeping, Waiting, Zombie, or Other",
            groups.iter().flat_map(|g| {
                g.states
                    .labelled()
                    .map(|(state, n)| (vec![("groupname", g.name.as_str()), ("state", state)], n))
            }),
        )?;
        if self.threads {
            let threads = || {
                groups
                    .iter()
                    .flat_map(|g| g.thread_names.iter().map(move |t| (g, t)))
            };
            gauge(
                &mut e,
                "namedprocess_namegroup_thread_count",
                "Number of threads in this group with same threadname",
                threads().map(|(g, t)| {
                    (
                        vec![
                            ("groupname", g.name.as_str()),
                            ("threadname", t.name.as_str()),
                        ],
                        t.count,
                    )
                }),
            )?;
            counter(
                &mut e,
                "namedprocess_namegroup_thread_cpu_seconds",
                "Cpu user/system usage in seconds",
                threads().flat_map(|(g, t)| {
                    [
                        (
                            vec![
                                ("groupname", g.name.as_str()),
                                ("mode", "system"),
                                ("threadname", t.name.as_str()),
                            ],
                            t.cpu_system,
                        ),
                        (
                            vec![
                                ("groupname", g.name.as_str()),
                                ("mode", "user"),
                                ("threadname", t.name.as_str()),
                            ],
                            t.cpu_user,
                        ),
                    ]
                }),
            )?;
        }
        let errors = &self.snapshot.errors;
        gauge(
            &mut e,
            "namedprocess_scrape_errors",
            "general scrape errors: no proc metrics collected during a cycle",
            [(vec![], errors.scrape_errors)],
        )?;
        gauge(
            &mut e,
            "namedprocess_scrape_partial_errors",
            "incremented each time a tracked proc's metrics collection fails partially, e.g. unreadable fds",
            [(vec![], errors.partial_errors)],
        )?;
        gauge(
            &mut e,
            "namedprocess_scrape_procread_errors",
            "incremented each time a proc's metrics collection fails (never here: a failed listing fails the scrape)",
            [(vec![], 0u64)],
        )?;
        gauge(
            &mut e,
            "pidmap_exporter_scrape_duration_seconds",
            "wall time this scrape took to read the system",
            [(vec![], self.snapshot.scrape_seconds)],
        )?;
        gauge(
            &mut e,
            "pidmap_exporter_tasks_read",
            "task records (processes and threads) this scrape read",
            [(vec![], self.snapshot.tasks_read)],
        )?;
        counter(
            &mut e,
            "pidmap_exporter_errors",
            "reads that failed, by what was read and why (a task that exited is not an error)",
            #[allow(
                clippy::cast_precision_loss,
                reason = "a count of failed reads: exact below 2^53"
            )]
            errors
                .by_kind
                .iter()
                .map(|((what, kind), n)| (vec![("what", *what), ("kind", *kind)], *n as f64)),
        )?;
        gauge(
            &mut e,
            "pidmap_exporter_backend_info",
            "where the task records come from: syscall (pidmap_info(2)) or procfs",
            [(vec![("backend", self.snapshot.backend.as_str())], 1u64)],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::States;

    fn snapshot() -> Snapshot {
        Snapshot {
            groups: vec![GroupSnapshot {
                name: "a\\xffb \"q\"".into(),
                procs: 2,
                threads: 3,
                cpu_user: 1.5,
                states: States {
                    sleeping: 3,
                    ..States::default()
                },
                ..GroupSnapshot::default()
            }],
            backend: "procfs".into(),
            ..Snapshot::default()
        }
    }

    #[test]
    fn prometheus_text_names_counters_with_total() {
        let text = encode(snapshot(), false, Format::Prometheus);
        assert!(
            text.contains("# TYPE namedprocess_namegroup_cpu_seconds_total counter\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "namedprocess_namegroup_num_procs{groupname=\"a\\\\xffb \\\"q\\\"\"} 2\n"
            ),
            "{text}"
        );
        assert!(!text.contains("# EOF"));
    }

    #[test]
    fn openmetrics_ends_with_eof() {
        let text = encode(snapshot(), true, Format::OpenMetrics);
        assert!(
            text.contains("# TYPE namedprocess_namegroup_cpu_seconds counter\n"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn accept_header_picks_the_format() {
        assert_eq!(Format::from_accept(None), Format::Prometheus);
        assert_eq!(Format::from_accept(Some("text/plain")), Format::Prometheus);
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::from_accept(Some(prom)), Format::OpenMetrics);
    }
}
