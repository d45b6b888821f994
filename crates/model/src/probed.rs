//! [`Probed<T>`]: a value that is either known, or unknown with the reason.
//!
//! "Absent is not zero": a cache whose `size` file is missing, DIMMs on a machine without
//! SMBIOS, or a PCIe link speed that reads "Unknown" are all reported with *why*, never as 0.

use serde::{Deserialize, Serialize};

/// Why a value could not be had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Unknown {
    /// The file that holds it does not exist (on this kernel, architecture or capture).
    Missing {
        /// The path, as seen under the probe's root.
        path: String,
    },
    /// The file exists but could not be read (e.g. root-only `/sys/firmware/dmi/tables`).
    PermissionDenied {
        /// The path, as seen under the probe's root.
        path: String,
    },
    /// The file was read but its text is not what the kernel writes there.
    Invalid {
        /// The path, as seen under the probe's root.
        path: String,
        /// What was expected and what was found.
        detail: String,
    },
    /// The concept does not exist on this architecture or platform (e.g. cpuid on sparc64,
    /// SMBIOS on most e2k and sparc64 machines).
    NotOnThisPlatform {
        /// Which architecture or platform, and what is missing there.
        detail: String,
    },
    /// Any other reason, in words.
    Other {
        /// The reason.
        detail: String,
    },
}

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unknown::Missing { path } => write!(f, "{path} is missing"),
            Unknown::PermissionDenied { path } => write!(f, "{path}: permission denied"),
            Unknown::Invalid { path, detail } => write!(f, "{path}: {detail}"),
            Unknown::NotOnThisPlatform { detail } => write!(f, "not on this platform: {detail}"),
            Unknown::Other { detail } => f.write_str(detail),
        }
    }
}

/// A probed value, or the reason it is unknown. Serialized as
/// `{"known": VALUE}` or `{"unknown": {"reason": "missing", "path": "..."}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Probed<T> {
    /// The value was read.
    Known(T),
    /// The value could not be had, and why.
    Unknown(Unknown),
}

impl<T> Probed<T> {
    /// The value, if known.
    pub fn known(&self) -> Option<&T> {
        match self {
            Probed::Known(v) => Some(v),
            Probed::Unknown(_) => None,
        }
    }
    /// The reason, if unknown.
    pub fn why_unknown(&self) -> Option<&Unknown> {
        match self {
            Probed::Known(_) => None,
            Probed::Unknown(u) => Some(u),
        }
    }
    /// Maps a known value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Probed<U> {
        match self {
            Probed::Known(v) => Probed::Known(f(v)),
            Probed::Unknown(u) => Probed::Unknown(u),
        }
    }
    /// A reference view.
    pub fn as_ref(&self) -> Probed<&T> {
        match self {
            Probed::Known(v) => Probed::Known(v),
            Probed::Unknown(u) => Probed::Unknown(u.clone()),
        }
    }
}

impl<T: std::fmt::Display> Probed<T> {
    /// The value, or `unknown (reason)`, for people.
    pub fn display(&self) -> String {
        match self {
            Probed::Known(v) => v.to_string(),
            Probed::Unknown(u) => format!("unknown ({u})"),
        }
    }
}

/// Reads a `Probed<T>` written either in its own form (`{"known": 4}`, `{"unknown": {...}}`)
/// or as a plain value (`4`, read as known). For fields that became `Probed` within one
/// document schema version, so files written before still load:
/// `#[serde(deserialize_with = "hwsurvey_model::probed::deserialize_probed_or_plain")]`.
pub fn deserialize_probed_or_plain<'de, D, T>(d: D) -> Result<Probed<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either<T> {
        Probed(Probed<T>),
        Plain(T),
    }
    Ok(match Either::deserialize(d)? {
        Either::Probed(p) => p,
        Either::Plain(v) => Probed::Known(v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape() {
        let v: Probed<u64> = Probed::Known(3);
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"known":3}"#);
        let u: Probed<u64> = Probed::Unknown(Unknown::Missing {
            path: "/sys/x".into(),
        });
        assert_eq!(
            serde_json::to_string(&u).unwrap(),
            r#"{"unknown":{"reason":"missing","path":"/sys/x"}}"#
        );
        assert_eq!(u.display(), "unknown (/sys/x is missing)");
    }

    #[derive(Deserialize)]
    struct Holder {
        #[serde(deserialize_with = "deserialize_probed_or_plain")]
        n: Probed<u32>,
    }

    #[test]
    fn plain_or_probed() {
        let plain: Holder = serde_json::from_str(r#"{"n": 4}"#).unwrap();
        assert_eq!(plain.n, Probed::Known(4));
        let known: Holder = serde_json::from_str(r#"{"n": {"known": 8}}"#).unwrap();
        assert_eq!(known.n, Probed::Known(8));
        let unknown: Holder =
            serde_json::from_str(r#"{"n": {"unknown": {"reason": "missing", "path": "/x"}}}"#)
                .unwrap();
        assert!(unknown.n.why_unknown().is_some());
        assert!(serde_json::from_str::<Holder>(r#"{"n": "four"}"#).is_err());
    }
}
