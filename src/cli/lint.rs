//! `toolgate lint --policy …` (SPEC §10.3): findings grouped by severity,
//! `--json` for machines; exit code 1 when there are errors, 2 when no
//! policy was given.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::policy_args::PolicyArgs;
use crate::lint::LintInput;
use crate::policy::{COMMAND_LINE, ClaudeRoots};
use crate::rule::List;

/// Arguments of `lint`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where the rules come from.
    #[command(flatten)]
    pub policy: PolicyArgs,
    /// Print the findings as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Leave out shadowed and redundant rules (the checks on automata and
    /// those the evaluator confirms).
    #[arg(long)]
    pub no_shadowing: bool,
    /// The project directory (for --claude-settings and --tuff); the
    /// current directory by default.
    #[arg(long, value_name = "DIR")]
    pub project_dir: Option<PathBuf>,
}

/// The rules `args` name, as `lint` reads them.
pub fn input(args: &PolicyArgs, project: PathBuf) -> LintInput {
    let mut input = LintInput::new();
    if args.claude_settings {
        input.add_claude_settings(&ClaudeRoots::system(project.clone()));
    }
    for file in &args.policy {
        input.add_file(file);
    }
    for id in &args.tuff {
        input.add_installed_tuff(std::slice::from_ref(&project), &args.dir_prefix, id);
    }
    for (list, rules) in [
        (List::Deny, &args.deny),
        (List::Ask, &args.ask),
        (List::Allow, &args.allow),
    ] {
        for (i, rule) in rules.iter().enumerate() {
            input.add_rule_text(COMMAND_LINE, list, i, rule);
        }
    }
    input
}

/// Runs `lint`.
pub fn run(args: Args) -> ExitCode {
    if args.policy.is_empty() {
        eprintln!(
            "toolgate: lint needs a policy: --policy FILE, --claude-settings, --tuff ID or --allow/--ask/--deny RULE"
        );
        return ExitCode::from(2);
    }
    let project = args
        .project_dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let input = input(&args.policy, project);
    let config = crate::lint::Config::new().shadowing(!args.no_shadowing);
    let report = crate::lint::lint_with(&input, &config);
    let text = if args.json {
        format!("{}\n", report.to_json())
    } else {
        report.to_text()
    };
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
