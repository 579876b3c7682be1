//! Shared by the compressed-table tests (`compress_roundtrip`,
//! `compress_damage`, `compress_v4*`, `compress_retired`): a raw folder of
//! layers 0..=14 built once per test binary, its compressed copy, and
//! small helpers.

use super::scratch;
use awari_egdb::build;
use awari_egdb::codec::{CompressError, CompressedTable, Settings};
use awari_egdb::format::Kind;
use awari_egdb::pack::{self, Action, CompressOptions, DecompressOptions, Quiet};
use awari_egdb::solve::Silent;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Layers of the test folder.
pub const MAX: u32 = 14;

pub const KINDS: [Kind; 3] = [Kind::Score, Kind::Lower, Kind::Upper];

/// The full form in small blocks, so that even small layers have many of
/// them.
pub const SETTINGS: Settings = Settings {
    block_size: 1024,
    block_bytes: 32,
    scores_only: false,
    dont_care: false,
};

/// Layers 0..=MAX with the envelope, built once.
pub fn raw_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("awari-compress-raw-");
        let opts = super::options(&dir, MAX, true);
        build::build(&opts, &Silent).unwrap_or_else(|e| panic!("build: {e}"));
        dir
    })
}

/// A copy of the raw folder (tables and manifest).
pub fn copy(prefix: &str) -> PathBuf {
    super::copy_folder(raw_dir(), prefix)
}

/// The names of the `.zst` files in `dir`.
pub fn zst_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".zst"))
        .collect()
}

pub fn compress_opts(remove_raw: bool) -> CompressOptions {
    CompressOptions {
        settings: SETTINGS,
        layers: 0..=48,
        remove_raw,
    }
}

/// The raw folder compressed, raw tables removed: made once.
pub fn zst_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = copy("awari-compress-zst-");
        let r = pack::compress_folder(&dir, &compress_opts(true), &Quiet).unwrap();
        assert_eq!(r.files.len(), MAX as usize + 1, "a file per layer");
        assert!(r.files.iter().all(|f| f.action == Action::Compressed));
        assert_eq!(r.removed.len(), 3 * (MAX as usize + 1));
        dir
    })
}

pub fn raw_table(kind: Kind, n: u32) -> Vec<u8> {
    std::fs::read(raw_dir().join(kind.file_name(n))).unwrap()
}

pub fn parse(z: &[u8]) -> Result<CompressedTable<&[u8]>, CompressError> {
    CompressedTable::parse(z)
}

/// `decompress_folder` on every layer.
pub fn decompress_every_layer(dir: &Path, remove_compressed: bool) -> pack::PackReport {
    let opts = DecompressOptions {
        layers: 0..=48,
        remove_compressed,
    };
    pack::decompress_folder(dir, &opts, &Quiet).unwrap()
}
