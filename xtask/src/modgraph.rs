//! `cargo xtask module-graph`: which module of the pidmap library names
//! which, and the cycles among them.
//!
//! A module (one per file; inline modules such as `tests` count as their
//! file's) depends on another when its code, tests included, names it by
//! a `crate::`, `super::` or `self::` path or by the name of one of its
//! own child modules, in `use` trees and expressions alike; comments are
//! ignored, and a path through a re-export of the crate root counts as a
//! dependency on the module that defines the item. What paths cannot show
//! (a method defined in another module's `impl` block) is not seen.
//! The library's modules must form a DAG: a unit test holds them to it.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path below the crate root (`[]` is the root).
type Module = Vec<String>;
type Graph = BTreeMap<Module, BTreeSet<Module>>;

/// Print the graph of the library's modules (or of the crate whose `src`
/// is `src`) and its cycles; fails when there is one.
pub fn run(src: Option<&Path>) -> Result<()> {
    let src = src.map_or_else(
        || crate::paths::workspace_root().join("crates/pidmap/src"),
        Path::to_path_buf,
    );
    let graph = module_graph(&src)?;
    for (module, uses) in graph.iter().filter(|(m, _)| !m.is_empty()) {
        let uses: Vec<String> = uses.iter().map(name).collect();
        println!("{:28} -> {}", name(module), uses.join(", "));
    }
    let cycles = cycles(&graph);
    if cycles.is_empty() {
        println!("\nno cycles");
        return Ok(());
    }
    println!("\n{}", describe(&graph, &cycles));
    bail!("{} module cycle(s) in {}", cycles.len(), src.display())
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

/// Each cycle, with the edges that close it.
fn describe(graph: &Graph, cycles: &[Vec<Module>]) -> String {
    let mut out = String::new();
    for cycle in cycles {
        let names: Vec<String> = cycle.iter().map(name).collect();
        out += &format!("cycle: {}\n", names.join(" <-> "));
        for a in cycle {
            for b in graph[a].iter().filter(|b| cycle.contains(b)) {
                out += &format!("    {} -> {}\n", name(a), name(b));
            }
        }
    }
    out
}

/// The module of a file below `src` (`lib.rs` and `mod.rs` name their
/// directory's).
fn module_of(rel: &Path) -> Module {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The module graph of the crate whose sources are below `src`.
pub fn module_graph(src: &Path) -> Result<Graph> {
    let mut paths = Vec::new();
    rust_files(src, &mut paths)?;
    // The crate root is lib.rs; a binary without one has main.rs (beside
    // a lib.rs, main.rs is a crate of its own that uses the library).
    let has_lib = src.join("lib.rs").is_file();
    let mut files = BTreeMap::new();
    for path in paths {
        let rel = path.strip_prefix(src)?;
        let module = if rel == Path::new("main.rs") {
            if has_lib {
                continue;
            }
            Vec::new()
        } else {
            module_of(rel)
        };
        files.insert(module, std::fs::read_to_string(&path)?);
    }
    let Some(lib) = files.get(&Vec::new()) else {
        bail!("{} has no lib.rs or main.rs", src.display());
    };
    let modules: BTreeSet<Module> = files.keys().cloned().collect();
    // Names the root re-exports (`pub use module::Name`): their module.
    let mut exports: BTreeMap<String, Module> = BTreeMap::new();
    let (lib_code, _) = blank(lib);
    for (start, end) in idents(&lib_code) {
        if &lib_code[start..end] == b"use" && lib_code[..start].trim_ascii_end().ends_with(b"pub") {
            for mut path in use_tree(&lib_code, end) {
                if let Some(item) = path.pop() {
                    if modules.contains(&path) {
                        exports.insert(item, path);
                    }
                }
            }
        }
    }
    let mut graph = Graph::new();
    for (module, text) in &files {
        let uses = graph.entry(module.clone()).or_default();
        let (code, bare) = blank(text);
        // Inline modules (`mod tests { ... }`): their byte ranges.
        let tokens: Vec<(usize, usize)> = idents(&bare).collect();
        let mut inline: Vec<(usize, usize, String)> = Vec::new();
        for w in tokens.windows(2) {
            let ((s, e), (ns, ne)) = (w[0], w[1]);
            let after = bare[ne..].iter().position(|b| !b.is_ascii_whitespace());
            if &bare[s..e] == b"mod" && after.is_some_and(|k| bare[ne + k] == b'{') {
                let open = ne + after.unwrap_or(0);
                inline.push((open, matching_brace(&bare, open), text[ns..ne].to_string()));
            }
        }
        let scope = |pos: usize| -> Module {
            let mut m = module.clone();
            m.extend(
                inline
                    .iter()
                    .filter(|(s, e, _)| *s < pos && pos < *e)
                    .map(|(_, _, n)| n.clone()),
            );
            m
        };
        let mut known = modules.clone();
        known.extend(inline.iter().map(|(s, _, n)| {
            let mut m = scope(*s);
            m.push(n.clone());
            m
        }));
        let children: BTreeSet<&str> = modules
            .iter()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].as_str())
            .collect();
        for (s, e) in idents(&code) {
            let word = std::str::from_utf8(&code[s..e]).unwrap_or("");
            let first =
                s == 0 || !(code[s - 1].is_ascii_alphanumeric() || b"_:".contains(&code[s - 1]));
            if !first || !code[e..].starts_with(b"::") {
                continue;
            }
            let here = scope(s);
            let base: Module = match word {
                "crate" => Vec::new(),
                "super" => here[..here.len().saturating_sub(1)].to_vec(),
                "self" => here,
                child if children.contains(child) => {
                    let mut m = module.clone();
                    m.push(child.into());
                    m
                }
                _ => continue,
            };
            for segs in use_tree(&code, e + 2) {
                let mut full = base.clone();
                let mut segs = segs.as_slice();
                while let Some(rest) = segs.strip_prefix(&["super".to_string()]) {
                    full.pop();
                    segs = rest;
                }
                full.extend_from_slice(segs);
                let mut k = full.len();
                while k > 0 && !known.contains(&full[..k]) {
                    k -= 1;
                }
                let mut target = full[..k].to_vec();
                if target.is_empty() {
                    if let Some(m) = full.get(k).and_then(|item| exports.get(item)) {
                        target = m.clone();
                    }
                }
                while !modules.contains(&target) {
                    target.pop();
                }
                if &target != module {
                    uses.insert(target);
                }
            }
        }
    }
    Ok(graph)
}

/// The identifiers of `code`, as byte ranges.
fn idents(code: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < code.len() {
            let start = i;
            if word(code[i]) && !code[i].is_ascii_digit() {
                while i < code.len() && word(code[i]) {
                    i += 1;
                }
                return Some((start, i));
            }
            while i < code.len() && word(code[i]) {
                i += 1;
            }
            i += 1;
        }
        None
    })
}

/// The offset of the `}` that closes the `{` at `open`.
fn matching_brace(bare: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &b) in bare.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    bare.len()
}

/// The paths of the use tree (or plain path) at `i`, each a list of
/// segments (`a::{b, c::{self, d}}` gives `a::b`, `a::c`, `a::c::d`).
fn use_tree(code: &[u8], i: usize) -> Vec<Module> {
    fn tree(code: &[u8], mut i: usize, prefix: &[String], out: &mut Vec<Module>) -> usize {
        let mut segs = prefix.to_vec();
        loop {
            while code.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            match code.get(i) {
                Some(b'{') => {
                    i += 1;
                    loop {
                        while code
                            .get(i)
                            .is_some_and(|b| b.is_ascii_whitespace() || *b == b',')
                        {
                            i += 1;
                        }
                        match code.get(i) {
                            Some(b'}') => return i + 1,
                            None => return i,
                            Some(_) => i = tree(code, i, &segs, out),
                        }
                    }
                }
                Some(b'*') => {
                    out.push(segs);
                    return i + 1;
                }
                _ => {}
            }
            let end = i + code[i..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
            if end == i {
                out.push(segs);
                return i;
            }
            segs.push(String::from_utf8_lossy(&code[i..end]).into_owned());
            i = end;
            if code[i..].starts_with(b"::") {
                i += 2;
                continue;
            }
            if segs.last().is_some_and(|s| s == "self") {
                segs.pop();
            }
            out.push(segs);
            return i;
        }
    }
    let mut out = Vec::new();
    tree(code, i, &[], &mut out);
    out
}

/// `text` without comments (`code`) and also without the contents of
/// string and character literals (`bare`, for counting braces), at the
/// same offsets. A string that is a path (`serde(with = "crate::...")`)
/// stays in `code`; one with spaces or semicolons is text, a fixture of
/// source code, say, and is cleared there too.
fn blank(text: &str) -> (Vec<u8>, Vec<u8>) {
    let t = text.as_bytes();
    let (mut code, mut bare) = (t.to_vec(), t.to_vec());
    let clear = |v: &mut Vec<u8>, a: usize, b: usize| {
        for x in &mut v[a..b.min(t.len())] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let find = |from: usize, pat: &[u8]| {
        t.get(from..)
            .and_then(|rest| rest.windows(pat.len()).position(|w| w == pat))
            .map(|p| from + p)
    };
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < t.len() {
        let after_word = i > 0 && word(t[i - 1]);
        if t[i..].starts_with(b"//") {
            let j = find(i, b"\n").unwrap_or(t.len());
            clear(&mut code, i, j);
            clear(&mut bare, i, j);
            i = j;
        } else if t[i..].starts_with(b"/*") {
            let j = find(i + 2, b"*/").map_or(t.len(), |j| j + 2);
            clear(&mut code, i, j);
            clear(&mut bare, i, j);
            i = j;
        } else if !after_word && (t[i] == b'"' || t[i..].starts_with(b"b\"")) {
            let mut j = i + if t[i] == b'b' { 2 } else { 1 };
            let open = j;
            while j < t.len() && t[j] != b'"' {
                j += if t[j] == b'\\' { 2 } else { 1 };
            }
            clear(&mut bare, open, j);
            if text_not_path(&t[open..j.min(t.len())]) {
                clear(&mut code, open, j);
            }
            i = j + 1;
        } else if !after_word
            && (t[i..].starts_with(b"r#")
                || t[i..].starts_with(b"r\"")
                || t[i..].starts_with(b"br"))
        {
            let mut j = i + if t[i] == b'b' { 2 } else { 1 };
            let hashes = t[j..].iter().take_while(|&&b| b == b'#').count();
            j += hashes;
            if t.get(j) != Some(&b'"') {
                i += 1;
                continue;
            }
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = find(j + 1, &close).unwrap_or(t.len());
            clear(&mut bare, j + 1, end);
            if text_not_path(&t[(j + 1).min(t.len())..end]) {
                clear(&mut code, j + 1, end);
            }
            i = end + close.len();
        } else if t[i] == b'\'' {
            // A character literal, or a lifetime.
            let len = if t.get(i + 1) == Some(&b'\\') {
                find(i + 2, b"'").map(|j| j + 1 - i)
            } else {
                let c = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                (t.get(i + 1 + c) == Some(&b'\'')).then_some(c + 2)
            };
            match len {
                Some(len) => {
                    clear(&mut bare, i + 1, i + len - 1);
                    i += len;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    (code, bare)
}

/// Whether a string literal's contents are text rather than one path.
fn text_not_path(contents: &[u8]) -> bool {
    contents
        .iter()
        .any(|b| b.is_ascii_whitespace() || *b == b';' || *b == b'\\')
}

/// The strongly connected components of more than one module (Tarjan).
pub fn cycles(graph: &Graph) -> Vec<Vec<Module>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g Module, usize>,
        low: BTreeMap<&'g Module, usize>,
        stack: Vec<&'g Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let Some(w) = s.graph.get_key_value(w).map(|(k, _)| k) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(lw));
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let at = s.stack.iter().rposition(|m| *m == v).unwrap_or(0);
            let mut component: Vec<Module> = s.stack.drain(at..).cloned().collect();
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's, the CLI's, the exporter's and xtask's modules each
    /// form a DAG.
    #[test]
    fn every_crate_s_modules_form_a_dag() {
        for (src, at_least) in [
            ("crates/pidmap/src", 20),
            ("crates/pidmap-cli/src", 15),
            ("crates/pidmap-exporter/src", 10),
            ("xtask/src", 20),
        ] {
            let graph = module_graph(&crate::paths::workspace_root().join(src)).unwrap();
            assert!(graph.len() > at_least, "{src}: {} modules", graph.len());
            let found = cycles(&graph);
            assert!(found.is_empty(), "{src}:\n{}", describe(&graph, &found));
        }
    }

    fn crate_of(files: &[(&str, &str)]) -> tempdir::Dir {
        let dir = tempdir::Dir::new();
        for (path, text) in files {
            let path = dir.0.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    mod tempdir {
        pub struct Dir(pub std::path::PathBuf);
        impl Dir {
            pub fn new() -> Dir {
                use std::sync::atomic::{AtomicUsize, Ordering};
                static N: AtomicUsize = AtomicUsize::new(0);
                let n = N.fetch_add(1, Ordering::Relaxed);
                let dir =
                    std::env::temp_dir().join(format!("xtask-modgraph-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                Dir(dir)
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    fn m(s: &str) -> Module {
        s.split("::").map(String::from).collect()
    }

    /// Every kind of path is an edge; comments, strings' braces and
    /// lifetimes fool nothing; a test module's `super` is its file.
    #[test]
    fn edges_from_every_kind_of_path() {
        let dir = crate_of(&[
            (
                "lib.rs",
                "mod a;\nmod b;\nmod c;\nmod d;\npub use d::Dee;\n",
            ),
            (
                "a/mod.rs",
                "mod kid;\n// use crate::c;\nuse crate::{b::{self, B}, c::C};\n\
                 fn f<'x>(s: &'x str) -> char { let _ = \"}{\"; let _ = kid::K; '{' }\n\
                 #[cfg(test)]\nmod tests { use super::*; use crate::Dee; }\n",
            ),
            ("a/kid.rs", "use super::super::b::B;\n"),
            ("b.rs", "pub struct B;\n"),
            ("c.rs", "pub struct C;\n"),
            ("d.rs", "pub struct Dee;\n"),
        ]);
        let graph = module_graph(&dir.0).unwrap();
        let want: BTreeSet<Module> = [m("a::kid"), m("b"), m("c"), m("d")].into();
        assert_eq!(graph[&m("a")], want);
        assert_eq!(graph[&m("a::kid")], [m("b")].into());
        assert!(cycles(&graph).is_empty());
    }

    #[test]
    fn finds_a_cycle_through_a_parent() {
        let dir = crate_of(&[
            ("lib.rs", "mod h;\nmod x;\n"),
            (
                "h/mod.rs",
                "mod r;\nuse self::r::Shape;\npub struct H(Shape);\n",
            ),
            ("h/r.rs", "use super::H;\npub struct Shape;\n"),
            ("x.rs", "use crate::h::H;\n"),
        ]);
        let graph = module_graph(&dir.0).unwrap();
        assert_eq!(cycles(&graph), vec![vec![m("h"), m("h::r")]]);
    }
}
