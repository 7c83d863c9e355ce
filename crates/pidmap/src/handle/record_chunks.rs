//! One records listing through pidmap_info(2), chunk by chunk: what a
//! call asks for ([`Ask`]) and the loop that reads the records into a
//! [`RecordRoom`] ([`Pidmap::each_record_chunk`]), for the per-task and
//! the per-process records alike.

use super::record_sink::{RecordRoom, RECORD_BATCH};
use super::{abi_count, check_ascending, last_id, Pidmap};
use crate::error::{Error, Result};
use crate::info::InfoFields;
use crate::query::{Enumeration, Query};
use crate::sys;

/// What a records call asks for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ask<'fd> {
    pub(super) query: Query<'fd>,
    pub(super) fields: InfoFields,
    /// The first tid.
    pub(super) start: i32,
    /// The most records.
    pub(super) max: usize,
}

impl<'fd> Ask<'fd> {
    /// Every record of `query`: no cursor, no limit.
    pub(super) fn whole(query: Query<'fd>, fields: InfoFields) -> Self {
        Ask {
            query,
            fields,
            start: 0,
            max: usize::MAX,
        }
    }
}

impl Pidmap {
    /// The records of `ask`, chunk by chunk into `sink`'s room (or
    /// `spare`), each chunk handed to `take` (which may change the
    /// records) and then kept by `sink`, until the kernel returns 0 or
    /// `max` records were taken. `Ok(Err(errno))`: the call failed.
    pub(super) fn each_record_chunk(
        &self,
        ask: Ask<'_>,
        spare: &mut Vec<sys::PidmapInfo>,
        sink: &mut impl RecordRoom,
        mut take: impl FnMut(&mut [sys::PidmapInfo]) -> Result<()>,
    ) -> Result<Result<(), i32>> {
        let Ask {
            query,
            fields,
            mut start,
            max,
        } = ask;
        // One pidfd for the whole listing (see `fill_raw`).
        let target = Pidmap::target_fd(Enumeration::Ids(query))?;
        let start_u = u32::try_from(start)
            .map_err(|_| Error::InvalidArgument("start must not be negative"))?;
        let mut cursor = last_id(start_u);
        let mut taken = 0usize;
        loop {
            let want = max.saturating_sub(taken).min(RECORD_BATCH);
            if want == 0 {
                return Ok(Ok(()));
            }
            let mut req = self.pidmap_req(query, target.raw(), cursor)?;
            req.info_mask = fields.bits();
            let chunk = sink.room(spare, want);
            let n = match sys::read_records(&req, chunk) {
                Ok(n) => abi_count(n, want)?,
                Err(errno) => return Ok(Err(errno)),
            };
            let records = &mut chunk[..n];
            check_ascending(records.iter().map(sys::PidmapInfo::tid), start)?;
            let next = records
                .last()
                .map(|r| (u64::try_from(r.tid()), r.tid().checked_add(1)));
            take(records)?;
            sink.keep(spare, n);
            taken += n;
            // A short count is the end, but for a target that went away
            // (the next call says so): pidmap_info(2)'s RETURN VALUE.
            if n < want && !Enumeration::targeted(query) {
                return Ok(Ok(()));
            }
            match next {
                Some((Ok(last), Some(next))) => {
                    cursor = last;
                    start = next;
                }
                _ => return Ok(Ok(())),
            }
        }
    }
}
