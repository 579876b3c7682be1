//! The house rules that can be read off the sources (CONTRIBUTING.md):
//! no source file of the workspace over 700 lines, the README under 400 lines for users,
//! each page of `docs/` about 400 lines at most (its history goes to
//! `docs/history/`), and no import circle between the library's rooms
//! (its top-level modules). Each failure names the file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && p.file_name().is_some_and(|n| n == "target") {
            continue;
        } else if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

fn lines(p: &Path) -> usize {
    fs::read_to_string(p).unwrap().lines().count()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(ROOT).unwrap_or(p).display().to_string()
}

/// The files of `paths` over `limit` lines, named with their counts.
fn over(paths: &[PathBuf], limit: usize) -> Vec<String> {
    paths
        .iter()
        .map(|p| (p, lines(p)))
        .filter(|&(_, n)| n > limit)
        .map(|(p, n)| format!("{} ({n} lines)", rel(p)))
        .collect()
}

#[test]
fn no_source_file_is_over_700_lines() {
    let mut all = Vec::new();
    for d in ["src", "tests", "benches", "cli", "capi", "python"] {
        let dir = Path::new(ROOT).join(d);
        if dir.exists() {
            files(&dir, "rs", &mut all);
        }
    }
    let long = over(&all, 700);
    assert!(long.is_empty(), "over 700 lines: {long:?}");
}

#[test]
fn the_readme_is_under_400_lines() {
    let n = lines(&Path::new(ROOT).join("README.md"));
    assert!(
        n < 400,
        "README.md has {n} lines; the house allows under 400"
    );
}

#[test]
fn each_page_of_docs_is_about_400_lines_at_most() {
    let mut pages = Vec::new();
    for e in fs::read_dir(Path::new(ROOT).join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    // "About 400": a page may run a tenth over while it says what is.
    let long = over(&pages, 440);
    assert!(long.is_empty(), "docs pages over about 400 lines: {long:?}");
}

/// The rooms of the library (its top-level modules but `lib`) and, for each, the rooms its code names as `crate::ROOM`
/// (comments and test modules left out), with a file that does.
fn room_imports() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(ROOT).join("src");
    let mut all = Vec::new();
    files(&src, "rs", &mut all);
    let room_of = |p: &Path| -> String {
        let r = p.strip_prefix(&src).unwrap();
        let first = r.components().next().unwrap().as_os_str().to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let rooms: BTreeSet<String> = all
        .iter()
        .map(|p| room_of(p))
        .filter(|r| r != "lib")
        .collect();
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for p in &all {
        let room = room_of(p);
        if !rooms.contains(&room) || p.file_name().is_some_and(|f| f == "tests.rs") {
            continue;
        }
        let text = fs::read_to_string(p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for part in line.split("crate::").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name != room && rooms.contains(&name) {
                    out.entry(room.clone())
                        .or_default()
                        .entry(name)
                        .or_insert_with(|| rel(p));
                }
            }
        }
    }
    for r in rooms {
        out.entry(r).or_default();
    }
    out
}

/// The rooms reachable from `from` over `edges`.
fn reach(edges: &BTreeMap<String, BTreeMap<String, String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(r) = todo.pop() {
        for next in edges.get(&r).into_iter().flat_map(|m| m.keys()) {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

#[test]
fn no_import_circle_between_the_rooms_of_the_library() {
    let edges = room_imports();
    let mut circles = Vec::new();
    for (room, to) in &edges {
        for (next, file) in to {
            if reach(&edges, next).contains(room) {
                circles.push(format!("{room} -> {next} ({file}) leads back to {room}"));
            }
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:#?}");
}

/// Where a library file outside `src/store/` may still read (or, for
/// /proc, write) a file itself, and why: none of these is a file of a
/// database folder.
const FILES_OUTSIDE_THE_STORE: &[(&str, &str)] = &[
    (
        "src/mem.rs",
        "the process's own figures in /proc, and its clear_refs",
    ),
    ("src/verify/facts.rs", "a list of move facts the user names"),
    (
        "src/verify/checksums.rs",
        "a list of checksums the user names",
    ),
    (
        "src/build/ranks.rs",
        "the running binary, whose bytes the ranks compare",
    ),
];

/// The store owns the folder: outside `src/store/`, no code of the library
/// (test modules left out) creates, lists, renames, removes, writes, maps
/// or opens a file itself, nor reads one, but where
/// `FILES_OUTSIDE_THE_STORE` says why. (Unnamed scratch files,
/// `tempfile::tempfile_in`, leave nothing in a folder and are allowed.)
#[test]
fn no_room_but_the_store_touches_the_files_of_a_folder() {
    let src = Path::new(ROOT).join("src");
    let mut all = Vec::new();
    files(&src, "rs", &mut all);
    let never = [
        "fs::remove_file",
        "fs::remove_dir",
        "fs::rename",
        "fs::create_dir",
        "fs::read_dir",
        "fs::write",
        "fs::copy",
        "fs::metadata",
        "fs::hard_link",
        "File::open",
        "File::create",
        "OpenOptions",
        "Mmap::map",
        "MmapOptions",
    ];
    let reads = ["fs::read(", "fs::read)", "fs::read_to_string"];
    let mut found = Vec::new();
    for p in &all {
        let name = rel(p);
        if name.starts_with("src/store/") || name.ends_with("tests.rs") {
            continue;
        }
        let text = fs::read_to_string(p).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        if FILES_OUTSIDE_THE_STORE.iter().any(|(f, _)| *f == name) {
            continue;
        }
        for (i, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            // A word of its own: `AtomicFile::create` is the store's.
            let names = |w: &&&str| {
                line.match_indices(**w).any(|(at, _)| {
                    !line[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
            };
            let bad = never.iter().chain(&reads).find(names);
            if let Some(w) = bad {
                found.push(format!("{name}:{}: {w}", i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "folder files touched outside src/store/ (ask the store): {found:?}"
    );
}
