//! Guest console lines as the guest wrote them.
//!
//! The kernel prints to the serial console whenever it likes, so one of its
//! messages can land in the middle of a line a test is writing:
//! `PIDMAP-TEST-STAR[    1.23] input: …` and then `T clone3/…` on the next
//! line. A parser that looks for whole marker lines then misses the marker.
//! [`LineMender`] moves such a kernel message onto a line of its own and
//! joins the two halves of the guest's line again.

/// The byte offset of a kernel timestamp (`[ 12.345678]`) that does not
/// start `line`, if there is one.
fn kernel_message_inside(line: &str) -> Option<usize> {
    line.match_indices('[')
        .map(|(at, _)| at)
        .find(|&at| at > 0 && starts_with_timestamp(&line[at..]))
}

/// Whether `text` begins with `[`, optional spaces, digits, `.`, digits, `]`.
pub fn starts_with_timestamp(text: &str) -> bool {
    let Some(inner) = text.strip_prefix('[') else {
        return false;
    };
    let Some(end) = inner.find(']') else {
        return false;
    };
    let Some((secs, fraction)) = inner[..end].trim_start().split_once('.') else {
        return false;
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    all_digits(secs) && all_digits(fraction)
}

/// Turns console lines as read into lines as written.
#[derive(Default)]
pub struct LineMender {
    /// The start of a guest line that a kernel message cut short.
    pending: Option<String>,
}

impl LineMender {
    /// The lines that `raw`, the next line read, completes: none while a
    /// cut guest line waits for its end.
    pub fn push(&mut self, raw: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(head) = self.pending.take() {
            if starts_with_timestamp(raw) {
                // Another kernel message before the rest of the guest line.
                self.pending = Some(head);
                out.push(raw.to_string());
                return out;
            }
            return self.push(&format!("{head}{raw}"));
        }
        match kernel_message_inside(raw) {
            Some(at) => {
                self.pending = Some(raw[..at].to_string());
                out.push(raw[at..].to_string());
            }
            None => out.push(raw.to_string()),
        }
        out
    }

    /// The cut guest line still waiting at the end of the output, if any.
    pub fn finish(&mut self) -> Option<String> {
        self.pending.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mend(raw: &[&str]) -> Vec<String> {
        let mut mender = LineMender::default();
        let mut out: Vec<String> = raw.iter().flat_map(|l| mender.push(l)).collect();
        out.extend(mender.finish());
        out
    }

    #[test]
    fn a_kernel_message_inside_a_marker_gets_its_own_line() {
        // As a CI console log had it.
        let raw = [
            "PIDMAP-TEST-RESULT clone3/clone3 pass rc=0 seconds=0",
            "PIDMAP-TEST-STAR[    1.238239] input: ImExPS/2 Generic Explorer Mouse",
            "T clone3/clone3_cap_checkpoint_restore",
            "TAP version 13",
        ];
        assert_eq!(
            mend(&raw),
            [
                "PIDMAP-TEST-RESULT clone3/clone3 pass rc=0 seconds=0",
                "[    1.238239] input: ImExPS/2 Generic Explorer Mouse",
                "PIDMAP-TEST-START clone3/clone3_cap_checkpoint_restore",
                "TAP version 13",
            ]
        );
    }

    #[test]
    fn several_kernel_messages_before_the_rest_of_the_line() {
        let raw = ["ok 1 a[   2.5] one", "[   2.6] two", " b", "next"];
        assert_eq!(
            mend(&raw),
            ["[   2.5] one", "[   2.6] two", "ok 1 a b", "next"]
        );
    }

    #[test]
    fn ordinary_lines_and_brackets_pass_unchanged() {
        let raw = [
            "[    0.000000] Linux version 6.12",
            "x [not a time] y",
            "array[3.x] = 1",
            "",
        ];
        assert_eq!(mend(&raw), raw);
    }

    #[test]
    fn a_cut_line_at_the_end_of_the_output_is_kept() {
        assert_eq!(mend(&["tail[  9.1] msg"]), ["[  9.1] msg", "tail"]);
    }
}
