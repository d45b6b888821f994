//! SMBIOS strings as firmware writes them, kept one way wherever they are read from: the DMI
//! table (`hwsurvey_probe::memory::smbios`), `/sys/class/dmi/id` (`hwsurvey_probe::firmware`)
//! and saved `dmidecode` text ([`crate::memory::dmidecode`], [`crate::firmware`]), and the
//! machine's identity ([`crate::os::host_id`]). [`clean`] trims them and drops the
//! placeholders firmware writes where it has nothing to say.

/// The placeholders firmware writes into an SMBIOS string where it has nothing to say
/// (DSP0134 leaves unset strings to the vendor; these are the ones seen in captures and in
/// dmidecode's own output), compared without regard to case.
pub const PLACEHOLDERS: &[&str] = &[
    "not specified",
    "not provided",
    "not applicable",
    "n/a",
    "none",
    "unknown",
    "<out of spec>",
    "to be filled by o.e.m.",
    "default string",
    "system product name",
    "system manufacturer",
    "system version",
    "system serial number",
];

/// An SMBIOS string as kept: NULs and white space trimmed (the C6145 pads `sys_vendor` with
/// spaces), `None` when empty or one of the [`PLACEHOLDERS`].
pub fn clean(v: &str) -> Option<String> {
    let t = v.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    (!t.is_empty() && !PLACEHOLDERS.contains(&t.to_ascii_lowercase().as_str()))
        .then(|| t.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_and_padding() {
        assert_eq!(
            clean("Dell                            ").as_deref(),
            Some("Dell")
        );
        assert_eq!(clean("To Be Filled By O.E.M."), None);
        assert_eq!(clean("NOT PROVIDED"), None);
        assert_eq!(clean(" \0"), None);
        assert_eq!(clean("A00").as_deref(), Some("A00"));
        assert_eq!(clean("Samsung").as_deref(), Some("Samsung"));
    }
}
