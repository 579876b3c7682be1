//! `awari verify` (against an oracle folder or move facts) and `awari check`
//! (checksums plus the forward Bellman check).

use super::Failure;
use awari_egdb::plan;
use awari_egdb::probe::Database;
use awari_egdb::rules::Rules;
use awari_egdb::verify::{self, FactOutcome};
use clap::Args;
use serde_json::json;
use std::ops::RangeInclusive;
use std::path::PathBuf;

/// Parses `A..=B` (both ends included) or `N`. Other spellings of a range
/// (`A..B`, `A-B`) are refused with a message, since readers disagree on
/// whether they include `B`.
pub fn parse_layers(s: &str) -> Result<RangeInclusive<u32>, String> {
    let num = |t: &str| -> Result<u32, String> {
        t.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= 48)
            .ok_or_else(|| format!("'{t}' is not a layer (0 to 48)"))
    };
    let r = if let Some((a, b)) = s.split_once("..=") {
        num(a)?..=num(b)?
    } else if let Some((a, b)) = s.split_once("..").or_else(|| s.split_once('-')) {
        let (a, b) = (num(a)?, num(b)?);
        let (a, b) = (a.min(b), a.max(b));
        return Err(format!(
            "'{s}': write ranges as A..=B, both ends included, the smaller first (e.g. {a}..={b})"
        ));
    } else {
        let n = num(s)?;
        n..=n
    };
    if r.is_empty() {
        return Err(format!(
            "'{s}' is an empty range: write the smaller layer first ({}..={})",
            r.end(),
            r.start()
        ));
    }
    Ok(r)
}

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct VerifyArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// An oracle folder of scores.N files (the VU dataset) to compare with,
    /// on pinned positions.
    #[arg(long, value_name = "VU_DIR", group = "against")]
    oracle: Option<PathBuf>,
    /// A CSV of move facts to check (the format of data/vu-move-facts.csv
    /// in the repository: board, move, loss against the best move).
    #[arg(long, value_name = "FILE", group = "against")]
    facts: Option<PathBuf>,
    /// A list of known-good checksums (layer,table,bytes,xxh3), or
    /// `known`: the list built into awari for the folder's rule set (the
    /// repository's data/known-good.csv or data/known-good-RULES.csv).
    /// Every table's checksum is recomputed from its bytes and compared.
    #[arg(long, value_name = "FILE|known", group = "against")]
    checksums: Option<PathBuf>,
    /// Layers to compare, e.g. 12..=22 or 16 (default: all).
    #[arg(long, value_name = "A..=B", value_parser = parse_layers)]
    layers: Option<RangeInclusive<u32>>,
    /// How many disagreements to list per layer.
    #[arg(long, value_name = "N", default_value_t = 10)]
    list: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct CheckArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Layers to check, e.g. 0..=16 (default: every built layer).
    #[arg(long, value_name = "A..=B", value_parser = parse_layers)]
    layers: Option<RangeInclusive<u32>>,
    /// How many mismatches to list per layer.
    #[arg(long, value_name = "N", default_value_t = 10)]
    list: usize,
    #[command(flatten)]
    memory: super::MemoryArg,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// Layers as text: `a..=b` runs joined by commas.
pub fn runs(layers: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < layers.len() {
        let mut j = i;
        while j + 1 < layers.len()
            && (layers[j + 1] == layers[j] + 1 || layers[j + 1] == 48 && layers[j] == 46)
        {
            j += 1;
        }
        out.push(if i == j {
            layers[i].to_string()
        } else {
            format!("{}..={}", layers[i], layers[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// `--checksums FILE|known`: a list of known-good checksums, or with
/// `known` the one built in for the rule set `rules`.
pub fn known_good(arg: &std::path::Path, rules: &Rules) -> Result<verify::KnownGood, Failure> {
    if arg != std::path::Path::new(KNOWN) {
        return Ok(verify::read_known_good(arg)?);
    }
    verify::builtin_known_good(rules).ok_or_else(|| {
        Failure::usage(format!(
            "--checksums {KNOWN}: no list is built in for the {rules} rules; give a FILE"
        ))
    })
}

/// The value of `--checksums` that names the built-in list.
pub const KNOWN: &str = "known";

pub fn run_verify(a: VerifyArgs) -> Result<(), Failure> {
    let rules = a.db.rules()?;
    let layers = a.layers.unwrap_or(0..=48);
    if let Some(facts) = a.facts {
        return run_facts(a.db.open()?, facts, layers, a.json);
    }
    if let Some(list) = a.checksums {
        let known = known_good(&list, &rules)?;
        return run_checksums(a.db.path(), known, layers, a.json);
    }
    let Some(oracle) = a.oracle else {
        return Err(Failure::usage(
            "say what to verify against: --oracle VU_DIR (a folder of VU scores.N files), \
             --facts FILE (move facts) or --checksums FILE (known-good checksums)",
        ));
    };
    if !oracle.is_dir() {
        return Err(Failure::usage(format!(
            "{}: not a folder (--oracle takes a folder of scores.N files)",
            oracle.display()
        )));
    }
    let verdicts = verify::compare_with_oracle(&a.db.path(), &oracle, layers, a.list)?;
    let compared: Vec<_> = verdicts.iter().filter(|v| v.skipped.is_none()).collect();
    let pinned: u64 = compared.iter().map(|v| v.pinned).sum();
    let disagree: u64 = compared.iter().map(|v| v.pinned_disagree).sum();
    let bad_sums: Vec<u32> = compared
        .iter()
        .filter(|v| !v.checksums_ok)
        .map(|v| v.seeds)
        .collect();
    if a.json {
        println!(
            "{}",
            json!({
                "layers": verdicts,
                "compared_layers": compared.len(),
                "pinned": pinned,
                "pinned_disagree": disagree,
                "checksum_failures": bad_sums,
                "ok": disagree == 0 && bad_sums.is_empty() && !compared.is_empty(),
            })
        );
    } else {
        println!("layer      positions       pinned   pinned agree  disagree  unpinned agree");
        let not_built: Vec<u32> = verdicts
            .iter()
            .filter(|v| v.skipped.is_some() && !v.built)
            .map(|v| v.seeds)
            .collect();
        for v in &verdicts {
            match &v.skipped {
                Some(_) if !v.built => {}
                Some(why) => println!("{:>5}  skipped: {why}", v.seeds),
                None => println!(
                    "{:>5}  {:>13}  {:>11}  {:>13}  {:>8}  {:>14}",
                    v.seeds,
                    v.positions,
                    v.pinned,
                    v.pinned_agree,
                    v.pinned_disagree,
                    if v.unpinned == 0 {
                        "-".to_string()
                    } else {
                        format!("{} of {}", v.unpinned_agree, v.unpinned)
                    }
                ),
            }
        }
        if !not_built.is_empty() {
            println!(
                "layers {} not built in {}: skipped ({} layer(s))",
                runs(&not_built),
                a.db.path().display(),
                not_built.len()
            );
        }
        for v in &compared {
            for d in &v.first_disagreements {
                println!(
                    "disagreement: layer {} index {} board {} ours {:+} theirs {:+}",
                    d.seeds,
                    d.index,
                    awari_egdb::Position(d.pits),
                    d.ours,
                    d.theirs
                );
            }
        }
    }
    if !bad_sums.is_empty() {
        return Err(Failure::failed(format!(
            "our tables of layer(s) {} do not match their checksums; rebuild them",
            runs(&bad_sums)
        )));
    }
    if compared.is_empty() {
        return Err(Failure::usage("no layer could be compared"));
    }
    if disagree > 0 {
        return Err(Failure::failed(format!(
            "{disagree} of {pinned} pinned positions disagree with the oracle"
        )));
    }
    if !a.json {
        println!(
            "all {pinned} pinned positions agree ({} layer(s) compared, {} skipped)",
            compared.len(),
            verdicts.len() - compared.len()
        );
    }
    Ok(())
}

fn run_checksums(
    db: PathBuf,
    known: verify::KnownGood,
    layers: RangeInclusive<u32>,
    json_out: bool,
) -> Result<(), Failure> {
    let list = &known.path;
    let r = verify::compare_checksums(&db, &known, layers)?;
    let equal = r.tables.len() - r.failures().count();
    let bad: Vec<&verify::TableCheck> = r.failures().collect();
    if json_out {
        println!(
            "{}",
            json!({
                "tables": r.tables,
                "equal": equal,
                "failed": bad.len(),
                "not_built": r.not_built,
                "absent": r.absent,
                "not_listed": r.not_listed,
                "ok": bad.is_empty() && !r.tables.is_empty(),
            })
        );
    } else {
        let mut last = None;
        for t in &r.tables {
            if last != Some(t.known.layer) {
                let of_layer: Vec<_> = r
                    .tables
                    .iter()
                    .filter(|u| u.known.layer == t.known.layer)
                    .collect();
                let ok = of_layer
                    .iter()
                    .all(|u| u.outcome == verify::TableOutcome::Equal);
                let names: Vec<&str> = of_layer.iter().map(|u| u.known.kind.stem()).collect();
                println!(
                    "layer {:>2}: {} {}",
                    t.known.layer,
                    names.join(", "),
                    if ok { "equal" } else { "NOT all equal" }
                );
                last = Some(t.known.layer);
            }
            match &t.outcome {
                verify::TableOutcome::Equal => {}
                verify::TableOutcome::Differs { found } => println!(
                    "  {}: differs: {found}, the list says {}",
                    t.file, t.known.xxh3
                ),
                verify::TableOutcome::Missing => println!(
                    "  {}: missing (the manifest lists it)",
                    t.known.kind.file_name(t.known.layer)
                ),
                verify::TableOutcome::Damaged { reason } => {
                    println!("  {}: damaged: {reason}", t.file)
                }
            }
        }
        if !r.not_built.is_empty() {
            println!(
                "layers {} not built in {}: skipped ({} layer(s))",
                runs(&r.not_built),
                db.display(),
                r.not_built.len()
            );
        }
        if !r.absent.is_empty() {
            println!(
                "not in the folder and not in its manifest, so not compared: {}",
                r.absent.join(", ")
            );
        }
        if !r.not_listed.is_empty() {
            println!(
                "layers {} are built but not in {}: not compared",
                runs(&r.not_listed),
                list.display()
            );
        }
    }
    if !bad.is_empty() {
        // Each failure named as what it is: differs, missing or damaged.
        let of = |want: fn(&verify::TableOutcome) -> bool| -> Vec<String> {
            bad.iter()
                .filter(|t| want(&t.outcome))
                .map(|t| t.known.kind.file_name(t.known.layer))
                .collect()
        };
        let parts: Vec<String> = [
            (
                of(|o| matches!(o, verify::TableOutcome::Differs { .. })),
                format!("differ from {}", list.display()),
            ),
            (
                of(|o| matches!(o, verify::TableOutcome::Missing)),
                "missing (the manifest lists them)".to_string(),
            ),
            (
                of(|o| matches!(o, verify::TableOutcome::Damaged { .. })),
                "damaged".to_string(),
            ),
        ]
        .into_iter()
        .filter(|(names, _)| !names.is_empty())
        .map(|(names, what)| format!("{} table(s) {what}: {}", names.len(), names.join(", ")))
        .collect();
        return Err(Failure::failed(parts.join("; ")));
    }
    if r.tables.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no table of the list's layers to compare",
            db.display()
        )));
    }
    if !json_out {
        println!(
            "all {equal} table(s) equal the known-good checksums ({} layer(s) not built, skipped)",
            r.not_built.len()
        );
    }
    Ok(())
}

fn run_facts(
    db: Database,
    file: PathBuf,
    layers: RangeInclusive<u32>,
    json_out: bool,
) -> Result<(), Failure> {
    let facts = verify::read_facts(&file)?;
    let mut results = Vec::new();
    for f in facts.iter().filter(|f| layers.contains(&f.seeds)) {
        let r = verify::check_fact(&db, f)?;
        results.push((f, r));
    }
    let agree = results
        .iter()
        .filter(|(_, r)| *r == FactOutcome::Agrees)
        .count();
    let skipped = results
        .iter()
        .filter(|(_, r)| matches!(r, FactOutcome::Skipped { .. }))
        .count();
    let disagree = results.len() - agree - skipped;
    if json_out {
        let list: Vec<_> = results
            .iter()
            .map(|(f, r)| json!({"fact": f, "outcome": r}))
            .collect();
        println!(
            "{}",
            json!({"facts": list, "agree": agree, "disagree": disagree, "skipped": skipped})
        );
    } else {
        for (f, r) in &results {
            if let FactOutcome::Disagrees { reason } = r {
                println!("fact {} ({}): {reason}", f.id, awari_egdb::Position(f.pits));
            }
        }
        println!(
            "{agree} fact(s) agree, {disagree} disagree, {skipped} skipped (their layers are not built)"
        );
    }
    if disagree > 0 {
        return Err(Failure::failed(format!(
            "{disagree} fact(s) disagree with the tables"
        )));
    }
    Ok(())
}

/// The layers of `db` in `range` (all when `None`); none is bad input.
pub fn layers_in(
    db: &Database,
    dir: &std::path::Path,
    range: Option<RangeInclusive<u32>>,
) -> Result<Vec<u32>, Failure> {
    let range = range.unwrap_or(0..=48);
    let layers: Vec<u32> = db
        .layers()
        .into_iter()
        .filter(|n| range.contains(n))
        .collect();
    if layers.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no built layer in {}..={}",
            dir.display(),
            range.start(),
            range.end()
        )));
    }
    Ok(layers)
}

pub fn run_check(a: CheckArgs) -> Result<(), Failure> {
    a.db.rules()?;
    let dir = a.db.path();
    let budget = a.memory.budget()?;
    let db = a.db.open()?;
    let layers = layers_in(&db, &dir, a.layers)?;
    // Layer by layer: each layer's own tables are read whole, the lower
    // layers read in index order and not held. Every layer's check must
    // fit before the first starts (the one planner's figure).
    let threads = rayon::current_num_threads();
    for &n in &layers {
        plan::fit_check(n, db.has_envelope(n)?, threads, budget)?;
    }
    // The check of layer n reads every layer below it: verify the checksums
    // of all of them first (a VU folder has none to verify).
    let top = *layers.last().expect("not empty");
    let read: Vec<u32> = db.layers().into_iter().filter(|&n| n <= top).collect();
    // A damaged table ends the check; with --json the report still comes
    // out, naming it.
    let damaged = |json: serde_json::Value, e: awari_egdb::Error| -> Failure {
        let f = Failure::from(e);
        if a.json {
            let mut j = json;
            j["error"] = json!(f.message);
            j["damaged"] = json!(f.code == 1);
            j["ok"] = json!(false);
            println!("{j}");
        }
        f
    };
    let folder = if db.is_vu() { "vu" } else { "ours" };
    let mut summed = 0;
    for &n in &read {
        match db.verify_layer(n) {
            Ok(true) => summed += 1,
            Ok(false) => {}
            Err(e) => {
                return Err(damaged(
                    json!({"folder": folder, "checksums_verified": summed, "layers": []}),
                    e,
                ))
            }
        }
    }
    let rules = match db.rules().name {
        "awari" => String::new(),
        other => format!(" of the {other} rules"),
    };
    let kind = if db.is_vu() {
        let dir = a.db.path();
        let under = match db.rules_from() {
            awari_egdb::store::RulesFrom::Headers => "as its compressed files name",
            _ => "--rules",
        };
        match super::assumed(&db) {
            Some(note) => format!(
                "{}: a VU dataset folder (no manifest.json): it has no checksums to verify, and \
                 only scores.N is checked; rules {} ({note})",
                dir.display(),
                db.rules().name
            ),
            None => format!(
                "{}: a folder of scores without manifest.json, read under the {} rules ({under}): \
                 it has no checksums to verify, and only the scores are checked",
                dir.display(),
                db.rules().name
            ),
        }
    } else {
        format!(
            "{}: a folder of ours{rules}: checksums of the tables of {summed} layer(s) ({}) match the manifest",
            a.db.path().display(),
            runs(&read)
        )
    };
    if !a.json {
        println!("{kind}");
    }
    let mut verdicts: Vec<verify::BellmanVerdict> = Vec::new();
    for &n in &layers {
        let v = match verify::bellman_check(&db, n, a.list) {
            Ok(v) => v,
            Err(e) => {
                let bad: u64 = verdicts.iter().map(|v| v.mismatches).sum();
                return Err(damaged(
                    json!({"folder": folder, "checksums_verified": summed,
                           "layers": verdicts, "mismatches": bad}),
                    e,
                ));
            }
        };
        if !a.json {
            println!(
                "layer {:>2}: {:>13} positions, {} checked, {} mismatch(es)",
                n,
                v.positions,
                match (v.envelope, v.distance) {
                    (true, true) => "score, envelope and distance",
                    (true, false) => "score and envelope",
                    (false, true) => "score and distance",
                    (false, false) => "score",
                },
                v.mismatches
            );
            for m in &v.first_mismatches {
                let value = |v: i16| match m.table {
                    "dist" if v == 255 => "none".to_string(),
                    "dist" => v.to_string(),
                    _ => format!("{v:+}"),
                };
                println!(
                    "  mismatch: index {} board {} {} stored {} children give {}",
                    m.index,
                    awari_egdb::Position(m.pits),
                    m.table,
                    value(m.stored),
                    value(m.recomputed)
                );
            }
        }
        verdicts.push(v);
    }
    let bad: u64 = verdicts.iter().map(|v| v.mismatches).sum();
    if a.json {
        println!(
            "{}",
            json!({
                "folder": folder,
                "checksums_verified": summed,
                "layers": verdicts,
                "mismatches": bad,
                "ok": bad == 0,
            })
        );
    }
    if bad > 0 {
        return Err(Failure::failed(format!(
            "{bad} stored value(s) contradict their children"
        )));
    }
    if !a.json {
        // VU move facts are facts of the awari rules.
        let facts = if db.rules().same_tables(&awari_egdb::rules::AWARI) {
            " and `--facts` (VU move facts)"
        } else {
            ""
        };
        println!(
            "Bellman check passes on {} layer(s): every stored value equals what its children give. \
             This is a consistency check: with cycles, tables that pass can still be wrong; \
             `awari verify --checksums {KNOWN}` (known-good checksums){facts} check the values themselves",
            verdicts.len()
        );
    }
    Ok(())
}
