//! Metric names, types and label names against a scrape of the real
//! process-exporter (Debian's 0.7.10), recorded in
//! `fixtures/process-exporter.prom` by `fixtures/record-process-exporter.sh`
//! with the same config (`fixtures/golden-config.yml`) and workload as
//! here (process-exporter's default `-gather-smaps=true`, so the
//! proportional memtypes too). Both expositions are read with the
//! `prometheus-parse` crate. `tests/side_by_side.rs` runs the real
//! process-exporter beside this one and compares values as well.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use prometheus_parse::{Scrape, Value};
use support::{exporter, Children};

#[derive(Debug, Default, PartialEq, Eq)]
struct Family {
    kind: &'static str,
    label_names: BTreeSet<Vec<String>>,
    memtypes: BTreeSet<String>,
}

fn families(text: &str) -> BTreeMap<String, Family> {
    let scrape = Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("a valid exposition");
    let mut out: BTreeMap<String, Family> = BTreeMap::new();
    for s in scrape.samples {
        if !s.metric.starts_with("namedprocess_") {
            continue;
        }
        let f = out.entry(s.metric.clone()).or_default();
        f.kind = match s.value {
            Value::Counter(_) => "counter",
            Value::Gauge(_) => "gauge",
            Value::Untyped(_) => "untyped",
            Value::Histogram(_) => "histogram",
            Value::Summary(_) => "summary",
        };
        let mut names: Vec<String> = s.labels.keys().cloned().collect();
        names.sort();
        f.label_names.insert(names);
        if let Some(m) = s.labels.get("memtype") {
            f.memtypes.insert(m.to_owned());
        }
    }
    out
}

#[test]
fn names_types_and_labels_match_process_exporter() {
    let here = env!("CARGO_MANIFEST_DIR");
    let config = format!("{here}/tests/fixtures/golden-config.yml");
    let reference =
        std::fs::read_to_string(format!("{here}/tests/fixtures/process-exporter.prom")).unwrap();
    let theirs = families(&reference);

    // The recording's workload: two sleeps (one under sh), an idle
    // multi-threaded exporter matched by its command line.
    let mut kids = Children::default();
    kids.spawn(Command::new("sleep").arg("300"));
    kids.spawn(Command::new("/bin/sh").args(["-c", "sleep 300; :"]));
    kids.spawn(Command::new(exporter()).args([
        "--listen",
        "127.0.0.1:0",
        "--web.telemetry-path",
        "/golden",
    ]));
    std::thread::sleep(Duration::from_millis(500));
    let out = Command::new(exporter())
        .args(["--once", "--config.path", &config])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for group in ["sleepers", "exe:sh", "pidmap-exporter:golden"] {
        assert!(
            text.contains(&format!("groupname=\"{group}\"")),
            "group {group} missing: the workload did not start?\n{text}"
        );
    }
    assert!(
        text.contains("namedprocess_namegroup_thread_count{groupname=\"pidmap-exporter:golden\"")
    );
    let ours = families(&text);

    let missing: Vec<&String> = theirs.keys().filter(|k| !ours.contains_key(*k)).collect();
    assert!(
        missing.is_empty(),
        "process-exporter's series missing here: {missing:?}"
    );
    for (name, their) in &theirs {
        let our = &ours[name];
        assert_eq!(our.kind, their.kind, "type of {name}");
        assert_eq!(our.label_names, their.label_names, "label names of {name}");
        assert_eq!(our.memtypes, their.memtypes, "memtypes of {name}");
    }
    let extra: Vec<&String> = ours.keys().filter(|k| !theirs.contains_key(*k)).collect();
    assert!(
        extra.is_empty(),
        "series process-exporter does not have: {extra:?}"
    );
}
