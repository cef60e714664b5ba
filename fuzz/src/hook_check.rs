//! The `hook` fuzz property, shared with the main package's regression
//! tests (which include this file): arbitrary bytes on a hook's stdin give
//! a valid answer in the harness's terms — a decision (exit code 0) or a
//! refusal (a deny, a reason on stderr, exit code 2) — never a panic, and
//! never an allow for input that cannot be read. A decision is the one the
//! reference evaluator gives the same call.
//!
//! An input's first byte picks the harness (Claude Code, Codex, Cursor's
//! shell or read event); the rest is the hook's stdin.

use serde_json::Value;
use std::sync::OnceLock;
use toolgate::eval::{EvalContext, Evaluator, Verdict};
use toolgate::hook::{self, Dirs, Harness, Reply, claude, cursor};
use toolgate::policy::{LoadedPolicy, SourceKind, SourceRoot};
use toolgate::reference_eval::ReferenceEvaluator;

/// The home directory the hook is told.
pub const HOME: &str = "/home/u";

/// The policy every hook input is decided by: rules of each kind and
/// effect, from a settings file and a tuff policy.
const SETTINGS: &str = r#"{"permissions": {
  "deny": ["Bash(rm -rf *)", "Read(.env)", "Read(~/.ssh/**)", "Edit(//etc/**)",
           "WebFetch(domain:evil.test)", "mcp__gh__delete*"],
  "ask": ["Bash(git push:*)", "Edit(.git/**)", "WebFetch(domain:*.example.com)",
          "Agent(Plan)", "Read(secrets/**)"],
  "allow": ["Bash(git *)", "Bash(ls *)", "Bash(cat *)", "Bash(echo *)", "Read",
            "Edit(./src/**)", "WebFetch(domain:example.com)", "mcp__gh", "Skill(commit)",
            "Grep", "Glob", "TodoWrite"]
}}"#;

const TUFF: &str = r#"
[[policy.rules]]
effect = "deny"
command = ["git", "push", "--force"]

[[policy.rules]]
effect = "ask"
read = ["config/*.json"]

[[policy.rules]]
effect = "deny"
mcp = "fs:write*"
"#;

/// The fixture: the policy, its engine and its reference evaluator.
pub struct Fixture {
    /// The engine, as a hook compiles it.
    pub engine: Evaluator,
    /// The reference evaluator of the same policy.
    pub reference: ReferenceEvaluator,
}

/// The fixture, built once.
pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let mut p = LoadedPolicy::new();
        p.add_settings_text(
            SETTINGS,
            "/p/.claude/settings.json",
            None,
            SourceKind::Settings,
            SourceRoot::Dir("/p".into()),
        )
        .expect("the hook fixture's settings load");
        p.add_tuff_text(
            TUFF,
            "/p/policy.toml",
            None,
            SourceKind::Tuff,
            SourceRoot::Project,
        )
        .expect("the hook fixture's tuff policy loads");
        Fixture {
            engine: Evaluator::with_config(&p, toolgate::compile::Config::one_shot())
                .expect("the hook fixture compiles"),
            reference: ReferenceEvaluator::new(&p),
        }
    })
}

/// The harness an input's first byte picks.
pub fn harness(b: u8) -> Harness {
    match b % 4 {
        0 => Harness::Claude,
        1 => Harness::Codex,
        2 => Harness::Cursor(cursor::Event::BeforeShellExecution),
        _ => Harness::Cursor(cursor::Event::BeforeReadFile),
    }
}

/// What the reference says of the input: `None` when it cannot be read
/// or decided (a refusal is due), else the verdict the harness should
/// answer (an allow withheld where the mode may not answer it).
fn expected(harness: Harness, stdin: &[u8]) -> Option<Verdict> {
    let f = fixture();
    let (call, cwd, project, may_allow) = match harness {
        Harness::Claude | Harness::Codex => {
            let i = claude::Input::parse(stdin).ok()?;
            let may = i.may_allow();
            let cwd = i.cwd.clone();
            (i.call, cwd.clone(), cwd, may)
        }
        Harness::Cursor(event) => {
            let i = cursor::Input::parse(stdin, event).ok()?;
            (i.call, i.cwd, i.project, true)
        }
    };
    let ctx = EvalContext::new(&cwd)
        .and_then(|c| c.with_project_dir(&project))
        .and_then(|c| c.with_home(HOME))
        .and_then(|c| f.engine.with_policy_dirs(c))
        .ok()?;
    let d = f.reference.evaluate(&call, &ctx).ok()?;
    Some(if d.verdict == Verdict::Allow && !may_allow {
        Verdict::None
    } else {
        d.verdict
    })
}

/// The decision word a reply's JSON carries, if it has the harness's shape.
fn decision(harness: Harness, v: &Value) -> Result<String, String> {
    let word = match harness {
        Harness::Claude | Harness::Codex => {
            let h = &v["hookSpecificOutput"];
            if h["hookEventName"] != "PreToolUse" || !h["permissionDecisionReason"].is_string() {
                return Err(format!("not a PreToolUse answer: {v}"));
            }
            h["permissionDecision"].as_str()
        }
        Harness::Cursor(_) => v["permission"].as_str(),
    };
    match word {
        Some(w @ ("allow" | "ask" | "deny")) => Ok(w.to_string()),
        _ => Err(format!("no decision in {v}")),
    }
}

/// The decision the harness should answer for the reference's verdict
/// (`None`: print nothing).
fn answer_for(harness: Harness, verdict: Verdict) -> Option<&'static str> {
    match (harness, verdict) {
        (_, Verdict::Deny) => Some("deny"),
        (Harness::Claude, Verdict::Ask) => Some("ask"),
        (Harness::Claude, Verdict::Allow) => Some("allow"),
        (Harness::Claude | Harness::Codex, Verdict::None) => None,
        (Harness::Codex, Verdict::Ask) => Some("deny"),
        (Harness::Codex, Verdict::Allow) => None,
        (Harness::Cursor(e), Verdict::Ask) => Some(if e.can_ask() { "ask" } else { "deny" }),
        (Harness::Cursor(_), Verdict::Allow | Verdict::None) => Some("allow"),
    }
}

/// Checks one reply against the reference.
pub fn check_reply(harness: Harness, stdin: &[u8], reply: &Reply) -> Result<(), String> {
    let got = match &reply.stdout {
        Some(v) => Some(decision(harness, v)?),
        None => None,
    };
    match expected(harness, stdin) {
        None => {
            // Unreadable or undecidable: the refusal, never anything else.
            if reply.code != 2 {
                return Err(format!("exit code {} for a refusal", reply.code));
            }
            if reply.stderr.as_deref().is_none_or(str::is_empty) {
                return Err("a refusal without a reason on stderr".into());
            }
            if got.as_deref() != Some("deny") {
                return Err(format!("the refusal answers {got:?}, not deny"));
            }
            Ok(())
        }
        Some(verdict) => {
            if reply.code != 0 || reply.stderr.is_some() {
                return Err(format!(
                    "refused ({:?}) a call the reference decides {verdict}",
                    reply.stderr
                ));
            }
            let want = answer_for(harness, verdict);
            if got.as_deref() != want {
                return Err(format!(
                    "answered {got:?}, the reference's verdict {verdict} is {want:?}"
                ));
            }
            Ok(())
        }
    }
}

/// Runs one input: the first byte picks the harness, the rest is stdin.
pub fn check_hook(data: &[u8]) -> Result<(), String> {
    let Some((&first, stdin)) = data.split_first() else {
        return Ok(());
    };
    let harness = harness(first);
    let reply = hook::respond(
        harness,
        stdin,
        &fixture().engine,
        Dirs {
            project: None,
            home: Some(HOME),
        },
    );
    check_reply(harness, stdin, &reply)
}
