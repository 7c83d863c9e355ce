//! Where a listing's records end up: [`TaskInfo`]s converted from the
//! handle's reused room, or [`TaskRecord`]s left where the call wrote
//! them. [`RecordRoom`] is what one call reads into; [`RecordSink`] adds
//! what the per-process group fields need of a listing's output.

use bytemuck::TransparentWrapper;

use crate::error::Result;
use crate::info::{InfoFields, RecordUnits, TaskInfo};
use crate::record::TaskRecord;
use crate::sys;

/// Records per system call: 100 KiB of room (200-byte records), reused by
/// the handle. The kernel bounds its own work per section whatever the
/// count; a larger room only saves calls.
pub(super) const RECORD_BATCH: usize = 512;

/// Room for one call's records, and what is kept of them.
pub(super) trait RecordRoom {
    /// Room for the next call's `want` (at most [`RECORD_BATCH`])
    /// records: the handle's `spare`, unless this room has its own.
    fn room<'a>(
        &'a mut self,
        spare: &'a mut Vec<sys::PidmapInfo>,
        want: usize,
    ) -> &'a mut [sys::PidmapInfo] {
        spare_room(spare, want)
    }

    /// The call wrote `n` records at the start of the last room, and the
    /// caller took them: keep those. Records not kept are not part of
    /// the listing.
    fn keep(&mut self, spare: &[sys::PidmapInfo], n: usize);
}

/// The handle's room alone: the records are the caller's to take before
/// the next call, and nothing is kept.
pub(super) struct Scratch;

impl RecordRoom for Scratch {
    fn keep(&mut self, _: &[sys::PidmapInfo], _: usize) {}
}

/// The handle's room, initialised once and reused: the kernel writes whole
/// records (zero-padded to `info_size`) and only the `n` it returns are
/// read.
fn spare_room(spare: &mut Vec<sys::PidmapInfo>, want: usize) -> &mut [sys::PidmapInfo] {
    if spare.len() < RECORD_BATCH {
        spare.resize(RECORD_BATCH, sys::PidmapInfo::default());
    }
    &mut spare[..want.min(RECORD_BATCH)]
}

/// A listing's output, in tid order.
pub(super) trait RecordSink: RecordRoom {
    fn len(&self) -> usize;

    fn clear(&mut self);

    /// The tid of the `i`th task.
    fn tid(&self, i: usize) -> i32;

    /// Give the `i`th task the `fields` of `own`, a record of its task.
    fn take_fields(&mut self, i: usize, own: &sys::PidmapInfo, fields: InfoFields);

    /// Remove the tasks at `indices` (ascending).
    fn remove(&mut self, indices: &[usize]);

    /// The fallback's records: `read` fills a vector of them (cleared
    /// first).
    fn fill_from_procfs(
        &mut self,
        read: impl FnOnce(&mut Vec<TaskInfo>) -> Result<()>,
    ) -> Result<()>;
}

/// [`TaskInfo`]s with the `fields` asked for, converted from the
/// handle's room call by call.
pub(super) struct Infos<'o> {
    pub(super) out: &'o mut Vec<TaskInfo>,
    pub(super) fields: InfoFields,
    pub(super) units: RecordUnits,
}

impl RecordRoom for Infos<'_> {
    fn keep(&mut self, spare: &[sys::PidmapInfo], n: usize) {
        TaskInfo::extend_from_records(self.out, &spare[..n], self.fields, self.units);
    }
}

impl RecordSink for Infos<'_> {
    fn len(&self) -> usize {
        self.out.len()
    }

    fn clear(&mut self) {
        self.out.clear();
    }

    fn tid(&self, i: usize) -> i32 {
        self.out[i].tid.as_raw()
    }

    fn take_fields(&mut self, i: usize, own: &sys::PidmapInfo, fields: InfoFields) {
        let own = TaskInfo::from_record_in(own, fields, self.units);
        let t = &mut self.out[i];
        t.ppid = own.ppid;
        t.rss_pages = own.rss_pages;
    }

    fn remove(&mut self, indices: &[usize]) {
        let kept = remove_from_slice(self.out, indices);
        self.out.truncate(kept);
    }

    fn fill_from_procfs(
        &mut self,
        read: impl FnOnce(&mut Vec<TaskInfo>) -> Result<()>,
    ) -> Result<()> {
        read(self.out)
    }
}

/// The kernel's records with the `fields` asked for, read straight into
/// the first `len` of `buf`. `buf` only grows, zeroed as it does (a kernel
/// that wrote less than it said still leaves valid records), so that the
/// next listing writes over the last one's with no clearing.
pub(super) struct Records<'b> {
    pub(super) buf: &'b mut Vec<TaskRecord>,
    pub(super) len: usize,
    pub(super) fields: InfoFields,
    /// The fallback's records before their conversion, reused.
    pub(super) from_procfs: &'b mut Vec<TaskInfo>,
}

impl RecordRoom for Records<'_> {
    fn room<'a>(
        &'a mut self,
        _: &'a mut Vec<sys::PidmapInfo>,
        want: usize,
    ) -> &'a mut [sys::PidmapInfo] {
        let end = self.len + want;
        if self.buf.len() < end {
            self.buf.resize(end, TaskRecord::default());
        }
        TaskRecord::peel_slice_mut(&mut self.buf[self.len..end])
    }

    fn keep(&mut self, _: &[sys::PidmapInfo], n: usize) {
        // The ids always; the other fields where asked for, as a TaskInfo
        // keeps them.
        let mask = self.fields.bits() | sys::PIDMAP_INFO_ID;
        for r in &mut self.buf[self.len..self.len + n] {
            r.raw_mut().mask &= mask;
        }
        self.len += n;
    }
}

impl RecordSink for Records<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn clear(&mut self) {
        self.len = 0;
    }

    fn tid(&self, i: usize) -> i32 {
        self.buf[..self.len][i].raw().tid()
    }

    fn take_fields(&mut self, i: usize, own: &sys::PidmapInfo, fields: InfoFields) {
        let r = self.buf[..self.len][i].raw_mut();
        let bits = own.mask & fields.bits();
        r.mask |= bits;
        if bits & sys::PIDMAP_INFO_PPID != 0 {
            r.ppid = own.ppid;
        }
        if bits & sys::PIDMAP_INFO_RSS != 0 {
            r.rss_bytes = own.rss_bytes;
        }
    }

    fn remove(&mut self, indices: &[usize]) {
        self.len = remove_from_slice(&mut self.buf[..self.len], indices);
    }

    fn fill_from_procfs(
        &mut self,
        read: impl FnOnce(&mut Vec<TaskInfo>) -> Result<()>,
    ) -> Result<()> {
        let infos = &mut *self.from_procfs;
        read(infos)?;
        if self.buf.len() < infos.len() {
            self.buf.resize(infos.len(), TaskRecord::default());
        }
        for (r, info) in self.buf.iter_mut().zip(infos.iter()) {
            *r = TaskRecord::from_info(info);
        }
        self.len = infos.len();
        Ok(())
    }
}

/// Move the elements of `out` not at `indices` (ascending) to its front,
/// in order, and return how many there are; with no index, without a
/// pass (the common case: no task went away).
pub(super) fn remove_from_slice<T: Copy>(out: &mut [T], indices: &[usize]) -> usize {
    if indices.is_empty() {
        return out.len();
    }
    let mut drop = indices.iter().copied().peekable();
    let mut kept = 0;
    for i in 0..out.len() {
        if drop.next_if_eq(&i).is_none() {
            out[kept] = out[i];
            kept += 1;
        }
    }
    kept
}
