//! `awari stats`: per layer the positions, won/drawn/lost shares, the score
//! histogram, the pinned share and the build figures; `--plot` draws them;
//! `--with` shows more folders beside the first (e.g. the same layers under
//! other rule sets), and the plot then draws their shares side by side.

use super::verify::parse_layers;
use super::Failure;
use awari_egdb::error::human;
use awari_egdb::probe::Database;
use awari_egdb::stats::{self, LayerStats};
use clap::Args;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct StatsArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Layers, e.g. 0..=24 (default: every layer in the folder).
    #[arg(long, value_name = "A..=B", value_parser = parse_layers)]
    layers: Option<RangeInclusive<u32>>,
    #[command(flatten)]
    memory: super::MemoryArg,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Draw the shares by layer and each layer's score distribution into
    /// FILE (PNG or SVG, by its extension).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Another folder to show beside the first (repeat for more), e.g. the
    /// same layers under another rule set: a table each, and with --plot
    /// the shares by layer side by side, a line per folder.
    #[arg(long = "with", value_name = "DIR")]
    with: Vec<PathBuf>,
}

/// One folder's figures.
struct Shown {
    dir: PathBuf,
    db: Database,
    layers: Vec<LayerStats>,
}

impl Shown {
    /// The folder's figures for `range`, each layer fitted to `budget`
    /// first; `asked`: the rule set `--rules` names.
    fn read(
        dir: PathBuf,
        asked: Option<&awari_egdb::rules::Rules>,
        range: Option<RangeInclusive<u32>>,
        budget: awari_egdb::plan::Budget,
    ) -> Result<Shown, Failure> {
        let db = super::open_db(&dir, asked)?;
        let layers = super::verify::layers_in(&db, &dir, range)?;
        // Where the manifest has no figures, a layer's tables are streamed,
        // a window of each at a time: every layer must fit first.
        for &n in &layers {
            let tables = if db.has_envelope(n)? { 3 } else { 1 };
            let window = stats::STREAM_WINDOW.min(awari_egdb::index::layer_size(n));
            awari_egdb::plan::fit_stream(n, tables, window, budget)?;
        }
        let layers = layers
            .iter()
            .map(|&n| stats::layer_stats(&db, n))
            .collect::<Result<_, _>>()?;
        Ok(Shown { dir, db, layers })
    }

    /// The folder's name in a legend: its rule set's, or its path where
    /// two folders shown have the same rule set.
    fn label(&self, all: &[Shown]) -> String {
        let name = self.db.rules().name;
        if all.iter().filter(|o| o.db.rules().name == name).count() > 1 {
            self.dir.display().to_string()
        } else {
            name.to_string()
        }
    }

    fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "folder": if self.db.is_vu() { "vu" } else { "ours" },
            "rules": self.db.rules().name,
            "layers": self.layers,
        });
        if self.db.rules_assumed() {
            v["rules_assumed"] = true.into();
        }
        v
    }

    /// The rule set as the text says it: its name, and whether it was
    /// assumed.
    fn rules(&self) -> String {
        match super::assumed(&self.db) {
            Some(note) => format!("{} rules, {note}", self.db.rules().name),
            None => format!("{} rules", self.db.rules().name),
        }
    }
}

fn pct(s: &LayerStats, c: u64) -> String {
    format!("{:.1}%", 100.0 * s.share(c))
}

pub fn run(a: StatsArgs) -> Result<(), Failure> {
    a.db.rules()?;
    let budget = a.memory.budget()?;
    let asked = a.db.rules_asked();
    let mut shown = vec![Shown::read(
        a.db.path(),
        asked.as_ref(),
        a.layers.clone(),
        budget,
    )?];
    for dir in &a.with {
        shown.push(Shown::read(dir.clone(), None, a.layers.clone(), budget)?);
    }
    if let Some(path) = &a.plot {
        match &shown[..] {
            [one] => plot(path, Figure::One(&one.layers))?,
            all => plot(path, Figure::SideBySide(all))?,
        }
    }
    if a.json {
        let v = match &shown[..] {
            [one] => {
                let mut v =
                    serde_json::json!({ "folder": one.json()["folder"], "layers": one.layers });
                if one.db.rules_assumed() {
                    v["rules_assumed"] = true.into();
                }
                v
            }
            all => serde_json::json!({ "folders": all.iter().map(|s| {
                let mut v = s.json();
                v["dir"] = s.dir.display().to_string().into();
                v
            }).collect::<Vec<_>>() }),
        };
        println!("{v}");
        return Ok(());
    }
    for (i, one) in shown.iter().enumerate() {
        if shown.len() > 1 {
            if i > 0 {
                println!();
            }
            println!("{} ({}):", one.dir.display(), one.rules());
        } else if one.db.rules_assumed() {
            println!("{} ({})", one.dir.display(), one.rules());
        }
        table(&one.layers);
    }
    if let Some(p) = &a.plot {
        println!("plot written to {}", p.display());
    }
    Ok(())
}

/// The table of one folder's layers.
fn table(all: &[LayerStats]) {
    println!(
        "layer      positions     won   drawn    lost       pinned  build s     M pos/s  peak RSS"
    );
    for s in all {
        let (secs, rate, rss) = match &s.build {
            Some(b) => (
                format!("{:.1}", b.wall_seconds),
                format!("{:.2}", b.positions_per_second / 1e6),
                human(b.peak_rss_bytes),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:>5}  {:>13}  {:>6}  {:>6}  {:>6}  {:>11}  {:>7}  {:>10}  {}",
            s.seeds,
            s.positions,
            pct(s, s.won),
            pct(s, s.drawn),
            pct(s, s.lost),
            s.pinned.map_or("-".into(), |p| pct(s, p)),
            secs,
            rate,
            rss
        );
    }
    if all.iter().any(|s| s.pinned.is_none()) {
        println!(
            "pinned: '-' where the folder has no envelope (lower.N, upper.N) to count it from; \
             the shares come from the scores"
        );
    }
}

/// The shares by layer (top) and each layer's score distribution as a heat
/// map (bottom).
fn plot(path: &Path, figure: Figure) -> Result<(), Failure> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let size = (1000, 900);
    let ext = match ext.as_deref() {
        Some(e @ ("png" | "svg")) => e,
        _ => {
            return Err(Failure::usage(format!(
                "{}: --plot writes .png or .svg files",
                path.display()
            )))
        }
    };
    // Drawn under a temporary name (with the same extension, which picks
    // the encoder), synced, then renamed over `path`: a plot that fails
    // half-way (a full disk) leaves an older file whole.
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp.{ext}"));
    let failed = |e: &dyn std::fmt::Display| {
        let _ = std::fs::remove_file(&tmp);
        Failure::usage(format!("{}: {e}", path.display()))
    };
    // The plotting backends report a file they cannot create as a raw
    // debug string: find out first, in plain words.
    std::fs::File::create(&tmp).map_err(|e| failed(&e))?;
    register_font()?;
    let r = match ext {
        "png" => figure.draw(BitMapBackend::new(&tmp, size).into_drawing_area()),
        _ => figure.draw(SVGBackend::new(&tmp, size).into_drawing_area()),
    };
    r.map_err(|e| failed(&e))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| failed(&e))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = awari_egdb::store::sync_dir(dir);
    }
    Ok(())
}

/// Text is laid out with DejaVu Sans, compiled in (no system fonts needed).
fn register_font() -> Result<(), Failure> {
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(|_| Failure::usage("the built-in font cannot be loaded"))
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// What a plot draws: one folder's shares and score distributions, or
/// several folders' shares side by side.
enum Figure<'a> {
    One(&'a [LayerStats]),
    SideBySide(&'a [Shown]),
}

impl Figure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        match self {
            Figure::One(all) => draw(root, all),
            Figure::SideBySide(all) => draw_side_by_side(root, all),
        }
    }
}

/// The four shares by layer (won, drawn, lost, pinned), a panel each, a
/// line per folder.
fn draw_side_by_side<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, all: &[Shown]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let seeds = all.iter().flat_map(|s| s.layers.iter().map(|l| l.seeds));
    let first = seeds.clone().min().unwrap_or(0);
    let last = seeds.max().unwrap_or(0);
    let xs = first as f64 - 0.5..last as f64 + 0.5;
    const COLORS: [RGBColor; 6] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(120, 120, 120),
    ];
    let panels: [(&str, Count); 4] = [
        ("won (score > 0)", |s| Some(s.won)),
        ("drawn (score 0)", |s| Some(s.drawn)),
        ("lost (score < 0)", |s| Some(s.lost)),
        ("pinned (lower = upper)", |s| s.pinned),
    ];
    for (area, (title, get)) in root.split_evenly((2, 2)).iter().zip(panels) {
        let mut chart = ChartBuilder::on(area)
            .caption(format!("Share {title}"), ("sans-serif", 20))
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(46)
            .build_cartesian_2d(xs.clone(), 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| format!("{x:.0}"))
            .x_desc("seeds on the board (layer)")
            .draw()?;
        for (k, shown) in all.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            let points: Vec<(f64, f64)> = shown
                .layers
                .iter()
                .filter_map(|s| get(s).map(|c| (s.seeds as f64, s.share(c))))
                .collect();
            share_series(&mut chart, shown.label(all), color, points)?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// One series of shares by layer: a line with a dot at each layer, in
/// the legend as `name`; nothing for a series without points.
fn share_series<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    name: String,
    color: RGBColor,
    points: Vec<(f64, f64)>,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if points.is_empty() {
        return Ok(());
    }
    chart
        .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    Ok(())
}

/// The count of one series in a layer, if known.
type Count = fn(&LayerStats) -> Option<u64>;

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, all: &[LayerStats]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(420);
    let first = all.first().map_or(0, |s| s.seeds);
    let last = all.last().map_or(0, |s| s.seeds);
    let xs = first as f64 - 0.5..last as f64 + 0.5;

    let mut shares = ChartBuilder::on(&top)
        .caption("Share of positions by layer", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(50)
        .build_cartesian_2d(xs.clone(), 0.0..1.0)?;
    shares
        .configure_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .x_desc("seeds on the board (layer)")
        .y_desc("share")
        .draw()?;
    let series: [(&str, RGBColor, Count); 4] = [
        ("won (score > 0)", RGBColor(44, 160, 44), |s| Some(s.won)),
        ("drawn (score 0)", RGBColor(120, 120, 120), |s| {
            Some(s.drawn)
        }),
        ("lost (score < 0)", RGBColor(214, 39, 40), |s| Some(s.lost)),
        ("pinned", RGBColor(31, 119, 180), |s| s.pinned),
    ];
    for (name, color, get) in series {
        let points: Vec<(f64, f64)> = all
            .iter()
            .filter_map(|s| get(s).map(|c| (s.seeds as f64, s.share(c))))
            .collect();
        share_series(&mut shares, name.to_string(), color, points)?;
    }
    shares
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;

    let top_score = last as i32;
    let mut heat = ChartBuilder::on(&bottom)
        .caption(
            "Score distribution of each layer (darker: more positions)",
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(50)
        .build_cartesian_2d(xs, -(top_score as f64) - 0.5..top_score as f64 + 0.5)?;
    heat.configure_mesh()
        .disable_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:+.0}"))
        .x_desc("seeds on the board (layer)")
        .y_desc("score for the side to move")
        .draw()?;
    for s in all {
        let n = s.seeds as i32;
        let peak = s.histogram.iter().copied().max().unwrap_or(1).max(1) as f64;
        heat.draw_series(
            s.histogram
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(i, &c)| {
                    let score = i as i32 - n;
                    // Square root, so that rare scores still show.
                    let v = (c as f64 / peak).sqrt();
                    let shade = (255.0 * (1.0 - v)) as u8;
                    let x = s.seeds as f64;
                    let y = score as f64;
                    Rectangle::new(
                        [(x - 0.45, y - 0.5), (x + 0.45, y + 0.5)],
                        RGBColor(shade, shade, 255).filled(),
                    )
                }),
        )?;
    }
    root.present()?;
    Ok(())
}
