//! How some of the errors' messages write their figures: bytes
//! ([`human`]), layer lists ([`Layers`]) and the files of the store's
//! `RulesMixed`.

use std::fmt;

/// The files of the store's `RulesMixed` by rule set: `awale: scores.0.zst,
/// scores.1.zst; abapa: scores.2.zst`.
pub fn mixed(files: &[(String, &'static str)]) -> String {
    let mut by: Vec<(&str, Vec<&str>)> = Vec::new();
    for (f, r) in files {
        match by.iter_mut().find(|(name, _)| name == r) {
            Some((_, v)) => v.push(f),
            None => by.push((r, vec![f])),
        }
    }
    let each: Vec<String> = by
        .iter()
        .map(|(r, v)| format!("{r}: {}", v.join(", ")))
        .collect();
    each.join("; ")
}

/// Bytes as a short human figure (`1.5 GiB`).
pub fn human(b: u64) -> String {
    bytesize::ByteSize(b).display().iec().to_string()
}

/// Displays a list of layers as ranges (`0..=20, 22`).
pub struct Layers<'a>(pub &'a [u32]);

impl fmt::Display for Layers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        let v = self.0;
        while i < v.len() {
            let mut j = i;
            while j + 1 < v.len() && (v[j + 1] == v[j] + 1 || (v[j] == 46 && v[j + 1] == 48)) {
                j += 1;
            }
            if i > 0 {
                f.write_str(", ")?;
            }
            if j == i {
                write!(f, "{}", v[i])?;
            } else {
                write!(f, "{}..={}", v[i], v[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}
