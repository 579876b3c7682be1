//! Format 4's reader under random damage: hundreds of thousands of
//! mutations of header, sparse index, block counts and models (the full
//! form and the scores alone), every other one with the checksum forged so
//! that the other checks are reached; random truncations; random bytes
//! behind a sound header, and random blocks behind a sound header, index
//! and model. Never a panic, never a table that decodes whole to other
//! values. Each damaged field of the full form is in
//! `compress_v4_damage.rs`, damaged blocks in `compress_v4.rs`; the
//! forging helpers are in `common/forge.rs`.

mod common;

use awari_egdb::codec::v4::V4_HEADER_BYTES;
use common::forge::{
    forge, parse_both, parts, rounds, sample_full, sample_scores, try_mutation, variant, Outcomes,
    Sample,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[test]
fn random_mutations_of_the_full_form_never_panic() {
    mutate(sample_full(), 0x4a7a4, rounds(300_000));
}

#[test]
fn random_mutations_of_the_scores_alone_never_panic() {
    mutate(sample_scores(), 0x4a7a5, rounds(300_000));
}

/// Counts of [`mutate`]'s rounds.
#[derive(Default)]
struct Tally {
    opened: usize,
    forged_opened: usize,
    /// The opening errors of the rounds without and with a forged
    /// checksum.
    errors: [Outcomes; 2],
    /// The reads of the files that opened.
    reads: Outcomes,
    /// Rounds of each kind of damage: block counts moved, model bytes
    /// swapped, random bytes.
    modes: [usize; 3],
}

/// `total` rounds of damage to what comes before the blocks of the file
/// of `sample`, every other round with a forged checksum: 1 to 4 random
/// bytes changed (random values, single bits, small changes), or entries
/// moved between the counts of two blocks (the counts still add up to the
/// layer), or two nearby bytes of the models swapped. The rounds are
/// shared by two threads (seeds `seed` and `seed + 1`).
fn mutate((raws, z): &Sample, seed: u64, total: usize) {
    let parts: Vec<Tally> = std::thread::scope(|sc| {
        let workers: Vec<_> = (0..2)
            .map(|w| sc.spawn(move || mutate_part(raws, z, seed + w, total / 2)))
            .collect();
        workers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut all = Tally::default();
    for t in parts {
        all.opened += t.opened;
        all.forged_opened += t.forged_opened;
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
    let Tally {
        opened,
        forged_opened,
        errors,
        reads,
        modes,
    } = all;
    eprintln!(
        "{total} mutations before the blocks ({} random bytes, {} block counts moved, {} \
         model bytes swapped): {opened} opened ({forged_opened} with a forged checksum)",
        modes[2], modes[0], modes[1]
    );
    eprintln!("  errors without a forged checksum: {:?}", errors[0]);
    eprintln!("  errors with a forged checksum: {:?}", errors[1]);
    eprintln!("  reads of the files that opened: {reads:?}");
    // Without a forged checksum, a changed header, index, count or model
    // never opens.
    assert_eq!(opened, forged_opened);
    assert!(
        errors[0].get("IndexChecksum").is_some_and(|&k| k > 0),
        "{:?}",
        errors[0]
    );
    // With a forged checksum the checksum never finds them, the other
    // checks do.
    let forged = &errors[1];
    assert!(!forged.contains_key("IndexChecksum"), "{forged:?}");
    for kind in [
        "BadMagic",
        "UnsupportedVersion",
        "OffsetOutOfRange",
        "HeaderField(tables)",
        "HeaderField(rule set)",
        "HeaderField(layer)",
        "HeaderField(model)",
    ] {
        assert!(
            forged.get(kind).is_some_and(|&k| k > 0),
            "no forged mutation reached {kind}: {forged:?}"
        );
    }
    // Some damage only the blocks find (moved counts, other classes or
    // frequencies): those files open, and their blocks decode to the raw
    // values or are stream errors.
    assert!(forged_opened > 0);
    assert!(reads.get("Stream").is_some_and(|&k| k > 0), "{reads:?}");
    assert!(reads.get("right").is_some_and(|&k| k > 0), "{reads:?}");
    for kind in reads.keys() {
        assert!(
            ["right", "wrong", "Stream"].contains(&kind.as_str()),
            "{reads:?}"
        );
    }
}

/// `total` rounds of [`mutate`] from `seed`.
fn mutate_part(raws: &[Vec<u8>; 3], z: &[u8], seed: u64, total: usize) -> Tally {
    let p = parts(z);
    let counts = p.read_counts(z);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut m = z.to_vec();
    let mut tally = Tally::default();
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
                let j = rng.gen_range(0..p.blocks - 1);
                let d = rng.gen_range(1..=4u32);
                let mut c = counts.clone();
                let (from, to) = if rng.gen() { (j, j + 1) } else { (j + 1, j) };
                if c[from] <= d || c[to] + d > p.cap {
                    continue;
                }
                c[from] -= d;
                c[to] += d;
                changed.extend(p.write_counts(&mut m, &c));
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
                        0 | 1 => rng.gen_range(0..V4_HEADER_BYTES),
                        2 => rng.gen_range(p.index..p.counts),
                        3 | 4 => rng.gen_range(p.counts..p.models),
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
        tally.modes[mode] += 1;
        let forged = round % 2 == 1;
        if forged {
            forge(&mut m);
        }
        // Read the block of the change (its count's, for moved counts) and
        // its neighbours, and one more; every 32nd file that opens is
        // decoded whole.
        let near = if changed[0] >= p.counts && changed[0] < p.envelope {
            ((changed[0] - p.counts) * 8 / 10).min(p.blocks - 1)
        } else {
            rng.gen_range(0..p.blocks)
        };
        let blocks = [
            near.saturating_sub(1),
            near,
            (near + 1).min(p.blocks - 1),
            rng.gen_range(0..p.blocks),
        ];
        let whole = tally.opened % 32 == 0;
        match try_mutation(&m, raws, &blocks, whole, &mut tally.reads) {
            Ok(()) => {
                tally.opened += 1;
                tally.forged_opened += usize::from(forged);
            }
            Err(e) => {
                *tally.errors[usize::from(forged)]
                    .entry(variant(&e))
                    .or_default() += 1
            }
        }
        for &a in &changed {
            m[a] = z[a];
        }
        m[88..96].copy_from_slice(&z[88..96]);
    }
    debug_assert_eq!(m, z);
    tally
}

#[test]
fn truncations_and_random_bytes_are_errors_random_blocks_never_a_wrong_table() {
    for (form, (raws, z), seed) in [
        ("full form", sample_full(), 0x4a7a6u64),
        ("scores alone", sample_scores(), 0x4a7a7),
    ] {
        let p = parts(z);
        let mut rng = StdRng::seed_from_u64(seed);
        // Random truncations: the file ends with its last block.
        let mut truncated = Outcomes::new();
        for _ in 0..rounds(20_000) {
            let len = rng.gen_range(0..z.len());
            let e = parse_both(&z[..len]).expect_err("a truncated file opened");
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
        // table.
        let mut headed = Outcomes::new();
        for _ in 0..rounds(20_000) {
            let len = rng.gen_range(V4_HEADER_BYTES..2 * p.data);
            let mut r: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            r[..V4_HEADER_BYTES].copy_from_slice(&z[..V4_HEADER_BYTES]);
            forge(&mut r);
            let e = parse_both(&r).expect_err("random bytes behind a header opened");
            *headed.entry(variant(&e)).or_default() += 1;
        }
        eprintln!("{form}: random bytes behind a sound header: {headed:?}");
        assert!(
            headed.keys().any(|k| k.starts_with("Truncated")),
            "{headed:?}"
        );

        // Random blocks behind a sound header, index and model: a table
        // that never decodes whole.
        let mut reads = Outcomes::new();
        for _ in 0..rounds(500) {
            let mut r = z.clone();
            rng.fill(&mut r[p.data..]);
            let blocks: Vec<usize> = (0..4).map(|_| rng.gen_range(0..p.blocks)).collect();
            try_mutation(&r, raws, &blocks, true, &mut reads)
                .expect("random blocks behind a sound index");
            let t = common::compress::parse(&r).expect("opens");
            assert!(t.decompress_all().is_err(), "{form}: random blocks decoded");
        }
        eprintln!("{form}: random blocks, ranges read: {reads:?}");
        assert!(reads.get("Stream").is_some_and(|&k| k > 0), "{reads:?}");
    }
}
