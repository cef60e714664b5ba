//! `toolgate match-rules [--dialect strict|claude-code] [--cwd DIR] [FILE]`
//! (SPEC §10.1).
//!
//! Reads a JSON array of cases `{"rule": "<rule string>", "call": {"tool":
//! …, "input": {…}}}` and prints one JSON array of booleans, in order. A
//! malformed case or rule: exit code 2, a message on stderr naming the
//! case's index (0-based, as in the JSON array) and the problem, nothing on
//! stdout. Rules are read as deny rules (the widest reading, SPEC §4.2).
//! A rule that parses but can never match (`Bash(command:rm *)`, SPEC §13
//! "Loading") answers `false`, with a warning on stderr.

use crate::error::{Error, ErrorKind};
use crate::eval::call::ToolCall;
use crate::reference::{self, MatchContext};
use crate::rule::claude::parse_rule;
use crate::rule::{Dialect, Effect, List, Provenance};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The dialects `match-rules` reads rules in.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DialectArg {
    /// The rule-matcher stage: a rule governs its own tool only; the
    /// trailing ` *` is required; paths are case-sensitive.
    #[default]
    Strict,
    /// Claude Code's settings files.
    ClaudeCode,
}

/// Arguments of `match-rules`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// How rule strings are read.
    #[arg(long, value_enum, default_value_t = DialectArg::Strict)]
    pub dialect: DialectArg,
    /// The session directory: relative call paths are relative to it, and
    /// absolute call paths under it can match relative rules.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The JSON array of cases (stdin when absent or `-`).
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Runs `match-rules`.
pub fn run(args: Args) -> ExitCode {
    let mut warnings = Vec::new();
    match answer(&args, &mut warnings) {
        Ok(answers) => {
            for w in warnings {
                eprintln!("toolgate: warning: {w}");
            }
            let text = match serde_json::to_string(&answers) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("toolgate: cannot write the answers: {e}");
                    return ExitCode::from(2);
                }
            };
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolgate: {e}");
            ExitCode::from(2)
        }
    }
}

/// The answers to every case, or the first problem.
fn answer(args: &Args, warnings: &mut Vec<String>) -> Result<Vec<bool>, Error> {
    let (source, text) = read_input(args.file.as_deref())?;
    let cases: Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(ErrorKind::Call, format!("input is not JSON: {e}")).with_source(source.as_str())
    })?;
    let Value::Array(cases) = cases else {
        return Err(Error::new(
            ErrorKind::Call,
            "input must be a JSON array of {\"rule\", \"call\"} cases",
        )
        .with_source(source.as_str()));
    };
    let dialect = match args.dialect {
        DialectArg::Strict => Dialect::Strict,
        DialectArg::ClaudeCode => Dialect::ClaudeCode,
    };
    let ctx = match &args.cwd {
        None => MatchContext::default(),
        Some(dir) => {
            let dir = if dir.is_absolute() {
                dir.clone()
            } else {
                std::env::current_dir()
                    .map_err(|e| {
                        Error::new(
                            ErrorKind::Io,
                            format!("cannot read the current directory: {e}"),
                        )
                    })?
                    .join(dir)
            };
            MatchContext::with_cwd(dir)
        }
    };
    let source: Arc<str> = Arc::from(source.as_str());
    let mut answers = Vec::with_capacity(cases.len());
    for (i, case) in cases.iter().enumerate() {
        let item = format!("case {i}");
        let located = |e: Error| relocate(e, &source, &item);
        let (rule_text, call) = read_case(case).map_err(located)?;
        let call = ToolCall::from_json(call).map_err(located)?;
        let provenance = Provenance {
            source: source.clone(),
            list: List::Deny,
            index: i,
        };
        let rule = match parse_rule(rule_text, Effect::Deny, dialect, provenance) {
            Ok(rule) => rule,
            Err(e) if e.kind() == ErrorKind::Unsupported => {
                warnings.push(relocate(e, &source, &item).to_string());
                answers.push(false);
                continue;
            }
            Err(e) => return Err(located(e)),
        };
        answers.push(reference::match_rule(&rule, &call, &ctx).map_err(located)?);
    }
    Ok(answers)
}

/// The error with the case as its item (instead of the rule's list item).
fn relocate(e: Error, source: &str, item: &str) -> Error {
    let loc = e.location();
    let mut out = match (&loc.text, loc.column) {
        (Some(text), Some(col)) if e.kind() == ErrorKind::Unsupported => {
            Error::unsupported(e.message(), text, col)
        }
        (Some(text), Some(col)) => Error::rule(e.message(), text, col),
        _ => Error::new(e.kind(), e.message()),
    };
    out = out.with_item(item);
    if source != "<stdin>" {
        out = out.with_source(source);
    }
    out
}

/// A case's rule string and call object.
fn read_case(case: &Value) -> Result<(&str, &Value), Error> {
    let Value::Object(obj) = case else {
        return Err(Error::new(
            ErrorKind::Call,
            format!(
                "a case must be an object {{\"rule\": …, \"call\": …}}, not {}",
                crate::eval::call::json_type(case)
            ),
        ));
    };
    let rule = match obj.get("rule") {
        Some(Value::String(s)) => s.as_str(),
        Some(v) => {
            return Err(Error::new(
                ErrorKind::Call,
                format!(
                    "rule must be a string, not {}",
                    crate::eval::call::json_type(v)
                ),
            ));
        }
        None => return Err(Error::new(ErrorKind::Call, "case has no rule")),
    };
    let call = obj
        .get("call")
        .ok_or_else(|| Error::new(ErrorKind::Call, "case has no call"))?;
    Ok((rule, call))
}

/// The input text and its name for messages.
fn read_input(file: Option<&std::path::Path>) -> Result<(String, String), Error> {
    match file {
        Some(p) if p.as_os_str() != "-" => {
            let name = p.display().to_string();
            let text = std::fs::read_to_string(p)
                .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read {name}: {e}")))?;
            Ok((name, text))
        }
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read stdin: {e}")))?;
            Ok(("<stdin>".to_string(), text))
        }
    }
}
