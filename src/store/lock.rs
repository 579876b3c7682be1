//! The folder's lock, `build.lock`.
//!
//! The file exists while a writer holds the lock, and after a build that
//! stopped in the middle of a layer (it records which): the next build
//! reads it. A holder that leaves nothing to say removes it when it lets
//! go, so a folder at rest holds tables and its manifest only.

use crate::error::{AtPath, Result};
use crate::store::StoreError;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The lock's file name.
pub const LOCK: &str = "build.lock";

/// Holds a folder's `build.lock` (taken by `build`, `compress`,
/// `decompress` and `recover`, which rewrite the folder) until dropped.
pub struct FolderLock {
    file: File,
    path: PathBuf,
    /// What the lock file said when it was taken: the layer a build was
    /// working on when it stopped, if it stopped in the middle of one.
    previous: String,
    /// The file says nothing now: removed when the lock is let go.
    blank: AtomicBool,
}

impl FolderLock {
    /// Takes the lock of `dir`; [`StoreError::Locked`] when another process
    /// holds it. A lock released a moment ago can still be held by a
    /// process this one forked (until it execs), so a few short retries
    /// come first.
    pub fn acquire(dir: &Path) -> Result<FolderLock> {
        let path = dir.join(LOCK);
        let mut attempt = 0;
        let file = loop {
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .at(&path)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                use std::os::unix::io::AsRawFd;
                // SAFETY: flock on a descriptor we own; released when it is closed.
                let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
                if r != 0 {
                    attempt += 1;
                    if attempt == 20 {
                        return Err(StoreError::Locked(dir.to_path_buf()).into());
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    continue;
                }
                // The holder before may have removed the file between our
                // open and our lock: then ours is a lock on nothing.
                let same = match (file.metadata(), fs::metadata(&path)) {
                    (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
                    _ => false,
                };
                if !same {
                    continue;
                }
            }
            break file;
        };
        let mut previous = String::new();
        let _ = (&file).read_to_string(&mut previous);
        let blank = AtomicBool::new(previous.trim().is_empty());
        Ok(FolderLock {
            file,
            path,
            previous,
            blank,
        })
    }

    /// The layer a build was working on when it stopped without finishing
    /// it (killed, or one of its ranks was), as the lock file recorded it.
    pub fn interrupted_layer(&self) -> Option<u32> {
        interrupted(&self.previous)
    }

    /// Records in the lock file what the holder is doing (`building layer
    /// N`, or nothing once done), for the next holder (or the other ranks
    /// of a build) to read; synced, so other machines see it too.
    pub fn record(&self, what: &str) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.set_len(0).at(&self.path)?;
        self.file.write_all_at(what.as_bytes(), 0).at(&self.path)?;
        self.blank.store(what.trim().is_empty(), Ordering::Relaxed);
        self.file.sync_data().at(&self.path)
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        if self.blank.load(Ordering::Relaxed) {
            // Removed while still held: a process that opened it before
            // sees, once it holds it, that the name is gone and opens anew.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// What the lock file of `dir` says now, read without taking the lock
/// (the ranks of a build read what rank 0 recorded); empty without one.
pub fn recorded(dir: &Path) -> String {
    fs::read_to_string(dir.join(LOCK)).unwrap_or_default()
}

/// The layer a build of `dir` stopped in the middle of, as its lock file
/// records it now (read without taking the lock).
pub fn interrupted_layer(dir: &Path) -> Option<u32> {
    interrupted(&recorded(dir))
}

fn interrupted(text: &str) -> Option<u32> {
    text.trim().strip_prefix("building layer ")?.parse().ok()
}
