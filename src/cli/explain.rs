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
    let reduction = shell::reduce::invocations(&reading);
    if args.json {
        // The reading's own shape plus `complete`, for convenience, and
        // what its commands do under `reduction`.
        let json = serde_json::to_value(&reading).and_then(|mut v| {
            let red = serde_json::to_value(&reduction)?;
            if let Some(map) = v.as_object_mut() {
                map.insert("complete".into(), reading.is_complete().into());
                map.insert("reduction".into(), red);
            }
            Ok(v)
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
        print!("{}", render_reduction(&reduction));
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
            let _ = writeln!(out, "     {indent}  {what}: {}", w.text());
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

/// The invocations for a person: wrappers, the subcommand form,
/// candidates, files, hosts, executing options and gaps (SPEC §8.2–§8.5).
pub fn render_reduction(r: &shell::reduce::Reduction) -> String {
    use shell::reduce::Role;
    let mut out = String::new();
    if r.invocations.is_empty() {
        return out;
    }
    out.push_str("invocations:\n");
    for (i, inv) in r.invocations.iter().enumerate() {
        let indent = "  ".repeat(inv.depth as usize);
        let role = match inv.role {
            Role::Command => "runs",
            Role::Wrapper => "wrapper",
            Role::NoProgram => "no program",
        };
        let _ = write!(out, "{:>3}. {indent}{role}: {inv}", i + 1);
        let mut notes = Vec::new();
        if let Some(p) = inv.parent {
            notes.push(format!("in {}", p + 1));
        }
        if inv.reading > 0 {
            notes.push(format!("script {}", inv.reading));
        }
        if inv.program.written != inv.program.base {
            notes.push(format!(
                "program {}{}",
                inv.program.base,
                if inv.program.system_dir {
                    ", system dir"
                } else {
                    ""
                }
            ));
        }
        if !notes.is_empty() {
            let _ = write!(out, "    ({})", notes.join(", "));
        }
        out.push('\n');
        let pad = format!("     {indent}  ");
        if let Some(s) = &inv.subcommand {
            let _ = writeln!(out, "{pad}subcommand: {s}");
        }
        if let Some(f) = &inv.form {
            let _ = writeln!(out, "{pad}form: {f}");
        }
        for c in &inv.candidates {
            let who = if c.for_allow {
                "allow+deny"
            } else {
                "deny/ask  "
            };
            let _ = writeln!(out, "{pad}{who} {}", c.text);
        }
        for f in &inv.files {
            let access = match f.access {
                shell::files::Access::Read => "read",
                shell::files::Access::Edit => "edit",
            };
            let _ = write!(out, "{pad}{access}: {}", f.text);
            if let Some(p) = &f.path {
                if p.to_string() != f.text {
                    let _ = write!(out, " = {p}");
                }
            }
            if let Some(p) = &f.expanded {
                let _ = write!(out, " (deny/ask: {p})");
            }
            if f.recursive {
                out.push_str(" (recursive)");
            }
            out.push('\n');
        }
        for h in &inv.hosts {
            let _ = writeln!(
                out,
                "{pad}host: {}{}",
                h.name,
                if h.dynamic { " (dynamic)" } else { "" }
            );
        }
        for e in &inv.exec {
            let _ = writeln!(out, "{pad}executes or writes: {e}");
        }
        for g in &inv.gaps {
            let _ = writeln!(out, "{pad}incomplete: {}", g.describe());
        }
    }
    if !r.is_complete() {
        out.push_str("reduction incomplete\n");
    }
    out
}
