//! Loading a result file: a bounded read of a regular file, JSON parsing with the path of a
//! bad field, then [`ResultFile::validate`]. Errors are [`ResultError`]s naming the file.

use std::path::Path;

use hwsurvey_model::files::{FileError, FileProblem};

use crate::file::{
    ResultError, ResultFile, MAX_BYTES_PER_OBJECT, MAX_BYTES_PER_VALUE, MAX_RESULT_BYTES,
    RESULT_SCHEMA, RESULT_SCHEMA_VERSION,
};

/// Loads a result file, checking size, JSON, `schema` and `schema_version`, then its values
/// ([`ResultFile::validate`]).
///
/// Only regular files are read (a FIFO would block, a device such as `/dev/zero` never ends):
/// anything else is refused with [`ResultError::NotRegular`]. The read
/// ([`hwsurvey_model::files::read_regular`]) goes through `Read::take(MAX_RESULT_BYTES + 1)`,
/// so the limit holds whatever the metadata says (a file growing while read, a `/proc` file of
/// size 0): more than [`MAX_RESULT_BYTES`] bytes is [`ResultError::TooLarge`].
pub fn load(path: &Path) -> Result<ResultFile, ResultError> {
    let bytes = hwsurvey_model::files::read_regular(path, "a result file", MAX_RESULT_BYTES)
        .map_err(from_file_error)?;
    let name = path.display().to_string();
    let value = parse_value(&name, &bytes)?;
    // the bytes go before the typed file is built from the document
    drop(bytes);
    from_value(&name, value)
}

/// The [`ResultError`] of what [`hwsurvey_model::files::read_regular`] refused (same messages).
pub(crate) fn from_file_error(e: FileError) -> ResultError {
    let path = e.path.display().to_string();
    match e.problem {
        FileProblem::NotRegular { kind, .. } => ResultError::NotRegular { path, kind },
        FileProblem::TooLarge {
            size, max_bytes, ..
        } => ResultError::TooLarge {
            path,
            size: size.to_string(),
            max_mib: max_bytes >> 20,
        },
        FileProblem::Io(error) => ResultError::Io {
            path,
            message: error.to_string(),
        },
        problem @ FileProblem::NotUtf8 { .. } => ResultError::Io {
            path,
            message: problem.to_string(),
        },
    }
}

/// Parses result-file bytes and validates them ([`ResultFile::validate`]); `name` names the
/// source in errors.
///
/// What it costs is bounded by the bytes: the JSON document is built once, checked
/// ([`crate::consistency::check_document`]), and then consumed into the typed file (its
/// strings and free-form parts moved, not copied); the loader's bounds are in
/// `docs/result-format.md` ("What a loaded file may cost").
pub fn parse(name: &str, bytes: &[u8]) -> Result<ResultFile, ResultError> {
    let value = parse_value(name, bytes)?;
    from_value(name, value)
}

/// The JSON document of result-file bytes in the in-memory (tagged) form, its `schema` and
/// `schema_version` checked.
fn parse_value(name: &str, bytes: &[u8]) -> Result<serde_json::Value, ResultError> {
    let (objects, values) = count_json(bytes);
    for (what, count, per, usual, cost) in [
        ("objects", objects, MAX_BYTES_PER_OBJECT, 200, 600),
        ("values", values, MAX_BYTES_PER_VALUE, 30, 64),
    ] {
        let most = bytes.len() / per + 65_536;
        if count > most {
            return Err(ResultError::TooDense {
                path: name.into(),
                what,
                count,
                bytes: bytes.len(),
                most,
                per,
                usual,
                cost,
            });
        }
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            ResultError::Truncated {
                path: name.into(),
                line: e.line(),
                column: e.column(),
            }
        } else {
            ResultError::NotJson {
                path: name.into(),
                detail: e.to_string(),
            }
        }
    })?;
    let schema = value.get("schema").and_then(|v| v.as_str());
    if schema != Some(RESULT_SCHEMA) {
        return Err(ResultError::WrongSchema {
            path: name.into(),
            detail: format!(
                "not a hwsurvey result file: \"schema\" is {}, expected \"{RESULT_SCHEMA}\"",
                schema
                    .map(|s| format!("\"{s}\""))
                    .unwrap_or_else(|| "missing".into())
            ),
        });
    }
    let version = value.get("schema_version");
    let number = version.and_then(|v| v.as_u64());
    let value = match number {
        // version 1: the tagged form, as held in memory
        Some(1) => value,
        Some(2) => crate::plain::from_file_form(value).map_err(|detail| {
            ResultError::WrongSchema {
                path: name.into(),
                // the map's keys and reasons are the file's words: bounded, on one line
                detail: format!(
                    "result schema version 2 but {}",
                    hwsurvey_model::text::one_line(&detail, 300)
                ),
            }
        })?,
        _ => {
            return Err(ResultError::WrongSchema {
                path: name.into(),
                detail: format!(
                    "result schema version {}, this hwsurvey reads versions 1 and {RESULT_SCHEMA_VERSION}",
                    version
                        .map(|v| hwsurvey_model::text::one_line(&v.to_string(), 40).into_owned())
                        .unwrap_or_else(|| "missing".into())
                ),
            })
        }
    };
    Ok(value)
}

/// The typed, validated file of a document from [`parse_value`], which it consumes.
fn from_value(name: &str, value: serde_json::Value) -> Result<ResultFile, ResultError> {
    let number = value.get("schema_version").and_then(|v| v.as_u64());
    // the checks of the whole document first: the typed file takes its parts over
    crate::validate::check_whole_document(name, number.unwrap_or(1), &value)?;
    // serde_path_to_error names the field of a type error ("tests[3].point.threads"), which a
    // 100,000-line file needs.
    let file: ResultFile =
        serde_path_to_error::deserialize(value).map_err(|e| ResultError::WrongSchema {
            path: name.into(),
            // serde quotes the bad value whole ("unknown variant `<1 MiB>`"): bounded and
            // escaped, so the error stays one short line
            detail: format!(
                "result schema version {} but at {}: {}",
                number.unwrap_or_default(),
                hwsurvey_model::text::one_line(
                    &crate::validate::field_on_disk(
                        &e.path().to_string(),
                        number.unwrap_or_default()
                    ),
                    120
                ),
                hwsurvey_model::text::one_line(&e.inner().to_string(), 200)
            ),
        })?;
    file.validate_typed(name)?;
    Ok(file)
}

/// The objects (`{`) and values (`,` `[` `{` and the first value: one more than the commas)
/// of the JSON text `bytes`, counted outside strings; for a damaged text only an estimate (the
/// parser says what is wrong with it).
fn count_json(bytes: &[u8]) -> (usize, usize) {
    let (mut objects, mut values) = (0, 1);
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => {
                objects += 1;
                values += 1;
            }
            b'[' | b',' => values += 1,
            _ => {}
        }
    }
    (objects, values)
}
