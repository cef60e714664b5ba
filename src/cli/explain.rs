//! `toolgate explain` (SPEC §10.3).

use std::process::ExitCode;

/// Arguments of `explain`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `explain`.
pub fn run(_args: Args) -> ExitCode {
    eprintln!("toolgate: explain is not built yet");
    ExitCode::from(2)
}
