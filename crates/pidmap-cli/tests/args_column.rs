//! `--args`: the command line as `ps -o args` shows it, only on request.

use std::process::{Command, Stdio};

use serde_json::Value;

mod support;
use support::bin;

/// A child whose command line we chose, killed on drop.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn row_of(text: &str, pid: u32) -> &str {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(&pid.to_string()))
        .unwrap_or_else(|| panic!("no row for {pid}: {text}"))
}

#[test]
fn args_are_the_command_line_and_read_only_when_asked() {
    let child = Child(
        Command::new("sleep")
            .arg("1000")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn sleep"),
    );
    let pid = child.0.id();
    // Wait until the exec is visible.
    for _ in 0..500 {
        if std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.starts_with(b"sleep\0")) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let out = Command::new(bin())
        .args(["procs", "--args"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().next().unwrap().ends_with(" COMMAND"), "{text}");
    assert!(row_of(&text, pid).ends_with(" sleep 1000"), "{text}");
    // A kernel thread has an empty cmdline: its name in brackets, as ps.
    let comm = std::fs::read_to_string("/proc/2/comm").unwrap();
    assert!(
        row_of(&text, 2).ends_with(&format!(" [{}]", comm.trim_end())),
        "{text}"
    );
    // Without --args: the name.
    let out = Command::new(bin())
        .args(["procs", "--long"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(row_of(&text, pid).ends_with(" sleep"), "{text}");

    let json = |args: &[&str]| -> Value {
        let out = Command::new(bin())
            .arg("--json")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let entry = |doc: &Value| {
        doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["pid"] == pid)
            .cloned()
            .unwrap()
    };
    assert_eq!(entry(&json(&["procs", "--args"]))["args"], "sleep 1000");
    assert!(entry(&json(&["procs", "--long"])).get("args").is_none());
    // Threads: each thread's process command line.
    let doc = json(&["threads", &pid.to_string(), "--args"]);
    assert_eq!(doc["targets"][0]["entries"][0]["args"], "sleep 1000");
}
