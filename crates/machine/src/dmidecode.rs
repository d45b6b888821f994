//! Saved `dmidecode` text (`dmidecode`, `dmidecode -t memory`, `-t 16,17`), versions 2.12
//! through 3.x, split into its records ([`split_records`]): the format that the memory records
//! ([`crate::memory::dmidecode`]) and the BIOS, system and board records
//! ([`crate::firmware::from_dmidecode_text`]) are read from.
//!
//! Format: records start with `Handle 0xHHHH, DMI type N, L bytes`, then a title line, then
//! `<TAB>Key: Value` lines (deeper-indented lines are lists and are skipped). Indentation is
//! read as written: a record's first indented line sets its field depth (a tab as dmidecode
//! prints it, or spaces where the text went through an editor or a web page), deeper lines
//! are list items. Its strings are kept with [`crate::dmi::clean`], as from the DMI table.

/// One record of `dmidecode` text: the header's DMI type and handle, and the fields at the
/// record's field depth as `(name, value)`, trimmed, in text order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// `DMI type N` of the header; `None` when it does not read as a number.
    pub dmi_type: Option<u8>,
    /// `Handle 0xHHHH` of the header.
    pub handle: Option<u16>,
    /// Leading whitespace (bytes) of the record's first indented line: its field depth.
    field_indent: Option<usize>,
    /// `(name, value)` of each field (`("Vendor", "Dell Inc.")`).
    pub fields: Vec<(&'a str, &'a str)>,
}

impl<'a> Record<'a> {
    /// The value of field `key` (case-insensitive), if the record has it.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| *v)
    }
}

/// `0x1000` (or `0X1000`) -> 0x1000; `None` for anything else.
pub fn parse_hex_u16(text: &str) -> Option<u16> {
    let t = text.trim();
    let t = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"))?;
    u16::from_str_radix(t, 16).ok()
}

/// `Handle 0x1100, DMI type 17, 84 bytes` -> (handle, type).
fn parse_header(line: &str) -> (Option<u16>, Option<u8>) {
    let mut handle = None;
    let mut dmi_type = None;
    for part in line.split(',') {
        let part = part.trim();
        if let Some(h) = part.strip_prefix("Handle ") {
            handle = parse_hex_u16(h);
        } else if let Some(t) = part.strip_prefix("DMI type ") {
            dmi_type = t.trim().parse().ok();
        }
    }
    (handle, dmi_type)
}

/// The records of `types` in saved `dmidecode` text, in text order: `(DMI type, fields)`
/// with each field's name and value as dmidecode prints them (`("Vendor", "Dell Inc.")`).
/// Pure; never panics.
pub fn records_of_types<'a>(text: &'a str, types: &[u8]) -> Vec<(u8, Vec<(&'a str, &'a str)>)> {
    split_records(text)
        .records
        .into_iter()
        .filter_map(|r| {
            let t = r.dmi_type.filter(|t| types.contains(t))?;
            Some((t, r.fields))
        })
        .collect()
}

/// A `dmidecode` text split into its records, with the versions its header lines name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DmidecodeRecords<'a> {
    /// The records, in text order.
    pub records: Vec<Record<'a>>,
    /// The `# dmidecode X.Y` header line's version.
    pub dmidecode_version: Option<String>,
    /// The `SMBIOS X.Y present.` line's version.
    pub smbios_version: Option<String>,
}

/// Splits saved `dmidecode` text into its records (see the module docs). Pure; never panics;
/// text that holds no record gives none.
pub fn split_records(text: &str) -> DmidecodeRecords<'_> {
    let mut records = Vec::new();
    let mut current: Option<Record<'_>> = None;
    let mut dmidecode_version = None;
    let mut smbios_version = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("# dmidecode ") {
            dmidecode_version = rest.split_whitespace().next().map(str::to_string);
            continue;
        }
        if let Some(rest) = line.strip_prefix("SMBIOS ") {
            if rest.trim_end().ends_with("present.") {
                smbios_version = rest.split_whitespace().next().map(str::to_string);
            }
            continue;
        }
        if line.starts_with("Handle ") {
            if let Some(r) = current.take() {
                records.push(r);
            }
            let (handle, dmi_type) = parse_header(line);
            current = Some(Record {
                dmi_type,
                handle,
                field_indent: None,
                fields: Vec::new(),
            });
            continue;
        }
        let Some(r) = current.as_mut() else {
            continue;
        };
        // At the record's field depth (one tab as dmidecode prints it): a field. Deeper: a
        // list item under the previous field. Not indented: the title, or other text.
        let field = line.trim_start_matches([' ', '\t']);
        let indent = line.len() - field.len();
        if indent == 0 || field.is_empty() {
            continue;
        }
        let depth = *r.field_indent.get_or_insert(indent);
        if indent > depth {
            continue;
        }
        if let Some((k, v)) = field.split_once(':') {
            r.fields.push((k.trim(), v.trim()));
        }
    }
    if let Some(r) = current.take() {
        records.push(r);
    }
    DmidecodeRecords {
        records,
        dmidecode_version,
        smbios_version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_with_their_versions_and_fields_at_their_depth() {
        let t = split_records(
            "# dmidecode 3.2\nSMBIOS 3.2 present.\n\nHandle 0x0000, DMI type 0, 24 bytes\n\
             BIOS Information\n\tVendor: Dell Inc.\n\tCharacteristics:\n\t\tPCI is supported\n\n\
             Handle 0x1100, DMI type 17, 84 bytes\nMemory Device\n    Size: 8 GB\n",
        );
        assert_eq!(t.dmidecode_version.as_deref(), Some("3.2"));
        assert_eq!(t.smbios_version.as_deref(), Some("3.2"));
        assert_eq!(t.records.len(), 2);
        assert_eq!(
            (t.records[0].dmi_type, t.records[0].handle),
            (Some(0), Some(0))
        );
        assert_eq!(
            t.records[0].fields,
            [("Vendor", "Dell Inc."), ("Characteristics", "")]
        );
        assert_eq!(t.records[1].get("size"), Some("8 GB"));
        assert_eq!(
            records_of_types("Handle 0x0000, DMI type 0\n\tVendor: x\n", &[1]),
            []
        );
        assert!(split_records("hello\n").records.is_empty());
    }
}
