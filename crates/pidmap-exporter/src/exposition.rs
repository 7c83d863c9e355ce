//! A snapshot in the Prometheus text format (0.0.4) or OpenMetrics text,
//! through the Prometheus project's `prometheus-client` encoders.
//!
//! Metric and label names are process-exporter's. Its three
//! `namedprocess_scrape_*` counters have no `_total` suffix, which
//! OpenMetrics requires of a counter (and `prometheus-client` adds): in the
//! classic text format they are written here by hand, as counters with
//! process-exporter's names; in OpenMetrics they are gauges with the same
//! names (a counter there would be renamed `..._total`).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{
    DescriptorEncoder, EncodeCounterValue, EncodeGaugeValue, EncodeMetric,
};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::snapshot::{CounterValues, GroupSnapshot, Snapshot, ThreadNameSnapshot};

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
    /// Whether the scrape counters go through the encoder (as gauges).
    scrape_gauges: bool,
}

/// process-exporter's counters without `_total`: name, help, value.
fn scrape_counters(snapshot: &Snapshot) -> [(&'static str, &'static str, u64); 3] {
    let errors = &snapshot.errors;
    [
        (
            "namedprocess_scrape_errors",
            "general scrape errors: no proc metrics collected during a cycle",
            errors.scrape_errors,
        ),
        (
            "namedprocess_scrape_partial_errors",
            "incremented each time a tracked proc's metrics collection fails partially, e.g. unreadable I/O stats",
            errors.partial_errors,
        ),
        (
            "namedprocess_scrape_procread_errors",
            "incremented each time a proc's metrics collection fails",
            0,
        ),
    ]
}

/// Encode `snapshot`; `threads` adds the per-thread-name series.
pub fn encode(snapshot: Snapshot, threads: bool, format: Format) -> String {
    use std::fmt::Write;
    let counters = scrape_counters(&snapshot);
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Exposition {
        snapshot,
        threads,
        scrape_gauges: format == Format::OpenMetrics,
    }));
    let mut out = String::new();
    let written = match format {
        Format::Prometheus => prometheus_client::encoding::prometheus_text::encode(
            &mut out, &registry,
        )
        .and_then(|()| {
            for (name, help, value) in counters {
                write!(
                    out,
                    "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}\n"
                )?;
            }
            Ok(())
        }),
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

fn counter<'a, V: EncodeCounterValue + std::fmt::Debug>(
    encoder: &mut DescriptorEncoder<'_>,
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (Labels<'a>, V)>,
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
        let counter_per_group = |value: fn(&CounterValues) -> u64| {
            groups
                .iter()
                .map(move |g| (vec![("groupname", g.name.as_str())], value(&g.counters)))
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
                        g.counters.cpu_system,
                    ),
                    (
                        vec![("groupname", g.name.as_str()), ("mode", "user")],
                        g.counters.cpu_user,
                    ),
                ]
            }),
        )?;
        counter(
            &mut e,
            "namedprocess_namegroup_read_bytes",
            "number of bytes read by this group",
            counter_per_group(|c| c.read_bytes),
        )?;
        counter(
            &mut e,
            "namedprocess_namegroup_write_bytes",
            "number of bytes written by this group",
            counter_per_group(|c| c.write_bytes),
        )?;
        counter(
            &mut e,
            "namedprocess_namegroup_major_page_faults",
            "Major page faults",
            counter_per_group(|c| c.major_faults),
        )?;
        counter(
            &mut e,
            "namedprocess_namegroup_minor_page_faults",
            "Minor page faults",
            counter_per_group(|c| c.minor_faults),
        )?;
        counter(
            &mut e,
            "namedprocess_namegroup_context_switches",
            "Context switches",
            groups.iter().flat_map(|g| {
                [
                    (
                        vec![
                            ("groupname", g.name.as_str()),
                            ("ctxswitchtype", "nonvoluntary"),
                        ],
                        g.counters.involuntary_switches,
                    ),
                    (
                        vec![
                            ("groupname", g.name.as_str()),
                            ("ctxswitchtype", "voluntary"),
                        ],
                        g.counters.voluntary_switches,
                    ),
                ]
            }),
        )?;
        let smaps = self.snapshot.smaps;
        gauge(
            &mut e,
            "namedprocess_namegroup_memory_bytes",
            "number of bytes of memory in use",
            groups.iter().flat_map(|g| {
                let mut v = vec![
                    ("resident", g.resident_bytes),
                    ("virtual", g.virtual_bytes),
                    ("swapped", g.swap_bytes),
                ];
                if smaps {
                    v.push(("proportionalResident", g.pss_bytes));
                    v.push(("proportionalSwapped", g.swap_pss_bytes));
                }
                v.into_iter().map(move |(memtype, bytes)| {
                    (
                        vec![("groupname", g.name.as_str()), ("memtype", memtype)],
                        bytes,
                    )
                })
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
            "Number of processes in states Running, Sleeping, Waiting, Zombie, or Other",
            groups.iter().flat_map(|g| {
                g.states
                    .labelled()
                    .map(|(state, n)| (vec![("groupname", g.name.as_str()), ("state", state)], n))
            }),
        )?;
        gauge(
            &mut e,
            "namedprocess_namegroup_threads_wchan",
            "Number of threads in this group waiting on each wchan",
            groups.iter().flat_map(|g| {
                g.wchans.iter().map(|(wchan, n)| {
                    (
                        vec![("groupname", g.name.as_str()), ("wchan", wchan.as_str())],
                        *n,
                    )
                })
            }),
        )?;
        if self.threads {
            self.encode_threads(&mut e)?;
        }
        if self.scrape_gauges {
            for (name, help, value) in scrape_counters(&self.snapshot) {
                gauge(&mut e, name, help, [(vec![], value)])?;
            }
        }
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
        let errors = &self.snapshot.errors;
        counter(
            &mut e,
            "pidmap_exporter_errors",
            "reads that failed, by what was read and why (a task that exited is not an error)",
            errors
                .by_kind
                .iter()
                .map(|((what, kind), n)| (vec![("what", *what), ("kind", *kind)], *n)),
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

fn thread_labels<'a>(g: &'a GroupSnapshot, t: &'a ThreadNameSnapshot) -> Labels<'a> {
    vec![
        ("groupname", g.name.as_str()),
        ("threadname", t.name.as_str()),
    ]
}

impl Exposition {
    /// The per-thread-name families.
    fn encode_threads(&self, e: &mut DescriptorEncoder) -> std::fmt::Result {
        let threads = || {
            self.snapshot
                .groups
                .iter()
                .flat_map(|g| g.thread_names.iter().map(move |t| (g, t)))
        };
        let labels = thread_labels;
        // Two series per thread name, told apart by `key`.
        let pairs = |key: &'static str,
                     a: (&'static str, fn(&CounterValues) -> u64),
                     b: (&'static str, fn(&CounterValues) -> u64)| {
            threads().flat_map(move |(g, t)| {
                [a, b].map(|(value, get)| {
                    let mut l = labels(g, t);
                    l.push((key, value));
                    (l, get(&t.counters))
                })
            })
        };
        gauge(
            e,
            "namedprocess_namegroup_thread_count",
            "Number of threads in this group with same threadname",
            threads().map(|(g, t)| (labels(g, t), t.count)),
        )?;
        counter(
            e,
            "namedprocess_namegroup_thread_cpu_seconds",
            "Cpu user/system usage in seconds",
            threads().flat_map(|(g, t)| {
                [
                    ("system", t.counters.cpu_system),
                    ("user", t.counters.cpu_user),
                ]
                .map(|(mode, v)| {
                    let mut l = labels(g, t);
                    l.push(("mode", mode));
                    (l, v)
                })
            }),
        )?;
        counter(
            e,
            "namedprocess_namegroup_thread_io_bytes",
            "number of bytes read/written by these threads",
            pairs(
                "iomode",
                ("read", |c| c.read_bytes),
                ("write", |c| c.write_bytes),
            ),
        )?;
        counter(
            e,
            "namedprocess_namegroup_thread_major_page_faults",
            "Major page faults for these threads",
            threads().map(|(g, t)| (labels(g, t), t.counters.major_faults)),
        )?;
        counter(
            e,
            "namedprocess_namegroup_thread_minor_page_faults",
            "Minor page faults for these threads",
            threads().map(|(g, t)| (labels(g, t), t.counters.minor_faults)),
        )?;
        counter(
            e,
            "namedprocess_namegroup_thread_context_switches",
            "Context switches for these threads",
            pairs(
                "ctxswitchtype",
                ("nonvoluntary", |c| c.involuntary_switches),
                ("voluntary", |c| c.voluntary_switches),
            ),
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
                counters: CounterValues {
                    cpu_user: 1.5,
                    ..CounterValues::default()
                },
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
