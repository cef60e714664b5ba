//! `toolgate explain` (SPEC §10.3). `--bash 'CMD'` shows how a shell
//! command is read: for a person, or as JSON with `--json`.

use crate::shell::{self, Reading};
use std::fmt::Write as _;
use std::process::ExitCode;

/// Arguments of `explain`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Show how this shell command is read.
    #[arg(long, value_name = "CMD")]
    pub bash: Option<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `explain`.
pub fn run(args: Args) -> ExitCode {
    let Some(cmd) = args.bash else {
        eprintln!("toolgate: explain needs a command to explain (--bash 'CMD')");
        return ExitCode::from(2);
    };
    let reading = shell::read(&cmd);
    if args.json {
        // The reading's own shape plus `complete`, for convenience.
        let json = serde_json::to_value(&reading).map(|mut v| {
            if let Some(map) = v.as_object_mut() {
                map.insert("complete".into(), reading.is_complete().into());
            }
            v
        });
        match json.and_then(|v| serde_json::to_string_pretty(&v)) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("toolgate: cannot write the reading as json: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", render(&reading));
    }
    ExitCode::SUCCESS
}

/// The reading for a person: one line per command (indented by depth),
/// its origin, then whether it is complete and why not.
pub fn render(r: &Reading) -> String {
    let mut out = String::new();
    if r.commands.is_empty() {
        out.push_str("no commands\n");
    }
    for (i, c) in r.commands.iter().enumerate() {
        let indent = "  ".repeat(c.depth as usize);
        let mut notes = Vec::new();
        match c.origin {
            shell::Origin::Top => {}
            shell::Origin::Substitution => notes.push("substitution"),
            shell::Origin::ProcessSubstitution => notes.push("process substitution"),
            shell::Origin::Script => notes.push("script read by a shell"),
        }
        if c.conditional {
            notes.push("conditional");
        }
        let conn = match c.connector {
            shell::Connector::None => "",
            shell::Connector::Seq => "; ",
            shell::Connector::Background => "& ",
            shell::Connector::And => "&& ",
            shell::Connector::Or => "|| ",
            shell::Connector::Pipe => "| ",
            shell::Connector::PipeAll => "|& ",
        };
        let _ = write!(out, "{:>3}. {indent}{conn}{c}", i + 1);
        if !notes.is_empty() {
            let _ = write!(out, "    ({})", notes.join(", "));
        }
        out.push('\n');
        for w in c.words.iter().filter(|w| w.is_dynamic()) {
            let what = if w.kind == shell::WordKind::Glob {
                "glob"
            } else {
                "dynamic"
            };
            let _ = writeln!(out, "     {indent}  {what}: {}", w.text);
        }
    }
    if r.is_complete() {
        out.push_str("complete\n");
    } else {
        out.push_str("incomplete:\n");
        for inc in &r.incomplete {
            let src = r.source(inc.script, &inc.span);
            let _ = write!(
                out,
                "  - {} (bytes {}..{}",
                inc.reason, inc.span.start, inc.span.end
            );
            if inc.script != 0 {
                let _ = write!(out, " of script {}", inc.script);
            }
            if !src.is_empty() && src.len() <= 60 {
                let _ = write!(out, ": {src}");
            }
            out.push_str(")\n");
        }
    }
    out
}
