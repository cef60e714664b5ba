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
        let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if let Some(args) = quick_hook_args(&argv) {
            return hook::run(args);
        }
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

/// `toolgate hook …` read without clap, for the lines `toolgate install`
/// writes and their like; `None` for any other line, which clap parses.
///
/// Written by hand because building clap's parser, even of this one
/// subcommand, takes about 0.1 ms of a hook call that must answer in
/// under two. So it takes only what cannot mean anything else: `hook`, a
/// harness (`cursor` with its `--event`), then options each given as its
/// own word followed by its value — `--policy`, `--tuff`, `--allow`,
/// `--ask`, `--deny` any number of times, `--claude-settings`,
/// `--dir-prefix`, `--no-allow`, `--no-cache`, `--budget-ms` (digits),
/// `--log` at most once. A value must be UTF-8, non-empty and not start
/// with `-`. Anything else (`--help`, `--version`, `--opt=value`, an option
/// given twice that may be given once, a missing `--event`…) is left to
/// clap, with its errors. A unit test holds the two to the same result.
fn quick_hook_args(argv: &[std::ffi::OsString]) -> Option<hook::Args> {
    let mut words = argv.iter().skip(1).map(|w| w.to_str());
    if words.next()? != Some("hook") {
        return None;
    }
    let harness = match words.next()?? {
        "claude" => hook::Harness::Claude,
        "codex" => hook::Harness::Codex,
        "cursor" => hook::Harness::Cursor,
        _ => return None,
    };
    let mut policy = policy_args::PolicyArgs {
        dir_prefix: std::path::PathBuf::from(".claude"),
        ..Default::default()
    };
    let (mut event, mut dir_prefix, mut budget, mut log) = (None, None, None, None);
    let (mut claude_settings, mut no_allow, mut no_cache) = (false, false, false);
    while let Some(word) = words.next() {
        let word = word?;
        let mut value = || {
            words
                .next()
                .flatten()
                .filter(|v| !v.is_empty() && !v.starts_with('-'))
                .map(str::to_string)
        };
        // A flag that may be given once: `true` when it already was.
        let again = |seen: &mut bool| std::mem::replace(seen, true);
        match word {
            "--policy" => policy.policy.push(value()?.into()),
            "--tuff" => policy.tuff.push(value()?),
            "--allow" => policy.allow.push(value()?),
            "--ask" => policy.ask.push(value()?),
            "--deny" => policy.deny.push(value()?),
            "--claude-settings" if !again(&mut claude_settings) => {}
            "--no-allow" if !again(&mut no_allow) => {}
            "--no-cache" if !again(&mut no_cache) => {}
            "--dir-prefix" if dir_prefix.is_none() => dir_prefix = Some(value()?),
            "--log" if log.is_none() => log = Some(value()?),
            "--budget-ms" if budget.is_none() => {
                let v =
                    value().filter(|v| v.len() < 20 && v.bytes().all(|b| b.is_ascii_digit()))?;
                budget = Some(v.parse::<u64>().ok()?);
            }
            "--event" if event.is_none() && harness == hook::Harness::Cursor => {
                event = Some(match value()?.as_str() {
                    "beforeShellExecution" => hook::CursorEvent::BeforeShellExecution,
                    "beforeReadFile" => hook::CursorEvent::BeforeReadFile,
                    "beforeMCPExecution" => hook::CursorEvent::BeforeMcpExecution,
                    _ => return None,
                });
            }
            _ => return None,
        }
    }
    if harness == hook::Harness::Cursor && event.is_none() {
        return None;
    }
    policy.claude_settings = claude_settings;
    if let Some(d) = dir_prefix {
        policy.dir_prefix = d.into();
    }
    Some(hook::Args {
        harness,
        event,
        opts: hook::HookOpts {
            policy,
            no_allow,
            budget_ms: budget.unwrap_or(2000),
            log: log.map(Into::into),
            no_cache,
        },
    })
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

    /// Every line the quick reader of `toolgate hook` takes, clap takes
    /// too, to the same arguments; the lines it leaves, clap parses (or
    /// refuses). Lines built from the options in turn, and hand-picked.
    #[test]
    fn the_quick_hook_reader_reads_as_clap() {
        let mut lines: Vec<Vec<&str>> = vec![
            vec!["hook", "claude", "--policy", "/a/p.json"],
            vec![
                "hook",
                "codex",
                "--policy",
                "a",
                "--policy",
                "b",
                "--no-cache",
            ],
            vec![
                "hook",
                "cursor",
                "--event",
                "beforeReadFile",
                "--allow",
                "Read",
            ],
            vec!["hook", "cursor", "--allow", "Read"],
            vec![
                "hook",
                "claude",
                "--event",
                "beforeReadFile",
                "--allow",
                "Read",
            ],
            vec!["hook", "cursor", "--event", "nothing", "--allow", "Read"],
            vec![
                "hook",
                "cursor",
                "--event",
                "beforeMCPExecution",
                "--event",
                "beforeReadFile",
            ],
            vec!["hook", "claude", "--budget-ms", "007", "--allow", "Read"],
            vec!["hook", "claude", "--budget-ms", "+7", "--allow", "Read"],
            vec!["hook", "claude", "--budget-ms", "18446744073709551616"],
            vec!["hook", "claude", "--budget-ms", "1", "--budget-ms", "2"],
            vec!["hook", "claude", "--no-cache", "--no-cache", "--allow", "x"],
            vec!["hook", "claude", "--log", "a", "--log", "b"],
            vec!["hook", "claude", "--policy", ""],
            vec!["hook", "claude", "--policy", "-x"],
            vec!["hook", "claude", "--policy"],
            vec!["hook", "claude", "--policy=p.json"],
            vec![
                "hook",
                "claude",
                "--allow",
                "Bash(ls -la)",
                "--deny",
                "Bash(rm *)",
            ],
            vec![
                "hook",
                "claude",
                "--claude-settings",
                "--tuff",
                "t",
                "--dir-prefix",
                "d",
            ],
            vec!["hook", "claude", "--dir-prefix", "a", "--dir-prefix", "b"],
            vec!["hook", "claude", "--help"],
            vec!["hook", "claude", "--", "--policy", "p"],
            vec!["hook", "claude", "extra"],
            vec!["hook", "Claude", "--policy", "p"],
            vec!["hook"],
            vec!["hook", "--version"],
        ];
        let options: &[&[&str]] = &[
            &["--policy", "p.json"],
            &["--tuff", "id"],
            &["--allow", "Read"],
            &["--ask", "WebFetch"],
            &["--deny", "Bash(rm *)"],
            &["--claude-settings"],
            &["--dir-prefix", ".x"],
            &["--no-allow"],
            &["--no-cache"],
            &["--budget-ms", "50"],
            &["--log", "/tmp/l"],
        ];
        for (i, a) in options.iter().enumerate() {
            for b in &options[i..] {
                for harness in ["claude", "codex"] {
                    let mut line = vec!["hook", harness];
                    line.extend_from_slice(a);
                    line.extend_from_slice(b);
                    lines.push(line);
                }
            }
        }
        let mut failures = Vec::new();
        let mut quick = 0;
        for line in &lines {
            let argv: Vec<std::ffi::OsString> = std::iter::once("toolgate")
                .chain(line.iter().copied())
                .map(Into::into)
                .collect();
            let Some(fast) = quick_hook_args(&argv) else {
                continue;
            };
            quick += 1;
            match HookCli::try_parse_from(&argv) {
                Ok(HookCli {
                    command: HookCommand::Hook(a),
                }) if format!("{a:?}") == format!("{fast:?}") => {}
                other => failures.push(format!("{line:?}:\n  quick: {fast:?}\n  clap: {other:?}")),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(
            quick > lines.len() / 2,
            "the quick reader took {quick} lines"
        );
    }

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
