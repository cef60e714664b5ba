//! `toolgate match-rules [--dialect strict|claude-code] [FILE]` (SPEC §10.1).

use std::process::ExitCode;

/// Arguments of `match-rules`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `match-rules`.
pub fn run(_args: Args) -> ExitCode {
    eprintln!("toolgate: match-rules is not built yet");
    ExitCode::from(2)
}
