//! process-exporter's group name templates (Go `text/template` syntax),
//! the fields process-exporter 0.7.10 offers: literal text and the actions
//! `{{.Comm}}`, `{{.ExeBase}}`, `{{.ExeFull}}`, `{{.Username}}`,
//! `{{.PID}}`, `{{.StartTime}}`, `{{.Cgroups}}` and `{{.Matches.NAME}}`
//! (spaces inside the braces allowed), each printed as Go prints it. Any
//! other action (pipelines, functions) is refused when the config is read,
//! never rendered wrongly.

use anyhow::{bail, Result};

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(Vec<u8>),
    Comm,
    ExeBase,
    ExeFull,
    Username,
    Pid,
    StartTime,
    Cgroups,
    Match(String),
}

/// A parsed name template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameTemplate {
    parts: Vec<Part>,
}

/// What a template can refer to for one process.
pub struct TemplateInput<'a> {
    pub comm: &'a [u8],
    /// `argv[0]`, or the comm when the command line is empty (a kernel
    /// thread, a zombie), as process-exporter does.
    pub exe_full: &'a [u8],
    pub username: &'a [u8],
    pub pid: i32,
    /// Seconds and nanoseconds since the epoch.
    pub start_time: (i64, u32),
    /// The path of each line of `/proc/PID/cgroup`, in its order.
    pub cgroups: &'a [Vec<u8>],
    /// Named captures of the group's `cmdline` regexes.
    pub matches: &'a [(String, Vec<u8>)],
}

impl NameTemplate {
    /// Parse `text`; an action this subset does not know is an error that
    /// names it.
    pub fn parse(text: &str) -> Result<NameTemplate> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                parts.push(Part::Text(rest.as_bytes()[..open].to_vec()));
            }
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                bail!("name template {text:?}: unclosed action");
            };
            let action = after[..close].trim();
            parts.push(match action {
                ".Comm" => Part::Comm,
                ".ExeBase" => Part::ExeBase,
                ".ExeFull" => Part::ExeFull,
                ".Username" => Part::Username,
                ".PID" => Part::Pid,
                ".StartTime" => Part::StartTime,
                ".Cgroups" => Part::Cgroups,
                _ => match action.strip_prefix(".Matches.") {
                    Some(name)
                        if !name.is_empty()
                            && name.chars().all(|c| c.is_alphanumeric() || c == '_') =>
                    {
                        Part::Match(name.to_owned())
                    }
                    _ => bail!(
                        "name template {text:?}: unsupported action {{{{{action}}}}} \
                         (supported: .Comm .ExeBase .ExeFull .Username .PID .StartTime .Cgroups .Matches.NAME)"
                    ),
                },
            });
            rest = &after[close + 2..];
        }
        if rest.contains("}}") {
            bail!("name template {text:?}: \"}}}}\" without \"{{{{\"");
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.as_bytes().to_vec()));
        }
        Ok(NameTemplate { parts })
    }

    /// Whether rendering needs the command line.
    pub fn needs_cmdline(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::ExeBase | Part::ExeFull))
    }

    /// Whether rendering needs the cgroups.
    pub fn needs_cgroups(&self) -> bool {
        self.parts.contains(&Part::Cgroups)
    }

    /// Whether rendering needs the user name.
    pub fn needs_username(&self) -> bool {
        self.parts.contains(&Part::Username)
    }

    /// The group name for one process. A capture that did not take part in
    /// the match renders empty; a name that is no capture of the entry's
    /// regexes renders `<no value>`, as Go's template does for a missing
    /// map key.
    pub fn render(&self, input: &TemplateInput<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => out.extend_from_slice(t),
                Part::Comm => out.extend_from_slice(input.comm),
                Part::ExeFull => out.extend_from_slice(input.exe_full),
                Part::ExeBase => out.extend_from_slice(base_name(input.exe_full)),
                Part::Username => out.extend_from_slice(input.username),
                Part::Pid => out.extend_from_slice(input.pid.to_string().as_bytes()),
                Part::StartTime => out.extend_from_slice(go_time(input.start_time).as_bytes()),
                Part::Cgroups => {
                    // Go's `%v` of a []string: "[a b c]".
                    out.push(b'[');
                    out.extend_from_slice(&input.cgroups.join(&b' '));
                    out.push(b']');
                }
                Part::Match(name) => match input.matches.iter().find(|(k, _)| k == name) {
                    Some((_, v)) => out.extend_from_slice(v),
                    None => out.extend_from_slice(b"<no value>"),
                },
            }
        }
        out
    }
}

/// A UTC time as Go's `time.Time.String()` prints it:
/// `2026-12-06 19:54:08.41 +0000 UTC` (the fraction's trailing zeros
/// dropped, and the fraction with them when it is 0).
pub fn go_time((secs, nanos): (i64, u32)) -> String {
    let Some(t) = chrono::DateTime::from_timestamp(secs, nanos) else {
        return format!("{secs}.{nanos:09}");
    };
    let mut text = t.format("%Y-%m-%d %H:%M:%S").to_string();
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        text.push('.');
        text.push_str(fraction.trim_end_matches('0'));
    }
    text.push_str(" +0000 UTC");
    text
}

/// Go's `filepath.Base`: the last element, trailing slashes dropped; "/"
/// for a path of slashes only; "." for an empty path.
pub fn base_name(path: &[u8]) -> &[u8] {
    if path.is_empty() {
        return b".";
    }
    let trimmed = match path.iter().rposition(|&b| b != b'/') {
        Some(end) => &path[..=end],
        None => return b"/",
    };
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(slash) => &trimmed[slash + 1..],
        None => trimmed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CGROUPS: &[Vec<u8>] = &[];

    fn input(matches: &[(String, Vec<u8>)]) -> TemplateInput<'_> {
        TemplateInput {
            comm: b"nginx",
            exe_full: b"/usr/sbin/nginx",
            username: b"www-data",
            pid: 42,
            start_time: (1_796_587_006, 410_000_000),
            cgroups: CGROUPS,
            matches,
        }
    }

    #[test]
    fn renders_every_supported_action() {
        let m = [("port".to_owned(), b"8080".to_vec())];
        let t = NameTemplate::parse(
            "{{.Comm}}-{{ .ExeBase }}-{{.ExeFull}}-{{.Username}}-{{.PID}}-{{.Matches.port}}",
        )
        .unwrap();
        assert_eq!(
            t.render(&input(&m)),
            b"nginx-nginx-/usr/sbin/nginx-www-data-42-8080".to_vec()
        );
        assert!(t.needs_cmdline() && t.needs_username());
    }

    #[test]
    fn a_capture_that_did_not_match_renders_empty_and_an_unknown_one_no_value() {
        let m = [("empty".to_owned(), Vec::new())];
        let t = NameTemplate::parse("x{{.Matches.empty}}y{{.Matches.nope}}").unwrap();
        assert_eq!(t.render(&input(&m)), b"xy<no value>".to_vec());
    }

    #[test]
    fn start_time_and_cgroups_print_as_go_does() {
        // As process-exporter 0.7.10 rendered them for a sleep(1).
        let cgroups = [b"/".to_vec(), b"/process_api/e7".to_vec(), b"/".to_vec()];
        let t = NameTemplate::parse("{{.StartTime}}|{{.Cgroups}}").unwrap();
        let mut i = input(&[]);
        i.cgroups = &cgroups;
        assert_eq!(
            String::from_utf8(t.render(&i)).unwrap(),
            "2026-12-06 19:56:46.41 +0000 UTC|[/ /process_api/e7 /]"
        );
        assert!(t.needs_cgroups() && !t.needs_cmdline());
        assert_eq!(go_time((0, 0)), "1970-01-01 00:00:00 +0000 UTC");
        assert_eq!(go_time((1, 500_000_000)), "1970-01-01 00:00:01.5 +0000 UTC");
    }

    #[test]
    fn unknown_actions_are_refused() {
        for bad in [
            "{{.Cwd}}",
            "{{.Comm | printf}}",
            "{{.Comm",
            "a}}",
            "{{.Matches.}}",
        ] {
            assert!(NameTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn base_name_is_go_filepath_base() {
        assert_eq!(base_name(b"/usr/bin/foo"), b"foo");
        assert_eq!(base_name(b"foo"), b"foo");
        assert_eq!(base_name(b"/usr/bin/"), b"bin");
        assert_eq!(base_name(b"///"), b"/");
        assert_eq!(base_name(b""), b".");
    }
}
