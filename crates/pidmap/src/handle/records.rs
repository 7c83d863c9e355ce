//! Task records through a [`Pidmap`]: pidmap_info(2), or the /proc
//! fallback, for the same queries, cursor and view as the ids.

use super::group_fields::TaskShape;
use super::group_records;
use super::record_chunks::Ask;
use super::record_sink::{Infos, RecordSink, Records};
use super::Pidmap;
use crate::backend::{ActiveBackend, Backend};
use crate::error::{Error, Result};
use crate::info::{InfoFields, RecordUnits, TaskInfo};
use crate::kernel_support::task_info_support;
use crate::query::{Enumeration, Query};
use crate::record::TaskRecord;
use crate::sys;

impl Pidmap {
    /// Fill `out` (cleared first) with the record of every task of
    /// `query`, ascending by tid, with the `fields` asked for (each one
    /// `None` where the kernel or the view leaves it unset).
    ///
    /// # Errors
    ///
    /// As [`fill`](Pidmap::fill), and [`Error::TaskInfoUnsupported`] for a
    /// [`Backend::Syscall`] handle on a kernel whose pidmap_info(2) refuses
    /// the records ([`info_backend`](Pidmap::info_backend)).
    ///
    /// ```
    /// use pidmap::{InfoFields, Pid, Pidmap, Query, Target};
    /// let mut pm = Pidmap::new()?;
    /// let mut tasks = Vec::new();
    /// pm.fill_info(Query::threads(Target::Caller), InfoFields::ALL, &mut tasks)?;
    /// let me = tasks.iter().find(|t| t.tid == Pid::this_thread()).unwrap();
    /// assert_eq!(me.tgid, Some(Pid::this_process()));
    /// assert_eq!(me.is_kernel_thread(), Some(false));
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn fill_info(
        &mut self,
        query: Query<'_>,
        fields: InfoFields,
        out: &mut Vec<TaskInfo>,
    ) -> Result<()> {
        let units = RecordUnits::get();
        self.records_into(Ask::whole(query, fields), &mut Infos { out, fields, units })
    }

    /// The records of [`fill_info`](Pidmap::fill_info), lent as the kernel
    /// wrote them ([`TaskRecord`]): no field is converted until it is
    /// read. With the syscall backend each call writes straight into a
    /// buffer the handle keeps (200 bytes a task, kept for the next
    /// listing), which the slice borrows until the handle's next use. The
    /// /proc fallback's records are put in the kernel's units.
    ///
    /// # Errors
    ///
    /// As [`fill_info`](Pidmap::fill_info).
    ///
    /// ```
    /// use pidmap::{InfoFields, Pidmap, Query, TaskState};
    /// let mut pm = Pidmap::new()?;
    /// let tasks = pm.records(Query::all_tasks(), InfoFields::STATE | InfoFields::COMM)?;
    /// let running = tasks.iter().filter(|t| t.state() == Some(TaskState::Running));
    /// assert!(running.count() > 0, "this thread runs");
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn records(&mut self, query: Query<'_>, fields: InfoFields) -> Result<&[TaskRecord]> {
        let mut buf = std::mem::take(&mut self.handed);
        let mut from_procfs = std::mem::take(&mut self.handed_from_procfs);
        let mut sink = Records {
            buf: &mut buf,
            len: 0,
            fields,
            from_procfs: &mut from_procfs,
        };
        let r = self.records_into(Ask::whole(query, fields), &mut sink);
        let len = sink.len;
        self.handed = buf;
        self.handed_from_procfs = from_procfs;
        r?;
        Ok(&self.handed[..len])
    }

    /// One chunk of records with the syscall's cursor semantics: fills
    /// `out` (cleared first) with at most `max` records of tids `>=
    /// start`, ascending, and returns how many; 0 means the end. Resume at
    /// the last record's tid + 1.
    ///
    /// # Errors
    ///
    /// As [`fill_info`](Pidmap::fill_info), and [`Error::InvalidArgument`]
    /// for a negative `start`.
    ///
    /// ```
    /// use pidmap::{InfoFields, Pidmap, Query};
    /// let mut pm = Pidmap::new()?;
    /// let (mut chunk, mut start, mut all) = (Vec::new(), 0, 0);
    /// while pm.read_info_chunk(Query::processes(), InfoFields::STATE, start, 50, &mut chunk)? > 0 {
    ///     all += chunk.len();
    ///     start = chunk.last().unwrap().tid.as_raw() + 1;
    /// }
    /// assert!(all > 0);
    /// # Ok::<(), pidmap::Error>(())
    /// ```
    pub fn read_info_chunk(
        &mut self,
        query: Query<'_>,
        fields: InfoFields,
        start: i32,
        max: usize,
        out: &mut Vec<TaskInfo>,
    ) -> Result<usize> {
        if start < 0 {
            return Err(Error::InvalidArgument("start must not be negative"));
        }
        let ask = Ask {
            query,
            fields,
            start,
            max,
        };
        let units = RecordUnits::get();
        self.records_into(ask, &mut Infos { out, fields, units })?;
        Ok(out.len())
    }

    /// The backend the records come from: the syscall when this handle
    /// uses it and the kernel has pidmap_info(2) (probed once per process);
    /// else /proc under [`Backend::Auto`] (a kernel with pidmap(2) but
    /// without records), and [`Error::TaskInfoUnsupported`] for a
    /// [`Backend::Syscall`] handle.
    ///
    /// # Errors
    ///
    /// [`Error::TaskInfoUnsupported`] for a [`Backend::Syscall`] handle on
    /// a kernel whose pidmap_info(2) refuses the records.
    pub fn info_backend(&self) -> Result<ActiveBackend> {
        if self.detection.active == ActiveBackend::Procfs {
            return Ok(ActiveBackend::Procfs);
        }
        match task_info_support() {
            Ok(true) => Ok(ActiveBackend::Syscall),
            Ok(false)
                if self.detection.requested == Backend::Auto && cfg!(feature = "fallback") =>
            {
                Ok(ActiveBackend::Procfs)
            }
            Ok(false) => Err(Error::TaskInfoUnsupported),
            // A filter's answer: the real call gets it too, and is handled
            // as every listing's errno is.
            Err(_) => Ok(ActiveBackend::Syscall),
        }
    }

    fn records_into(&mut self, ask: Ask<'_>, out: &mut impl RecordSink) -> Result<()> {
        let what = Enumeration::Ids(ask.query);
        what.validate()?;
        out.clear();
        if self.info_backend()? == ActiveBackend::Syscall {
            let mut room = std::mem::take(&mut self.records);
            let mut groups = std::mem::take(&mut self.groups);
            let mut shape = TaskShape::default();
            let r = if group_records::serves(&ask, self.task_shape) {
                self.info_with_group_records(ask, &mut room, &mut groups, out, &mut shape)
            } else {
                self.info_by_syscall(ask, &mut room, out, &mut shape)
            };
            self.records = room;
            self.groups = groups;
            match r {
                Ok(Ok(())) => {
                    if group_records::whole_task_listing(&ask) {
                        self.task_shape = shape;
                    }
                    return Ok(());
                }
                Ok(Err(errno)) => {
                    out.clear();
                    self.after_errno(what, errno)?;
                }
                Err(e) => {
                    out.clear();
                    return Err(e);
                }
            }
        }
        self.info_procfs(ask, out)
    }

    /// Records by pidmap_info(2), chunk by chunk, until the kernel returns
    /// 0 or `out` holds `max`. `Ok(Err(errno))`: the call failed.
    fn info_by_syscall(
        &self,
        ask: Ask<'_>,
        room: &mut Vec<sys::PidmapInfo>,
        out: &mut impl RecordSink,
        shape: &mut TaskShape,
    ) -> Result<Result<(), i32>> {
        self.each_record_chunk(ask, room, out, |records| {
            for r in records.iter() {
                shape.count(r);
            }
            Ok(())
        })
    }

    #[cfg(feature = "fallback")]
    fn info_procfs(&mut self, ask: Ask<'_>, out: &mut impl RecordSink) -> Result<()> {
        let (root, fallback) = self.fallback_parts()?;
        out.fill_from_procfs(|infos| {
            fallback.task_infos(root, ask.query, ask.fields, ask.start, ask.max, infos)
        })
    }

    #[cfg(not(feature = "fallback"))]
    fn info_procfs(&mut self, _: Ask<'_>, out: &mut impl RecordSink) -> Result<()> {
        out.fill_from_procfs(|_| Err(Error::FallbackNotBuilt))
    }
}
