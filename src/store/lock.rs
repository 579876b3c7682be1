//! The folder's lock, `build.lock`.

use crate::error::{AtPath, Error, Result};
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Holds a folder's `build.lock` (taken by `build`, `compress`,
/// `decompress` and `recover`, which rewrite the folder) until dropped.
pub struct FolderLock {
    file: File,
    path: PathBuf,
    /// What the lock file said when it was taken: the layer a build was
    /// working on when it stopped, if it stopped in the middle of one.
    previous: String,
}

impl FolderLock {
    /// Takes the lock of `dir`; [`Error::Locked`] when another process
    /// holds it. A lock released a moment ago can still be held by a
    /// process this one forked (until it execs), so a few short retries
    /// come first.
    pub fn acquire(dir: &Path) -> Result<FolderLock> {
        let path = dir.join("build.lock");
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .at(&path)?;
        #[cfg(unix)]
        {
            use std::os::unix::io::AsRawFd;
            for attempt in 0.. {
                // SAFETY: flock on a descriptor we own; released when it is closed.
                let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
                if r == 0 {
                    break;
                }
                if attempt == 20 {
                    return Err(Error::Locked(dir.to_path_buf()));
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
        let mut previous = String::new();
        let _ = (&file).read_to_string(&mut previous);
        Ok(FolderLock {
            file,
            path,
            previous,
        })
    }

    /// The layer a build was working on when it stopped without finishing
    /// it (killed, or one of its ranks was), as the lock file recorded it.
    pub fn interrupted_layer(&self) -> Option<u32> {
        self.previous
            .trim()
            .strip_prefix("building layer ")?
            .parse()
            .ok()
    }

    /// Records in the lock file what the holder is doing (`building layer
    /// N`, or nothing once done), for the next holder (or the other ranks
    /// of a build) to read; synced, so other machines see it too.
    pub fn record(&self, what: &str) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.set_len(0).at(&self.path)?;
        self.file.write_all_at(what.as_bytes(), 0).at(&self.path)?;
        self.file.sync_data().at(&self.path)
    }
}
