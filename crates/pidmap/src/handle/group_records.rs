//! Records of all tasks with the fields a thread shares with its process
//! read once per process.
//!
//! Every thread of a group has its process's parent (`real_parent` is the
//! group's) and resident set (the group's mm). A record per thread reads
//! both again for each thread. When the handle's last listing of all tasks
//! had at least `MIN_TASKS_PER_PROCESS` tasks per process, they come
//! from one record per process instead, and the threads' records ask only
//! for the rest.
//!
//! A process record stands for its group only while its leader is alive:
//! a zombie leader has no mm, while its live threads do. The tasks that no
//! such record covers (a zombie leader's, a group that appeared between
//! the two calls, a group whose leader the view hides) get the fields from
//! their own records, in a pass over just those tids; a task gone by then
//! is left out, as a listing leaves out any task that is gone.
//!
//! The two calls are moments apart. A tgid seen by both names the same
//! process unless the pid space wrapped around in between, since the
//! kernel allocates pids cyclically.

use super::group_fields::{find_group, merge, GroupRecord, TaskShape, GROUP_FIELDS};
use super::record_chunks::Ask;
use super::record_sink::{RecordSink, Scratch, RECORD_BATCH};
use super::Pidmap;
use crate::error::Result;
use crate::info::InfoFields;
use crate::query::{Listing, Query};
use crate::sys;

/// Whether `ask` is a listing of all tasks that group records serve.
pub(super) fn serves(ask: &Ask<'_>, last: TaskShape) -> bool {
    whole_task_listing(ask) && !ask.fields.intersection(GROUP_FIELDS).is_empty() && last.threaded()
}

/// Whether `ask` lists every task (not a chunk): its shape is worth keeping.
pub(super) fn whole_task_listing(ask: &Ask<'_>) -> bool {
    ask.query.listing() == Listing::AllTasks && ask.start == 0 && ask.max == usize::MAX
}

impl Pidmap {
    /// [`Pidmap::fill_info`] for a listing of all tasks, with the group
    /// fields from one record per process. `groups` is reused room.
    /// `Ok(Err(errno))`: a call failed.
    pub(super) fn info_with_group_records(
        &self,
        ask: Ask<'_>,
        room: &mut Vec<sys::PidmapInfo>,
        groups: &mut Vec<GroupRecord>,
        out: &mut impl RecordSink,
        shape: &mut TaskShape,
    ) -> Result<Result<(), i32>> {
        let mut processes = Query::processes();
        if ask.query.ignores_kthreads() {
            processes = processes.without_kthreads();
        }
        let per_process = Ask {
            query: processes,
            fields: ask.fields.intersection(GROUP_FIELDS) | InfoFields::STATE,
            ..ask
        };
        groups.clear();
        let r = self.each_record_chunk(per_process, room, &mut Scratch, |records| {
            groups.extend(records.iter().filter_map(GroupRecord::of));
            Ok(())
        })?;
        if r.is_err() {
            return Ok(r);
        }

        let per_task = Ask {
            fields: ask.fields.difference(GROUP_FIELDS),
            ..ask
        };
        let mut uncovered = Vec::new();
        let mut last_group = 0;
        let mut index = out.len();
        let r = self.each_record_chunk(per_task, room, out, |records| {
            for r in records.iter_mut() {
                shape.count(r);
                match find_group(groups, &mut last_group, r.tgid) {
                    Some(group) => group.lend(r),
                    None => uncovered.push(index),
                }
                index += 1;
            }
            Ok(())
        })?;
        if r.is_err() {
            return Ok(r);
        }
        self.cover_the_rest(ask, room, out, &uncovered)
    }

    /// The group fields of the tasks `uncovered` (ascending indices into
    /// `out`) from their own records; the tasks gone by now are removed.
    fn cover_the_rest(
        &self,
        ask: Ask<'_>,
        room: &mut Vec<sys::PidmapInfo>,
        out: &mut impl RecordSink,
        uncovered: &[usize],
    ) -> Result<Result<(), i32>> {
        let fields = ask.fields.intersection(GROUP_FIELDS);
        let mut gone = Vec::new();
        let mut next = 0;
        while let Some(&first) = uncovered.get(next) {
            let mut read = 0;
            let from_first = Ask {
                fields,
                start: out.tid(first),
                max: (uncovered.len() - next).min(RECORD_BATCH),
                ..ask
            };
            let r = self.each_record_chunk(from_first, room, &mut Scratch, |records| {
                read += records.len();
                for r in records.iter() {
                    next += merge(out, &uncovered[next..], r, fields, &mut gone);
                }
                Ok(())
            })?;
            if r.is_err() {
                return Ok(r);
            }
            if read == 0 {
                // None left from the first: every one of them is gone.
                gone.extend_from_slice(&uncovered[next..]);
                break;
            }
        }
        out.remove(&gone);
        Ok(Ok(()))
    }
}
