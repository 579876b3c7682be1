//! Building with several ranks: what they must agree on before they start.
//!
//! Every rank solves its part of each layer and writes its byte range of
//! the tables ([`crate::store::write_parts`]); rank 0 alone decides which
//! layers to build, holds the folder's lock and writes the manifest. Ranks
//! started with another binary, other options or another folder refuse,
//! and so do ranks that do not see the folder rank 0 locked.

use super::BuildOptions;
use crate::build::BuildError;
use crate::comm::Comm;
use crate::error::Result;
use crate::store::FolderLock;
use std::fs;
use std::path::Path;

/// What the ranks of a build must agree on: the binary (its bytes, or its
/// version where they cannot be read), the options that shape the tables,
/// and the folder's path. (That the path names the same folder on every
/// rank is checked once rank 0 holds its lock: [`same_folder`].)
fn fingerprint(opts: &BuildOptions) -> [u64; 3] {
    let h = |s: &str| xxhash_rust::xxh3::xxh3_64(s.as_bytes());
    let dir = fs::canonicalize(&opts.db).unwrap_or_else(|_| opts.db.clone());
    let binary = std::env::current_exe()
        .and_then(fs::read)
        .map(|b| xxhash_rust::xxh3::xxh3_64(&b))
        .unwrap_or(0);
    [
        binary
            ^ h(concat!(
                env!("CARGO_PKG_VERSION"),
                " ",
                env!("CARGO_PKG_NAME")
            )),
        h(&format!(
            "{} {} {} {:?} {:?} {:?}",
            opts.rules.tag(),
            opts.max_seeds,
            opts.envelope,
            opts.solver,
            opts.memory_limit,
            opts.compress_finished
        )),
        h(&dir.to_string_lossy()),
    ]
}

/// Checks that every rank sees the folder rank 0 holds the lock of (a
/// folder on a shared filesystem, not one of the same name on each
/// machine): rank 0 records a nonce in `build.lock`, and every rank reads
/// it back.
pub(super) fn same_folder(dir: &Path, lock: Option<&FolderLock>, comm: &dyn Comm) -> Result<()> {
    let mut nonce = [0u64];
    if let Some(l) = lock {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        nonce[0] = xxhash_rust::xxh3::xxh3_64(format!("{t} {}", std::process::id()).as_bytes());
        l.record(&format!("ranks {:016x}", nonce[0]))?;
    }
    comm.broadcast(&mut nonce)?;
    let seen = crate::store::lock::recorded(dir);
    let mut differ = [(seen.trim() != format!("ranks {:016x}", nonce[0])) as u64];
    comm.sum(&mut differ)?;
    if differ[0] > 0 {
        return Err(BuildError::RanksDisagree(
            "the output folder (some ranks do not see rank 0's folder: it must be on a filesystem every rank shares)",
        ).into());
    }
    Ok(())
}

/// Checks that every rank was started alike ([`fingerprint`]).
pub(super) fn check_alike(opts: &BuildOptions, comm: &dyn Comm) -> Result<()> {
    let mine = fingerprint(opts);
    let mut theirs = mine;
    comm.broadcast(&mut theirs)?;
    let mut differ = [0u64; 3];
    for (d, (a, b)) in differ.iter_mut().zip(mine.iter().zip(&theirs)) {
        *d = (a != b) as u64;
    }
    comm.sum(&mut differ)?;
    for (d, what) in differ.iter().zip([
        "the binary's version",
        "the build options",
        "the output folder",
    ]) {
        if *d > 0 {
            return Err(BuildError::RanksDisagree(what).into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::Threads;

    /// Ranks pass the shared-folder check only when each sees the folder
    /// rank 0 holds the lock of (here rank 1 is given another folder under
    /// the path it uses, as a node-local folder of the same name would be).
    #[test]
    fn ranks_must_see_rank_0s_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        for (other, ok) in [(&a, true), (&b, false)] {
            let comms = Threads::ranks(2);
            let lock = FolderLock::acquire(&a).unwrap();
            let results: Vec<Result<()>> = std::thread::scope(|sc| {
                let handles: Vec<_> = comms
                    .iter()
                    .enumerate()
                    .map(|(r, c)| {
                        let (lock, a) = (&lock, &a);
                        sc.spawn(move || {
                            let dir = if r == 0 { a } else { other };
                            same_folder(dir, (r == 0).then_some(lock), c)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for r in results {
                match r {
                    Ok(()) => assert!(ok),
                    Err(e) if matches!(e.cause(), Some(BuildError::RanksDisagree(_))) => {
                        assert!(!ok, "{e}");
                        assert!(e.to_string().contains("shares"), "{e}");
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        }
    }
}
