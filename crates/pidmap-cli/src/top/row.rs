//! [`TopRow`]: one row of `pidmap top`'s table, what the columns show
//! and the model fills.

use std::time::Duration;

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct TopRow {
    pub id: i32,
    pub tgid: Option<i32>,
    pub ppid: Option<i32>,
    pub euid: Option<u32>,
    /// The effective user's name (the uid where it has none, `?` when
    /// unknown).
    pub user: String,
    pub priority: Option<i32>,
    pub nice: Option<i32>,
    /// Whether the nice value applies (the policy is `SCHED_OTHER` or
    /// `SCHED_BATCH`); `None` when the policy is unknown.
    pub nice_applies: Option<bool>,
    pub state: char,
    pub threads: Option<u32>,
    pub rss_kib: Option<u64>,
    /// Percent of one CPU over the interval, as top's Irix mode.
    pub cpu: f64,
    pub mem: f64,
    pub time: Option<Duration>,
    pub comm: String,
    /// The command line, arguments joined by spaces (`None` when it is
    /// empty, as for a kernel thread or a zombie, or unread).
    pub cmdline: Option<String>,
    /// What COMMAND shows: the command line, or the name (`c` toggles;
    /// the name where there is no command line, as htop).
    pub command: String,
    /// Virtual and shared memory, KiB (`statm`; read only when shown).
    pub virt_kib: Option<u64>,
    pub shr_kib: Option<u64>,
    /// The tree view's branch drawing before the name (empty when flat).
    pub tree_prefix: String,
}
