//! What the C API's tests share with the library's: a folder of layers
//! 0..=12 built once per test binary by the library, scratch folders
//! removed at exit, random indexable boards.

#![allow(dead_code)]

pub mod dl;

use egdb::build::{self, BuildOptions};
use egdb::rules::Position;
use rand::rngs::StdRng;
use rand::Rng;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Layers of the shared test folder.
pub const MAX: u32 = 12;

/// The options of a build of layers `0..=max` into `dir`.
pub fn options(dir: &Path, max: u32, envelope: bool) -> BuildOptions {
    BuildOptions {
        rules: egdb::rules::AWARI,
        max_seeds: max,
        db: dir.to_path_buf(),
        envelope,
        distance: true,
        memory_limit: None,
        reset_peak_rss: false,
        solver: Default::default(),
        scratch: None,
        compress_finished: None,
    }
}

/// Folders to remove at exit.
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_scratch() {
    if let Ok(dirs) = SCRATCH.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// A fresh temporary folder that lives until the test binary exits.
pub fn scratch(prefix: &str) -> PathBuf {
    static HOOK: OnceLock<()> = OnceLock::new();
    HOOK.get_or_init(|| {
        // SAFETY: registers a plain `extern "C"` function with no arguments.
        unsafe { libc::atexit(remove_scratch) };
    });
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .expect("temporary folder")
        .keep();
    SCRATCH.lock().unwrap().push(dir.clone());
    dir
}

/// Layers 0..=MAX with the envelope, built on first use.
pub fn db_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("awari-capi-db-");
        build::build(&options(&dir, MAX, true), &egdb::solve::Silent).expect("build");
        dir
    })
}

/// A copy of the folder `src` (manifest and tables, not the lock).
pub fn copy_folder(src: &Path, prefix: &str) -> PathBuf {
    let dst = scratch(prefix);
    for e in std::fs::read_dir(src).expect("read folder") {
        let e = e.expect("entry");
        if e.file_name() != "build.lock" {
            std::fs::copy(e.path(), dst.join(e.file_name())).expect("copy table");
        }
    }
    dst
}

/// A path as text.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// A random indexable board of `n` seeds: each seed dropped into a random
/// pit, or half the time a big pile in one of the mover's pits first;
/// rejected until an opponent pit is empty.
pub fn random_indexable(rng: &mut StdRng, n: u32) -> Position {
    loop {
        let mut b = [0u8; 12];
        let mut left = n;
        if n > 0 && rng.gen_bool(0.5) {
            let pile = rng.gen_range(1..=n);
            b[rng.gen_range(0..6)] += pile as u8;
            left -= pile;
        }
        for _ in 0..left {
            b[rng.gen_range(0..12)] += 1;
        }
        if b[6..].contains(&0) {
            return Position(b);
        }
    }
}
