//! Shared by the probing tests (`probe`, `probe_errors`, `probe_pv`): the
//! shared folder's database opened once, its table files read straight
//! from disk, and positions to probe.

use super::{db_dir, MAX};
use awari_egdb::format::Kind;
use awari_egdb::index::{self, layer_size};
use awari_egdb::probe::Database;
use awari_egdb::rules::Position;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::fs;
use std::sync::OnceLock;

/// The shared database, opened once (its layers stay mapped).
pub fn db() -> &'static Database {
    static DB: OnceLock<Database> = OnceLock::new();
    DB.get_or_init(|| Database::open(db_dir()).expect("open the test folder"))
}

/// One table file of the shared folder.
pub fn table(kind: Kind, n: u32) -> Vec<u8> {
    fs::read(db_dir().join(kind.file_name(n))).expect("read table")
}

/// Every table file of a kind, indexed by layer.
pub fn tables(kind: Kind) -> &'static [Vec<u8>] {
    static T: OnceLock<[Vec<Vec<u8>>; 3]> = OnceLock::new();
    let all = T.get_or_init(|| {
        [Kind::Score, Kind::Lower, Kind::Upper].map(|k| (0..=MAX).map(|n| table(k, n)).collect())
    });
    match kind {
        Kind::Score => &all[0],
        Kind::Lower => &all[1],
        Kind::Upper => &all[2],
        Kind::Distance => unreachable!("the distance is not among the tables kept here"),
    }
}

/// The stored score of a position, read straight from the file bytes.
pub fn file_score(p: &Position) -> i8 {
    tables(Kind::Score)[p.seeds() as usize][index::rank(p) as usize] as i8
}

pub fn layers() -> Vec<u32> {
    (0..=MAX).collect()
}

/// `n` random positions of layers `lo..=hi`, reproducibly.
pub fn random_positions(seed: u64, count: usize, lo: u32, hi: u32) -> Vec<Position> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.gen_range(lo..=hi);
            index::unrank(n, rng.gen_range(0..layer_size(n))).expect("in range")
        })
        .collect()
}

/// Some indexable position with `n` seeds (all in pit 0).
pub fn position_with(n: u32) -> Position {
    index::first(n)
}
