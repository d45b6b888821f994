//! The qualification a run stores in its result file ([`ResultFile::qualification`]), as the
//! engine writes the file: a [`Qualifier`] the caller puts in the engine's run request, asked
//! before every write (at the start, after every test, at the end) so that an interrupted
//! file holds findings too.
//!
//! The trait lives here, beside the file it fills, so that the qualify crate (a reader of
//! result files) implements it (`hwsurvey_qualify::stored::RunQualifier`) without depending
//! on the engine, and the engine asks it without depending on qualify.

use crate::qualification::StoredFindings;
use crate::ResultFile;

/// Evaluates qualification rules on a result file as it is written.
pub trait Qualifier {
    /// The document stored in [`ResultFile::qualification`] for `file` as it stands (the
    /// machine, the plan and the tests finished so far): `label` names the file in the
    /// findings' evidence (its path as the run writes it), `evaluated_at` is the time of the
    /// write (RFC 3339 UTC). `None`: nothing to store.
    fn qualification(
        &self,
        label: &str,
        file: &ResultFile,
        evaluated_at: String,
    ) -> Option<StoredFindings>;
}
