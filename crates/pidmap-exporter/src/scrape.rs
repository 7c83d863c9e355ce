//! [`Exporter`]: the state a scrape updates, shared by the server's
//! threads.

use crate::exposition::{self, Format};
use crate::source::Source;
use crate::tracker::Tracker;

/// The state a scrape updates.
pub struct Exporter {
    pub source: Source,
    pub tracker: Tracker,
    pub threads: bool,
}

impl Exporter {
    /// Read the system and encode what it shows.
    pub fn scrape(&mut self, format: Format) -> String {
        let snapshot = self.tracker.refresh(&mut self.source);
        exposition::encode(snapshot, self.threads, format)
    }
}
