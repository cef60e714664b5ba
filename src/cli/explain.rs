//! `toolgate explain` (SPEC §10.3). `--bash 'CMD'` shows how a shell
//! command is read: for a person, or as JSON with `--json`. With a policy
//! (`--policy FILE`, …) it decides a call — `--bash 'CMD'` or a call as
//! JSON — and shows the reading, the actions, every rule that matched
//! each and how, the decision and the deciding rule.

use super::eval::{ContextArgs, Defaults, decision_out, line_context, load_policy};
use super::policy_args::PolicyArgs;
use crate::eval::call::ToolCall;
use crate::eval::{Decision, Evaluator, How, Verdict};
use crate::shell::{self, Reading};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::IsTerminal;
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
    #[command(flatten)]
    pub policy: PolicyArgs,
    #[command(flatten)]
    pub context: ContextArgs,
    /// A call to decide, as JSON: `{"tool": …, "input": {…}}` or a hook
    /// input `{"tool_name": …, "tool_input": {…}}` (needs a policy).
    #[arg(value_name = "CALL", conflicts_with = "bash")]
    pub call: Option<String>,
}

/// Runs `explain`.
pub fn run(args: Args) -> ExitCode {
    if !args.policy.is_empty() || args.call.is_some() {
        return run_decision(args);
    }
    let Some(cmd) = args.bash else {
        eprintln!(
            "toolgate: explain needs a command (--bash 'CMD') or, with a policy, a call as JSON"
        );
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
            Ok(s) => {
                if super::emit(&(s + "\n")).is_err() {
                    return ExitCode::from(2);
                }
            }
            Err(e) => {
                eprintln!("toolgate: cannot write the reading as json: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        let text = render(&reading) + &render_reduction(&reduction);
        if super::emit(&text).is_err() {
            return ExitCode::from(2);
        }
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
        let _ = write!(out, "{:>3}. {indent}{conn}{}", i + 1, c.display(r));
        if !notes.is_empty() {
            let _ = write!(out, "    ({})", notes.join(", "));
        }
        out.push('\n');
        for w in c.words(r).iter().filter(|w| w.is_dynamic()) {
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

/// ANSI colours, on only when stdout is a terminal.
struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn verdict(&self, v: &str) -> String {
        let code = match v {
            "deny" | "denied" => "1;31",
            "ask" | "asked" => "1;33",
            "allow" | "allowed" | "mode-allowed" => "1;32",
            _ => "2",
        };
        self.wrap(code, v)
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.wrap("2", s)
    }
}

/// `explain` with a policy: decide the call and show why.
fn run_decision(args: Args) -> ExitCode {
    let value: Value = match (&args.bash, &args.call) {
        (Some(cmd), None) => json!({"tool": "Bash", "input": {"command": cmd}}),
        (None, Some(text)) => match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("toolgate: the call is not JSON: {e}");
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("toolgate: explain needs a call: --bash 'CMD' or a call as JSON");
            return ExitCode::from(2);
        }
    };
    let fail = |what: &str, e: crate::Error| {
        eprintln!("toolgate: {what}{e}");
        ExitCode::from(2)
    };
    let policy = match load_policy(&args.policy, &args.context) {
        Ok(p) => p,
        Err(e) => return fail("", e),
    };
    let evaluator = match Evaluator::new(&policy) {
        Ok(e) => e,
        Err(e) => return fail("", e),
    };
    let defaults = match Defaults::new(&args.context) {
        Ok(d) => d,
        Err(e) => return fail("", e),
    };
    let call = match ToolCall::from_json(&value) {
        Ok(c) => c,
        Err(e) => return fail("bad call: ", e),
    };
    let ctx = match value
        .as_object()
        .map(|obj| line_context(obj, &defaults, &evaluator))
    {
        Some(Ok(c)) => c,
        Some(Err(e)) => return fail("bad call: ", e),
        None => {
            eprintln!("toolgate: a call must be a JSON object");
            return ExitCode::from(2);
        }
    };
    let d = match evaluator.evaluate(&call, &ctx) {
        Ok(d) => d,
        Err(e) => return fail("bad call: ", e),
    };
    let command = call.command().map(str::to_string);
    if args.json {
        let mut out = json!({
            "call": {"tool": call.tool, "input": call.input},
            "context": {
                "cwd": ctx.cwd(),
                "project_dir": ctx.project_dir(),
                "home": ctx.home(),
                "additional_directories": ctx.additional_dirs(),
                "mode": ctx.mode().map(|m| m.as_str()),
            },
            "actions": actions_json(&d),
            "incomplete": d.incomplete,
            "rules_decision": d.rules_verdict.as_str(),
        });
        if let Ok(Value::Object(decision)) = serde_json::to_value(decision_out(&d, Value::Null)) {
            for (k, v) in decision {
                if k != "id" {
                    out[k] = v;
                }
            }
        }
        if let Some(cmd) = &command {
            let reading = shell::read(cmd);
            let reduction = shell::reduce::invocations(&reading);
            out["reading"] = serde_json::to_value(&reading).unwrap_or(Value::Null);
            out["reduction"] = serde_json::to_value(&reduction).unwrap_or(Value::Null);
        }
        match serde_json::to_string_pretty(&out) {
            Ok(s) => {
                if super::emit(&(s + "\n")).is_err() {
                    return ExitCode::from(2);
                }
            }
            Err(e) => {
                eprintln!("toolgate: cannot write the explanation as json: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        let paint = Paint(std::io::stdout().is_terminal());
        let mut out = String::new();
        let _ = writeln!(out, "{} {}", paint.bold("call:"), call_line(&call));
        let mode = ctx.mode().map_or("none".to_string(), |m| m.to_string());
        let _ = writeln!(
            out,
            "{}",
            paint.dim(&format!(
                "cwd {}, project {}, mode {mode}",
                ctx.cwd(),
                ctx.project_dir()
            ))
        );
        if let Some(cmd) = &command {
            let reading = shell::read(cmd);
            let reduction = shell::reduce::invocations(&reading);
            let _ = writeln!(out, "\n{}", paint.bold("reading:"));
            out.push_str(&render(&reading));
            out.push_str(&render_reduction(&reduction));
        }
        out.push('\n');
        out.push_str(&render_decision(&d, &paint));
        if super::emit(&out).is_err() {
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// The call in one line: its tool and its main input.
fn call_line(call: &ToolCall) -> String {
    match call
        .command()
        .or_else(|| call.path())
        .or_else(|| call.url())
    {
        Some(s) => format!("{} {s}", call.tool),
        None if call.input.is_empty() => call.tool.clone(),
        None => format!("{} {}", call.tool, Value::Object(call.input.clone())),
    }
}

fn how(h: How) -> &'static str {
    match h {
        How::Matches => "matches",
        How::Could => "could match",
    }
}

/// The actions with their matches, as JSON.
fn actions_json(d: &Decision<'_>) -> Value {
    d.actions
        .iter()
        .map(|a| {
            json!({
                "kind": a.kind.as_str(),
                "subject": a.subject,
                "needs_approval": a.needs_approval,
                "outcome": a.outcome.as_str(),
                "matches": a.matches.iter().map(|m| {
                    let p = &m.rule.provenance;
                    json!({
                        "text": m.rule.text,
                        "effect": m.rule.effect.as_str(),
                        "source": &*p.source,
                        "list": p.list.as_str(),
                        "index": p.index,
                        "how": how(m.how),
                        "reason": m.rule.reason,
                    })
                }).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The actions, their matching rules and the decision, for a person.
fn render_decision(d: &Decision<'_>, paint: &Paint) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", paint.bold("actions:"));
    if d.actions.is_empty() {
        out.push_str("  none\n");
    }
    for (i, a) in d.actions.iter().enumerate() {
        let approval = if a.needs_approval {
            ""
        } else {
            " (needs no approval of its own)"
        };
        let _ = writeln!(
            out,
            "{:>3}. {} {}{approval}  → {}",
            i + 1,
            a.kind.as_str(),
            a.subject,
            paint.verdict(a.outcome.as_str())
        );
        for m in &a.matches {
            let p = &m.rule.provenance;
            let _ = write!(
                out,
                "       {:<5} {}  {} ({} {})",
                paint.verdict(m.rule.effect.as_str()),
                m.rule.text,
                how(m.how),
                p.source,
                p.item()
            );
            if let Some(r) = &m.rule.reason {
                let _ = write!(out, ": {r}");
            }
            out.push('\n');
        }
    }
    if !d.incomplete.is_empty() {
        let _ = writeln!(out, "{}", paint.bold("not read completely:"));
        for r in &d.incomplete {
            let _ = writeln!(out, "  - {r}");
        }
    }
    let _ = writeln!(
        out,
        "\n{} {}",
        paint.bold("decision:"),
        paint.verdict(d.verdict.as_str())
    );
    if d.verdict != d.rules_verdict {
        let mode = d.mode.map_or("no".to_string(), |m| m.to_string());
        let _ = writeln!(
            out,
            "  rules said {}; {mode} mode made it {}",
            d.rules_verdict, d.verdict
        );
    }
    match d.rule {
        Some(r) => {
            let p = &r.rule.provenance;
            let _ = writeln!(
                out,
                "  rule: {} ({}) in {}, list {}, index {}",
                paint.bold(&r.rule.text),
                how(r.how),
                p.source,
                p.list.as_str(),
                p.index
            );
            if let Some(reason) = &r.rule.reason {
                let _ = writeln!(out, "  rule reason: {reason}");
            }
        }
        None if d.verdict == Verdict::None => {
            let _ = writeln!(out, "  rule: none (no rule decided and no mode was given)");
        }
        None => {
            let _ = writeln!(out, "  rule: none");
        }
    }
    let _ = writeln!(out, "  reason: {}", d.reason());
    out
}
