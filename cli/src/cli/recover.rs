//! `awari recover`: rebuild a lost or damaged manifest from the tables.

use super::verify::runs;
use super::Failure;
use awari_egdb::recover;
use awari_egdb::rules::{Rules, PRESETS};
use awari_egdb::verify;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct RecoverArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Known-good checksums: a FILE, or `known`, the lists built into awari
    /// (the one of --rules or of the damaged manifest's rule set, else all
    /// four: the rule set is the one whose list the tables match). A layer
    /// in the list is trusted only if its tables equal it.
    /// Layers not in the list must pass the Bellman check on top of
    /// recovered layers.
    #[arg(long, value_name = "FILE|known")]
    checksums: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long, value_name = "T")]
    threads: Option<usize>,
    #[command(flatten)]
    memory: super::MemoryArg,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(a: RecoverArgs) -> Result<(), Failure> {
    let dir = a.db.path();
    // `known`: the built-in list of the rule set asked for (or the damaged
    // manifest names), else all of them: the tables tell which fits.
    let asked = a.db.rules_asked().or_else(|| recover::damaged_rules(&dir));
    let known: Vec<verify::KnownGood> = match &a.checksums {
        None => Vec::new(),
        Some(list) if list.as_path() == std::path::Path::new(super::verify::KNOWN) => match asked {
            Some(r) => vec![super::verify::known_good(list, &r)?],
            None => PRESETS
                .iter()
                .filter_map(verify::builtin_known_good)
                .collect(),
        },
        Some(list) => vec![super::verify::known_good(list, &Rules::default())?],
    };
    // The rule set: --rules, else the list's, else the damaged manifest's,
    // else the one the tables pass (a folder that lost its manifest does
    // not say).
    let rules = a.db.rules_asked();
    let budget = a.memory.budget()?;
    let pool = super::pool(a.threads)?;
    let r = pool.install(|| recover::recover(&dir, rules.as_ref(), &known, budget))?;
    let rejected: Vec<u32> = r.rejected().map(|l| l.seeds).collect();
    let recovered: Vec<u32> = r.recovered().map(|l| l.seeds).collect();
    if a.json {
        println!("{}", serde_json::to_string(&r).expect("JSON"));
    } else {
        if let Some(p) = &r.damaged_manifest {
            println!("the damaged manifest was kept as {}", p.display());
        }
        for l in &r.layers {
            match (l.trust, &l.reason) {
                (Some(t), _) => println!("layer {:>2}: recovered ({})", l.seeds, t.describe()),
                (None, Some(why)) => {
                    println!("layer {:>2}: left out: {why}", l.seeds);
                    if !l.set_aside.is_empty() {
                        println!(
                            "          its files were kept as {}",
                            l.set_aside.join(", ")
                        );
                    }
                }
                (None, None) => {}
            }
        }
        if !r.compressed.is_empty() {
            println!(
                "compressed copies listed again: {}",
                r.compressed.join(", ")
            );
        }
        println!(
            "manifest.json written for the {} rules with {} layer(s){}",
            r.rules,
            recovered.len(),
            if recovered.is_empty() {
                String::new()
            } else {
                format!(" ({})", runs(&recovered))
            }
        );
    }
    if !rejected.is_empty() {
        return Err(Failure::failed(format!(
            "layer(s) {} could not be trusted and were left out (their files kept as \
             NAME.untrusted); `awari build` builds them again",
            runs(&rejected)
        )));
    }
    Ok(())
}
