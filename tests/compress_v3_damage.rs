//! The file format's parser under damage, format version 3: each damaged
//! header field, coarse index entry, stream length and model number has
//! its typed error, in the full form and the scores alone. Random damage
//! is in `compress_v3_mutations.rs`; the forging helpers are in
//! `common/forge_v3.rs`.

mod common;

use awari_egdb::codec::{v3, CompressError, CompressedTable};
use awari_egdb::format::Kind;
use common::compress::{parse, KINDS};
use common::forge::u64_at;
use common::forge_v3::{
    forge3, model_numbers, move_lens, parse_both, sample_v3, sample_v3_scores, set3, v3_parts,
    with_models, Pread,
};

#[test]
fn each_damaged_v3_header_field_has_its_typed_error() {
    let (raws, z) = sample_v3();
    let (_, zs) = sample_v3_scores();
    // The good files, table by table.
    for (kind, raw) in KINDS.into_iter().zip(raws) {
        let mut t = parse(z).unwrap();
        t.serve(kind).unwrap();
        assert_eq!(t.decompress_all().unwrap(), *raw);
        t.verify(Some(raw), &|_| {}).unwrap();
        let mut t = CompressedTable::parse(Pread(z)).unwrap();
        t.serve(kind).unwrap();
        t.verify(Some(raw), &|_| {}).unwrap();
    }
    let mut t = parse(zs).unwrap();
    assert_eq!(t.decompress_all().unwrap(), raws[0]);
    for kind in [Kind::Lower, Kind::Upper] {
        assert!(matches!(
            t.serve(kind),
            Err(CompressError::Mismatch { field: "table", .. })
        ));
    }
    let p = v3_parts(z);
    let ps = v3_parts(zs);
    let len = z.len() as u64;
    let sup = |z: &[u8], s: usize| u64_at(z, p.super_at(s));
    let stream_len =
        |b: u64, j: usize| u16::from_le_bytes([z[p.len_at(b, j)], z[p.len_at(b, j) + 1]]);
    let numbers = model_numbers(z);
    // The first model number of a kind, one byte long, that `ok` accepts.
    let number = |what: &str, first: bool, ok: &dyn Fn(u64) -> bool| {
        *numbers
            .iter()
            .find(|n| n.what == what && n.first == first && n.bytes == 1 && ok(n.value))
            .unwrap_or_else(|| panic!("no {what} in the models"))
    };
    let models = &z[p.models..p.data];
    // A header field error of `name`; one of the models that says `what`.
    let field_is = |e: &CompressError, name: &str| match e {
        CompressError::HeaderField { field, .. } => *field == name,
        _ => false,
    };
    let models_say = |e: &CompressError, what: &str| match e {
        CompressError::HeaderField { field, reason } => *field == "models" && reason.contains(what),
        _ => false,
    };
    type Check<'a> = Box<dyn Fn(&CompressError) -> bool + 'a>;
    let field = |name: &'static str| -> Check { Box::new(move |e| field_is(e, name)) };
    let model = |what: &'static str| -> Check { Box::new(move |e| models_say(e, what)) };
    let mut cases: Vec<(String, Vec<u8>, Check)> = vec![
        (
            "header cut at 80 bytes".into(),
            z[..80].to_vec(),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "header",
                        needed: 88,
                        ..
                    }
                )
            }),
        ),
        (
            "magic".into(),
            set3(z, 0, b"AWARIZSX"),
            Box::new(|e| *e == CompressError::BadMagic),
        ),
        (
            "version 5".into(),
            set3(z, 8, &5u32.to_le_bytes()),
            Box::new(|e| *e == CompressError::UnsupportedVersion(5)),
        ),
        (
            "version 0".into(),
            set3(z, 8, &0u32.to_le_bytes()),
            Box::new(|e| *e == CompressError::UnsupportedVersion(0)),
        ),
        // Read as versions 1 and 2, the tables byte 0b111 is no table.
        (
            "version 1".into(),
            set3(z, 8, &1u32.to_le_bytes()),
            field("table"),
        ),
        (
            "version 2".into(),
            set3(z, 8, &2u32.to_le_bytes()),
            field("table"),
        ),
        (
            "model variant 4".into(),
            set3(z, 13, &[4]),
            field("model variant"),
        ),
        (
            "model variant 255".into(),
            set3(z, 13, &[255]),
            field("model variant"),
        ),
        (
            "rule set".into(),
            set3(z, 16, b"awari-vu2003"),
            field("rule set"),
        ),
        (
            "rule set after its end".into(),
            set3(z, 31, b"x"),
            field("rule set"),
        ),
        (
            "rule set not UTF-8".into(),
            set3(z, 16, &[0xff]),
            field("rule set"),
        ),
        (
            "layer 47".into(),
            set3(z, 32, &47u32.to_le_bytes()),
            field("layer"),
        ),
        (
            "layer 49".into(),
            set3(z, 32, &49u32.to_le_bytes()),
            field("layer"),
        ),
        (
            "layer 2^32-1".into(),
            set3(z, 32, &u32::MAX.to_le_bytes()),
            field("layer"),
        ),
        (
            "other layer".into(),
            set3(z, 32, &9u32.to_le_bytes()),
            field("entries"),
        ),
        (
            "entries + 1".into(),
            set3(z, 40, &75_505u64.to_le_bytes()),
            field("entries"),
        ),
        (
            "entries 0".into(),
            set3(z, 40, &0u64.to_le_bytes()),
            field("entries"),
        ),
        (
            "entries 2^64-1".into(),
            set3(z, 40, &u64::MAX.to_le_bytes()),
            field("entries"),
        ),
        (
            "block size 0".into(),
            set3(z, 36, &0u32.to_le_bytes()),
            field("block size"),
        ),
        (
            "block size too large".into(),
            set3(z, 36, &(v3::V3_MAX_BLOCK_SIZE + 1).to_le_bytes()),
            field("block size"),
        ),
        (
            "block size 2^32-1".into(),
            set3(z, 36, &u32::MAX.to_le_bytes()),
            field("block size"),
        ),
        // Another sound block size: the index has another shape, and ends
        // at another offset than the file.
        (
            "block size 128".into(),
            set3(z, 36, &128u32.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { .. })),
        ),
        (
            "scores-only file with a checksum of lower".into(),
            set3(zs, 64, &[1]),
            Box::new(move |e| {
                field_is(e, "reserved") && e.to_string().contains("envelope checksums")
            }),
        ),
        (
            "scores-only file with a checksum of upper".into(),
            set3(zs, 79, &[0x80]),
            field("reserved"),
        ),
        // The models' length: the blocks start elsewhere, or past the end.
        (
            "models a byte longer".into(),
            set3(z, 48, &(p.data - p.models + 1).to_le_bytes()[..4]),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. })),
        ),
        (
            "models of 2^32-1 bytes".into(),
            set3(z, 48, &u32::MAX.to_le_bytes()),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            }),
        ),
        // The coarse index.
        (
            "first offset".into(),
            set3(z, p.super_at(0), &(p.data as u64 + 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 0, .. })),
        ),
        (
            "last offset past the end".into(),
            set3(z, p.super_at(19), &(len + 1).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::Truncated { part: "blocks", .. })),
        ),
        (
            "last offset before the end".into(),
            set3(z, p.super_at(19), &(len - 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1180, .. })),
        ),
        (
            "a super-block 4 bytes longer than its streams".into(),
            set3(z, p.super_at(3), &(sup(z, 3) + 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 192, .. })),
        ),
        (
            "a super-block 4 bytes shorter than its streams".into(),
            set3(z, p.super_at(3), &(sup(z, 3) - 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 192, .. })),
        ),
        (
            "a super-block before the previous one".into(),
            set3(z, p.super_at(3), &(sup(z, 2) - 4).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 192, .. })),
        ),
        (
            "a stream longer by 4: the sum of its super-block".into(),
            move_lens(z, &[(70, 0, 4)]),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 128, .. })),
        ),
        (
            "the last block's envelope longer by 4".into(),
            move_lens(z, &[(1179, 1, 4)]),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1180, .. })),
        ),
        // Stream lengths.
        (
            "a stream of 4 bytes".into(),
            set3(z, p.len_at(5, 0), &4u16.to_le_bytes()),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::OffsetOutOfRange {
                        block: 5,
                        offset: 4,
                        ..
                    }
                )
            }),
        ),
        (
            "a stream of 0 bytes".into(),
            set3(z, p.len_at(5, 1), &0u16.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 5, .. })),
        ),
        (
            "a stream of a length not a multiple of 4".into(),
            set3(z, p.len_at(5, 1), &(stream_len(5, 1) + 2).to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 5, .. })),
        ),
        (
            "a stream of 65535 bytes".into(),
            set3(z, p.len_at(1000, 0), &u16::MAX.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1000, .. })),
        ),
        (
            "scores alone: a stream of 9 bytes".into(),
            set3(zs, ps.len_at(1179, 0), &9u16.to_le_bytes()),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1179, .. })),
        ),
        // Truncated and extended files.
        (
            "truncated index".into(),
            z[..p.lens + 10].to_vec(),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            }),
        ),
        (
            "truncated models".into(),
            z[..p.data - 1].to_vec(),
            Box::new(|e| {
                matches!(
                    e,
                    CompressError::Truncated {
                        part: "block index",
                        ..
                    }
                )
            }),
        ),
        (
            "truncated blocks".into(),
            z[..z.len() - 1].to_vec(),
            Box::new(|e| matches!(e, CompressError::Truncated { part: "blocks", .. })),
        ),
        (
            "trailing bytes".into(),
            [&z[..], &[0u8; 4]].concat(),
            Box::new(|e| matches!(e, CompressError::OffsetOutOfRange { block: 1180, .. })),
        ),
        // The models, malformed (the checksum forged to match).
        ("no models".into(), with_models(z, &[]), model("ends early")),
        (
            "models a byte short".into(),
            with_models(z, &models[..models.len() - 1]),
            model("ends early"),
        ),
        (
            "a byte after the models".into(),
            with_models(z, &[models, &[0]].concat()),
            model("1 bytes after the models"),
        ),
        (
            "scores alone: the models of the full form".into(),
            with_models(zs, models),
            model("bytes after the models"),
        ),
        (
            "a number of more than 64 bits".into(),
            with_models(z, &[0xff; 12]),
            model("more than 64 bits"),
        ),
        (
            "more contexts than the model has".into(),
            with_models(z, &[0xff, 0xff, 0x7f]),
            model("contexts, at most"),
        ),
        (
            "a frequency one more".into(),
            {
                let n = number("frequency", false, &|v| v < 127);
                set3(z, n.at, &[n.value as u8 + 1])
            },
            model("do not sum to 4096"),
        ),
        (
            "a frequency one less".into(),
            {
                let n = number("frequency", false, &|v| v > 0);
                set3(z, n.at, &[n.value as u8 - 1])
            },
            model("do not sum to 4096"),
        ),
        (
            "a symbol twice".into(),
            {
                let n = number("symbol gap", false, &|_| true);
                set3(z, n.at, &[0])
            },
            model("out of order or range"),
        ),
        (
            "a symbol outside the alphabet".into(),
            {
                let n = number("symbol gap", true, &|_| true);
                set3(z, n.at, &[100])
            },
            model("out of order or range"),
        ),
        (
            "a context twice".into(),
            {
                let n = number("context gap", false, &|_| true);
                set3(z, n.at, &[0])
            },
            model("out of order or range"),
        ),
        (
            "a context with no symbols".into(),
            {
                let n = number("symbols", true, &|_| true);
                set3(z, n.at, &[0])
            },
            model("0 symbols"),
        ),
        (
            "a context with more symbols than the alphabet".into(),
            {
                let n = number("symbols", true, &|_| true);
                set3(z, n.at, &[18])
            },
            model("18 symbols"),
        ),
        // A stale checksum: the header's own, or of a changed model byte,
        // stream length or raw checksum.
        (
            "checksum".into(),
            {
                let mut m = z.clone();
                m[80] ^= 1;
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
        (
            "a model byte, the checksum stale".into(),
            {
                let mut m = z.clone();
                m[p.models + 40] ^= 0x20;
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
        (
            "stream lengths moved, the checksum stale".into(),
            {
                let mut m = move_lens(z, &[(5, 0, 4), (5, 1, -4)]);
                m[80..88].copy_from_slice(&z[80..88]);
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
        (
            "the checksum of raw lower, the checksum stale".into(),
            {
                let mut m = z.clone();
                m[64] ^= 1;
                m
            },
            Box::new(|e| matches!(e, CompressError::IndexChecksum { .. })),
        ),
    ];
    // Every tables byte but the two forms.
    for b in [0u8, 0b010, 0b011, 0b100, 0b101, 0b110, 0b1111, 0xff] {
        cases.push((format!("tables {b:#b}"), set3(z, 12, &[b]), field("tables")));
    }
    // Every reserved byte.
    for at in [14, 15, 52, 53, 54, 55] {
        cases.push((
            format!("reserved byte {at}"),
            set3(z, at, &[1]),
            field("reserved"),
        ));
        cases.push((
            format!("scores alone: reserved byte {at}"),
            set3(zs, at, &[0x80]),
            field("reserved"),
        ));
    }
    for (what, bytes, check) in &cases {
        match parse_both(bytes) {
            Ok(()) => panic!("{what}: parsed"),
            Err(e) => assert!(check(&e), "{what}: unexpected error {e:?}"),
        }
    }
    eprintln!(
        "{} damaged version 3 headers: each its typed error",
        cases.len()
    );

    // Damage the parser cannot see: the file parses, and the blocks it
    // touches are stream errors of their number (of every table that
    // decodes them), never other bytes.
    let read = |m: &[u8], kind: Kind, b: u64| -> Result<Vec<u8>, CompressError> {
        let mut t = parse(m)?;
        t.serve(kind)?;
        let mut out = vec![0u8; 64];
        t.decompress_block(b, &mut out).map(|()| out)
    };
    let right = |kind: Kind, b: u64| {
        let k = KINDS.iter().position(|&x| x == kind).unwrap();
        raws[k][b as usize * 64..b as usize * 64 + 64].to_vec()
    };
    let stream_error = |r: Result<Vec<u8>, CompressError>, b: u64| match r {
        Err(CompressError::Stream { block, .. }) => block == b,
        _ => false,
    };
    // A block whose streams both have room to give 4 bytes.
    let b = (5..p.blocks)
        .find(|&b| stream_len(b, 0) >= 12 && stream_len(b, 1) >= 12)
        .unwrap();
    for d in [4, -4] {
        // 4 bytes moved between the scores and the envelope of block b: a
        // block that is no longer what it was.
        let m = move_lens(z, &[(b, 0, d), (b, 1, -d)]);
        for kind in KINDS {
            assert!(stream_error(read(&m, kind, b), b), "moved {d}: {kind:?}");
            assert_eq!(read(&m, kind, b - 1).unwrap(), right(kind, b - 1));
            assert_eq!(read(&m, kind, b + 1).unwrap(), right(kind, b + 1));
        }
        // 4 bytes moved between the envelope of block b and the scores of
        // block b + 1: b's scores are sound, its envelope not; b + 1 not.
        let m = move_lens(z, &[(b, 1, d), (b + 1, 0, -d)]);
        assert_eq!(read(&m, Kind::Score, b).unwrap(), right(Kind::Score, b));
        for kind in KINDS {
            if kind != Kind::Score {
                assert!(stream_error(read(&m, kind, b), b), "moved {d}: {kind:?}");
            }
            assert!(
                stream_error(read(&m, kind, b + 1), b + 1),
                "moved {d}: {kind:?}"
            );
            assert_eq!(read(&m, kind, b + 2).unwrap(), right(kind, b + 2));
        }
        let t = parse(&m).unwrap();
        assert!(matches!(
            t.get(b * 64 + 64 + 7),
            Err(CompressError::Stream { .. })
        ));
        assert!(matches!(
            t.verify(Some(&raws[0]), &|_| {}),
            Err(CompressError::Stream { .. })
        ));
        assert!(t.decompress_all().is_err());
    }
    // Two frequencies of a context traded: a sound model, but the wrong
    // one; some blocks do not decode, none decodes to other bytes.
    let (f1, f2) = numbers
        .windows(4)
        .find_map(|w| {
            let ok = w[1].what == "frequency"
                && w[3].what == "frequency"
                && !w[3].first
                && w[1].bytes == 1
                && w[3].bytes == 1
                && w[1].value != w[3].value;
            ok.then_some((w[1], w[3]))
        })
        .expect("two frequencies of a context");
    let mut m = set3(z, f1.at, &[f2.value as u8]);
    m[f2.at] = f1.value as u8;
    forge3(&mut m);
    let mut failed = 0;
    for kind in KINDS {
        for b in 0..p.blocks {
            match read(&m, kind, b) {
                Ok(v) => assert_eq!(v, right(kind, b), "{kind:?} block {b}"),
                Err(e) => {
                    assert!(matches!(e, CompressError::Stream { block, .. } if block == b));
                    failed += 1;
                }
            }
        }
    }
    eprintln!(
        "frequencies traded: {failed} of {} blocks fail",
        3 * p.blocks
    );
    assert!(failed > 0);
    // Another model variant: the scores model reads (its contexts are in
    // range of a larger variant), its contexts do not fit the blocks.
    let v = z[13];
    for other in (0..v3::VARIANTS).filter(|&o| o != v) {
        let m = set3(z, 13, &[other]);
        match parse(&m) {
            Err(e) => {
                assert!(models_say(&e, ""), "variant {other}: {e:?}");
                eprintln!("model variant {v} read as {other}: {e}");
            }
            Ok(t) => {
                let e = t.decompress_all().unwrap_err();
                assert!(matches!(e, CompressError::Stream { .. }), "{e:?}");
                eprintln!("model variant {v} read as {other}: parses; {e}");
            }
        }
    }
    // The checksum of a raw table forged: a sound file whose table is not
    // the one its header describes, found when the whole table is read.
    let m = set3(z, 64, &[z[64] ^ 1]);
    let mut t = parse(&m).unwrap();
    assert_eq!(t.decompress_all().unwrap(), raws[0]);
    t.serve(Kind::Lower).unwrap();
    assert!(matches!(
        t.decompress_all(),
        Err(CompressError::ChecksumMismatch { .. })
    ));
    assert!(matches!(
        t.verify(Some(&raws[1]), &|_| {}),
        Err(CompressError::ChecksumMismatch { .. })
    ));
    // And a sound file verified against other bytes.
    let mut other = raws[2].clone();
    other[1000] ^= 1;
    t.serve(Kind::Upper).unwrap();
    assert_eq!(
        t.verify(Some(&other), &|_| {}),
        Err(CompressError::DiffersFromRaw { index: 1000 })
    );
}
