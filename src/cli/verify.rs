//! `awari verify` (against an oracle folder or move facts) and `awari check`
//! (checksums plus the forward Bellman check).

use super::Failure;
use awari_egdb::probe::{Database, ProbeError};
use awari_egdb::verify::{self, FactOutcome, VerifyError};
use clap::Args;
use serde_json::json;
use std::ops::RangeInclusive;
use std::path::PathBuf;

/// Parses `A..=B`, `A..B` (B excluded), `A-B` or `N`.
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
    } else if let Some((a, b)) = s.split_once("..") {
        let b = num(b)?;
        if b == 0 {
            return Err(format!("'{s}' is an empty range"));
        }
        num(a)?..=b - 1
    } else if let Some((a, b)) = s.split_once('-') {
        num(a)?..=num(b)?
    } else {
        let n = num(s)?;
        n..=n
    };
    if r.is_empty() {
        return Err(format!("'{s}' is an empty range"));
    }
    Ok(r)
}

#[derive(Args)]
pub struct VerifyArgs {
    /// Our folder of tables (built with the envelope).
    #[arg(long, value_name = "DIR")]
    db: PathBuf,
    /// An oracle folder of scores.N files (the VU dataset) to compare with.
    #[arg(
        long,
        value_name = "VU_DIR",
        required_unless_present = "facts",
        conflicts_with = "facts"
    )]
    oracle: Option<PathBuf>,
    /// A CSV of move facts (format of shared/oracle/vu-move-facts.csv) to check.
    #[arg(long, value_name = "FILE")]
    facts: Option<PathBuf>,
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
pub struct CheckArgs {
    /// Folder of tables.
    #[arg(long, value_name = "DIR")]
    db: PathBuf,
    /// Layers to check, e.g. 0..=16 (default: every built layer).
    #[arg(long, value_name = "A..=B", value_parser = parse_layers)]
    layers: Option<RangeInclusive<u32>>,
    /// How many mismatches to list per layer.
    #[arg(long, value_name = "N", default_value_t = 10)]
    list: usize,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn fail(e: VerifyError) -> Failure {
    let code = match &e {
        // A table that no longer matches its checksum is a failed check.
        VerifyError::Probe(ProbeError::Checksum { .. }) => 1,
        // So is a damaged compressed table, met on opening or while reading.
        VerifyError::Probe(ProbeError::Compressed { .. }) => 1,
        VerifyError::Io(e)
            if e.source
                .get_ref()
                .is_some_and(|inner| inner.is::<awari_egdb::compress::CompressError>()) =>
        {
            1
        }
        _ => 2,
    };
    Failure {
        message: e.to_string(),
        code,
    }
}

pub fn run_verify(a: VerifyArgs) -> Result<(), Failure> {
    let layers = a.layers.unwrap_or(0..=48);
    if let Some(facts) = a.facts {
        return run_facts(a.db, facts, layers, a.json);
    }
    let oracle = a.oracle.expect("clap requires --oracle or --facts");
    if !oracle.is_dir() {
        return Err(Failure::usage(format!(
            "{}: not a folder (--oracle takes a folder of scores.N files)",
            oracle.display()
        )));
    }
    let verdicts = verify::compare_with_oracle(&a.db, &oracle, layers, a.list).map_err(fail)?;
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
        for v in &verdicts {
            match &v.skipped {
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
                        format!(
                            "{:.1}% of {}",
                            100.0 * v.unpinned_agree as f64 / v.unpinned as f64,
                            v.unpinned
                        )
                    }
                ),
            }
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
            "our tables of layer(s) {bad_sums:?} do not match their checksums; rebuild them"
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

fn run_facts(
    db: PathBuf,
    file: PathBuf,
    layers: RangeInclusive<u32>,
    json_out: bool,
) -> Result<(), Failure> {
    let db = Database::open(&db).map_err(|e| Failure::usage(e.to_string()))?;
    let facts = verify::read_facts(&file).map_err(fail)?;
    let mut results = Vec::new();
    for f in facts.iter().filter(|f| layers.contains(&f.seeds)) {
        let r = verify::check_fact(&db, f).map_err(fail)?;
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

pub fn run_check(a: CheckArgs) -> Result<(), Failure> {
    let db = Database::open(&a.db).map_err(|e| Failure::usage(e.to_string()))?;
    let range = a.layers.unwrap_or(0..=48);
    let layers: Vec<u32> = db
        .layers()
        .into_iter()
        .filter(|n| range.contains(n))
        .collect();
    if layers.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no built layer in {}..={}",
            a.db.display(),
            range.start(),
            range.end()
        )));
    }
    let mut verdicts = Vec::new();
    for &n in &layers {
        let v = verify::bellman_check(&db, n, a.list).map_err(fail)?;
        if !a.json {
            println!(
                "layer {:>2}: {:>13} positions, {} checked, {} mismatch(es)",
                n,
                v.positions,
                if v.envelope {
                    "score and envelope"
                } else {
                    "score"
                },
                v.mismatches
            );
            for m in &v.first_mismatches {
                println!(
                    "  mismatch: index {} board {} {} stored {:+} children give {:+}",
                    m.index,
                    awari_egdb::Position(m.pits),
                    m.table,
                    m.stored,
                    m.recomputed
                );
            }
        }
        verdicts.push(v);
    }
    let bad: u64 = verdicts.iter().map(|v| v.mismatches).sum();
    if a.json {
        println!(
            "{}",
            json!({"layers": verdicts, "mismatches": bad, "ok": bad == 0})
        );
    }
    if bad > 0 {
        return Err(Failure::failed(format!(
            "{bad} stored value(s) contradict their children"
        )));
    }
    if !a.json {
        println!(
            "checksums and Bellman check pass on {} layer(s)",
            verdicts.len()
        );
    }
    Ok(())
}
