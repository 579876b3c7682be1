//! Format 4's full form damaged: every byte before the blocks, each
//! header field of the full form (with the checksum made to match, so
//! that the field's own check is what finds it), the envelope's model,
//! and the envelope's and the scores' blocks. Damage is an error or, for
//! a probe that does not check its block, a value within the layer's
//! range: never a panic, never a wrong table that passes.

mod common;

use awari_egdb::codec::v4::{encode_full, V4Settings};
use awari_egdb::codec::{CompressError, CompressedTable, Expected};
use awari_egdb::format::Kind;
use awari_egdb::rules::AWARI;
use rand::{Rng, SeedableRng};

const N: u32 = 10;

fn table(kind: Kind) -> Vec<u8> {
    std::fs::read(common::db_dir().join(kind.file_name(N))).expect("a raw table")
}

fn open(file: &[u8]) -> Result<CompressedTable<&[u8]>, CompressError> {
    CompressedTable::parse(file)
}

/// The layer's three tables and their full-form file (small blocks, so
/// that there are many).
fn full() -> ([Vec<u8>; 3], Vec<u8>) {
    let raws = [Kind::Score, Kind::Lower, Kind::Upper].map(table);
    let lay = V4Settings {
        block_bytes: 32,
        ..V4Settings::default()
    };
    let file = encode_full(&raws[0], &raws[1], &raws[2], &AWARI, N, lay, 48).expect("encode");
    (raws, file)
}

/// Where the models and group checks end and the blocks start, and where
/// the envelope's blocks start.
fn parts(file: &[u8]) -> (usize, usize, usize) {
    let t = open(file).expect("opens");
    let h = t.header();
    let f = h.v4();
    let meta_end = (h.index_end() + f.model_bytes as u64 + f.group_check_bytes()) as usize;
    let env = h.data_start() + f.blocks * f.block_bytes as u64;
    (meta_end, h.data_start() as usize, env as usize)
}

/// Makes the checksum of header, index and models match `file` again.
fn reseal(file: &mut [u8], meta_end: usize) {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&file[..88]);
    h.update(&file[96..meta_end]);
    file[88..96].copy_from_slice(&h.digest().to_le_bytes());
}

/// Probes entries of every table of a damaged file that opens: each the
/// right value or an error; and no table decodes whole to other values
/// without an error.
fn probe_damaged(file: &[u8], raws: &[Vec<u8>; 3]) {
    let Ok(mut t) = open(file) else { return };
    let mut rng = rand::rngs::StdRng::seed_from_u64(file.len() as u64);
    for (kind, raw) in [Kind::Score, Kind::Lower, Kind::Upper].iter().zip(raws) {
        t.serve(*kind).expect("held");
        for _ in 0..500 {
            let g = rng.gen_range(0..raw.len() as u64);
            if let Ok(v) = t.get(g) {
                assert_eq!(
                    v, raw[g as usize] as i8,
                    "{kind:?} entry {g}: a wrong value"
                );
            }
        }
        if let Ok(all) = t.decompress_all() {
            assert!(
                all == *raw,
                "{kind:?}: a damaged file decoded to other values without an error"
            );
        }
    }
}

#[test]
fn every_byte_before_the_blocks_damaged_is_an_error_on_opening() {
    let (_, file) = full();
    let (_, data_start, _) = parts(&file);
    for at in 0..data_start {
        for x in [0x01u8, 0x80, 0xff] {
            let mut f = file.clone();
            f[at] ^= x;
            assert!(open(&f).is_err(), "byte {at} ^ {x:#x} opened");
        }
    }
    for len in [0, 95, 96, data_start - 1, data_start, file.len() - 1] {
        assert!(open(&file[..len]).is_err(), "truncated to {len}");
    }
    let mut longer = file.clone();
    longer.push(0);
    assert!(open(&longer).is_err(), "a byte longer");
}

#[test]
fn each_header_field_of_the_full_form_is_checked_for_itself() {
    let (raws, file) = full();
    let (meta_end, _, _) = parts(&file);
    let with = |at: usize, bytes: &[u8]| {
        let mut f = file.clone();
        f[at..at + bytes.len()].copy_from_slice(bytes);
        reseal(&mut f, meta_end);
        f
    };
    // The tables held: neither scores alone nor all three; scores alone
    // with the envelope's fields set.
    for t in [0b011u8, 0b101, 0b110, 0b000, 0b001] {
        let e = open(&with(12, &[t])).expect_err("tables");
        assert!(
            matches!(e, CompressError::HeaderField { .. }),
            "tables {t:#05b}: {e}"
        );
    }
    // Bytes per envelope block: out of range, or not the file's.
    for b in [0u16, 8, 15, 4097, u16::MAX, 64] {
        assert!(
            open(&with(14, &b.to_le_bytes())).is_err(),
            "envelope block bytes {b}"
        );
    }
    // Envelope blocks: too few or too many for the layer, or not the
    // file's.
    let k = u32::from_le_bytes(file[84..88].try_into().unwrap());
    for b in [0, 1, k - 1, k + 1, u32::MAX] {
        assert!(
            open(&with(84, &b.to_le_bytes())).is_err(),
            "envelope blocks {b}"
        );
    }
    // The flags: "don't care" in the full form, no group checks where
    // the file has them, an unknown flag.
    for flags in [1u8, 3, 0, 6, 0x82] {
        assert!(open(&with(81, &[flags])).is_err(), "flags {flags:#x}");
    }
    // Another checksum of raw lower: the file opens; the table it holds
    // is not the manifest's, and decoded whole it is not what the header
    // says.
    let xx = |raw: &[u8]| awari_egdb::format::Checksum(xxhash_rust::xxh3::xxh3_64(raw));
    for (at, kind, raw) in [(64, Kind::Lower, &raws[1]), (72, Kind::Upper, &raws[2])] {
        let f = with(at, &[1, 2, 3, 4, 5, 6, 7, 8]);
        let mut t = open(&f).expect("a checksum of a raw table is not checked on opening");
        let want = Expected {
            rules: AWARI,
            kind,
            layer: N,
            raw_xxh3: xx(raw),
        };
        assert!(matches!(
            t.check_table(&want),
            Err(CompressError::Mismatch { .. })
        ));
        t.serve(kind).expect("held");
        assert!(matches!(
            t.decompress_all(),
            Err(CompressError::ChecksumMismatch { .. })
        ));
    }
    // Each table of the undamaged file is the one it holds.
    let mut t = open(&file).expect("opens");
    for (kind, raw) in [Kind::Score, Kind::Lower, Kind::Upper].iter().zip(&raws) {
        let want = Expected {
            rules: AWARI,
            kind: *kind,
            layer: N,
            raw_xxh3: xx(raw),
        };
        t.check_table(&want).expect("the table it holds");
        assert_eq!(t.decompress_all().expect("decodes"), *raw);
    }
}

#[test]
fn a_damaged_envelope_model_is_an_error_or_found_by_the_blocks() {
    let (raws, file) = full();
    let (meta_end, _, _) = parts(&file);
    // The envelope's model is the zstd frame at the end of the models:
    // damage its last bytes and its length, sealed again.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..200 {
        let mut f = file.clone();
        let at = rng.gen_range(meta_end - 200..meta_end);
        f[at] ^= rng.gen_range(1..=255u8);
        reseal(&mut f, meta_end);
        probe_damaged(&f, &raws);
    }
}

#[test]
fn damaged_envelope_blocks_are_found_and_leave_the_scores_alone() {
    let (raws, file) = full();
    let (_, _, env) = parts(&file);
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    for _ in 0..150 {
        let mut f = file.clone();
        for _ in 0..rng.gen_range(1..=4) {
            let at = rng.gen_range(env..f.len());
            f[at] ^= rng.gen_range(1..=255u8);
        }
        probe_damaged(&f, &raws);
        let mut t = open(&f).expect("the blocks are not in the checksum");
        assert_eq!(
            t.decompress_all()
                .expect("the scores never read the envelope"),
            raws[0]
        );
        for kind in [Kind::Lower, Kind::Upper] {
            t.serve(kind).expect("held");
            assert!(
                t.decompress_all().is_err(),
                "damaged envelope blocks decoded without an error"
            );
        }
    }
}

#[test]
fn damaged_score_blocks_are_found_by_every_table() {
    let (raws, file) = full();
    let (_, data_start, env) = parts(&file);
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for _ in 0..150 {
        let mut f = file.clone();
        for _ in 0..rng.gen_range(1..=4) {
            let at = rng.gen_range(data_start..env);
            f[at] ^= rng.gen_range(1..=255u8);
        }
        probe_damaged(&f, &raws);
        let mut t = open(&f).expect("the blocks are not in the checksum");
        for kind in [Kind::Score, Kind::Lower, Kind::Upper] {
            t.serve(kind).expect("held");
            assert!(
                t.decompress_all().is_err(),
                "{kind:?}: damaged score blocks decoded without an error"
            );
        }
    }
}
