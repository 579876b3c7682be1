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

/// The tables of a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `scores.n`: the score defined in [`crate::rules`].
    Score,
    /// `lower.n`: the score if every endless play went to the opponent.
    Lower,
    /// `upper.n`: the score if every endless play went to the mover.
    Upper,
    /// `dist.n`: the distance to the next capture when both sides keep
    /// the score ([`crate::solve::distance`]).
    Distance,
}

impl Kind {
    /// File name stem.
    pub fn stem(self) -> &'static str {
        match self {
            Kind::Score => "scores",
            Kind::Lower => "lower",
            Kind::Upper => "upper",
            Kind::Distance => "dist",
        }
    }
    /// File name of this table for layer `n`.
    pub fn file_name(self, n: u32) -> String {
        format!("{}.{n}", self.stem())
    }
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
}
