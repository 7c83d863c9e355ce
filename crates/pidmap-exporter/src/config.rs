//! process-exporter's YAML config (`process_names`): which processes form
//! which group, and the group's name.
//!
//! Each entry has up to three matchers, all of which must match (an entry
//! with none is an error): `comm` (the name is one of the list), `exe`
//! (`argv[0]`'s base name is one of the list; an item with a `/` must
//! equal `argv[0]` in full) and `cmdline` (every regex matches the
//! arguments joined by spaces; named captures feed `{{.Matches.NAME}}`).
//! The first entry that matches names the process's group. Regexes use
//! the `regex` crate's syntax, which is RE2's, as Go's `regexp` is.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use regex::Regex;
use serde::Deserialize;

use crate::template::{base_name, NameTemplate, TemplateInput};

#[derive(Deserialize)]
struct FileFormat {
    process_names: Vec<EntryFormat>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFormat {
    name: Option<String>,
    comm: Option<Vec<String>>,
    exe: Option<Vec<String>>,
    cmdline: Option<Vec<String>>,
}

/// One `process_names` entry, compiled.
#[derive(Debug)]
struct Entry {
    name: NameTemplate,
    comm: Option<Vec<Vec<u8>>>,
    /// base name → the full path it must equal, or `None` for any path.
    exe: Option<HashMap<Vec<u8>, Option<Vec<u8>>>>,
    cmdline: Option<Vec<Regex>>,
}

/// What the matchers see of one process.
pub struct ProcessFacts<'a> {
    pub comm: &'a [u8],
    /// The command line's arguments (empty for a kernel thread or zombie).
    pub argv: &'a [Vec<u8>],
    pub username: &'a [u8],
    pub pid: i32,
    /// Seconds and nanoseconds since the epoch.
    pub start_time: (i64, u32),
    /// `/proc/PID/cgroup`'s paths, read only when a template needs them.
    pub cgroups: &'a [Vec<u8>],
}

/// A whole config.
#[derive(Debug)]
pub struct Config {
    entries: Vec<Entry>,
}

impl Config {
    /// Read and compile `path`.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config {}", path.display()))?;
        Config::parse(&text).with_context(|| format!("config {}", path.display()))
    }

    /// Compile a config from its YAML text.
    pub fn parse(text: &str) -> Result<Config> {
        let file: FileFormat = serde_norway::from_str(text)?;
        let entries = file
            .process_names
            .into_iter()
            .enumerate()
            .map(|(i, e)| Entry::compile(e).with_context(|| format!("process_names[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        Ok(Config { entries })
    }

    /// With no config file: every process with a command line, grouped by
    /// its name, as process-exporter's README suggests
    /// (`name: "{{.Comm}}"`, `cmdline: ['.+']`).
    pub fn default_by_comm() -> Config {
        Config::parse("process_names:\n  - name: \"{{.Comm}}\"\n    cmdline: ['.+']\n")
            .expect("the built-in config compiles")
    }

    /// Whether matching or naming needs the command line.
    pub fn needs_cmdline(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.exe.is_some() || e.cmdline.is_some() || e.name.needs_cmdline())
    }

    /// Whether naming needs the cgroups.
    pub fn needs_cgroups(&self) -> bool {
        self.entries.iter().any(|e| e.name.needs_cgroups())
    }

    /// Whether naming needs the user name.
    pub fn needs_username(&self) -> bool {
        self.entries.iter().any(|e| e.name.needs_username())
    }

    /// The group name of the first entry that matches, if any.
    pub fn group_of(&self, facts: &ProcessFacts<'_>) -> Option<Vec<u8>> {
        // Go's regexp reads a byte that is not UTF-8 as U+FFFD; so does a
        // lossy conversion, so `.` matches it as in process-exporter.
        let joined = String::from_utf8_lossy(&facts.argv.join(&b' ')).into_owned();
        let exe_full: &[u8] = facts.argv.first().map_or(facts.comm, |a| a.as_slice());
        self.entries.iter().find_map(|entry| {
            let matches = entry.matches(facts, &joined)?;
            Some(entry.name.render(&TemplateInput {
                comm: facts.comm,
                exe_full,
                username: facts.username,
                pid: facts.pid,
                start_time: facts.start_time,
                cgroups: facts.cgroups,
                matches: &matches,
            }))
        })
    }
}

impl Entry {
    fn compile(e: EntryFormat) -> Result<Entry> {
        if e.comm.is_none() && e.exe.is_none() && e.cmdline.is_none() {
            bail!("no matchers provided (comm, exe or cmdline)");
        }
        let template = e.name.as_deref().unwrap_or("{{.ExeBase}}");
        let name = NameTemplate::parse(template)?;
        let exe = e.exe.map(|rules| {
            let mut by_base = HashMap::new();
            for rule in rules {
                let rule = rule.into_bytes();
                if rule.contains(&b'/') {
                    by_base.insert(base_name(&rule).to_vec(), Some(rule));
                } else {
                    by_base.insert(rule, None);
                }
            }
            by_base
        });
        let cmdline = e
            .cmdline
            .map(|rules| {
                rules
                    .iter()
                    .map(|r| {
                        // The regex crate's message draws the pattern over
                        // several lines; its last line says what is wrong.
                        Regex::new(r).map_err(|e| {
                            let text = e.to_string();
                            let why = text.lines().last().unwrap_or_default();
                            anyhow!(
                                "bad cmdline regex {r:?}: {}",
                                why.trim_start_matches("error: ")
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?;
        Ok(Entry {
            name,
            comm: e
                .comm
                .map(|c| c.into_iter().map(String::into_bytes).collect()),
            exe,
            cmdline,
        })
    }

    /// `None` if a matcher fails, else the named captures.
    fn matches(&self, facts: &ProcessFacts<'_>, joined: &str) -> Option<Vec<(String, Vec<u8>)>> {
        if let Some(comms) = &self.comm {
            if !comms.iter().any(|c| c == facts.comm) {
                return None;
            }
        }
        if let Some(exes) = &self.exe {
            let argv0 = facts.argv.first()?;
            match exes.get(base_name(argv0))? {
                Some(full) if full != argv0 => return None,
                _ => {}
            }
        }
        let mut captures = Vec::new();
        for regex in self.cmdline.iter().flatten() {
            let caps = regex.captures(joined)?;
            for (i, name) in regex.capture_names().enumerate() {
                if let Some(name) = name {
                    let value = caps.get(i).map_or(&b""[..], |m| m.as_str().as_bytes());
                    captures.retain(|(k, _): &(String, Vec<u8>)| k != name);
                    captures.push((name.to_owned(), value.to_vec()));
                }
            }
        }
        Some(captures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts<'a>(comm: &'a [u8], argv: &'a [Vec<u8>]) -> ProcessFacts<'a> {
        ProcessFacts {
            comm,
            argv,
            username: b"root",
            pid: 7,
            start_time: (0, 0),
            cgroups: &[],
        }
    }

    fn argv(args: &[&str]) -> Vec<Vec<u8>> {
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    const CONFIG: &str = r#"
process_names:
  - name: "{{.Comm}}"
    comm: [bash, "zsh"]
  - exe: [/usr/bin/python3, node]
  - name: "java:{{.Matches.app}}"
    cmdline:
      - '^java'
      - '-jar (?P<app>\S+)\.jar'
"#;

    #[test]
    fn first_matching_entry_names_the_group() {
        let c = Config::parse(CONFIG).unwrap();
        let a = argv(&["-bash"]);
        assert_eq!(c.group_of(&facts(b"bash", &a)), Some(b"bash".to_vec()));
        let a = argv(&["/usr/bin/python3", "x.py"]);
        assert_eq!(
            c.group_of(&facts(b"python3", &a)),
            Some(b"python3".to_vec())
        );
        // The full path must be equal when the rule has a slash.
        let a = argv(&["/opt/python3"]);
        assert_eq!(c.group_of(&facts(b"python3", &a)), None);
        let a = argv(&["/opt/node/bin/node", "app.js"]);
        assert_eq!(c.group_of(&facts(b"node", &a)), Some(b"node".to_vec()));
        let a = argv(&["java", "-Xmx1g", "-jar", "shop.jar"]);
        assert_eq!(c.group_of(&facts(b"java", &a)), Some(b"java:shop".to_vec()));
        // Every cmdline regex must match.
        let a = argv(&["notjava", "-jar", "shop.jar"]);
        assert_eq!(c.group_of(&facts(b"java", &a)), None);
        // A kernel thread has no argv: only comm can match it.
        assert_eq!(c.group_of(&facts(b"kworker/0:1", &[])), None);
    }

    #[test]
    fn non_utf8_names_match_as_bytes() {
        let c =
            Config::parse("process_names:\n  - name: '{{.Comm}}'\n    cmdline: ['.+']\n").unwrap();
        let a = vec![b"\xff\xfe".to_vec()];
        assert_eq!(
            c.group_of(&facts(b"\xff\xfe", &a)),
            Some(b"\xff\xfe".to_vec())
        );
    }

    #[test]
    fn bad_configs_say_what_is_wrong() {
        let err = |text: &str| format!("{:#}", Config::parse(text).unwrap_err());
        assert!(err("process_names:\n  - name: x\n").contains("no matchers"));
        assert!(err("process_names:\n  - cmdline: ['(']\n").contains("bad cmdline regex"));
        assert!(err("process_names:\n  - name: '{{.Cwd}}'\n    comm: [a]\n")
            .contains("unsupported action"));
        assert!(err("process_names:\n  - comm: [a]\n    cmdlines: [b]\n").contains("cmdlines"));
        assert!(err("nothing: here\n").contains("process_names"));
    }

    #[test]
    fn the_default_groups_by_comm_and_skips_kernel_threads() {
        let c = Config::default_by_comm();
        let a = argv(&["/usr/sbin/sshd", "-D"]);
        assert_eq!(c.group_of(&facts(b"sshd", &a)), Some(b"sshd".to_vec()));
        assert_eq!(c.group_of(&facts(b"kthreadd", &[])), None);
    }
}
