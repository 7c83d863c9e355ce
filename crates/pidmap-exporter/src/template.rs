//! process-exporter's group name templates (Go `text/template` syntax),
//! the subset its documentation uses: literal text and the actions
//! `{{.Comm}}`, `{{.ExeBase}}`, `{{.ExeFull}}`, `{{.Username}}`,
//! `{{.PID}}` and `{{.Matches.NAME}}` (spaces inside the braces allowed).
//! Any other action (pipelines, functions, `{{.Cgroups}}`, `{{.StartTime}}`,
//! `{{.Cwd}}`) is refused when the config is read, never rendered wrongly.

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
                _ => match action.strip_prefix(".Matches.") {
                    Some(name)
                        if !name.is_empty()
                            && name.chars().all(|c| c.is_alphanumeric() || c == '_') =>
                    {
                        Part::Match(name.to_owned())
                    }
                    _ => bail!(
                        "name template {text:?}: unsupported action {{{{{action}}}}} \
                         (supported: .Comm .ExeBase .ExeFull .Username .PID .Matches.NAME)"
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

    /// Whether rendering needs the user name.
    pub fn needs_username(&self) -> bool {
        self.parts.contains(&Part::Username)
    }

    /// The group name for one process. A capture that did not take part in
    /// the match renders empty, as Go's map lookup does.
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
                Part::Match(name) => {
                    if let Some((_, v)) = input.matches.iter().find(|(k, _)| k == name) {
                        out.extend_from_slice(v);
                    }
                }
            }
        }
        out
    }
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

    fn input(matches: &[(String, Vec<u8>)]) -> TemplateInput<'_> {
        TemplateInput {
            comm: b"nginx",
            exe_full: b"/usr/sbin/nginx",
            username: b"www-data",
            pid: 42,
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
    fn a_missing_capture_renders_empty() {
        let t = NameTemplate::parse("x{{.Matches.nope}}y").unwrap();
        assert_eq!(t.render(&input(&[])), b"xy".to_vec());
    }

    #[test]
    fn unknown_actions_are_refused() {
        for bad in [
            "{{.Cgroups}}",
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
