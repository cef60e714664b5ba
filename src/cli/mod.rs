//! The command-line tool: argument parsing and the commands, nothing else.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

pub mod compile;
pub mod coverage;
pub mod eval;
pub mod explain;
pub mod export;
pub mod hook;
pub mod install;
pub mod lint;
pub mod match_rules;
pub mod policy_args;
pub mod test;

/// toolgate: allow, ask about or deny an AI agent's tool calls.
#[derive(Parser, Debug)]
#[command(name = "toolgate", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Does each rule match its call? (a JSON array of cases in, booleans out)
    MatchRules(match_rules::Args),
    /// Decide a JSONL stream of calls (one JSON decision a line out).
    Eval(eval::Args),
    /// Precompile a policy into an image that loads without compiling.
    Compile(compile::Args),
    /// Explain how a command is read, or how a call is decided.
    Explain(explain::Args),
    /// Answer one hook call of a harness (stdin: its hook input).
    Hook(hook::Args),
    /// Install the hook into a harness's settings.
    Install(install::Args),
    /// How a harness enforces each rule of a tuff policy.
    Coverage(coverage::Args),
    /// A tuff policy as a harness's native permission settings.
    Export(export::Args),
    /// Report rules that do not parse, never decide, or allow more than
    /// they seem to.
    Lint(lint::Args),
    /// Check a file of calls against the verdicts they must get.
    Test(test::Args),
}

/// The parser of `toolgate hook` alone: the same subcommand as in [`Cli`],
/// without building every other subcommand's parser (a hook is a process
/// per tool call; clap building the whole tree costs a quarter of a
/// millisecond, more than deciding the call).
#[derive(Parser, Debug)]
#[command(name = "toolgate", version, about)]
struct HookCli {
    #[command(subcommand)]
    command: HookCommand,
}

#[derive(Subcommand, Debug)]
enum HookCommand {
    /// Answer one hook call of a harness (stdin: its hook input).
    Hook(hook::Args),
}

/// Runs the command line; returns the process exit code.
pub fn main() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|a| a == "hook") {
        let HookCli {
            command: HookCommand::Hook(args),
        } = HookCli::parse();
        return hook::run(args);
    }
    let cli = Cli::parse();
    match cli.command {
        Command::MatchRules(args) => match_rules::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Compile(args) => compile::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Hook(args) => hook::run(args),
        Command::Install(args) => install::run(args),
        Command::Coverage(args) => coverage::run(args),
        Command::Export(args) => export::run(args),
        Command::Lint(args) => lint::run(args),
        Command::Test(args) => test::run(args),
    }
}

/// Writes `text` to standard output and flushes it. A reader that went
/// away (`toolgate explain … | head -1`) is not an error: the rest of the
/// output is dropped and the command ends as it would have. Any other
/// write error is reported on stderr and returned as `Err`, for the
/// command to exit 2.
pub(crate) fn emit(text: &str) -> Result<(), ()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => {
            eprintln!("toolgate: cannot write the output: {e}");
            Err(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `toolgate hook …` parsed by the hook's own parser and by the whole
    /// command line: the same arguments, the same help, the same errors.
    #[test]
    fn the_hook_parser_parses_as_the_whole_command_line() {
        let lines: &[&[&str]] = &[
            &["hook", "claude", "--policy", "p.json"],
            &[
                "hook",
                "cursor",
                "--event",
                "beforeReadFile",
                "--allow",
                "Read",
                "--no-cache",
            ],
            &[
                "hook",
                "codex",
                "--deny",
                "Bash(rm *)",
                "--budget-ms",
                "50",
                "--log",
                "l",
            ],
            &[
                "hook",
                "claude",
                "--claude-settings",
                "--tuff",
                "x",
                "--dir-prefix",
                "d",
            ],
            &["hook", "--help"],
            &["hook", "claude", "--help"],
            &["hook", "-h"],
            &["hook"],
            &["hook", "cursor", "--allow", "Read"],
            &["hook", "claude", "--bogus"],
            &["hook", "nobody"],
            &["hook", "claude", "--budget-ms", "x"],
            &["hook", "--version"],
        ];
        let mut failures = Vec::new();
        for line in lines {
            let argv = std::iter::once("toolgate").chain(line.iter().copied());
            let whole = match Cli::try_parse_from(argv.clone()) {
                Ok(Cli {
                    command: Command::Hook(a),
                }) => Ok(format!("{a:?}")),
                Ok(other) => Ok(format!("not a hook: {other:?}")),
                Err(e) => Err((e.kind(), e.to_string())),
            };
            let alone = match HookCli::try_parse_from(argv) {
                Ok(HookCli {
                    command: HookCommand::Hook(a),
                }) => Ok(format!("{a:?}")),
                Err(e) => Err((e.kind(), e.to_string())),
            };
            if whole != alone {
                failures.push(format!("{line:?}:\n  whole: {whole:?}\n  alone: {alone:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
