//! The fields a thread shares with its process (its parent and its
//! resident set): which they are ([`GROUP_FIELDS`]), a process's values of
//! them ([`GroupRecord`]), when reading them once per process pays
//! ([`TaskShape`]), and how a listing's records take them. Plain data and
//! functions; [`group_records`](super::group_records) makes the calls.

use super::record_sink::RecordSink;
use crate::info::InfoFields;
use crate::sys;

/// The fields that are the same for every thread of a process.
pub(super) const GROUP_FIELDS: InfoFields = InfoFields::PPID.union(InfoFields::RSS);

/// Tasks per process from which one more record per process costs less
/// than the fields it saves the threads' records. A process record (its
/// frame, the LSM's check, the parent, the resident set, the state) costs
/// about 1,380 instructions in the patched guest with Smack, and a
/// thread's record without the parent and the resident set about 100
/// fewer: the group records pay from about 14 threads per process. Two
/// processes of 100 threads and the guest's 33 other tasks (7 tasks a
/// process) took 4 % more with them, 100 x 100 (76 a process) 6 % less.
const MIN_TASKS_PER_PROCESS: usize = 16;

/// How many tasks and processes a listing of all tasks had.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskShape {
    tasks: usize,
    processes: usize,
}

impl TaskShape {
    /// Count one task record (a process's leader has its tgid as tid).
    pub(super) fn count(&mut self, r: &sys::PidmapInfo) {
        self.tasks += 1;
        if r.tid == r.tgid {
            self.processes += 1;
        }
    }

    pub(super) fn threaded(self) -> bool {
        self.processes > 0 && self.tasks >= MIN_TASKS_PER_PROCESS * self.processes
    }
}

/// A process's fields for its threads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupRecord {
    tgid: u32,
    /// The `PIDMAP_INFO_*` bits of [`GROUP_FIELDS`] the kernel filled.
    mask: u64,
    ppid: u32,
    rss_bytes: u64,
}

impl GroupRecord {
    /// The fields of a process record, if its leader is alive.
    pub(super) fn of(r: &sys::PidmapInfo) -> Option<GroupRecord> {
        let leader_alive = !matches!(r.state, b'Z' | b'X' | b'x');
        (r.mask & sys::PIDMAP_INFO_STATE != 0 && leader_alive).then_some(GroupRecord {
            tgid: r.tid,
            mask: r.mask & GROUP_FIELDS.bits(),
            ppid: r.ppid,
            rss_bytes: r.rss_bytes,
        })
    }

    /// Give a thread's record its process's fields, as if the kernel had
    /// filled them.
    pub(super) fn lend(&self, r: &mut sys::PidmapInfo) {
        r.mask |= self.mask;
        r.ppid = self.ppid;
        r.rss_bytes = self.rss_bytes;
    }
}

/// The process record of `tgid` in `groups` (ascending by tgid). A
/// listing of tasks goes through a group's threads one after another, so
/// the group found last (`last`, an index into `groups`) is tried first.
pub(super) fn find_group<'g>(
    groups: &'g [GroupRecord],
    last: &mut usize,
    tgid: u32,
) -> Option<&'g GroupRecord> {
    if groups.get(*last).is_some_and(|g| g.tgid == tgid) {
        return groups.get(*last);
    }
    let i = groups.binary_search_by_key(&tgid, |g| g.tgid).ok()?;
    *last = i;
    groups.get(i)
}

/// Match the record `r` with the first of `pending` (indices into `out`,
/// ascending by tid): the tasks before `r`'s tid are gone, and `r`'s own
/// task takes its group fields. Returns how many of `pending` are settled.
pub(super) fn merge(
    out: &mut impl RecordSink,
    pending: &[usize],
    r: &sys::PidmapInfo,
    fields: InfoFields,
    gone: &mut Vec<usize>,
) -> usize {
    let mut settled = 0;
    for &i in pending {
        let tid = out.tid(i);
        if tid > r.tid() {
            break;
        }
        settled += 1;
        if tid < r.tid() {
            gone.push(i);
            continue;
        }
        out.take_fields(i, r, fields);
        break;
    }
    settled
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::record_sink::{remove_from_slice, Infos, Records};
    use crate::info::TaskInfo;
    use crate::pid::Pid;
    use crate::record::TaskRecord;

    fn record(tid: u32, tgid: u32, state: u8) -> sys::PidmapInfo {
        sys::PidmapInfo {
            mask: sys::PIDMAP_INFO_ID
                | sys::PIDMAP_INFO_PPID
                | sys::PIDMAP_INFO_RSS
                | sys::PIDMAP_INFO_STATE,
            tid,
            tgid,
            ppid: 1,
            rss_bytes: 7 * crate::info::page_size(),
            state,
            ..sys::PidmapInfo::default()
        }
    }

    fn task(tid: u32) -> TaskInfo {
        TaskInfo::from_record(&record(tid, tid, b'S'), InfoFields::TGID)
    }

    #[test]
    fn shape_decides_by_tasks_per_process() {
        let mut shape = TaskShape::default();
        assert!(!shape.threaded(), "nothing listed yet: one call");
        // Two processes: 1 and 2, with threads 3.. in process 2.
        let last = u32::try_from(2 * MIN_TASKS_PER_PROCESS).unwrap();
        shape.count(&record(1, 1, b'S'));
        for tid in 2..last {
            shape.count(&record(tid, 2, b'S'));
        }
        assert!(!shape.threaded(), "one task short of the threshold");
        shape.count(&record(last, 2, b'S'));
        assert!(shape.threaded(), "at the threshold");
    }

    #[test]
    fn a_group_is_found_from_the_last_one_or_by_search() {
        let groups: Vec<GroupRecord> = [3, 9, 20]
            .iter()
            .filter_map(|&tgid| GroupRecord::of(&record(tgid, tgid, b'S')))
            .collect();
        let mut last = 0;
        let found = |last: &mut usize, tgid| find_group(&groups, last, tgid).map(|g| g.tgid);
        assert_eq!(found(&mut last, 9), Some(9));
        assert_eq!(last, 1);
        assert_eq!(found(&mut last, 9), Some(9), "the last one again");
        assert_eq!(found(&mut last, 4), None, "no process record");
        assert_eq!(last, 1, "a miss keeps the last group");
        assert_eq!(found(&mut last, 3), Some(3), "an earlier group");
        assert_eq!(found(&mut last, 20), Some(20));
        assert_eq!(found(&mut last, 21), None);
        let mut past_the_end = 7;
        assert_eq!(found(&mut past_the_end, 20), Some(20));
        assert_eq!(find_group(&[], &mut last, 3).map(|g| g.tgid), None);
    }

    #[test]
    fn a_zombie_leader_stands_for_no_thread() {
        assert!(GroupRecord::of(&record(5, 5, b'Z')).is_none());
        assert!(GroupRecord::of(&record(5, 5, b'X')).is_none());
        let mut no_state = record(5, 5, b'S');
        no_state.mask &= !sys::PIDMAP_INFO_STATE;
        assert!(GroupRecord::of(&no_state).is_none());

        let g = GroupRecord::of(&record(5, 5, b'S')).unwrap();
        let mut thread = record(6, 5, b'R');
        thread.mask = sys::PIDMAP_INFO_ID | sys::PIDMAP_INFO_STATE;
        thread.ppid = 0;
        thread.rss_bytes = 0;
        g.lend(&mut thread);
        let t = TaskInfo::from_record(&thread, InfoFields::ALL);
        assert_eq!(t.ppid, Some(Pid::from_raw(1)));
        assert_eq!(t.rss_pages, Some(7));
    }

    #[test]
    fn merge_settles_the_gone_and_the_found() {
        let tasks = [3, 10, 11, 12, 20].map(task);
        let mut infos = tasks.to_vec();
        // One record past the listing: a kept buffer's last listing.
        let mut records: Vec<TaskRecord> = tasks.iter().map(TaskRecord::from_info).collect();
        records.push(TaskRecord::from_info(&task(99)));
        let units = crate::info::RecordUnits::get();
        let mut as_infos = Infos {
            out: &mut infos,
            fields: InfoFields::ALL,
            units,
        };
        let mut from_procfs = Vec::new();
        let mut as_records = Records {
            buf: &mut records,
            len: tasks.len(),
            fields: InfoFields::ALL,
            from_procfs: &mut from_procfs,
        };
        check_merge(&mut as_infos);
        check_merge(&mut as_records);
        let len = as_records.len();
        assert_eq!(len, 3, "10 and 11 are gone");
        let merged: Vec<TaskInfo> = records[..len].iter().map(TaskRecord::to_info).collect();
        assert_eq!(merged, infos, "both outputs take the same fields");
        let tids: Vec<i32> = infos.iter().map(|t| t.tid.as_raw()).collect();
        assert_eq!(tids, [3, 12, 20]);
        assert_eq!(infos[1].ppid, Some(Pid::from_raw(1)));
        assert_eq!(infos[1].rss_pages, Some(7));
        assert_eq!(infos[0].ppid, None, "tasks not pending are untouched");
    }

    fn check_merge(out: &mut impl RecordSink) {
        let pending = [1, 2, 3]; // tids 10, 11, 12
        let mut gone = Vec::new();
        // A record of tid 12: 10 and 11 are gone, 12 takes the fields.
        let settled = merge(out, &pending, &record(12, 9, b'S'), GROUP_FIELDS, &mut gone);
        assert_eq!(settled, 3);
        assert_eq!(gone, [1, 2]);

        // A record before the first pending settles nothing.
        let mut none_gone = Vec::new();
        let r = record(15, 15, b'S');
        assert_eq!(merge(out, &[4], &r, GROUP_FIELDS, &mut none_gone), 0);
        assert!(none_gone.is_empty());
        out.remove(&gone);
    }

    #[test]
    fn removing_indices_keeps_the_order() {
        let mut v: Vec<i32> = (0..8).collect();
        assert_eq!(remove_from_slice(&mut v, &[0, 3, 4, 7]), 4);
        assert_eq!(v[..4], [1, 2, 5, 6]);
        assert_eq!(remove_from_slice(&mut v[..4], &[]), 4);
        assert_eq!(v[..4], [1, 2, 5, 6]);
    }
}
