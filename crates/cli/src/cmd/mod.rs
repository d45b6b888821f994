//! One module per subcommand: typed options (clap) and a `run` that calls the libraries.

pub mod compare;
pub mod completions;
pub mod elf;
pub mod fleet;
pub mod probe;
pub mod qualify;
pub mod run;
pub mod snapshot;
