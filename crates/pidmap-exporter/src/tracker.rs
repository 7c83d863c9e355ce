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
//! - one difference: a process already running at the first scrape counts
//!   its whole CPU time then (process-exporter starts those at 0), so
//!   `--once` shows real totals. Rates are the same.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::config::{Config, ProcessFacts};
use crate::label::label_value;
use crate::snapshot::{ErrorCounts, GroupSnapshot, Snapshot, States, ThreadNameSnapshot};
use crate::source::{self, ProcessRecord, ReadError, Source, ThreadRecord};

/// What was decided about a process when it was first seen.
struct Tracked {
    /// Index into `Tracker::groups`; `None`: not in any group.
    group: Option<usize>,
    /// The scrape that last saw it.
    seen: u64,
    user: Duration,
    system: Duration,
    threads: HashMap<i32, ThreadSeen>,
}

struct ThreadSeen {
    seen: u64,
    user: Duration,
    system: Duration,
}

/// A group's counters, kept across scrapes.
struct GroupTotals {
    label: String,
    user: Duration,
    system: Duration,
    /// Per thread name (label value): user and system time.
    threads: BTreeMap<String, (Duration, Duration)>,
}

/// Options that change what is read.
pub struct TrackerOptions {
    pub children: bool,
}

pub struct Tracker {
    config: Config,
    options: TrackerOptions,
    boot_time: u64,
    scrape: u64,
    procs: HashMap<(i32, Duration), Tracked>,
    groups: Vec<GroupTotals>,
    group_index: HashMap<Vec<u8>, usize>,
    usernames: HashMap<u32, Vec<u8>>,
    errors: ErrorCounts,
    /// Errors logged in the current scrape (the log is capped at ten).
    logged_this_scrape: u64,
    // Buffers reused from one scrape to the next.
    records: Vec<ProcessRecord>,
    thread_records: HashMap<i32, Vec<ThreadRecord>>,
}

impl Tracker {
    pub fn new(config: Config, options: TrackerOptions, boot_time: u64) -> Tracker {
        Tracker {
            config,
            options,
            boot_time,
            scrape: 0,
            procs: HashMap::new(),
            groups: Vec::new(),
            group_index: HashMap::new(),
            usernames: HashMap::new(),
            errors: ErrorCounts::default(),
            logged_this_scrape: 0,
            records: Vec::new(),
            thread_records: HashMap::new(),
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
        // Name the new processes.
        let by_pid: HashMap<i32, usize> = records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.pid, i))
            .collect();
        let mut undecided = Vec::new();
        for record in records {
            let key = (record.pid, record.start);
            if let Some(t) = self.procs.get_mut(&key) {
                t.seen = scrape;
                continue;
            }
            match self.name_new(record) {
                Ok(Some(name)) => {
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

        let mut views: Vec<GroupView> = (0..self.groups.len())
            .map(|_| GroupView::default())
            .collect();
        for record in grouped {
            let key = (record.pid, record.start);
            let group = self.procs[&key].group.expect("grouped");
            let view = &mut views[group];
            view.procs += 1;
            view.threads += u64::from(record.num_threads);
            view.rss += record.rss_bytes;
            #[allow(
                clippy::cast_precision_loss,
                reason = "seconds since the epoch: exact below 2^53"
            )]
            let start = self.boot_time as f64 + record.start.as_secs_f64();
            if view.oldest_start.is_none_or(|s| start < s) {
                view.oldest_start = Some(start);
            }
            let threads = thread_records.get(&record.pid).filter(|t| !t.is_empty());
            match threads {
                Some(threads) => {
                    for t in threads {
                        view.states.add(t.state);
                    }
                }
                None => view.states.add(record.state),
            }
            // CPU: what it used since the last scrape.
            let tracked = self.procs.get_mut(&key).expect("tracked");
            let totals = &mut self.groups[group];
            totals.user += record.user.saturating_sub(tracked.user);
            totals.system += record.system.saturating_sub(tracked.system);
            tracked.user = tracked.user.max(record.user);
            tracked.system = tracked.system.max(record.system);
            if let Some(threads) = threads {
                for t in threads {
                    let name = label_value(&t.comm);
                    *view.thread_counts.entry(name.clone()).or_default() += 1;
                    let seen = tracked.threads.entry(t.tid).or_insert(ThreadSeen {
                        seen: scrape,
                        user: Duration::ZERO,
                        system: Duration::ZERO,
                    });
                    let acc = totals.threads.entry(name).or_default();
                    acc.0 += t.user.saturating_sub(seen.user);
                    acc.1 += t.system.saturating_sub(seen.system);
                    seen.user = seen.user.max(t.user);
                    seen.system = seen.system.max(t.system);
                    seen.seen = scrape;
                }
                tracked.threads.retain(|_, t| t.seen == scrape);
            }
        }
        self.thread_records = thread_records;

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
            ..Snapshot::default()
        };
        let mut view_errors = Vec::new();
        for (totals, mut view) in self.groups.iter().zip(views) {
            view_errors.append(&mut view.errors);
            snapshot.groups.push(GroupSnapshot {
                name: totals.label.clone(),
                procs: view.procs,
                threads: view.threads,
                cpu_user: totals.user.as_secs_f64(),
                cpu_system: totals.system.as_secs_f64(),
                resident_bytes: view.rss,
                states: view.states,
                oldest_start: view.oldest_start.unwrap_or(0.0),
                open_fds: view.fds,
                worst_fd_ratio: view.worst_fd_ratio,
                thread_names: totals
                    .threads
                    .iter()
                    .map(|(name, (user, system))| ThreadNameSnapshot {
                        name: name.clone(),
                        count: view.thread_counts.get(name).copied().unwrap_or(0),
                        cpu_user: user.as_secs_f64(),
                        cpu_system: system.as_secs_f64(),
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
        Ok(self.config.group_of(&ProcessFacts {
            comm: &record.comm,
            argv: &argv,
            username: &username,
            pid: record.pid,
        }))
    }

    /// The group of the nearest ancestor that has one, walking up from a
    /// process no entry matched. An ancestor seen for the first time in
    /// this scrape is passed over until one decided before is found.
    fn ancestor_group(
        &mut self,
        record: &ProcessRecord,
        records: &[ProcessRecord],
        by_pid: &HashMap<i32, usize>,
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
            user: Duration::ZERO,
            system: Duration::ZERO,
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
            user: Duration::ZERO,
            system: Duration::ZERO,
            threads: HashMap::new(),
        }
    }
}

/// One group's gauges in one scrape.
#[derive(Default)]
struct GroupView {
    procs: u64,
    threads: u64,
    rss: u64,
    states: States,
    oldest_start: Option<f64>,
    fds: u64,
    worst_fd_ratio: f64,
    thread_counts: HashMap<String, u64>,
    errors: Vec<ReadError>,
}
