//! What one scrape shows: the groups and the exporter's own counts, ready
//! to encode.

use std::collections::BTreeMap;

/// Tasks by process-exporter's state names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct States {
    pub running: u64,
    pub sleeping: u64,
    pub waiting: u64,
    pub zombie: u64,
    pub other: u64,
}

impl States {
    /// Count one task by its `stat` letter: R, S, D (Waiting), Z, and
    /// everything else (T, t, I, X, P, ...) as Other, as process-exporter
    /// does.
    pub fn add(&mut self, letter: u8) {
        match letter {
            b'R' => self.running += 1,
            b'S' => self.sleeping += 1,
            b'D' => self.waiting += 1,
            b'Z' => self.zombie += 1,
            _ => self.other += 1,
        }
    }

    /// `(label value, count)` in process-exporter's order.
    pub fn labelled(&self) -> [(&'static str, u64); 5] {
        [
            ("Running", self.running),
            ("Sleeping", self.sleeping),
            ("Waiting", self.waiting),
            ("Zombie", self.zombie),
            ("Other", self.other),
        ]
    }
}

/// Counters that only grow: what a group's (or a thread name's) tasks
/// did since they were first seen, exited ones included.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CounterValues {
    pub cpu_user: f64,
    pub cpu_system: f64,
    pub minor_faults: u64,
    pub major_faults: u64,
    pub voluntary_switches: u64,
    pub involuntary_switches: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// Threads of one name in one group.
#[derive(Debug, Clone, Default)]
pub struct ThreadNameSnapshot {
    pub name: String,
    pub count: u64,
    pub counters: CounterValues,
}

/// One group.
#[derive(Debug, Clone, Default)]
pub struct GroupSnapshot {
    /// The label value (escaped if the name is not UTF-8).
    pub name: String,
    pub procs: u64,
    pub threads: u64,
    pub counters: CounterValues,
    pub resident_bytes: u64,
    pub virtual_bytes: u64,
    pub swap_bytes: u64,
    /// `Pss` and `SwapPss` of `smaps_rollup` (with `-gather-smaps`).
    pub pss_bytes: u64,
    pub swap_pss_bytes: u64,
    /// Tasks by process-exporter's count: each process by its own state,
    /// and each thread of a multi-threaded process once more.
    pub states: States,
    /// Tasks waiting in each kernel function, counted as the states are.
    pub wchans: Vec<(String, u64)>,
    /// Seconds since the epoch; 0 when the group has no process.
    pub oldest_start: f64,
    pub open_fds: u64,
    pub worst_fd_ratio: f64,
    pub thread_names: Vec<ThreadNameSnapshot>,
}

/// Errors since the exporter started.
#[derive(Debug, Clone, Default)]
pub struct ErrorCounts {
    /// By (what was read, why it failed).
    pub by_kind: BTreeMap<(&'static str, &'static str), u64>,
    /// Scrapes whose process listing failed (process-exporter's
    /// `namedprocess_scrape_errors`).
    pub scrape_errors: u64,
    /// Reads of one process's extra data that failed (its
    /// `namedprocess_scrape_partial_errors`).
    pub partial_errors: u64,
}

/// One scrape.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub groups: Vec<GroupSnapshot>,
    pub tasks_read: u64,
    pub scrape_seconds: f64,
    pub backend: String,
    pub errors: ErrorCounts,
    /// Whether the proportional memtypes were read (`-gather-smaps`).
    pub smaps: bool,
}
