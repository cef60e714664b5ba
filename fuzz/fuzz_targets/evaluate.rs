//! Structured arbitrary policies (Claude settings rules and tuff rules of
//! every kind, effects mixed) × calls (Bash commands built from programs,
//! operators, quotes and substitutions; file paths; URLs; MCP and other
//! tools): the engine and the reference evaluator give every call the same
//! verdict and deciding rule, and the engine never allows what the
//! reference denies or asks about. A disagreement prints the case as JSON
//! lines, a reproducer for `tests/data/fuzz/evaluate/`.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolgate::Effect;
use toolgate::policy::LoadedPolicy;
use toolgate_fuzz::evaluate_check::{EvalCase, case_text, check_evaluate};

/// Command words: programs (wrappers among them), arguments, operators,
/// quotes, substitutions, redirections.
const WORDS: &[&str] = &[
    "git",
    "git",
    "push",
    "--force",
    "-f",
    "status",
    "rm",
    "-rf",
    "-r",
    "cat",
    "ls",
    "echo",
    "curl",
    "sudo",
    "timeout 5",
    "bash -c",
    "sh -c",
    "env",
    "xargs",
    "find",
    "-delete",
    "npm",
    "run",
    "test",
    "make",
    "cd",
    "cp",
    "tar",
    "sed -i",
    "python3",
    "x",
    ".env",
    "src/a.rs",
    "src",
    "secrets/k",
    "~/.ssh/id",
    "/etc/hosts",
    "/p/src/b",
    "../up",
    "*.pem",
    "src/*",
    "https://example.com/x",
    "http://a.b.example.com",
    "&&",
    "||",
    ";",
    "|",
    "&",
    ">",
    ">>",
    "<",
    "2>&1",
    "'",
    "'",
    "\"",
    "\"",
    "\\",
    "$(",
    ")",
    "`",
    "$X",
    "${X}",
    "$HOME",
    "~",
    "(",
    "{",
    "}",
    "\n",
    "#",
    "<<EOF",
    "EOF",
    "=",
    "FOO=1",
    "-C",
    ".",
    "*",
    "?",
    "[a]",
    "{a,b}",
];

/// Path segments and their starts.
const SEGS: &[&str] = &[
    "src", "a.rs", ".env", "secrets", "k", ".ssh", "id", ".git", "config", "a.json", "*.pem",
    "x.lock", ".", "..", "*", "**", "etc", "hosts", "tmp", "p", "home", "u", "SRC", "é",
];
const PATH_STARTS: &[&str] = &["", "", "/", "~/", "./", "/p/", "/home/u/", "//", "/tmp/"];

/// Host labels and URL shapes.
const LABELS: &[&str] = &[
    "example", "com", "a", "b", "api", "evil", "test", "xn--e1a", "*", "EXAMPLE",
];
const SCHEMES: &[&str] = &[
    "https://",
    "http://",
    "",
    "ftp://",
    "https://u@",
    "https://[::1]",
];

/// MCP servers and tools.
const MCP: &[&str] = &["gh", "fs", "get_issue", "delete", "get_*", "*", "x"];

/// Tools beyond the file and shell ones, with the fields rules may name.
const OTHER_TOOLS: &[(&str, &str, &[&str])] = &[
    ("Agent", "subagent_type", &["Explore", "Plan", "general"]),
    ("Task", "subagent_type", &["Explore", "Plan"]),
    ("Skill", "skill", &["commit", "review"]),
    ("Grep", "output_mode", &["count", "content"]),
    ("TodoWrite", "todos", &[]),
    ("WebSearch", "query", &["x"]),
];

const MODES: &[Option<&str>] = &[
    None,
    None,
    Some("default"),
    Some("acceptEdits"),
    Some("plan"),
    Some("dontAsk"),
    Some("bypassPermissions"),
];
const CWDS: &[&str] = &["/p", "/p", "/p/src", "/elsewhere", "/home/u"];

#[derive(Arbitrary, Debug, Clone, Copy)]
enum RuleKind {
    Bash,
    BashPrefix,
    BashBare,
    Read,
    Edit,
    Write,
    FileBare,
    WebFetch,
    Mcp,
    Other,
    TuffCommand,
    TuffRead,
    TuffEdit,
    TuffMcp,
}

#[derive(Arbitrary, Debug)]
struct GenRule {
    effect: u8,
    kind: RuleKind,
    parts: Vec<u8>,
    star: u8,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum CallKind {
    Bash,
    Read,
    Edit,
    Write,
    Grep,
    WebFetch,
    Mcp,
    Other,
}

#[derive(Arbitrary, Debug)]
struct GenCall {
    kind: CallKind,
    parts: Vec<u8>,
    sep: u8,
}

#[derive(Arbitrary, Debug)]
struct Case {
    rules: Vec<GenRule>,
    calls: Vec<GenCall>,
    cwd: u8,
    mode: u8,
    config: u8,
}

fn pick<'a>(list: &[&'a str], b: u8) -> &'a str {
    list[usize::from(b) % list.len()]
}

fn command(parts: &[u8], sep: u8) -> String {
    let mut out = String::new();
    for (i, &b) in parts.iter().take(12).enumerate() {
        // Mostly a space between words; sometimes none (quotes and
        // substitutions glued to words).
        if i > 0 && (sep >> (i % 8)) & 1 == 0 {
            out.push(' ');
        }
        out.push_str(pick(WORDS, b));
    }
    out
}

fn path(parts: &[u8]) -> String {
    let Some((&first, rest)) = parts.split_first() else {
        return ".env".to_string();
    };
    let segs: Vec<&str> = rest.iter().take(5).map(|&b| pick(SEGS, b)).collect();
    format!("{}{}", pick(PATH_STARTS, first), segs.join("/"))
}

fn host(parts: &[u8]) -> String {
    let labels: Vec<&str> = parts.iter().take(4).map(|&b| pick(LABELS, b)).collect();
    if labels.is_empty() {
        "example.com".to_string()
    } else {
        labels.join(".")
    }
}

fn mcp(parts: &[u8]) -> String {
    let names: Vec<&str> = parts.iter().take(2).map(|&b| pick(MCP, b)).collect();
    format!("mcp__{}", names.join("__"))
}

/// A rule as (effect, Claude text) or (effect, tuff TOML table body).
enum Made {
    Claude(Effect, String),
    Tuff(String),
}

fn effect(b: u8) -> Effect {
    match b % 3 {
        0 => Effect::Deny,
        1 => Effect::Ask,
        _ => Effect::Allow,
    }
}

fn slot(e: Effect) -> usize {
    match e {
        Effect::Deny => 0,
        Effect::Ask => 1,
        Effect::Allow => 2,
    }
}

fn rule(g: &GenRule) -> Made {
    let e = effect(g.effect);
    let star = |s: String| match g.star % 4 {
        0 => format!("{s} *"),
        1 => format!("{s}*"),
        _ => s,
    };
    let toml_list = |items: Vec<String>| {
        let quoted: Vec<String> = items.iter().map(|i| json!(i).to_string()).collect();
        format!("[{}]", quoted.join(", "))
    };
    let text = match g.kind {
        RuleKind::Bash => format!("Bash({})", star(command(&g.parts, 0))),
        RuleKind::BashPrefix => format!("Bash({}:*)", command(&g.parts, 0)),
        RuleKind::BashBare => "Bash".to_string(),
        RuleKind::Read => format!("Read({})", path(&g.parts)),
        RuleKind::Edit => format!("Edit({})", path(&g.parts)),
        RuleKind::Write => format!("Write({})", path(&g.parts)),
        RuleKind::FileBare => pick(&["Read", "Edit", "Write", "WebFetch"], g.star).to_string(),
        RuleKind::WebFetch => {
            let h = host(&g.parts);
            match g.star % 3 {
                0 => format!("WebFetch(domain:*.{h})"),
                _ => format!("WebFetch(domain:{h})"),
            }
        }
        RuleKind::Mcp => mcp(&g.parts),
        RuleKind::Other => {
            let (tool, field, values) = OTHER_TOOLS[usize::from(g.star) % OTHER_TOOLS.len()];
            match (values, g.parts.first()) {
                ([], _) | (_, None) => tool.to_string(),
                (v, Some(&b)) if b % 2 == 0 => format!("{tool}({})", pick(v, b)),
                (v, Some(&b)) => format!("{tool}({field}:{})", pick(v, b)),
            }
        }
        RuleKind::TuffCommand => {
            let words: Vec<String> = g
                .parts
                .iter()
                .take(4)
                .map(|&b| pick(WORDS, b).to_string())
                .collect();
            return Made::Tuff(format!(
                "effect = {:?}\ncommand = {}",
                e.as_str(),
                toml_list(words)
            ));
        }
        RuleKind::TuffRead | RuleKind::TuffEdit => {
            let key = if matches!(g.kind, RuleKind::TuffRead) {
                "read"
            } else {
                "edit"
            };
            let paths = g.parts.chunks(3).take(3).map(path).collect::<Vec<String>>();
            return Made::Tuff(format!(
                "effect = {:?}\n{key} = {}",
                e.as_str(),
                toml_list(paths)
            ));
        }
        RuleKind::TuffMcp => {
            let names: Vec<&str> = g.parts.iter().take(2).map(|&b| pick(MCP, b)).collect();
            return Made::Tuff(format!(
                "effect = {:?}\nmcp = {}",
                e.as_str(),
                json!(names.join(":"))
            ));
        }
    };
    Made::Claude(e, text)
}

fn call(g: &GenCall) -> Value {
    let p = || path(&g.parts);
    match g.kind {
        CallKind::Bash => json!({"tool": "Bash", "input": {"command": command(&g.parts, g.sep)}}),
        CallKind::Read => json!({"tool": "Read", "input": {"file_path": p()}}),
        CallKind::Edit => {
            json!({"tool": "Edit", "input": {"file_path": p(), "old_string": "a", "new_string": "b"}})
        }
        CallKind::Write => json!({"tool": "Write", "input": {"file_path": p(), "content": "x"}}),
        CallKind::Grep => json!({"tool": "Grep", "input": {"pattern": "x", "path": p()}}),
        CallKind::WebFetch => {
            let scheme = pick(SCHEMES, g.sep);
            let url = format!("{scheme}{}/{}", host(&g.parts), pick(SEGS, g.sep >> 3));
            json!({"tool": "WebFetch", "input": {"url": url, "prompt": "x"}})
        }
        CallKind::Mcp => json!({"tool": mcp(&g.parts), "input": {}}),
        CallKind::Other => {
            let (tool, field, values) = OTHER_TOOLS[usize::from(g.sep) % OTHER_TOOLS.len()];
            let v = match (values, g.parts.first()) {
                ([], _) | (_, None) => json!([]),
                (v, Some(&b)) => json!(pick(v, b)),
            };
            json!({"tool": tool, "input": {field: v}})
        }
    }
}

fn case(c: &Case) -> EvalCase {
    let mut lists: [Vec<String>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut tuff = String::new();
    for g in c.rules.iter().take(12) {
        match rule(g) {
            Made::Claude(e, text) => {
                // A rule that does not parse would refuse the whole file.
                if LoadedPolicy::new().add_rule(e, &text).is_ok() {
                    lists[slot(e)].push(text);
                }
            }
            Made::Tuff(body) => {
                let table = format!("[[policy.rules]]\n{body}\n");
                let one = format!("[policy]\n\n{table}");
                if tuff_loads(&one) {
                    tuff.push_str(&table);
                }
            }
        }
    }
    let settings = json!({"permissions": {
        "deny": lists[slot(Effect::Deny)],
        "ask": lists[slot(Effect::Ask)],
        "allow": lists[slot(Effect::Allow)],
    }});
    EvalCase {
        settings: Some(settings.to_string()),
        tuff: (!tuff.is_empty()).then(|| format!("[policy]\n\n{tuff}")),
        cwd: pick(CWDS, c.cwd).to_string(),
        mode: MODES[usize::from(c.mode) % MODES.len()].map(str::to_string),
        config: match c.config % 8 {
            0 => "default",
            1 => "small",
            _ => "one-shot",
        }
        .to_string(),
        calls: c.calls.iter().take(16).map(call).collect(),
    }
}

fn tuff_loads(text: &str) -> bool {
    LoadedPolicy::new()
        .add_tuff_text(
            text,
            "t.toml",
            None,
            toolgate::policy::SourceKind::Tuff,
            toolgate::policy::SourceRoot::Project,
        )
        .is_ok()
}

fuzz_target!(|c: Case| {
    let case = case(&c);
    if let Err(msg) = check_evaluate(&case) {
        panic!(
            "{msg}\nreproducer (tests/data/fuzz/evaluate/NAME.jsonl):\n{}",
            case_text(&case)
        );
    }
});
