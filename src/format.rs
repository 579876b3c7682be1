//! Names and checks shared by every file format of the crate (the raw
//! tables and manifest of [`crate::store`], the compressed tables of
//! [`crate::codec`]): which table of a layer a file holds, the rule set the
//! tables are built for, the checksum and the one error that says a file
//! does not have the checksum it should. A leaf module: it uses nothing of
//! the crate.

/// The tag of the awari rule set in manifests and compressed headers (the
/// tag of every folder written before there were rule sets); other rule
/// sets are tagged by their name ([`crate::rules::Rules::tag`]).
pub const RULE_SET: &str = "awari-vu2002";
/// The checksum algorithm of manifests and compressed headers.
pub const CHECKSUM: &str = "xxh3-64";

/// The three tables of a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `scores.n`: the score defined in [`crate::rules`].
    Score,
    /// `lower.n`: the score if every endless play went to the opponent.
    Lower,
    /// `upper.n`: the score if every endless play went to the mover.
    Upper,
}

impl Kind {
    /// File name stem.
    pub fn stem(self) -> &'static str {
        match self {
            Kind::Score => "scores",
            Kind::Lower => "lower",
            Kind::Upper => "upper",
        }
    }
    /// File name of this table for layer `n`.
    pub fn file_name(self, n: u32) -> String {
        format!("{}.{n}", self.stem())
    }
}

/// The largest block size of a compressed table, in entries.
pub const MAX_BLOCK_SIZE: u32 = 64 << 20;
/// The largest dictionary a compressed table may carry, in bytes.
pub const MAX_DICTIONARY: u32 = 1 << 20;

/// A compression setting out of range: which one, and its value
/// ([`BadCompression::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadCompression {
    /// Entries per block outside `1..=MAX_BLOCK_SIZE`.
    #[error("{0} is not in 1..={MAX_BLOCK_SIZE}")]
    BlockSize(u32),
    /// Not a zstd level.
    #[error("{level} is not a zstd level ({lo}..={hi})")]
    Level {
        /// The level given.
        level: i32,
        /// The lowest zstd level.
        lo: i32,
        /// The highest zstd level.
        hi: i32,
    },
    /// A dictionary larger than [`MAX_DICTIONARY`] bytes.
    #[error("{0} bytes, at most {MAX_DICTIONARY}")]
    Dictionary(u32),
}

impl BadCompression {
    /// The one check of compression settings (a zstd level, entries per
    /// block, dictionary bytes with 0 for none), used wherever settings
    /// come in: the command line, the encoder, a compressed header, a
    /// manifest entry. On failure, the first setting out of range (block
    /// size, level, dictionary) and its value.
    pub fn check(level: i32, block_size: u32, dictionary: u32) -> Result<(), BadCompression> {
        if block_size == 0 || block_size > MAX_BLOCK_SIZE {
            return Err(BadCompression::BlockSize(block_size));
        }
        let (lo, hi) = (
            zstd::zstd_safe::min_c_level(),
            zstd::zstd_safe::max_c_level(),
        );
        if !(lo..=hi).contains(&level) {
            return Err(BadCompression::Level { level, lo, hi });
        }
        if dictionary > MAX_DICTIONARY {
            return Err(BadCompression::Dictionary(dictionary));
        }
        Ok(())
    }

    /// The setting's name in messages: `block size`, `level` or
    /// `dictionary`.
    pub fn setting(&self) -> &'static str {
        match self {
            BadCompression::BlockSize(_) => "block size",
            BadCompression::Level { .. } => "level",
            BadCompression::Dictionary(_) => "dictionary",
        }
    }
}

/// [`BadCompression::check`] in the form the codec's checks take: on
/// failure, the setting's name and why, as words.
pub fn check_compression(
    level: i32,
    block_size: u32,
    dictionary: u32,
) -> Result<(), (&'static str, String)> {
    BadCompression::check(level, block_size, dictionary).map_err(|e| (e.setting(), e.to_string()))
}

/// A table's or file's checksum: the `xxh3-64` of its bytes. Manifests,
/// known-good lists and reports write it as 16 lower-case hex digits (its
/// [`Display`](std::fmt::Display) and serde form); anything else read
/// where a checksum belongs is refused when it is parsed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Checksum(pub u64);

impl Checksum {
    /// The checksum of `bytes`.
    pub fn of(bytes: &[u8]) -> Checksum {
        Checksum(xxhash_rust::xxh3::xxh3_64(bytes))
    }
}

impl std::fmt::Display for Checksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl std::fmt::Debug for Checksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Checksum({self})")
    }
}

/// Text that is not a checksum: not 16 hex digits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a checksum (16 hex digits)")]
pub struct NotAChecksum {
    /// The text read.
    pub text: String,
}

impl std::str::FromStr for Checksum {
    type Err = NotAChecksum;

    fn from_str(s: &str) -> Result<Checksum, NotAChecksum> {
        let bad = || NotAChecksum {
            text: s.to_string(),
        };
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        u64::from_str_radix(s, 16).map(Checksum).map_err(|_| bad())
    }
}

impl serde::Serialize for Checksum {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Checksum {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Checksum, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checksum_reads_back_what_it_writes_and_nothing_else() {
        let c = Checksum::of(b"awari");
        assert_eq!(c.to_string().len(), 16);
        assert_eq!(c.to_string().parse::<Checksum>(), Ok(c));
        assert_eq!("00000000000000FF".parse::<Checksum>(), Ok(Checksum(255)));
        for bad in [
            "",
            "ff",
            "000000000000000g",
            "+00000000000000f",
            "0000000000000000 ",
        ] {
            assert!(bad.parse::<Checksum>().is_err(), "{bad:?}");
        }
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, format!("\"{c}\""));
        assert_eq!(serde_json::from_str::<Checksum>(&json).unwrap(), c);
        assert!(serde_json::from_str::<Checksum>("\"xyz\"").is_err());
    }

    #[test]
    fn a_bad_compression_setting_is_named_with_its_value() {
        assert_eq!(BadCompression::check(3, 4096, 0), Ok(()));
        let e = BadCompression::check(3, 0, 0).unwrap_err();
        assert_eq!(e, BadCompression::BlockSize(0));
        assert_eq!(e.setting(), "block size");
        assert!(matches!(
            BadCompression::check(1000, 4096, 0),
            Err(BadCompression::Level { level: 1000, .. })
        ));
        let e = check_compression(3, 4096, MAX_DICTIONARY + 1).unwrap_err();
        assert_eq!(e.0, "dictionary");
        assert_eq!(
            e.1,
            format!("{} bytes, at most {MAX_DICTIONARY}", MAX_DICTIONARY + 1)
        );
    }
}
