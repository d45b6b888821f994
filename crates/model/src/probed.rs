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
/// `{"known": VALUE}` or `{"unknown": {"reason": "missing", "path": "..."}}` (the form in
/// memory and in version 1 documents); [`to_plain`] turns a whole document into plain values
/// with `null` for unknowns and one map of the reasons. Read from either form: a plain value
/// is known, a bare `null` (no reason kept) is unknown for "no reason recorded", except where
/// `T` itself takes `null` (an `Option`: known to be absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Probed<T> {
    /// Read through a JSON value and dispatched by hand (not an untagged enum), so that a
    /// value of the wrong type keeps serde's own message (`invalid type: string "x", expected
    /// u64`) instead of "did not match any variant".
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let v = serde_json::Value::deserialize(d)?;
        match as_tagged(&v) {
            Some(Ok(known)) => {
                return T::deserialize(known.clone())
                    .map(Probed::Known)
                    .map_err(D::Error::custom)
            }
            Some(Err(reason)) => {
                return Unknown::deserialize(reason.clone())
                    .map(Probed::Unknown)
                    .map_err(D::Error::custom)
            }
            None => {}
        }
        if v.is_null() {
            // an Option is known to be absent; any other type is unknown without a reason
            return Ok(T::deserialize(serde_json::Value::Null)
                .map(Probed::Known)
                .unwrap_or_else(|_| {
                    Probed::Unknown(Unknown::Other {
                        detail: "unknown (null, no reason recorded)".into(),
                    })
                }));
        }
        T::deserialize(v)
            .map(Probed::Known)
            .map_err(D::Error::custom)
    }
}

/// The name of the map of reasons in a plain document ([`to_plain`]).
pub const UNKNOWN_MAP: &str = "unknown";

/// A document (e.g. the probe's `Machine`) in the form people and `jq` read: every
/// `{"known": v}` becomes `v`, every `{"unknown": reason}` becomes `null`, and the reasons go
/// into one map `"unknown"` at the top, keyed by the JSON Pointer (RFC 6901) of the value:
/// `{"cpu": {"max_mhz": null}, "unknown": {"/cpu/max_mhz": {"reason": "missing", "path":
/// "/sys/..."}}}`. Nested values of a known value are turned too. The top must be an object
/// (a document); anything else is returned turned, without a map.
pub fn to_plain(doc: &serde_json::Value) -> serde_json::Value {
    let mut reasons = serde_json::Map::new();
    let mut out = to_plain_at(doc, "", &mut reasons);
    if let Some(top) = out.as_object_mut() {
        top.insert(UNKNOWN_MAP.into(), serde_json::Value::Object(reasons));
    }
    out
}

/// [`to_plain`] of a value that sits at the JSON Pointer `at` of a larger document, its reasons
/// added to `reasons` keyed by their pointers from that document's top.
pub fn to_plain_at(
    v: &serde_json::Value,
    at: &str,
    reasons: &mut serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    plain_walk(v, &mut at.to_string(), reasons)
}

/// `{"known": v}` or `{"unknown": {"reason": ...}}`: one key, and an unknown holds a reason.
fn as_tagged(v: &serde_json::Value) -> Option<Result<&serde_json::Value, &serde_json::Value>> {
    let m = v.as_object().filter(|m| m.len() == 1)?;
    if let Some(k) = m.get("known") {
        return Some(Ok(k));
    }
    m.get("unknown")
        .filter(|u| u.get("reason").is_some_and(|r| r.is_string()))
        .map(Err)
}

fn plain_walk(
    v: &serde_json::Value,
    path: &mut String,
    reasons: &mut serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    use serde_json::Value;
    match as_tagged(v) {
        Some(Ok(known)) => return plain_walk(known, path, reasons),
        Some(Err(reason)) => {
            reasons.insert(path.clone(), reason.clone());
            return Value::Null;
        }
        None => {}
    }
    let mut child = |path: &mut String, key: &str, v: &Value| {
        let len = path.len();
        path.push('/');
        path.push_str(&key.replace('~', "~0").replace('/', "~1"));
        let out = plain_walk(v, path, reasons);
        path.truncate(len);
        out
    };
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), child(path, k, v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, v)| child(path, &i.to_string(), v))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The reverse of [`to_plain`] as far as a document without its types can go: takes the
/// `"unknown"` map off the top and puts each reason back as `{"unknown": reason}` at its
/// pointer. Known values stay plain; reading the result into the document's type
/// (whose [`Probed`] fields take plain values as known) completes the round trip.
///
/// # Errors
/// The map is not an object, or one of its pointers names no `null` value in the document:
/// the message names the pointer.
pub fn from_plain(mut doc: serde_json::Value) -> Result<serde_json::Value, String> {
    let Some(top) = doc.as_object_mut() else {
        return Ok(doc);
    };
    let reasons = match top.remove(UNKNOWN_MAP) {
        None => return Ok(doc),
        Some(serde_json::Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "\"{UNKNOWN_MAP}\" is not a map of JSON Pointers to reasons: {}",
                crate::text::one_line(&other.to_string(), 80)
            ))
        }
    };
    for (pointer, reason) in reasons {
        match doc.pointer_mut(&pointer) {
            Some(slot) if slot.is_null() => *slot = serde_json::json!({ "unknown": reason }),
            Some(_) => {
                return Err(format!(
                    "\"{UNKNOWN_MAP}\" names {pointer:?}, which holds a value, not null"
                ))
            }
            None => {
                return Err(format!(
                    "\"{UNKNOWN_MAP}\" names {pointer:?}, which is not in the document"
                ))
            }
        }
    }
    Ok(doc)
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
        n: Probed<u32>,
        #[serde(default = "absent")]
        limit: Probed<Option<u64>>,
    }

    fn absent() -> Probed<Option<u64>> {
        Probed::Known(Some(1))
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
        let e = serde_json::from_str::<Holder>(r#"{"n": "four"}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("invalid type: string \"four\", expected u32"),
            "{e}"
        );
        // null: unknown for a plain type, known-absent for an Option
        let null: Holder = serde_json::from_str(r#"{"n": null, "limit": null}"#).unwrap();
        assert!(null.n.why_unknown().is_some());
        assert_eq!(null.limit, Probed::Known(None));
    }

    #[test]
    fn plain_document_round_trip() {
        let tagged = serde_json::json!({
            "schema_version": 2,
            "cpu": {"model": {"known": "Xeon"}, "max_mhz": {"unknown": {"reason": "missing", "path": "/sys/x"}},
                    "caches": [{"size": {"known": 32768}}, {"size": {"unknown": {"reason": "other", "detail": "no"}}}]},
            "limit": {"known": null},
            "nested": {"known": {"inner": {"unknown": {"reason": "missing", "path": "/y"}}}},
            "odd/key~": {"unknown": {"reason": "missing", "path": "/z"}},
        });
        let plain = to_plain(&tagged);
        assert_eq!(plain["cpu"]["model"], "Xeon");
        assert!(plain["cpu"]["max_mhz"].is_null());
        assert_eq!(plain["cpu"]["caches"][0]["size"], 32768);
        assert!(plain["limit"].is_null());
        let reasons = plain["unknown"].as_object().unwrap();
        let keys: Vec<&str> = reasons.keys().map(|k| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "/cpu/caches/1/size",
                "/cpu/max_mhz",
                "/nested/inner",
                "/odd~1key~0"
            ]
        );
        assert_eq!(reasons["/cpu/max_mhz"]["path"], "/sys/x");
        // back: the reasons return to their places, known values stay plain
        let back = from_plain(plain).unwrap();
        assert_eq!(back["cpu"]["max_mhz"], tagged["cpu"]["max_mhz"]);
        assert_eq!(back["odd/key~"], tagged["odd/key~"]);
        assert_eq!(back["cpu"]["model"], "Xeon");
        assert!(back.get("unknown").is_none());
    }

    #[test]
    fn from_plain_names_a_bad_pointer() {
        let doc =
            serde_json::json!({"a": 1, "unknown": {"/b": {"reason": "other", "detail": "x"}}});
        assert!(from_plain(doc)
            .unwrap_err()
            .contains("\"/b\", which is not in the document"));
        let doc =
            serde_json::json!({"a": 1, "unknown": {"/a": {"reason": "other", "detail": "x"}}});
        assert!(from_plain(doc).unwrap_err().contains("holds a value"));
        let doc = serde_json::json!({"a": 1, "unknown": [1]});
        assert!(from_plain(doc).unwrap_err().contains("not a map"));
    }
}
