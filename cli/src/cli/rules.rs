//! `awari rules [NAME] [--json]`: the rule sets field by field, side by
//! side, each field with its meaning.

use super::Failure;
use awari_egdb::rules::{Rules, PRESETS};
use clap::Args;

#[derive(Args)]
#[command(after_help = super::EXIT_CODES)]
pub struct RulesArgs {
    /// Show only this rule set (awari, abapa, olympiad or awale); default:
    /// all of them, side by side.
    #[arg(value_name = "NAME", value_parser = super::parse_rules)]
    name: Option<Rules>,
    /// Print JSON: one object per rule set, its name and every field.
    #[arg(long)]
    json: bool,
}

pub fn run(a: RulesArgs) -> Result<(), Failure> {
    let shown: Vec<Rules> = match a.name {
        Some(r) => vec![r],
        None => PRESETS.to_vec(),
    };
    if a.json {
        let v: Vec<serde_json::Value> = shown.iter().map(Rules::to_json).collect();
        let v = match a.name {
            Some(_) => v.into_iter().next().expect("one"),
            None => serde_json::Value::Array(v),
        };
        println!("{}", serde_json::to_string_pretty(&v).expect("JSON"));
        return Ok(());
    }
    let tables: Vec<Vec<_>> = shown.iter().map(Rules::fields).collect();
    let width = shown.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for (i, f) in tables[0].iter().enumerate() {
        println!(
            "{}{}: {}",
            f.name,
            if f.tables { "" } else { " (play only)" },
            f.meaning
        );
        for (r, fields) in shown.iter().zip(&tables) {
            let g = &fields[i];
            println!("  {:<width$}  {}  ({})", r.name, g.words, g.value);
        }
    }
    println!(
        "\nIn every rule set a game that would go on forever is worth 0 to the difference of \
         the sides' captures (the seeds left split evenly, or nobody's): that is what the score \
         tables assume; lower and upper give every such game to one side."
    );
    Ok(())
}
