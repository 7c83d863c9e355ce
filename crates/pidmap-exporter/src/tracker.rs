//! Which process belongs to which group, and the groups' totals, as
//! process-exporter keeps them:
//!
//! - a process is named once, when first seen (keyed by pid and start
//!   time): by the config's first matching entry, or (with `children`) by
//!   the group of its nearest ancestor that has one; otherwise it is left
//!   out for good;
//! - a group's CPU counters only grow: each scrape adds what each of its
//!   processes (and threads) used since the last one, so what an exited
//!   process used stays counted; a group once seen stays (with 0
//!   processes);
//! - states and wait channels are counted as process-exporter counts them:
//!   each process by its own, and each thread of a multi-threaded process
//!   once more;
//! - one difference: a process already running at the first scrape counts
//!   its whole usage then (process-exporter starts those at 0), so
//!   `--once` shows real totals. Rates are the same.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::{Config, ProcessFacts};
use crate::extras::{Extras, Task, Wants};
use crate::id_hash::IdMap;
use crate::label::label_value;
use crate::read_error::ReadError;
use crate::snapshot::{
    CounterValues, ErrorCounts, GroupSnapshot, Snapshot, States, ThreadNameSnapshot,
};
use crate::source::{self, Counters, Name, ProcessRecord, Source, ThreadRecord};

/// A task's counters as its files show them (totals since it started).
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    user: Duration,
    system: Duration,
    minor_faults: u64,
    major_faults: u64,
    voluntary: u64,
    involuntary: u64,
    read_bytes: u64,
    write_bytes: u64,
}

impl Counts {
    /// From a record (its CPU times, and the counters it carries) and what
    /// the files said (the counters it does not carry).
    fn new(user: Duration, system: Duration, counters: Counters, x: &Extras) -> Counts {
        let (minor_faults, major_faults) =
            counters.faults.unwrap_or((x.minor_faults, x.major_faults));
        let (voluntary, involuntary) = counters
            .switches
            .unwrap_or((x.voluntary_switches, x.involuntary_switches));
        Counts {
            user,
            system,
            minor_faults,
            major_faults,
            voluntary,
            involuntary,
            read_bytes: x.read_bytes,
            write_bytes: x.write_bytes,
        }
    }

    /// Add what `now` shows beyond `seen`, and remember `now` in `seen`
    /// (never going down, so a counter that shrinks adds nothing).
    fn add_since(&mut self, now: &Counts, seen: &mut Counts) {
        self.user += now.user.saturating_sub(seen.user);
        self.system += now.system.saturating_sub(seen.system);
        seen.user = seen.user.max(now.user);
        seen.system = seen.system.max(now.system);
        let pairs = [
            (
                &mut self.minor_faults,
                now.minor_faults,
                &mut seen.minor_faults,
            ),
            (
                &mut self.major_faults,
                now.major_faults,
                &mut seen.major_faults,
            ),
            (&mut self.voluntary, now.voluntary, &mut seen.voluntary),
            (
                &mut self.involuntary,
                now.involuntary,
                &mut seen.involuntary,
            ),
            (&mut self.read_bytes, now.read_bytes, &mut seen.read_bytes),
            (
                &mut self.write_bytes,
                now.write_bytes,
                &mut seen.write_bytes,
            ),
        ];
        for (total, now, seen) in pairs {
            *total += now.saturating_sub(*seen);
            *seen = (*seen).max(now);
        }
    }

    fn values(&self) -> CounterValues {
        CounterValues {
            cpu_user: self.user.as_secs_f64(),
            cpu_system: self.system.as_secs_f64(),
            minor_faults: self.minor_faults,
            major_faults: self.major_faults,
            voluntary_switches: self.voluntary,
            involuntary_switches: self.involuntary,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
        }
    }
}

/// What was decided about a process when it was first seen.
struct Tracked {
    /// Index into `Tracker::groups`; `None`: not in any group.
    group: Option<usize>,
    /// The scrape that last saw it.
    seen: u64,
    counts: Counts,
    threads: IdMap<i32, ThreadSeen>,
}

struct ThreadSeen {
    seen: u64,
    counts: Counts,
    /// Its name, and that name as a label value (made again only when
    /// the name changes).
    comm: Name,
    label: Arc<str>,
}

/// A group's counters, kept across scrapes.
struct GroupTotals {
    label: String,
    counts: Counts,
    /// Per thread name (label value).
    threads: BTreeMap<Arc<str>, Counts>,
}

/// Options that change what is read.
#[allow(
    clippy::struct_excessive_bools,
    reason = "process-exporter's flags, one each"
)]
pub struct TrackerOptions {
    pub children: bool,
    /// The per-thread-name families (`-threads`).
    pub threads: bool,
    /// The proportional memtypes (`-gather-smaps`).
    pub smaps: bool,
    /// Name again, every scrape, a process no entry matched (`-recheck`).
    pub recheck: bool,
    /// Log each new process and the group it joins (`-debug`).
    pub debug: bool,
}

pub struct Tracker {
    config: Config,
    options: TrackerOptions,
    boot_time: u64,
    scrape: u64,
    procs: IdMap<(i32, Duration), Tracked>,
    groups: Vec<GroupTotals>,
    group_index: HashMap<Vec<u8>, usize>,
    usernames: HashMap<u32, Vec<u8>>,
    errors: ErrorCounts,
    /// Errors logged in the current scrape (the log is capped at ten).
    logged_this_scrape: u64,
    // Buffers reused from one scrape to the next.
    records: Vec<ProcessRecord>,
    thread_records: IdMap<i32, Vec<ThreadRecord>>,
}

impl Tracker {
    pub fn new(config: Config, options: TrackerOptions, boot_time: u64) -> Tracker {
        Tracker {
            config,
            options,
            boot_time,
            scrape: 0,
            procs: IdMap::default(),
            groups: Vec::new(),
            group_index: HashMap::new(),
            usernames: HashMap::new(),
            errors: ErrorCounts::default(),
            logged_this_scrape: 0,
            records: Vec::new(),
            thread_records: IdMap::default(),
        }
    }

    /// Read the system and return what a scrape shows.
    pub fn refresh(&mut self, source: &mut Source) -> Snapshot {
        let started = Instant::now();
        self.scrape += 1;
        self.logged_this_scrape = 0;
        let mut records = std::mem::take(&mut self.records);
        let listed = source.processes(self.config.needs_username(), &mut records);
        let mut snapshot = match listed {
            Ok(()) => self.update(source, &records),
            Err(e) => {
                self.errors.scrape_errors += 1;
                self.report(&e);
                Snapshot::default()
            }
        };
        self.records = records;
        snapshot.backend = source.backend_name();
        snapshot.errors = self.errors.clone();
        snapshot.scrape_seconds = started.elapsed().as_secs_f64();
        snapshot
    }

    /// Count and log an error (a task that is gone never gets here).
    fn report(&mut self, e: &ReadError) {
        *self.errors.by_kind.entry((e.what, e.kind)).or_default() += 1;
        self.logged_this_scrape += 1;
        if self.logged_this_scrape <= 10 {
            eprintln!("pidmap-exporter: {}", e.message);
        }
    }

    #[allow(
        clippy::too_many_lines,
        reason = "one scrape's steps in order (name, threads, views, fds, snapshot), sharing its locals"
    )]
    fn update(&mut self, source: &mut Source, records: &[ProcessRecord]) -> Snapshot {
        let scrape = self.scrape;
        // Name the new processes (and, with -recheck, those no entry
        // matched before).
        let by_pid: IdMap<i32, usize> = records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.pid, i))
            .collect();
        let mut undecided = Vec::new();
        for record in records {
            let key = (record.pid, record.start);
            if let Some(t) = self.procs.get_mut(&key) {
                t.seen = scrape;
                if !(self.options.recheck && t.group.is_none()) {
                    continue;
                }
            }
            match self.name_new(record) {
                Ok(Some(name)) => {
                    if self.options.debug {
                        eprintln!(
                            "pidmap-exporter: debug: process {} ({}) matched as {}",
                            record.pid,
                            label_value(&record.comm),
                            label_value(&name)
                        );
                    }
                    let group = Some(self.group_id(name));
                    self.procs.insert(key, Tracked::new(group, scrape));
                }
                Ok(None) => undecided.push(record),
                Err(e) => {
                    self.errors.partial_errors += 1;
                    self.report(&e);
                    self.procs.insert(key, Tracked::new(None, scrape));
                }
            }
        }
        for record in undecided {
            let group = if self.options.children {
                self.ancestor_group(record, records, &by_pid)
            } else {
                None
            };
            if self.options.debug {
                if let Some(g) = group {
                    eprintln!(
                        "pidmap-exporter: debug: process {} ({}) joins {}, its ancestor's group",
                        record.pid,
                        label_value(&record.comm),
                        self.groups[g].label
                    );
                }
            }
            self.procs
                .insert((record.pid, record.start), Tracked::new(group, scrape));
        }
        self.procs.retain(|_, t| t.seen == scrape);

        // The threads of the grouped processes that have more than one.
        let grouped: Vec<&ProcessRecord> = records
            .iter()
            .filter(|r| self.procs[&(r.pid, r.start)].group.is_some())
            .collect();
        let multi: Vec<i32> = grouped
            .iter()
            .filter(|r| r.num_threads > 1)
            .map(|r| r.pid)
            .collect();
        let wanted_threads: u64 = grouped
            .iter()
            .filter(|r| r.num_threads > 1)
            .map(|r| u64::from(r.num_threads))
            .sum();
        let all_threads: u64 = records.iter().map(|r| u64::from(r.num_threads)).sum();
        let mut thread_records = std::mem::take(&mut self.thread_records);
        let mut thread_errors = Vec::new();
        if !multi.is_empty() {
            // One listing of every task beats a listing per process once
            // the wanted threads are a good part of all of them.
            let whole = wanted_threads * 4 >= all_threads;
            source.threads(&multi, whole, &mut thread_records, &mut thread_errors);
        }
        for e in thread_errors {
            self.errors.partial_errors += 1;
            self.report(&e);
        }

        // What each file says, for the grouped processes and their threads:
        // a process's `stat` for its virtual size and `status` for its
        // swap (the records carry neither); a thread's `stat` and `status`
        // only for the counters its record does not carry.
        let process_wants = Wants {
            stat: true,
            status: true,
            io: true,
            wchan: true,
            smaps: self.options.smaps,
        };
        let thread_wants = |c: Counters| Wants {
            stat: self.options.threads && c.faults.is_none(),
            status: c.switches.is_none(),
            io: self.options.threads,
            wchan: true,
            smaps: false,
        };
        source.begin_extras();
        let mut extras = Extras::default();
        let mut thread_extras = Extras::default();
        let mut extra_errors = Vec::new();
        let mut thread_extra_errors = Vec::new();
        let mut partial = 0;

        let mut views: Vec<GroupView> = (0..self.groups.len())
            .map(|_| GroupView::default())
            .collect();
        for record in grouped {
            let key = (record.pid, record.start);
            let before = extra_errors.len();
            if !source.extras(
                Task::Process(record.pid),
                process_wants,
                &mut extras,
                &mut extra_errors,
            ) {
                // Gone since it was listed: not an error, not counted.
                extra_errors.truncate(before);
                continue;
            }
            if extra_errors.len() > before {
                partial += 1;
            }
            let group = self.procs[&key].group.expect("grouped");
            let view = &mut views[group];
            view.procs += 1;
            view.threads += u64::from(record.num_threads);
            view.rss += record.rss_bytes;
            view.virtual_bytes += extras.virtual_bytes;
            view.swap += extras.swap_bytes;
            view.pss += extras.pss_bytes;
            view.swap_pss += extras.swap_pss_bytes;
            #[allow(
                clippy::cast_precision_loss,
                reason = "seconds since the epoch: exact below 2^53"
            )]
            let start = self.boot_time as f64 + record.start.as_secs_f64();
            if view.oldest_start.is_none_or(|s| start < s) {
                view.oldest_start = Some(start);
            }
            view.states.add(record.state);
            if let Some(w) = &extras.wchan {
                count_wchan(&mut view.wchans, w);
            }
            let mut counts = Counts::new(record.user, record.system, record.counters, &extras);
            let threads = thread_records.get(&record.pid).filter(|t| t.len() > 1);
            let tracked = self.procs.get_mut(&key).expect("tracked");
            let totals = &mut self.groups[group];
            if let Some(threads) = threads {
                // A process's status counts its first thread's context
                // switches only: the group's are its threads' sum.
                counts.voluntary = 0;
                counts.involuntary = 0;
                for t in threads {
                    let task = Task::Thread {
                        tgid: record.pid,
                        tid: t.tid,
                        state: t.state,
                        start: t.start,
                        switches: t.counters.switches.map(|(v, i)| v + i),
                    };
                    if !source.extras(
                        task,
                        thread_wants(t.counters),
                        &mut thread_extras,
                        &mut thread_extra_errors,
                    ) {
                        continue;
                    }
                    view.states.add(t.state);
                    if let Some(w) = &thread_extras.wchan {
                        count_wchan(&mut view.wchans, w);
                    }
                    let now = Counts::new(t.user, t.system, t.counters, &thread_extras);
                    counts.voluntary += now.voluntary;
                    counts.involuntary += now.involuntary;
                    let seen = tracked.threads.entry(t.tid).or_insert_with(|| ThreadSeen {
                        seen: scrape,
                        counts: Counts::default(),
                        comm: t.comm,
                        label: label_value(t.comm.as_bytes()).into(),
                    });
                    seen.seen = scrape;
                    if seen.comm != t.comm {
                        seen.comm = t.comm;
                        seen.label = label_value(t.comm.as_bytes()).into();
                    }
                    match view.thread_counts.get_mut(&seen.label) {
                        Some(n) => *n += 1,
                        None => {
                            view.thread_counts.insert(seen.label.clone(), 1);
                        }
                    }
                    let name_totals = match totals.threads.get_mut(&seen.label) {
                        Some(c) => c,
                        None => totals.threads.entry(seen.label.clone()).or_default(),
                    };
                    name_totals.add_since(&now, &mut seen.counts);
                }
                tracked.threads.retain(|_, t| t.seen == scrape);
            }
            // What it used since the last scrape.
            totals.counts.add_since(&counts, &mut tracked.counts);
        }
        source.end_extras();
        self.thread_records = thread_records;
        self.errors.partial_errors += partial;
        for e in extra_errors.iter().chain(&thread_extra_errors) {
            self.report(e);
        }

        // Open fds and their limits, for the grouped processes only.
        for (key, tracked) in &self.procs {
            let Some(group) = tracked.group else { continue };
            let view = &mut views[group];
            match source.open_fds(key.0) {
                Ok(Some(n)) => {
                    view.fds += n as u64;
                    match source::fd_limit(key.0) {
                        #[allow(
                            clippy::cast_precision_loss,
                            reason = "a ratio: each cast rounds by at most one part in 2^53, as the division does"
                        )]
                        Ok(Some(limit)) => {
                            view.worst_fd_ratio = view.worst_fd_ratio.max(n as f64 / limit as f64);
                        }
                        Ok(None) => {}
                        Err(e) => view.errors.push(e),
                    }
                }
                Ok(None) => {}
                Err(e) => view.errors.push(e),
            }
        }
        let mut snapshot = Snapshot {
            tasks_read: source.records_read(),
            smaps: self.options.smaps,
            ..Snapshot::default()
        };
        let mut view_errors = Vec::new();
        for (totals, mut view) in self.groups.iter().zip(views) {
            view_errors.append(&mut view.errors);
            snapshot.groups.push(GroupSnapshot {
                name: totals.label.clone(),
                procs: view.procs,
                threads: view.threads,
                counters: totals.counts.values(),
                resident_bytes: view.rss,
                virtual_bytes: view.virtual_bytes,
                swap_bytes: view.swap,
                pss_bytes: view.pss,
                swap_pss_bytes: view.swap_pss,
                states: view.states,
                wchans: view
                    .wchans
                    .into_iter()
                    .map(|(w, n)| (w.to_string(), n))
                    .collect(),
                // Whole seconds, as process-exporter's `Time.Unix()`.
                oldest_start: view.oldest_start.map_or(0.0, f64::floor),
                open_fds: view.fds,
                worst_fd_ratio: view.worst_fd_ratio,
                thread_names: totals
                    .threads
                    .iter()
                    .map(|(name, counts)| ThreadNameSnapshot {
                        name: name.to_string(),
                        count: view.thread_counts.get(name).copied().unwrap_or(0),
                        counters: counts.values(),
                    })
                    .collect(),
            });
        }
        for e in view_errors {
            self.errors.partial_errors += 1;
            self.report(&e);
        }
        if self.logged_this_scrape > 10 {
            eprintln!(
                "pidmap-exporter: ... and {} more errors this scrape (see pidmap_exporter_errors_total)",
                self.logged_this_scrape - 10
            );
        }
        snapshot.groups.sort_by(|a, b| a.name.cmp(&b.name));
        snapshot
    }

    /// The config's name for a process seen for the first time.
    fn name_new(&mut self, record: &ProcessRecord) -> Result<Option<Vec<u8>>, ReadError> {
        let argv = if self.config.needs_cmdline() {
            source::cmdline(record.pid)?.unwrap_or_default()
        } else {
            Vec::new()
        };
        let username = match (self.config.needs_username(), record.euid) {
            (true, Some(uid)) => self
                .usernames
                .entry(uid)
                .or_insert_with(|| source::user_name(uid))
                .clone(),
            _ => Vec::new(),
        };
        let cgroups = if self.config.needs_cgroups() {
            source::cgroups(record.pid)?.unwrap_or_default()
        } else {
            Vec::new()
        };
        // As process-exporter dates it: the boot time in whole seconds
        // plus the start time since boot.
        let start = Duration::from_secs(self.boot_time) + record.start;
        Ok(self.config.group_of(&ProcessFacts {
            comm: &record.comm,
            argv: &argv,
            username: &username,
            pid: record.pid,
            start_time: (
                i64::try_from(start.as_secs()).unwrap_or(i64::MAX),
                start.subsec_nanos(),
            ),
            cgroups: &cgroups,
        }))
    }

    /// The group of the nearest ancestor that has one, walking up from a
    /// process no entry matched. An ancestor seen for the first time in
    /// this scrape is passed over until one decided before is found.
    fn ancestor_group(
        &mut self,
        record: &ProcessRecord,
        records: &[ProcessRecord],
        by_pid: &IdMap<i32, usize>,
    ) -> Option<usize> {
        let mut chain = HashSet::new();
        let mut ppid = record.ppid;
        loop {
            let Some(&i) = by_pid.get(&ppid) else {
                break None;
            };
            let parent = &records[i];
            if let Some(t) = self.procs.get(&(parent.pid, parent.start)) {
                break t.group;
            }
            if !chain.insert(parent.pid) {
                break None;
            }
            ppid = parent.ppid;
        }
    }

    fn group_id(&mut self, name: Vec<u8>) -> usize {
        if let Some(&id) = self.group_index.get(&name) {
            return id;
        }
        let id = self.groups.len();
        self.groups.push(GroupTotals {
            label: label_value(&name),
            counts: Counts::default(),
            threads: BTreeMap::new(),
        });
        self.group_index.insert(name, id);
        id
    }
}

impl Tracked {
    fn new(group: Option<usize>, seen: u64) -> Tracked {
        Tracked {
            group,
            seen,
            counts: Counts::default(),
            threads: IdMap::default(),
        }
    }
}

/// One group's gauges in one scrape.
#[derive(Default)]
struct GroupView {
    procs: u64,
    threads: u64,
    rss: u64,
    virtual_bytes: u64,
    swap: u64,
    pss: u64,
    swap_pss: u64,
    states: States,
    wchans: BTreeMap<Arc<str>, u64>,
    oldest_start: Option<f64>,
    fds: u64,
    worst_fd_ratio: f64,
    thread_counts: HashMap<Arc<str>, u64>,
    errors: Vec<ReadError>,
}

/// One more task waiting in `wchan` (the name is copied only the first
/// time).
fn count_wchan(wchans: &mut BTreeMap<Arc<str>, u64>, wchan: &Arc<str>) {
    match wchans.get_mut(wchan) {
        Some(n) => *n += 1,
        None => {
            wchans.insert(wchan.clone(), 1);
        }
    }
}
