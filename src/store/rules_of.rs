//! The rule set of a folder, and where it was found ([`rules_of`]): its
//! manifest's; without manifest, the one the headers of its compressed
//! files name (a folder of `scores.n.zst` keeps its rule set wherever it
//! is copied); else, for raw tables that name none, the caller's, or awari
//! (the VU database's) assumed, which the reader is told
//! ([`FolderRules::is_assumed`]).

use super::{rules_agree, unlisted_copies, Folder};
use crate::codec::MAGIC;
use crate::error::Result;
use crate::format::Kind;
use crate::rules::{Rules, AWARI, MAX_SEEDS};
use crate::store::StoreError;
use std::io::Read;
use std::path::Path;

/// Where a folder's rule set was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RulesFrom {
    /// Its manifest names it.
    Manifest,
    /// A folder without manifest: the headers of its compressed files
    /// name it.
    Headers,
    /// The caller named it: raw tables without manifest, whose files name
    /// no rule set (or tables handed over in memory).
    Caller,
    /// Nothing names it: raw tables without manifest, taken for the VU
    /// database's, awari.
    Assumed,
}

/// A folder's rule set, and where it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FolderRules {
    /// The rule set the tables are read under.
    pub rules: Rules,
    /// Where it was found.
    pub from: RulesFrom,
}

impl FolderRules {
    /// Whether nothing named the rule set (raw tables without manifest,
    /// taken for awari's): a reader should say so.
    pub fn is_assumed(&self) -> bool {
        self.from == RulesFrom::Assumed
    }

    /// These rules of the folder `dir`, the caller saying its tables follow
    /// `asked`: refused ([`StoreError::RulesDiffer`], naming both) unless `asked`
    /// gives the same tables where a manifest, the headers or the caller
    /// named the rule set; where it was only assumed, `asked` is taken.
    pub fn asked(self, dir: &Path, asked: &Rules) -> Result<FolderRules> {
        let hint = match self.from {
            RulesFrom::Assumed => {
                return Ok(FolderRules {
                    rules: *asked,
                    from: RulesFrom::Caller,
                })
            }
            RulesFrom::Headers => " (the headers of its compressed files name them)",
            RulesFrom::Manifest | RulesFrom::Caller => "",
        };
        rules_agree(dir, &self.rules, asked, hint)?;
        Ok(self)
    }
}

/// The bytes of a compressed file's header that name its rule set: the
/// magic (0..8), then the rule set's tag at 16..32, ASCII, zero-padded,
/// in every format version ([`crate::codec`]).
const TAG_END: usize = 32;

/// The rule set the header of the compressed file `path` names, read from
/// its first [`TAG_END`] bytes alone (the rest of the header, its index
/// and its checksum are checked when the file is opened as a table):
/// `None` for a file that cannot be read, is too short, lacks the magic
/// or names no rule set this program knows; opening it says what is
/// wrong.
fn named_by(path: &Path) -> Option<Rules> {
    let mut b = [0u8; TAG_END];
    std::fs::File::open(path).ok()?.read_exact(&mut b).ok()?;
    if b[..MAGIC.len()] != MAGIC {
        return None;
    }
    let tag = &b[16..TAG_END];
    let used = tag.iter().position(|&c| c == 0).unwrap_or(tag.len());
    if tag[used..].iter().any(|&c| c != 0) {
        return None;
    }
    Rules::by_tag(std::str::from_utf8(&tag[..used]).ok()?)
}

/// The rule set the compressed copies of the scores in the folder `dir`
/// name ([`unlisted_copies`] of every layer; the folder's manifest, if
/// any, is not read): `None` when none names one;
/// [`StoreError::RulesMixed`], naming each file and its rule set, when they
/// name different ones. Reads the first bytes of each file.
pub fn headers_rules(dir: &Path) -> Result<Option<Rules>> {
    let mut named: Vec<(String, Rules)> = Vec::new();
    for n in 0..=MAX_SEEDS {
        for copy in unlisted_copies(dir, n, Kind::Score) {
            let path = copy.path();
            if let Some(r) = named_by(path) {
                let name = path.file_name().unwrap_or_default();
                named.push((name.to_string_lossy().into_owned(), r));
            }
        }
    }
    let Some((_, first)) = named.first() else {
        return Ok(None);
    };
    if named.iter().all(|(_, r)| r == first) {
        return Ok(Some(*first));
    }
    Err(StoreError::RulesMixed {
        dir: dir.to_path_buf(),
        files: named.into_iter().map(|(f, r)| (f, r.name)).collect(),
    }
    .into())
}

/// The rule set of the folder `dir`, which [`read_folder`](super::read_folder)
/// found to be `folder`, and where it was found:
///
/// * one of ours: its manifest's ([`RulesFrom::Manifest`]);
/// * a folder without manifest whose compressed files name a rule set:
///   that one ([`RulesFrom::Headers`]); files that name different ones
///   are refused ([`StoreError::RulesMixed`]);
/// * raw tables without manifest (a VU dataset folder): `asked`
///   ([`RulesFrom::Caller`]), else awari, the VU database's, assumed
///   ([`RulesFrom::Assumed`]).
///
/// `asked`, the caller's rule set, must give the same tables as a manifest
/// or headers that name one ([`FolderRules::asked`]). `None` for an empty
/// folder.
pub fn rules_of(dir: &Path, folder: &Folder, asked: Option<&Rules>) -> Result<Option<FolderRules>> {
    let found = match folder {
        Folder::Ours(m) => FolderRules {
            rules: m.rules(),
            from: RulesFrom::Manifest,
        },
        Folder::Vu => match headers_rules(dir)? {
            Some(rules) => FolderRules {
                rules,
                from: RulesFrom::Headers,
            },
            None => FolderRules {
                rules: AWARI,
                from: RulesFrom::Assumed,
            },
        },
        Folder::Empty => return Ok(None),
    };
    match asked {
        Some(a) => found.asked(dir, a).map(Some),
        None => Ok(Some(found)),
    }
}
