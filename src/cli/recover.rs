//! `awari recover`: rebuild a lost or damaged manifest from the tables.

use super::verify::runs;
use super::Failure;
use awari_egdb::recover;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct RecoverArgs {
    #[command(flatten)]
    db: super::DbArg,
    /// Known-good checksums: a FILE, or `known`, the list built into awari
    /// for the rule set of --rules (default: the damaged manifest's, else
    /// awari). A layer in the list is trusted only if its tables equal it.
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
    let known = match &a.checksums {
        None => None,
        Some(list) => {
            let rules = match a.db.rules_asked() {
                Some(r) => r,
                None => recover::damaged_rules(&dir).unwrap_or_default(),
            };
            Some(super::verify::known_good(list, &rules)?)
        }
    };
    // The rule set: --rules, else the list's, else the damaged manifest's,
    // else the one the tables pass (a folder that lost its manifest does
    // not say).
    let rules = a.db.rules_asked();
    let budget = a.memory.budget()?;
    let pool = super::pool(a.threads)?;
    let r = pool.install(|| recover::recover(&dir, rules.as_ref(), known.as_ref(), budget))?;
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
                (None, Some(why)) => println!("layer {:>2}: left out: {why}", l.seeds),
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
            "layer(s) {} could not be trusted and were left out; `awari build` rebuilds them",
            runs(&rejected)
        )));
    }
    Ok(())
}
