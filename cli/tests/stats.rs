//! `awari stats`: figures per layer from the manifest or from the tables,
//! and plots that are real PNG and SVG files.

mod common;

use common::{awari_status, db_dir, scratch, vu_copy};

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn stats_json_gives_pinned_counts_and_shares() {
    let (out, _) = awari_status(
        &["stats", "--db", s(db_dir()), "--layers", "0..=12", "--json"],
        0,
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let layers = v["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 13);
    let l8 = &layers[8];
    assert_eq!(l8["seeds"], 8);
    assert_eq!(l8["positions"], 75_504);
    assert_eq!(l8["pinned"], 46_116);
    for l in layers {
        let n = l["seeds"].as_u64().unwrap();
        let h: Vec<u64> = serde_json::from_value(l["histogram"].clone()).unwrap();
        assert_eq!(h.len() as u64, 2 * n + 1);
        let (won, drawn, lost) = (
            l["won"].as_u64().unwrap(),
            l["drawn"].as_u64().unwrap(),
            l["lost"].as_u64().unwrap(),
        );
        assert_eq!(won + drawn + lost, l["positions"].as_u64().unwrap());
        assert_eq!(drawn, h[n as usize]);
        assert!(l["build"]["wall_seconds"].as_f64().is_some(), "{l}");
    }
    // A VU folder: the histogram counted from the tables is the manifest's.
    let vu = vu_copy("awari-stats-vu-");
    let (vout, _) = awari_status(&["stats", "--db", s(&vu), "--json"], 0);
    let w: serde_json::Value = serde_json::from_str(&vout).unwrap();
    assert_eq!(w["folder"], "vu");
    for (a, b) in w["layers"].as_array().unwrap().iter().zip(layers) {
        assert_eq!(a["histogram"], b["histogram"]);
        assert!(a["pinned"].is_null());
    }
    // The text table.
    let (text, _) = awari_status(&["stats", "--db", s(db_dir()), "--layers", "8"], 0);
    assert!(text.contains("75504") && text.contains("61.1%"), "{text}");
}

#[test]
fn plots_are_valid_files_that_grow_with_the_layers_drawn() {
    let dir = scratch("awari-stats-plot-");
    let mut sizes = Vec::new();
    for (layers, name) in [("0..=6", "small.svg"), ("0..=12", "big.svg")] {
        let path = dir.join(name);
        awari_status(
            &[
                "stats",
                "--db",
                s(db_dir()),
                "--layers",
                layers,
                "--plot",
                s(&path),
            ],
            0,
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
        assert!(text.contains("Share of positions by layer"));
        sizes.push(text.len());
    }
    assert!(sizes[1] > sizes[0], "{sizes:?}");
    let png = dir.join("plot.png");
    awari_status(&["stats", "--db", s(db_dir()), "--plot", s(&png)], 0);
    let b = std::fs::read(&png).unwrap();
    assert_eq!(&b[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&b[12..16], b"IHDR");
    let (w, h) = (
        u32::from_be_bytes(b[16..20].try_into().unwrap()),
        u32::from_be_bytes(b[20..24].try_into().unwrap()),
    );
    assert_eq!((w, h), (1000, 900));
    // Decoded, the picture is drawn: several colours (the series), and
    // neither blank nor a filled box.
    let mut reader = png::Decoder::new(std::io::Cursor::new(&b))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let px = info.color_type.samples();
    let pixels = &pixels[..info.buffer_size()];
    let colours: std::collections::BTreeSet<&[u8]> = pixels.chunks(px).collect();
    let drawn = pixels
        .chunks(px)
        .filter(|c| c.iter().take(3).any(|&v| v != 255))
        .count() as f64
        / (w * h) as f64;
    assert!(colours.len() >= 4, "{} colours", colours.len());
    assert!(
        (0.01..0.9).contains(&drawn),
        "{:.1}% of the pixels drawn",
        100.0 * drawn
    );
    let (_, err) = awari_status(
        &[
            "stats",
            "--db",
            s(db_dir()),
            "--plot",
            s(&dir.join("plot.gif")),
        ],
        2,
    );
    assert!(err.contains(".png or .svg"), "{err}");
}

/// `--with`: the same layers of another folder (here an olympiad build)
/// beside the first, a table each and in one JSON object; the side-by-side
/// plot is a real PNG; a folder that cannot be read is refused.
#[test]
fn stats_with_more_folders_shows_them_side_by_side() {
    let ol = scratch("awari-stats-olympiad-");
    awari_status(
        &[
            "build",
            "--rules",
            "olympiad",
            "--db",
            s(&ol),
            "--max-seeds",
            "8",
            "-q",
        ],
        0,
    );
    let args = [
        "stats",
        "--db",
        s(db_dir()),
        "--with",
        s(&ol),
        "--layers",
        "0..=8",
    ];
    let (out, _) = awari_status(&[&args[..], &["--json"]].concat(), 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let folders = v["folders"].as_array().unwrap();
    assert_eq!(folders.len(), 2);
    assert_eq!(
        (&folders[0]["rules"], &folders[1]["rules"]),
        (&"awari".into(), &"olympiad".into())
    );
    let l8 = |f: &serde_json::Value| f["layers"][8].clone();
    assert_eq!(l8(&folders[0])["positions"], l8(&folders[1])["positions"]);
    assert_ne!(
        l8(&folders[0])["won"],
        l8(&folders[1])["won"],
        "the rule sets differ at 8 seeds"
    );
    let png = scratch("awari-stats-with-").join("presets.png");
    let (text, _) = awari_status(&[&args[..], &["--plot", s(&png)]].concat(), 0);
    assert!(text.contains("(olympiad rules):"), "{text}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    awari_status(
        &["stats", "--db", s(db_dir()), "--with", "/nonexistent/awari"],
        2,
    );
}
