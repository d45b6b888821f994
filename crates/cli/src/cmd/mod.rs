//! One module per subcommand: typed options (clap) and a `run` that calls the libraries.

pub mod capture;
pub mod compare;
pub mod completions;
pub mod elf;
pub mod fleet;
pub mod man;
pub mod probe;
pub mod qualify;
pub mod run;
pub mod run_output;
pub mod run_progress;
pub mod snapshot;

/// Runs `checked`; an error (bad input: a file that cannot be read, a bad option value) is
/// printed as one `hwsurvey: error:` line and exits with `input_error_code`, so that the
/// command's other exit codes keep their meaning (a verdict, a host that stood out).
pub fn exit_on_input_error<A>(
    args: A,
    checked: fn(A) -> anyhow::Result<std::process::ExitCode>,
    input_error_code: u8,
) -> anyhow::Result<std::process::ExitCode> {
    match checked(args) {
        Ok(code) => Ok(code),
        Err(error) => {
            errln!(
                "hwsurvey: error: {}",
                crate::error_line(&format!("{error:#}"))
            );
            Ok(std::process::ExitCode::from(input_error_code))
        }
    }
}
