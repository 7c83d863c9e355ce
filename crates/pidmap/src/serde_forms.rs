//! The serde forms that match the `pidmap` CLI's JSON (schema 2):
//! durations are whole nanoseconds (`utime_ns`, `start_time_ns`, ...), a
//! state is its `stat` letter (`"R"`).

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A duration as whole nanoseconds (a `u64` holds 584 years).
pub(crate) mod nanos {
    use super::{Deserialize, Deserializer, Duration, Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_nanos(u64::deserialize(d)?))
    }
}

/// An optional duration as whole nanoseconds, or `null`.
pub(crate) mod option_nanos {
    use super::{Deserialize, Deserializer, Duration, Serialize, Serializer};

    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        d.map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            .serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_nanos))
    }
}
