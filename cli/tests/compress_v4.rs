//! Format 4: every table of layers 0..=12 round trips at several layouts
//! (the full form also 13 and 14)
//! (decoded whole and probed entry by entry; the full form's layers 11
//! and 12 at random entries and in batches), and damage of every kind is
//! an error or the right value (a probe relies on its block's group
//! check, or without group checks decodes its block whole and checks it):
//! never a panic, never a wrong value.

mod common;

use awari_egdb::codec::v4::{encode_full, encode_scores, V4Settings};
use awari_egdb::codec::{CompressError, CompressedTable, Expected};
use awari_egdb::format::Kind;
use awari_egdb::rules::AWARI;
use rand::{Rng, SeedableRng};

fn scores(n: u32) -> Vec<u8> {
    std::fs::read(common::db_dir().join(format!("scores.{n}"))).expect("scores")
}

fn layouts() -> Vec<V4Settings> {
    let s = |block_bytes, block_cap, classes| V4Settings {
        block_bytes,
        block_cap,
        classes,
    };
    vec![
        V4Settings::default(),
        s(16, 1, 1),
        s(24, 7, 3),
        s(256, 4095, 256),
        s(4096, 300, 17),
    ]
}

fn open(file: &[u8]) -> Result<CompressedTable<&[u8]>, CompressError> {
    CompressedTable::parse(file)
}

#[test]
fn every_table_of_layers_0_to_12_round_trips_at_several_layouts() {
    for n in 0..=common::MAX {
        let raw = scores(n);
        for lay in layouts() {
            let file = encode_scores(&raw, &AWARI, n, lay).expect("encode");
            let t = open(&file).unwrap_or_else(|e| panic!("layer {n} {lay:?}: {e}"));
            assert_eq!(
                t.decompress_all().expect("decode"),
                raw,
                "layer {n} {lay:?}"
            );
            for (g, &v) in raw.iter().enumerate() {
                assert_eq!(
                    t.get(g as u64).expect("get"),
                    v as i8,
                    "layer {n} entry {g} {lay:?}"
                );
            }
            // Ranges that start and end inside blocks.
            let len = raw.len() as u64;
            for (a, b) in [(0, len), (len / 3, len / 3 + 1), (len / 7, len - len / 5)] {
                let mut out = vec![0u8; (b - a) as usize];
                t.decompress_range(a, &mut out).expect("range");
                assert_eq!(out, raw[a as usize..b as usize], "layer {n} {a}..{b}");
            }
            assert!(matches!(t.get(len), Err(CompressError::OutOfRange { .. })));
            get_many_agrees(&t, &raw, n, true);
        }
    }
}

fn table(kind: &str, n: u32) -> Vec<u8> {
    std::fs::read(common::db_dir().join(format!("{kind}.{n}"))).expect(kind)
}

#[test]
fn the_full_form_round_trips_every_table_of_layers_0_to_12_at_several_layouts() {
    for n in 0..=common::MAX {
        let raws = [Kind::Score, Kind::Lower, Kind::Upper].map(|k| (k, table(k.stem(), n)));
        for (lay, env_bytes) in layouts().into_iter().zip([128, 16, 40, 4096, 64]) {
            let file = encode_full(
                &raws[0].1, &raws[1].1, &raws[2].1, &AWARI, n, lay, env_bytes,
            )
            .expect("encode");
            let mut t = open(&file).unwrap_or_else(|e| panic!("layer {n} {lay:?}: {e}"));
            assert_eq!(t.header().tables, 0b111);
            for (kind, raw) in &raws {
                t.serve(*kind).expect("held");
                assert_eq!(
                    t.header().raw_checksum_of(*kind),
                    Some(awari_egdb::format::Checksum(xxhash_rust::xxh3::xxh3_64(
                        raw
                    )))
                );
                let all = t
                    .decompress_all()
                    .unwrap_or_else(|e| panic!("layer {n} {kind:?} {lay:?}: {e}"));
                assert!(all == *raw, "layer {n} {kind:?} {lay:?} decoded whole");
                // Every entry one probe at a time, up to layer 10 (above,
                // the whole decode just done covers every entry, and the
                // random probes below the block index): layers 11 and 12
                // are three quarters of the entries, and one probe at a
                // time at five layouts was most of this test's time.
                if n <= 10 {
                    for (g, &v) in raw.iter().enumerate() {
                        assert_eq!(
                            t.get(g as u64).expect("get"),
                            v as i8,
                            "layer {n} {kind:?} entry {g} {lay:?}"
                        );
                    }
                }
                // Probes out of order, and ranges that start and end
                // inside blocks.
                let len = raw.len() as u64;
                let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64);
                for _ in 0..500.min(len) {
                    let g = rng.gen_range(0..len);
                    assert_eq!(
                        t.get(g).expect("get"),
                        raw[g as usize] as i8,
                        "layer {n} {kind:?} entry {g}"
                    );
                }
                for (a, b) in [(0, len), (len / 3, len / 3 + 1), (len / 7, len - len / 5)] {
                    let mut out = vec![0u8; (b - a) as usize];
                    t.decompress_range(a, &mut out).expect("range");
                    assert_eq!(
                        out,
                        raw[a as usize..b as usize],
                        "layer {n} {kind:?} {a}..{b}"
                    );
                }
                assert!(matches!(t.get(len), Err(CompressError::OutOfRange { .. })));
                get_many_agrees(&t, raw, n, n <= 10);
            }
        }
    }
}

#[test]
fn a_full_form_of_bounds_out_of_order_or_the_wrong_size_is_refused() {
    let (s, mut lo, hi) = (table("scores", 6), table("lower", 6), table("upper", 6));
    let lay = V4Settings::default();
    assert!(encode_full(&s, &lo[1..], &hi, &AWARI, 6, lay, 128).is_err());
    assert!(encode_full(&s, &lo, &hi, &AWARI, 6, lay, 8).is_err());
    let g = (0..s.len())
        .find(|&g| s[g] as i8 > -6)
        .expect("a score above -6");
    lo[g] = (s[g] as i8 + 1) as u8;
    assert!(encode_full(&s, &lo, &hi, &AWARI, 6, lay, 128).is_err());
}

#[test]
fn a_table_of_values_out_of_range_or_the_wrong_size_is_refused() {
    let mut raw = scores(5);
    assert!(encode_scores(&raw[1..], &AWARI, 5, V4Settings::default()).is_err());
    raw[7] = 6;
    assert!(encode_scores(&raw, &AWARI, 5, V4Settings::default()).is_err());
    let bad = V4Settings {
        block_bytes: 8,
        ..V4Settings::default()
    };
    assert!(encode_scores(&scores(5), &AWARI, 5, bad).is_err());
}

/// Batches of probes, sorted, repeated and in any order, (with `every`)
/// every entry once in order, and an index past the end.
fn get_many_agrees(t: &CompressedTable<&[u8]>, raw: &[u8], n: u32, every: bool) {
    let len = raw.len() as u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(len + n as u64);
    let mut any: Vec<u64> = (0..rng.gen_range(1..300))
        .map(|_| rng.gen_range(0..len))
        .collect();
    let mut sorted = any.clone();
    sorted.sort_unstable();
    any.extend_from_slice(&sorted[..sorted.len() / 2]);
    let every: Vec<u64> = if every {
        (0..len).collect()
    } else {
        Vec::new()
    };
    for gs in [any, sorted, every, Vec::new()] {
        let mut out = vec![0i8; gs.len()];
        t.get_many(&gs, &mut out).expect("get_many");
        for (k, &g) in gs.iter().enumerate() {
            assert_eq!(out[k], raw[g as usize] as i8, "layer {n}: batch entry {g}");
        }
    }
    let mut out = [0i8; 2];
    assert!(matches!(
        t.get_many(&[0, len], &mut out),
        Err(CompressError::OutOfRange { .. })
    ));
}

/// Probes entries of a damaged file that opens: each the right value or
/// an error, alone and in a batch; and the whole table must not decode to
/// other values without an error.
fn probe_damaged(file: &[u8], raw: &[u8]) -> bool {
    let Ok(t) = open(file) else { return false };
    let mut rng = rand::rngs::StdRng::seed_from_u64(file.len() as u64);
    let mut refused = false;
    for _ in 0..3000 {
        let g = rng.gen_range(0..raw.len() as u64);
        match t.get(g) {
            Ok(v) => assert_eq!(v, raw[g as usize] as i8, "entry {g}: a wrong value"),
            Err(_) => refused = true,
        }
    }
    let gs: Vec<u64> = (0..raw.len() as u64).step_by(3).collect();
    let mut out = vec![0i8; gs.len()];
    if t.get_many(&gs, &mut out).is_ok() {
        for (&g, v) in gs.iter().zip(out) {
            assert_eq!(v, raw[g as usize] as i8, "batch entry {g}: a wrong value");
        }
    } else {
        refused = true;
    }
    if let Ok(all) = t.decompress_all() {
        assert_eq!(
            all, raw,
            "a damaged file decoded to other values without an error"
        );
    }
    refused
}

#[test]
fn damage_is_an_error_or_a_value_in_range_never_a_panic() {
    let n = 10;
    let raw = scores(n);
    let lay = V4Settings {
        block_bytes: 32,
        ..V4Settings::default()
    };
    let file = encode_scores(&raw, &AWARI, n, lay).expect("encode");
    let data_start = file.len() - open(&file).unwrap().blocks() as usize * 32;
    // Every byte of header, index and model, three ways.
    for at in 0..data_start {
        for x in [0x01u8, 0x80, 0xff] {
            let mut f = file.clone();
            f[at] ^= x;
            assert!(open(&f).is_err(), "byte {at} ^ {x:#x} opened");
        }
    }
    // Random damage to the blocks, one to four bytes at a time.
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    for _ in 0..300 {
        let mut f = file.clone();
        for _ in 0..rng.gen_range(1..=4) {
            let at = rng.gen_range(data_start..f.len());
            f[at] ^= rng.gen_range(1..=255u8);
        }
        assert!(
            probe_damaged(&f, &raw),
            "no probe or batch found the damage"
        );
        let t = open(&f).expect("the blocks are not in the checksum");
        assert!(
            t.decompress_all().is_err(),
            "damaged blocks decoded without an error"
        );
    }
    // Truncations and extensions.
    for len in [0, 10, 95, 96, data_start - 1, data_start, file.len() - 1] {
        assert!(open(&file[..len]).is_err(), "truncated to {len}");
    }
    let mut longer = file.clone();
    longer.push(0);
    assert!(open(&longer).is_err());
    // Another rule set asked for.
    let mut t = open(&file).unwrap();
    let want = Expected {
        rules: awari_egdb::rules::ABAPA,
        kind: Kind::Score,
        layer: n,
        raw_xxh3: awari_egdb::format::Checksum(xxhash_rust::xxh3::xxh3_64(&raw)),
    };
    assert!(matches!(
        t.check_table(&want),
        Err(CompressError::Mismatch { .. })
    ));
    let want = Expected {
        rules: AWARI,
        ..want
    };
    t.check_table(&want).expect("the table it holds");
    // Random files.
    for len in [96usize, 200, 5000] {
        let mut f: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        f[..8].copy_from_slice(b"AWARIZST");
        f[8..12].copy_from_slice(&4u32.to_le_bytes());
        assert!(open(&f).is_err());
    }
}

/// `file` as written before group checks: flag bit 1 clear, no checks,
/// the blocks moved up to where the padding after the models ends, the
/// header's checksum made again (as a forger would).
fn without_group_checks(file: &[u8]) -> Vec<u8> {
    let t = open(file).expect("opens");
    let h = t.header();
    let f = h.v4();
    assert!(f.group_checks, "this release writes group checks");
    let models_end = (h.index_end() + f.model_bytes as u64) as usize;
    let mut out = file[..models_end].to_vec();
    out[81] &= !2;
    out.resize(models_end.next_multiple_of(64), 0);
    out.extend_from_slice(&file[h.data_start() as usize..]);
    common::forge::forge(&mut out);
    out
}

#[test]
fn a_file_without_group_checks_is_probed_whole_block_and_its_damage_found() {
    let n = 9;
    let raw = scores(n);
    let lay = V4Settings {
        block_bytes: 32,
        ..V4Settings::default()
    };
    let file = without_group_checks(&encode_scores(&raw, &AWARI, n, lay).expect("encode"));
    let t = open(&file).expect("a file without group checks opens");
    assert!(!t.header().v4().group_checks);
    for g in 0..raw.len() as u64 {
        assert_eq!(t.get(g).expect("probe"), raw[g as usize] as i8, "entry {g}");
    }
    get_many_agrees(&t, &raw, n, true);
    assert_eq!(t.decompress_all().expect("decodes"), raw);
    let data_start = t.header().data_start() as usize;
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    for _ in 0..100 {
        let mut f = file.clone();
        let at = rng.gen_range(data_start..f.len());
        f[at] ^= rng.gen_range(1..=255u8);
        assert!(probe_damaged(&f, &raw), "no probe or batch found byte {at}");
    }
}

#[test]
fn a_damaged_group_refuses_every_probe_of_it_and_no_other() {
    let n = 10;
    let raw = scores(n);
    let last = raw.len() as u64 - 1;
    // Groups of 85 blocks, of 40, and of one (blocks of 4 KiB).
    for block_bytes in [48u32, 100, 4096] {
        let lay = V4Settings {
            block_bytes,
            ..V4Settings::default()
        };
        let mut file = encode_scores(&raw, &AWARI, n, lay).expect("encode");
        let f = open(&file).expect("opens").header().v4().clone();
        assert!(f.group_checks && f.groups() > 1, "{block_bytes}: {f:?}");
        // The file's last byte lies in its last block, in the last group.
        *file.last_mut().unwrap() ^= 0x40;
        let t = open(&file).expect("the blocks are not in the header's checksum");
        for _ in 0..2 {
            assert!(
                t.get(last).is_err(),
                "{block_bytes}: the last entry answered"
            );
            assert_eq!(t.get(0).expect("another group"), raw[0] as i8);
        }
        let mut out = [0i8; 2];
        assert!(t.get_many(&[0, last], &mut out).is_err());
        t.get_many(&[0, 1], &mut out).expect("another group");
        assert_eq!(out, [raw[0] as i8, raw[1] as i8]);
    }
}

#[test]
fn cli_format_4_compresses_probes_verifies_and_decompresses() {
    let dir = common::full_copy("awari-v4-cli-");
    let d = common::s(&dir);
    let before: Vec<Vec<u8>> = (0..=common::MAX).map(scores).collect();
    let q = [
        "query", "--db", d, "1", "1", "1", "1", "1", "2", "2", "0", "0", "0", "0", "0",
    ];
    let want = common::ok(&q);
    common::ok(&[
        "compress",
        "--db",
        d,
        "--format",
        "4",
        "--scores-only",
        "--remove-raw",
        "--quiet",
    ]);
    for n in 0..=common::MAX {
        assert!(
            !dir.join(format!("scores.{n}")).exists(),
            "scores.{n} removed"
        );
        assert!(dir.join(format!("scores.{n}.zst")).exists());
    }
    assert_eq!(
        common::ok(&q),
        want,
        "a query on format 4 equals the raw folder's"
    );
    common::ok(&["verify", "--db", d, "--checksums", "known"]);
    common::ok(&["decompress", "--db", d, "--quiet"]);
    for n in 0..=common::MAX {
        let back = std::fs::read(dir.join(format!("scores.{n}"))).expect("written back");
        assert_eq!(
            back, before[n as usize],
            "layer {n} written back byte for byte"
        );
    }
    for bad in [
        vec!["compress", "--db", d, "--format", "4", "--block-bytes", "8"],
        vec!["compress", "--db", d, "--block-bytes", "5000"],
        vec![
            "compress",
            "--db",
            d,
            "--format",
            "4",
            "--block-size",
            "5000",
        ],
    ] {
        common::usage_error(&bad);
    }
}

#[test]
fn cli_format_4_full_form_compresses_probes_verifies_checks_and_decompresses() {
    let dir = common::full_copy("awari-v4-full-cli-");
    let d = common::s(&dir);
    let kinds = [Kind::Score, Kind::Lower, Kind::Upper];
    let before: Vec<Vec<Vec<u8>>> = (0..=common::MAX)
        .map(|n| kinds.iter().map(|k| table(k.stem(), n)).collect())
        .collect();
    let q = [
        "query", "--db", d, "1", "1", "1", "1", "1", "2", "2", "0", "0", "0", "0", "0",
    ];
    let want = common::ok(&q);
    common::ok(&[
        "compress",
        "--db",
        d,
        "--format",
        "4",
        "--remove-raw",
        "--quiet",
    ]);
    for n in 0..=common::MAX {
        for k in kinds {
            assert!(!dir.join(k.file_name(n)).exists(), "{k:?}.{n} removed");
        }
        let file = std::fs::read(dir.join(format!("tables.{n}.zst"))).expect("the full form");
        assert_eq!(
            &file[8..13],
            &[4, 0, 0, 0, 0b111],
            "layer {n}: format 4, full form"
        );
    }
    assert_eq!(
        common::ok(&q),
        want,
        "a query on the full form equals the raw folder's"
    );
    common::ok(&["verify", "--db", d, "--checksums", "known"]);
    common::ok(&["check", "--db", d, "--layers", "0..=8"]);
    common::ok(&["decompress", "--db", d, "--quiet"]);
    for n in 0..=common::MAX {
        for (k, raw) in kinds.iter().zip(&before[n as usize]) {
            let back = std::fs::read(dir.join(k.file_name(n))).expect("written back");
            assert!(back == *raw, "{k:?}.{n} written back byte for byte");
        }
    }
}

#[test]
fn the_builder_reads_its_lower_layers_from_the_full_form() {
    use awari_egdb::build;
    use awari_egdb::codec::Settings;
    use awari_egdb::pack::{self, CompressOptions, Quiet};
    let dir = common::scratch("awari-v4-full-build-");
    let mut opts = common::options(&dir, 6, true);
    build::build(&opts, &awari_egdb::solve::Silent).expect("build 0..=6");
    let copts = CompressOptions {
        settings: Settings {
            block_bytes: 32,
            scores_only: false,
            ..Settings::random_access()
        },
        layers: 0..=48,
        remove_raw: true,
    };
    pack::compress_folder(&dir, &copts, &Quiet).expect("compress");
    for n in 0..=6 {
        assert!(dir.join(format!("tables.{n}.zst")).exists());
        assert!(!dir.join(format!("lower.{n}")).exists());
    }
    // The compact solver streams the full-form lower layers.
    opts.max_seeds = 7;
    let r = build::build(&opts, &awari_egdb::solve::Silent).expect("build 7");
    assert_eq!(r.built, vec![7]);
    for k in [Kind::Score, Kind::Lower, Kind::Upper] {
        let built = std::fs::read(dir.join(k.file_name(7))).expect("built");
        assert!(
            built == table(k.stem(), 7),
            "{k:?}.7 as built from raw layers"
        );
    }
}

#[test]
fn the_full_form_of_layers_13_and_14_round_trips_at_two_layouts() {
    use common::compress::{raw_table, MAX};
    for n in common::MAX + 1..=MAX {
        let raws = [Kind::Score, Kind::Lower, Kind::Upper].map(|k| (k, raw_table(k, n)));
        for (lay, env_bytes) in [(V4Settings::default(), 256), (layouts()[3], 4096)] {
            let file = encode_full(
                &raws[0].1, &raws[1].1, &raws[2].1, &AWARI, n, lay, env_bytes,
            )
            .expect("encode");
            let mut t = open(&file).expect("opens");
            let mut rng = rand::rngs::StdRng::seed_from_u64(n as u64);
            for (kind, raw) in &raws {
                t.serve(*kind).expect("held");
                assert!(
                    t.decompress_all().expect("decodes") == *raw,
                    "layer {n} {kind:?}"
                );
                for _ in 0..3000 {
                    let g = rng.gen_range(0..raw.len() as u64);
                    assert_eq!(
                        t.get(g).expect("get"),
                        raw[g as usize] as i8,
                        "layer {n} {kind:?} {g}"
                    );
                }
            }
        }
    }
}
