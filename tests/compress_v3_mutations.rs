//! The file format's parser under random damage, format version 3:
//! millions of mutations of header, index and models (full form and scores
//! alone), damaged blocks (stream errors, never other bytes than the raw
//! table's), truncations and random bytes. Each damaged field is in
//! `compress_v3_damage.rs`; the forging helpers are in `common/forge_v3.rs`.

mod common;

use awari_egdb::codec::{v3, CompressError, CompressedTable};
use common::compress::{parse, KINDS};
use common::forge::{rounds, variant};
use common::forge_v3::{
    forge3, parse_both, sample_v3, sample_v3_scores, try_mutation_v3, v3_parts, v3_streams,
    Outcomes, Pread, Served,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

#[test]
fn millions_of_random_v3_header_index_and_model_mutations_never_panic() {
    let (raws, z) = sample_v3();
    mutate_v3(raws, z, 0x2a7a4, rounds(2_000_000));
}

#[test]
fn a_million_random_v3_scores_only_mutations_never_panic() {
    let (raws, z) = sample_v3_scores();
    mutate_v3(raws, z, 0x2a7a5, rounds(1_000_000));
}

/// `total` rounds of damage to header, index and models of the version 3
/// file `z`, every other round with a forged checksum: 1 to 4 random bytes
/// changed (random values, single bits, small changes), or two stream
/// lengths of one super-block changed by the same multiple of 4 in
/// opposite directions (the coarse index still adds up), or two nearby
/// bytes of the models swapped (frequencies traded keep their sum).
/// The rounds are shared by two threads (seeds `seed` and `seed + 1`).
fn mutate_v3(raws: &[Vec<u8>; 3], z: &[u8], seed: u64, total: usize) {
    let parts: Vec<V3Tally> = std::thread::scope(|sc| {
        let workers: Vec<_> = (0..2)
            .map(|w| sc.spawn(move || mutate_v3_part(raws, z, seed + w, total / 2)))
            .collect();
        workers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut all = V3Tally::default();
    for t in parts {
        all.parsed += t.parsed;
        all.forged_parsed += t.forged_parsed;
        for (a, b) in all.errors.iter_mut().zip(t.errors) {
            for (kind, k) in b {
                *a.entry(kind).or_default() += k;
            }
        }
        for (kind, k) in t.reads {
            *all.reads.entry(kind).or_default() += k;
        }
        for (a, b) in all.modes.iter_mut().zip(t.modes) {
            *a += b;
        }
    }
    let V3Tally {
        parsed,
        forged_parsed,
        errors,
        reads,
        modes,
    } = all;
    eprintln!(
        "{total} mutations of a version 3 file's header, index and models \
         ({} random bytes, {} stream lengths moved, {} model bytes swapped): \
         {parsed} parsed ({forged_parsed} with a forged checksum)",
        modes[2], modes[0], modes[1]
    );
    eprintln!("  errors without a forged checksum: {:?}", errors[0]);
    eprintln!("  errors with a forged checksum: {:?}", errors[1]);
    eprintln!("  reads of the files that parsed: {reads:?}");
    // Without a forged checksum, a changed header, index or model never
    // parses.
    assert_eq!(parsed, forged_parsed);
    assert!(
        errors[0].get("IndexChecksum").is_some_and(|&k| k > 0),
        "{:?}",
        errors[0]
    );
    // With a forged checksum the checksum never finds them, the other
    // checks do: magic, version, offsets and stream lengths, every header
    // field, the models.
    let forged = &errors[1];
    assert!(!forged.contains_key("IndexChecksum"), "{forged:?}");
    for kind in [
        "BadMagic",
        "UnsupportedVersion",
        "OffsetOutOfRange",
        "HeaderField(tables)",
        "HeaderField(model variant)",
        "HeaderField(reserved)",
        "HeaderField(rule set)",
        "HeaderField(layer)",
        "HeaderField(entries)",
        "HeaderField(block size)",
        "HeaderField(models)",
    ] {
        assert!(
            forged.get(kind).is_some_and(|&k| k > 0),
            "no forged mutation reached {kind}: {forged:?}"
        );
    }
    // Some damage only the blocks find (moved stream lengths, traded
    // frequencies): those files parse, and their damaged blocks are stream
    // errors (any wrong bytes failed `read_v3_blocks`).
    assert!(forged_parsed > 0);
    assert!(reads.get("Stream").is_some_and(|&k| k > 0), "{reads:?}");
    assert!(reads.get("right").is_some_and(|&k| k > 0), "{reads:?}");
    for kind in reads.keys() {
        assert!(kind == "right" || kind == "Stream", "{reads:?}");
    }
}

/// Counts of [`mutate_v3`]'s rounds.
#[derive(Default)]
struct V3Tally {
    parsed: usize,
    forged_parsed: usize,
    /// The parse errors of the rounds without and with a forged checksum.
    errors: [BTreeMap<String, usize>; 2],
    /// The reads of the files that parsed.
    reads: Outcomes,
    /// Rounds of each kind of damage: stream lengths moved, model bytes
    /// swapped, random bytes.
    modes: [usize; 3],
}

/// `total` rounds of [`mutate_v3`] from `seed`.
fn mutate_v3_part(raws: &[Vec<u8>; 3], z: &[u8], seed: u64, total: usize) -> V3Tally {
    let p = v3_parts(z);
    let k = p.streams;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = z.to_vec();
    let mut tally = V3Tally::default();
    let V3Tally {
        parsed,
        forged_parsed,
        errors,
        reads,
        modes,
    } = &mut tally;
    let mut changed = Vec::with_capacity(8);
    for round in 0..total {
        changed.clear();
        let mode = match rng.gen_range(0..8) {
            0 => 0,
            1 => 1,
            _ => 2,
        };
        match mode {
            0 => {
                let j = rng.gen_range(0..p.blocks as usize * k);
                let same_super =
                    |i: usize| i / k / v3::SUPER as usize == j / k / v3::SUPER as usize;
                let i = if j + 1 < p.blocks as usize * k && same_super(j + 1) {
                    j + 1
                } else {
                    j - 1
                };
                let d = 4 * rng.gen_range(1..=4) * if rng.gen() { 1 } else { -1 };
                let (aj, ai) = (p.lens + 2 * j, p.lens + 2 * i);
                let (lj, li) = (
                    u16::from_le_bytes([m[aj], m[aj + 1]]) as i32 + d,
                    u16::from_le_bytes([m[ai], m[ai + 1]]) as i32 - d,
                );
                if lj < 8 || li < 8 || lj > 65535 || li > 65535 {
                    continue;
                }
                m[aj..aj + 2].copy_from_slice(&(lj as u16).to_le_bytes());
                m[ai..ai + 2].copy_from_slice(&(li as u16).to_le_bytes());
                changed.extend([aj, aj + 1, ai, ai + 1]);
            }
            1 => {
                let a = rng.gen_range(p.models..p.data - 1);
                let b = (a + rng.gen_range(1..=6)).min(p.data - 1);
                m.swap(a, b);
                changed.extend([a, b]);
            }
            _ => {
                for _ in 0..rng.gen_range(1..=4) {
                    let at = match rng.gen_range(0..8) {
                        0 | 1 => rng.gen_range(0..v3::V3_HEADER_BYTES),
                        2 => rng.gen_range(p.index..p.lens),
                        3..=5 => rng.gen_range(p.lens..p.models),
                        _ => rng.gen_range(p.models..p.data),
                    };
                    changed.push(at);
                    m[at] = match rng.gen_range(0..3) {
                        0 => rng.gen(),
                        1 => m[at] ^ (1 << rng.gen_range(0..8)),
                        _ => m[at].wrapping_add(rng.gen_range(1..4)),
                    };
                }
            }
        }
        if changed.iter().all(|&a| m[a] == z[a]) {
            for &a in &changed {
                m[a] = z[a];
            }
            continue; // no change after all
        }
        modes[mode] += 1;
        let forged = round % 2 == 1;
        if forged {
            forge3(&mut m);
        }
        // Read the blocks a change of the index could have moved, and one
        // more; a quarter of the rounds through `read_at`.
        let near = p.block_near(changed[0]);
        let blocks = [
            near.saturating_sub(1),
            near,
            near + 1,
            rng.gen_range(0..p.blocks),
        ];
        match try_mutation_v3(&m, raws, &blocks, round % 8 < 2, reads) {
            Ok(()) => {
                *parsed += 1;
                *forged_parsed += usize::from(forged);
            }
            Err(e) => *errors[usize::from(forged)].entry(variant(&e)).or_default() += 1,
        }
        for &a in &changed {
            m[a] = z[a];
        }
        m[80..88].copy_from_slice(&z[80..88]);
    }
    debug_assert_eq!(m, z);
    tally
}

#[test]
fn damaged_v3_blocks_are_stream_errors_never_wrong_bytes() {
    let samples = [
        ("full form", sample_v3(), 0x2a7a6, rounds(100_000)),
        ("scores alone", sample_v3_scores(), 0x2a7a7, rounds(50_000)),
    ];
    for (form, (raws, z), seed, total) in samples {
        let p = v3_parts(z);
        let streams = v3_streams(z);
        let mut rng = StdRng::seed_from_u64(seed);
        let mut m = z.clone();
        // Per damaged stream (scores or envelope) and table read: right
        // bytes, or the error.
        let mut outcomes: BTreeMap<(&str, &str), Outcomes> = BTreeMap::new();
        let mut changed = Vec::with_capacity(4);
        for round in 0..total {
            // 1 to 4 bytes of one stream: single bits flipped, or bytes
            // replaced by random ones.
            let (block, envelope, range) = streams[rng.gen_range(0..streams.len())].clone();
            changed.clear();
            for _ in 0..rng.gen_range(1..=4) {
                let at = rng.gen_range(range.clone());
                changed.push(at);
                m[at] = if rng.gen() {
                    m[at] ^ (1 << rng.gen_range(0..8))
                } else {
                    rng.gen()
                };
            }
            if changed.iter().all(|&a| m[a] == z[a]) {
                continue;
            }
            let pread = round % 2 == 1;
            let r = catch_unwind(AssertUnwindSafe(|| {
                let parsed = if pread {
                    CompressedTable::parse(Pread(&m)).map(|t| Box::new(t) as Box<dyn Served>)
                } else {
                    parse(&m).map(|t| Box::new(t) as Box<dyn Served>)
                };
                let mut t = parsed.unwrap_or_else(|e| {
                    panic!(
                        "{form}, seed {seed:#x}, round {round}: \
                         damaged block {block} broke the index: {e:?}"
                    )
                });
                let mut got = Vec::new();
                for (k, kind) in KINDS.into_iter().enumerate() {
                    if !t.holds(kind) {
                        continue;
                    }
                    let raw = &raws[k]
                        [block as usize * 64..(block as usize * 64 + 64).min(raws[k].len())];
                    let g = block * 64 + rng.gen_range(0..raw.len() as u64);
                    let (whole, one) = t.read(kind, block, raw.len(), g);
                    match &whole {
                        Ok(v) => assert!(
                            v == raw,
                            "{form}, seed {seed:#x}, round {round}: damaged block {block} \
                             ({} stream, bytes {changed:?}) decoded to wrong {kind:?} bytes",
                            if envelope { "envelope" } else { "scores" }
                        ),
                        Err(e) => assert!(
                            matches!(e, CompressError::Stream { block: b, .. } if *b == block),
                            "{form}, round {round}: block {block}: {e:?}"
                        ),
                    }
                    match (&whole, one) {
                        (Ok(v), Ok(x)) => assert_eq!(v[(g - block * 64) as usize], x as u8),
                        (Err(a), Err(b)) => assert_eq!(*a, b),
                        (a, b) => panic!("block {block}: {a:?}, entry {g}: {b:?}"),
                    }
                    got.push((kind, whole.is_ok()));
                }
                got
            }));
            let got = r.unwrap_or_else(|_| {
                panic!(
                    "{form}, seed {seed:#x}, round {round}: a damaged block made the reader panic"
                )
            });
            let stream = if envelope { "envelope" } else { "scores" };
            for (kind, ok) in got {
                let outcome = if ok { "right" } else { "Stream" };
                *outcomes
                    .entry((stream, kind.stem()))
                    .or_default()
                    .entry(outcome.into())
                    .or_default() += 1;
            }
            for &a in &changed {
                m[a] = z[a];
            }
        }
        eprintln!(
            "{form}: {total} damaged blocks, per damaged stream and table read: {outcomes:?}"
        );
        // A damaged stream never decodes (rANS decoding is one to one: a
        // stream that decodes to the block's values, ends in the state
        // they call for and is read to its end is the encoder's stream);
        // an intact one always does: the scores of a block whose envelope
        // is damaged.
        for ((stream, table), o) in &outcomes {
            let damaged = *stream == "scores" || *table != "scores";
            let want = if damaged { "Stream" } else { "right" };
            assert_eq!(
                o.len(),
                1,
                "{form}: {stream} stream damaged, {table} read: {o:?}"
            );
            assert!(
                o.contains_key(want),
                "{form}: {stream} stream damaged, {table} read: {o:?}"
            );
        }

        // Random truncations: the coarse index ends at the file's end.
        let mut truncated = Outcomes::new();
        for _ in 0..rounds(100_000) {
            let len = rng.gen_range(0..z.len());
            let e = parse_both(&z[..len]).expect_err("a truncated file parsed");
            *truncated.entry(variant(&e)).or_default() += 1;
        }
        eprintln!("{form}: random truncations: {truncated:?}");
        for kind in [
            "Truncated(header)",
            "Truncated(block index)",
            "Truncated(blocks)",
        ] {
            assert!(
                truncated.get(kind).is_some_and(|&k| k > 0),
                "{kind}: {truncated:?}"
            );
        }
        assert_eq!(truncated.len(), 3, "{truncated:?}");

        // Random bytes behind a sound header (checksum forged): never a
        // table. Random blocks behind a sound header, index and models:
        // a table, every block of which is a stream error.
        let mut headed = Outcomes::new();
        for _ in 0..rounds(20_000) {
            let len = rng.gen_range(v3::V3_HEADER_BYTES..2 * p.data);
            let mut r: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            r[..v3::V3_HEADER_BYTES].copy_from_slice(&z[..v3::V3_HEADER_BYTES]);
            forge3(&mut r);
            let e = parse_both(&r).expect_err("random bytes behind a header parsed");
            *headed.entry(variant(&e)).or_default() += 1;
        }
        eprintln!("{form}: random bytes behind a sound header: {headed:?}");
        assert!(headed.get("Truncated(block index)").is_some_and(|&k| k > 0));
        let mut reads = Outcomes::new();
        for _ in 0..rounds(2_000) {
            let mut r = z.clone();
            rng.fill(&mut r[p.data..]);
            let blocks: Vec<u64> = (0..4).map(|_| rng.gen_range(0..p.blocks)).collect();
            try_mutation_v3(&r, raws, &blocks, rng.gen(), &mut reads)
                .expect("random blocks behind a sound index");
        }
        eprintln!("{form}: random blocks: {reads:?}");
        assert_eq!(reads.keys().collect::<Vec<_>>(), ["Stream"], "{reads:?}");
    }
}
