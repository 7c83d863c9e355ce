//! [`CpuSample`] without a hidden field choice: the fields it needs, as
//! a constant to ask for, and samplers that refuse, with an error naming
//! the field, records read without them (where [`CpuSample::now`] leaves
//! such records out, and every CPU% would silently be `None`).
//!
//! ```
//! use std::time::Duration;
//! use pidmap::{Pidmap, Query};
//! use pidmap::monitor::CpuSample;
//!
//! let mut pm = Pidmap::new()?;
//! let mut records = Vec::new();
//! pm.fill_info(Query::processes(), CpuSample::FIELDS, &mut records)?;
//! let before = CpuSample::try_now(&records)?;
//! std::thread::sleep(Duration::from_millis(20));
//! pm.fill_info(Query::processes(), CpuSample::FIELDS, &mut records)?;
//! let now = CpuSample::try_now(&records)?;
//! let busiest = now
//!     .tasks_since(&before)
//!     .into_iter()
//!     .filter_map(|t| Some((t.percent?, t.key.tid)))
//!     .max_by(|a, b| a.0.total_cmp(&b.0));
//! println!("busiest: {busiest:?}");
//! # Ok::<(), pidmap::Error>(())
//! ```

use std::time::Duration;

use super::cpu::CpuSample;
use crate::error::{Error, Result};
use crate::info::{InfoFields, TaskInfo};

impl CpuSample {
    /// The fields a sample needs of each record: CPU time and start time
    /// (which tells a reused tid from the same task), and the thread
    /// group for [`processes_since`](CpuSample::processes_since).
    pub const FIELDS: InfoFields = InfoFields::TGID
        .union(InfoFields::CPU_TIME)
        .union(InfoFields::START_TIME);

    /// [`CpuSample::now`], refusing records that lack a field it needs.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the first missing field (read the
    /// records with at least [`CpuSample::FIELDS`]).
    pub fn try_now(records: &[TaskInfo]) -> Result<CpuSample> {
        check(records)?;
        Ok(CpuSample::now(records))
    }

    /// [`CpuSample::at`], refusing records that lack a field it needs.
    ///
    /// ```
    /// use std::time::Duration;
    /// use pidmap::{Error, Pid, TaskInfo};
    /// use pidmap::monitor::CpuSample;
    /// let mut t = TaskInfo::new(Pid::new(7).unwrap());
    /// t.utime = Some(Duration::from_millis(5));
    /// t.stime = Some(Duration::ZERO);
    /// // No start time: read without InfoFields::START_TIME.
    /// let e = CpuSample::try_at(&[t], Duration::from_secs(1)).unwrap_err();
    /// assert!(matches!(e, Error::InvalidArgument(_)));
    /// assert!(e.to_string().contains("START_TIME"));
    /// ```
    ///
    /// # Errors
    ///
    /// As [`try_now`](CpuSample::try_now).
    pub fn try_at(records: &[TaskInfo], at: Duration) -> Result<CpuSample> {
        check(records)?;
        Ok(CpuSample::at(records, at))
    }
}

/// The first field a record lacks, as an error.
fn check(records: &[TaskInfo]) -> Result<()> {
    for r in records {
        if r.utime.is_none() || r.stime.is_none() {
            return Err(Error::InvalidArgument(
                "CpuSample: a record has no CPU time (read the records with InfoFields::CPU_TIME, as in CpuSample::FIELDS)",
            ));
        }
        if r.start_time.is_none() {
            return Err(Error::InvalidArgument(
                "CpuSample: a record has no start time (read the records with InfoFields::START_TIME, as in CpuSample::FIELDS)",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pid::Pid;

    fn record(start: Option<u64>, cpu_ms: Option<u64>) -> TaskInfo {
        let mut t = TaskInfo::new(Pid::new(9).unwrap());
        t.start_time = start.map(Duration::from_secs);
        t.utime = cpu_ms.map(Duration::from_millis);
        t.stime = cpu_ms.map(|_| Duration::ZERO);
        t
    }

    #[test]
    fn refuses_what_now_would_drop_and_agrees_otherwise() {
        let at = Duration::from_secs(20);
        let e = CpuSample::try_at(&[record(Some(1), None)], at).unwrap_err();
        assert!(e.to_string().contains("CPU_TIME"), "{e}");
        let e = CpuSample::try_at(&[record(None, Some(3))], at).unwrap_err();
        assert!(e.to_string().contains("START_TIME"), "{e}");
        // What the unchecked sampler does with the same record: drops it.
        assert!(CpuSample::at(&[record(None, Some(3))], at).is_empty());
        let good = [record(Some(1), Some(3))];
        assert_eq!(CpuSample::try_at(&good, at).unwrap().len(), 1);
        assert!(CpuSample::FIELDS.contains(InfoFields::START_TIME | InfoFields::CPU_TIME));
    }

    #[test]
    #[cfg(feature = "fallback")]
    fn records_read_with_fields_are_accepted() {
        let mut pm = crate::Pidmap::new().unwrap();
        let mut records = Vec::new();
        pm.fill_info(crate::Query::processes(), CpuSample::FIELDS, &mut records)
            .unwrap();
        let s = CpuSample::try_now(&records).unwrap();
        assert_eq!(s.len(), records.len());
        pm.fill_info(crate::Query::processes(), InfoFields::COMM, &mut records)
            .unwrap();
        assert!(CpuSample::try_now(&records).is_err());
    }
}
