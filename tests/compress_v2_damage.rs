//! The file format's parser under damage, format versions 1 and 2: a
//! typed error for every damaged header field, and for a few million
//! random mutations of headers, block indexes, dictionaries and blocks,
//! and random files. The forging helpers are in `common/forge.rs`.

mod common;

use awari_egdb::codec::{CompressError, ZSTD_HEADER_BYTES};
use awari_egdb::format::MAX_BLOCK_SIZE;
use common::compress::parse;
use common::forge::{forge, rounds, sample, sample_dict, set, try_mutation, u64_at, variant};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

#[test]
fn each_damaged_header_field_has_its_typed_error() {
    let (raw, z) = sample();
    let t = parse(z).unwrap();
    assert_eq!(t.decompress_all().unwrap(), *raw);
    let blocks = t.blocks();
    let data_start = ZSTD_HEADER_BYTES + 8 * (blocks as usize + 1);
    type Check = fn(&CompressError) -> bool;
    let cases: Vec<(&str, Vec<u8>, Check)> = vec![
        ("empty", vec![], |e| {
            matches!(e, CompressError::Truncated { part: "header", .. })
        }),
        ("short header", z[..40].to_vec(), |e| {
            matches!(e, CompressError::Truncated { part: "header", .. })
        }),
        ("magic", set(z, 0, b"AWARIZSX"), |e| {
            *e == CompressError::BadMagic
        }),
        ("version", set(z, 8, &5u32.to_le_bytes()), |e| {
            *e == CompressError::UnsupportedVersion(5)
        }),
        // Version 3's header has its tables byte where this one has its
        // table (0, not a set of tables).
        ("version 3", set(z, 8, &3u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "tables",
                    ..
                }
            )
        }),
        (
            "version 2 without a dictionary",
            set(z, 8, &2u32.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::HeaderField {
                        field: "dictionary",
                        ..
                    }
                )
            },
        ),
        ("dictionary in version 1", set(z, 52, &[1]), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "reserved",
                    ..
                }
            )
        }),
        ("table", set(z, 12, &[3]), |e| {
            matches!(e, CompressError::HeaderField { field: "table", .. })
        }),
        ("reserved", set(z, 13, &[1]), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "reserved",
                    ..
                }
            )
        }),
        ("rule set", set(z, 16, b"awari-vu2003"), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "rule set",
                    ..
                }
            )
        }),
        ("layer 47", set(z, 32, &47u32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "layer", .. })
        }),
        ("layer 49", set(z, 32, &49u32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "layer", .. })
        }),
        ("other layer", set(z, 32, &9u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "entries",
                    ..
                }
            )
        }),
        ("entries", set(z, 40, &u64::MAX.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "entries",
                    ..
                }
            )
        }),
        ("block size 0", set(z, 36, &0u32.to_le_bytes()), |e| {
            matches!(
                e,
                CompressError::HeaderField {
                    field: "block size",
                    ..
                }
            )
        }),
        (
            "block size too large",
            set(z, 36, &(MAX_BLOCK_SIZE + 1).to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::HeaderField {
                        field: "block size",
                        ..
                    }
                )
            },
        ),
        ("level", set(z, 48, &1000i32.to_le_bytes()), |e| {
            matches!(e, CompressError::HeaderField { field: "level", .. })
        }),
        (
            "block size 1: index past the end",
            set(z, 36, &1u32.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            },
        ),
        (
            "truncated index",
            z[..ZSTD_HEADER_BYTES + 100].to_vec(),
            |e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            },
        ),
        ("truncated blocks", z[..z.len() - 1].to_vec(), |e| {
            matches!(e, CompressError::Truncated { part: "blocks", .. })
        }),
        ("trailing bytes", [&z[..], &[0u8]].concat(), |e| {
            matches!(e, CompressError::OffsetOutOfRange { .. })
        }),
        (
            "first offset",
            set(z, ZSTD_HEADER_BYTES, &(data_start as u64 + 1).to_le_bytes()),
            |e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. }),
        ),
        (
            "decreasing offset",
            set(
                z,
                ZSTD_HEADER_BYTES + 8 * 5,
                &(data_start as u64).to_le_bytes(),
            ),
            |e| matches!(e, CompressError::OffsetOutOfRange { block: 5, .. }),
        ),
        (
            "index checksum",
            z[..]
                .iter()
                .enumerate()
                .map(|(i, &b)| if i == 64 { b ^ 1 } else { b })
                .collect(),
            |e| matches!(e, CompressError::IndexChecksum { .. }),
        ),
    ];
    for (what, bytes, check) in cases {
        match parse(&bytes) {
            Ok(_) => panic!("{what}: parsed"),
            Err(e) => assert!(check(&e), "{what}: unexpected error {e:?}"),
        }
    }
    // A shifted offset (index checksum forged): the blocks around it fail
    // to decompress, with their number.
    let mut shifted = z.clone();
    let at = ZSTD_HEADER_BYTES + 8 * 7;
    let off = u64_at(z, at) + 3;
    shifted[at..at + 8].copy_from_slice(&off.to_le_bytes());
    forge(&mut shifted);
    let t = parse(&shifted).unwrap();
    let mut out = vec![0u8; 256];
    assert!(matches!(
        t.decompress_block(6, &mut out),
        Err(CompressError::Zstd { block: 6, .. })
    ));
    assert!(matches!(
        t.decompress_block(7, &mut out),
        Err(CompressError::Zstd { block: 7, .. })
    ));
    assert!(t.decompress_block(8, &mut out).is_ok());
    assert!(matches!(
        t.get(6 * 256 + 5),
        Err(CompressError::Zstd { block: 6, .. })
    ));
    assert!(t.decompress_all().is_err());
    // A damaged frame: zstd's checksum of the block.
    let mut flipped = z.clone();
    let at = u64_at(z, ZSTD_HEADER_BYTES + 8 * 20) as usize + 8;
    flipped[at] ^= 0x10;
    let t = parse(&flipped).unwrap();
    assert!(matches!(
        t.get(20 * 256),
        Err(CompressError::Zstd { block: 20, .. })
    ));
}

#[test]
fn millions_of_random_header_and_index_mutations_never_panic() {
    let (raw, z) = sample();
    mutate_header_and_index(raw, z, 0x2a7a1, rounds(3_000_000));
}

#[test]
fn a_million_random_header_index_and_dictionary_mutations_never_panic() {
    let (raw, z) = sample_dict();
    let h = parse(z).unwrap().header().clone();
    assert!(h.data_start() > h.index_end());
    mutate_header_and_index(raw, z, 0x2a7a3, rounds(1_000_000));
    // A damaged dictionary byte: caught by the checksum of header, index
    // and dictionary.
    let mut m = z.clone();
    m[h.index_end() as usize + 100] ^= 4;
    assert!(matches!(
        parse(&m),
        Err(CompressError::IndexChecksum { .. })
    ));
    // A version 2 header too large a dictionary.
    let big = set(
        z,
        52,
        &(awari_egdb::format::MAX_DICTIONARY + 1).to_le_bytes(),
    );
    assert!(matches!(
        parse(&big),
        Err(CompressError::HeaderField {
            field: "dictionary",
            ..
        })
    ));
}

/// `total` rounds of 1 to 4 random bytes changed among header, index (and
/// dictionary) of `z`, every other round with a forged checksum.
fn mutate_header_and_index(raw: &[u8], z: &[u8], seed: u64, total: usize) {
    let data_start = parse(z).unwrap().header().data_start() as usize;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = z.to_vec();
    let (mut parsed, mut forged_parsed) = (0usize, 0usize);
    // The parse errors of the rounds without and with a forged checksum.
    let mut errors: [BTreeMap<String, usize>; 2] = Default::default();
    for round in 0..total {
        // 1 to 4 random bytes of header or index changed: random values,
        // single bits, or small changes to an offset.
        let mut changed = [0usize; 4];
        let k = rng.gen_range(1..=4);
        for c in changed.iter_mut().take(k) {
            let at = rng.gen_range(0..data_start);
            *c = at;
            m[at] = match rng.gen_range(0..3) {
                0 => rng.gen(),
                1 => m[at] ^ (1 << rng.gen_range(0..8)),
                _ => m[at].wrapping_add(rng.gen_range(1..4)),
            };
        }
        if changed.iter().take(k).all(|&a| m[a] == z[a]) {
            continue; // no change after all
        }
        let forged = round % 2 == 1;
        if forged {
            forge(&mut m);
        }
        // Read the blocks an index change could have moved, and one more.
        let at = changed[0];
        let near = if at >= ZSTD_HEADER_BYTES {
            ((at - ZSTD_HEADER_BYTES) / 8) as u64
        } else {
            0
        };
        let blocks = [near.saturating_sub(1), near, rng.gen_range(0..300)];
        match try_mutation(&m, raw, &blocks) {
            Ok(()) => {
                parsed += 1;
                forged_parsed += usize::from(forged);
            }
            Err(e) => *errors[usize::from(forged)].entry(variant(&e)).or_default() += 1,
        }
        for &at in changed.iter().take(k) {
            m[at] = z[at];
        }
        m[64..72].copy_from_slice(&z[64..72]);
    }
    eprintln!(
        "{total} mutations of header, index and dictionary: {parsed} parsed ({forged_parsed} with a forged checksum)"
    );
    eprintln!("  errors without a forged checksum: {:?}", errors[0]);
    eprintln!("  errors with a forged checksum: {:?}", errors[1]);
    // Without a forged checksum, a changed header or index never parses.
    assert_eq!(parsed, forged_parsed);
    // With a forged checksum the mutations reach the other checks: the
    // checksum never finds them (it is right), the checks of header fields,
    // magic, version and offsets do, and of many kinds.
    let forged = &errors[1];
    assert!(!forged.contains_key("IndexChecksum"), "{forged:?}");
    assert!(
        errors[0].get("IndexChecksum").is_some_and(|&k| k > 0),
        "{:?}",
        errors[0]
    );
    for kind in ["BadMagic", "UnsupportedVersion", "OffsetOutOfRange"] {
        assert!(
            forged.get(kind).is_some_and(|&k| k > 0),
            "no forged mutation reached {kind}: {forged:?}"
        );
    }
    // Header fields: table, layer, entries, block size, level, rule set,
    // reserved, dictionary.
    let header_fields = forged
        .keys()
        .filter(|k| k.starts_with("HeaderField"))
        .count();
    assert!(header_fields >= 5, "{forged:?}");
}

#[test]
fn random_truncations_and_block_mutations_never_panic() {
    let (raw, z) = sample();
    let t = parse(z).unwrap();
    let data_start = t.header().data_start() as usize;
    let blocks = t.blocks();
    let mut rng = StdRng::seed_from_u64(0x2a7a2);
    let total = rounds(300_000);
    for _ in 0..total {
        let len = rng.gen_range(0..z.len());
        assert!(
            try_mutation(&z[..len], raw, &[0]).is_err(),
            "truncated to {len} parsed"
        );
    }
    // Damaged block bytes: the index still parses; every read gives an
    // error or the right bytes.
    let mut m = z.clone();
    for _ in 0..rounds(100_000) {
        let at = rng.gen_range(data_start..z.len());
        m[at] = rng.gen();
        let block = (0..blocks)
            .rev()
            .find(|&b| u64_at(z, ZSTD_HEADER_BYTES + 8 * b as usize) <= at as u64)
            .unwrap();
        if let Err(e) = try_mutation(&m, raw, &[block]) {
            panic!("a damaged byte {at} in block {block} broke the index: {e:?}");
        }
        m[at] = z[at];
    }
    // Random bytes after a valid header (forged checksum), and random
    // files: every one is a typed error (a random file that parsed would
    // have had its reads checked too), counted by kind.
    let mut outcomes = [BTreeMap::<String, usize>::new(), BTreeMap::new()];
    for _ in 0..rounds(100_000) {
        let len = rng.gen_range(0..4000);
        let mut r: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let header = len >= 64 && rng.gen_bool(0.5);
        if header {
            r[..64].copy_from_slice(&z[..64]);
            forge(&mut r);
        }
        let outcome = match try_mutation(&r, raw, &[0, 1]) {
            Ok(()) => "parsed".to_string(),
            Err(e) => variant(&e),
        };
        *outcomes[usize::from(header)].entry(outcome).or_default() += 1;
    }
    let [random, headed] = &outcomes;
    eprintln!("random files: {random:?}; random bytes after a valid header: {headed:?}");
    // Random bytes are never taken for a table: a random file has no
    // magic (or not even a header)...
    for (kind, k) in random {
        assert!(
            kind == "BadMagic" || kind == "Truncated(header)",
            "{k} random file(s): {kind}"
        );
    }
    assert!(random.get("BadMagic").is_some_and(|&k| k > 0), "{random:?}");
    // ... and behind a valid header its block index is found wrong.
    assert!(!headed.contains_key("parsed"), "{headed:?}");
    for kind in ["Truncated(block index)", "Truncated(blocks)"] {
        assert!(
            headed.get(kind).is_some_and(|&k| k > 0),
            "{kind}: {headed:?}"
        );
    }
}
