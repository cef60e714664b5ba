//! tuff `policy.toml` policies → [`crate::Rule`]s (SPEC §7).
//!
//! A tuff policy is a manifest with a `[policy]` section of
//! `[[policy.rules]]`, each with an effect (`deny` or `ask` — a policy can
//! only narrow) and exactly one subject:
//!
//! ```toml
//! id = "infra-guardrails"
//! type = "policy"
//!
//! [[policy.rules]]
//! effect = "deny"
//! command = ["git", "push", "--force"]
//! reason = "Force pushes rewrite shared history."
//!
//! [[policy.rules]]
//! effect = "ask"
//! read = [".env", "secrets/**"]
//! ```
//!
//! [`TuffPolicy::parse`] reads and validates a policy as tuff does: a policy
//! that fails validation is refused whole, the error naming the file and
//! the rule (1-based, "rule N", as tuff counts). [`TuffPolicy::to_rules`]
//! lowers it to the rule IR: a `command` to [`Pattern::Tokens`] on `Bash`,
//! each `read`/`edit` pattern to a case-sensitive gitignore
//! [`Pattern::Path`] relative to the policy's project root, an `mcp`
//! pattern to a [`ToolMatch::Glob`] over `mcp__server__tool`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorKind};
use crate::rule::{
    Anchor, Dialect, Effect, GlobPiece, List, PathPattern, Pattern, Provenance, Rule, SegPiece,
    Segment, ToolMatch,
};

/// A validated tuff policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuffPolicy {
    /// The manifest's `id`, if it has one.
    pub id: Option<String>,
    /// The rules, in file order (never empty).
    pub rules: Vec<TuffRule>,
}

/// One validated `[[policy.rules]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuffRule {
    /// [`Effect::Deny`] or [`Effect::Ask`], never [`Effect::Allow`].
    pub effect: Effect,
    /// What the rule governs.
    pub subject: Subject,
    /// Why the rule exists, shown with a decision (never empty).
    pub reason: Option<String>,
}

/// The one subject of a tuff rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Subject {
    /// `command = ["git", "push", "--force"]`: literal words (SPEC §7.2).
    Command(Vec<String>),
    /// `read = [...]`: gitignore patterns of files the agent may not read.
    Read(Vec<String>),
    /// `edit = [...]`: gitignore patterns of files the agent may not edit.
    Edit(Vec<String>),
    /// `mcp = "server:tool"`: `*` and `?` within each side.
    Mcp {
        /// The server side.
        server: String,
        /// The tool side.
        tool: String,
    },
}

impl TuffRule {
    /// The rule as messages show it: `deny command "git push --force"`,
    /// `ask read ".env", "secrets/**"`, `deny mcp "github:delete_*"`.
    pub fn describe(&self) -> String {
        let quoted = |items: &[String]| {
            items
                .iter()
                .map(|i| format!("{i:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let subject = match &self.subject {
            Subject::Command(words) => format!("command {:?}", words.join(" ")),
            Subject::Read(p) => format!("read {}", quoted(p)),
            Subject::Edit(p) => format!("edit {}", quoted(p)),
            Subject::Mcp { server, tool } => format!("mcp {:?}", format!("{server}:{tool}")),
        };
        format!("{} {subject}", self.effect)
    }
}

const RULE_KEYS: &str = "effect, command, read, edit, mcp or reason";

impl TuffPolicy {
    /// Reads and validates a `policy.toml` (its `[policy]` section; other
    /// top-level manifest keys are not looked at, except that a `type`
    /// other than `"policy"` is refused). `source` names the file in errors.
    pub fn parse(text: &str, source: &str) -> Result<TuffPolicy, Error> {
        let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(&e, text, source))?;
        let file_err = |msg: String| Error::new(ErrorKind::Policy, msg).with_source(source);
        if let Some(kind) = table.get("type") {
            if kind.as_str() != Some("policy") {
                return Err(file_err(format!(
                    "not a policy manifest: type is {kind}, expected \"policy\""
                )));
            }
        }
        let id = match table.get("id") {
            None => None,
            Some(toml::Value::String(id)) => Some(id.clone()),
            Some(_) => return Err(file_err("id must be a string".into())),
        };
        let Some(policy) = table.get("policy") else {
            let hint = if table.contains_key("rules") {
                ": rules belong in [[policy.rules]]"
            } else {
                ""
            };
            return Err(file_err(format!("no [policy] section{hint}")));
        };
        let Some(policy) = policy.as_table() else {
            return Err(file_err("policy must be a table".into()));
        };
        if let Some(key) = policy.keys().find(|k| *k != "rules") {
            return Err(file_err(format!(
                "unknown key {key:?} in [policy]: expected rules"
            )));
        }
        let rules = match policy.get("rules") {
            None => &[][..],
            Some(toml::Value::Array(rules)) => &rules[..],
            Some(_) => {
                return Err(file_err(
                    "policy.rules must be an array of tables ([[policy.rules]])".into(),
                ));
            }
        };
        if rules.is_empty() {
            return Err(file_err(
                "the policy has no rules: add at least one [[policy.rules]]".into(),
            ));
        }
        let rules = rules
            .iter()
            .enumerate()
            .map(|(i, rule)| {
                parse_rule(rule).map_err(|msg| {
                    Error::new(ErrorKind::Rule, msg)
                        .with_source(source)
                        .with_item(format!("rule {}", i + 1))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(TuffPolicy { id, rules })
    }

    /// The policy's rules in the IR, in order. Each rule's provenance is
    /// (`source`, [`List::Rules`], 0-based rule index); a `read`/`edit`
    /// rule with several patterns gives one [`Rule`] per pattern, all with
    /// the same provenance and text. Path patterns are relative to
    /// [`Anchor::Source`]: the policy's project root, recorded with the
    /// source by whoever loads it.
    pub fn to_rules(&self, source: &Arc<str>) -> Vec<Rule> {
        let mut out = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            let text = rule.describe();
            let make = |tool: ToolMatch, pattern: Pattern| Rule {
                text: text.clone(),
                effect: rule.effect,
                dialect: Dialect::Tuff,
                tool,
                pattern,
                provenance: Provenance {
                    source: source.clone(),
                    list: List::Rules,
                    index,
                },
                reason: rule.reason.clone(),
            };
            match &rule.subject {
                Subject::Command(words) => out.push(make(
                    ToolMatch::Name("Bash".into()),
                    Pattern::Tokens(words.clone()),
                )),
                Subject::Read(patterns) | Subject::Edit(patterns) => {
                    let tool = if matches!(rule.subject, Subject::Read(_)) {
                        "Read"
                    } else {
                        "Edit"
                    };
                    for p in patterns {
                        // Validated at parse time, so this cannot fail here.
                        if let Ok(path) = path_pattern(p) {
                            out.push(make(ToolMatch::Name(tool.into()), Pattern::Path(path)));
                        }
                    }
                }
                Subject::Mcp { server, tool } => {
                    let mut pieces = vec![GlobPiece::Literal("mcp__".into())];
                    push_wild(&mut pieces, server);
                    push_wild(&mut pieces, "__");
                    push_wild(&mut pieces, tool);
                    out.push(make(ToolMatch::Glob(pieces), Pattern::Any));
                }
            }
        }
        out
    }
}

/// `*` and `?` as wildcards, everything else literal; adjacent literals
/// merged, runs of `*` made one.
fn push_wild(pieces: &mut Vec<GlobPiece>, text: &str) {
    for c in text.chars() {
        match c {
            '*' => {
                if pieces.last() != Some(&GlobPiece::Star) {
                    pieces.push(GlobPiece::Star);
                }
            }
            '?' => pieces.push(GlobPiece::Question),
            c => match pieces.last_mut() {
                Some(GlobPiece::Literal(s)) => s.push(c),
                _ => pieces.push(GlobPiece::Literal(c.to_string())),
            },
        }
    }
}

fn parse_rule(rule: &toml::Value) -> Result<TuffRule, String> {
    let Some(rule) = rule.as_table() else {
        return Err("a rule must be a table ([[policy.rules]])".into());
    };
    if let Some(key) = rule.keys().find(|k| {
        !matches!(
            k.as_str(),
            "effect" | "command" | "read" | "edit" | "mcp" | "reason"
        )
    }) {
        return Err(format!("unknown key {key:?}: expected {RULE_KEYS}"));
    }
    let effect = match rule.get("effect") {
        None => return Err("the rule has no effect: write effect = \"deny\" or \"ask\"".into()),
        Some(toml::Value::String(e)) => match e.as_str() {
            "deny" => Effect::Deny,
            "ask" => Effect::Ask,
            "allow" => {
                return Err(
                    "a policy rule cannot allow anything: policies only narrow what an agent may do"
                        .into(),
                );
            }
            other => return Err(format!("effect must be \"deny\" or \"ask\", not {other:?}")),
        },
        Some(_) => return Err("effect must be the string \"deny\" or \"ask\"".into()),
    };
    let present: Vec<&str> = ["command", "read", "edit", "mcp"]
        .into_iter()
        .filter(|k| rule.contains_key(*k))
        .collect();
    let subject = match present.as_slice() {
        [] => return Err("the rule has no subject: give one of command, read, edit or mcp".into()),
        ["command"] => Subject::Command(command_words(string_list(rule, "command")?)?),
        ["read"] => Subject::Read(path_list("read", string_list(rule, "read")?)?),
        ["edit"] => Subject::Edit(path_list("edit", string_list(rule, "edit")?)?),
        ["mcp"] => {
            let Some(toml::Value::String(mcp)) = rule.get("mcp") else {
                return Err("mcp must be a string \"server:tool\"".into());
            };
            mcp_pattern(mcp)?
        }
        several => {
            return Err(format!(
                "the rule has several subjects ({}): write one rule per subject",
                several.join(", ")
            ));
        }
    };
    let reason = match rule.get("reason") {
        None => None,
        Some(toml::Value::String(r)) if r.trim().is_empty() => {
            return Err("reason is empty: leave it out or say why the rule exists".into());
        }
        Some(toml::Value::String(r)) => Some(r.clone()),
        Some(_) => return Err("reason must be a string".into()),
    };
    Ok(TuffRule {
        effect,
        subject,
        reason,
    })
}

fn string_list(rule: &toml::Table, key: &str) -> Result<Vec<String>, String> {
    let Some(toml::Value::Array(items)) = rule.get(key) else {
        return Err(format!("{key} must be an array of strings"));
    };
    items
        .iter()
        .map(|v| match v {
            toml::Value::String(s) => Ok(s.clone()),
            _ => Err(format!("{key} must be an array of strings")),
        })
        .collect()
}

fn command_words(words: Vec<String>) -> Result<Vec<String>, String> {
    if words.is_empty() {
        return Err(
            "command is empty: name at least the program, as in [\"git\", \"push\"]".into(),
        );
    }
    for w in &words {
        if w.contains('*') {
            return Err(format!(
                "command word {w:?} contains '*': command words are literal, and a rule already \
                 matches every command that has its words"
            ));
        }
        if w.is_empty() || w.chars().any(char::is_whitespace) || w.contains('\0') {
            return Err(format!(
                "command word {w:?} is not one word: write each argument as its own \
                 non-empty string without blanks or nul bytes"
            ));
        }
    }
    Ok(words)
}

pub(crate) fn path_list(key: &str, patterns: Vec<String>) -> Result<Vec<String>, String> {
    if patterns.is_empty() {
        return Err(format!("{key} lists no path pattern"));
    }
    for p in &patterns {
        let problem = if p.is_empty() {
            Some("is empty")
        } else if p.trim() != p {
            Some("has blanks around it")
        } else if p.starts_with('/') {
            Some("starts with '/'")
        } else if p.starts_with('~') {
            Some("starts with '~'")
        } else if p.contains('\\') {
            Some("contains '\\'")
        } else if p.contains('\0') {
            Some("contains a nul byte")
        } else if p.split('/').any(|s| s == "..") {
            Some("has a '..' segment")
        } else if path_pattern(p).is_err() {
            Some("names no path")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(format!(
                "{key} pattern {p:?} {problem}: patterns are paths relative to the project \
                 root, such as \".env\" or \"secrets/**\""
            ));
        }
    }
    Ok(patterns)
}

fn mcp_pattern(text: &str) -> Result<Subject, String> {
    let ok = |part: &str| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*'))
    };
    match text.split_once(':') {
        Some((server, tool)) if ok(server) && ok(tool) => Ok(Subject::Mcp {
            server: server.into(),
            tool: tool.into(),
        }),
        _ => Err(format!(
            "mcp pattern {text:?} is not \"server:tool\" over [A-Za-z0-9_.*-] (either side may \
             use '*'), such as \"github:delete_*\""
        )),
    }
}

/// A tuff path pattern in the IR, read as tuff reads it: leading `./`s
/// stripped; a trailing `/` names what is inside a directory; anchored iff a
/// `/` remains before the end; `**` as a whole segment spans segments; `*`
/// and `?` stay within a segment; every other character (`[` included) is
/// literal. Empty segments (`a//b`) are dropped. Case-sensitive.
pub fn path_pattern(pattern: &str) -> Result<PathPattern, Error> {
    let mut rest = pattern;
    while let Some(r) = rest.strip_prefix("./") {
        rest = r;
    }
    let dir_only = rest.ends_with('/');
    let rest = rest.trim_end_matches('/');
    let mut segments: Vec<Segment> = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s == "**" {
                return Segment::DoubleStar;
            }
            let mut pieces = Vec::new();
            for c in s.chars() {
                match c {
                    '*' => {
                        if pieces.last() != Some(&SegPiece::Star) {
                            pieces.push(SegPiece::Star);
                        }
                    }
                    '?' => pieces.push(SegPiece::Question),
                    c => match pieces.last_mut() {
                        Some(SegPiece::Literal(l)) => l.push(c),
                        _ => pieces.push(SegPiece::Literal(c.to_string())),
                    },
                }
            }
            Segment::Pieces(pieces)
        })
        .collect();
    if segments.is_empty() {
        return Err(Error::rule("path pattern names no path", pattern, 0));
    }
    if dir_only && segments.last() != Some(&Segment::DoubleStar) {
        segments.push(Segment::DoubleStar);
    }
    Ok(PathPattern {
        anchor: Anchor::Source,
        segments,
        anchored: rest.contains('/'),
        case_insensitive: false,
    })
}

/// A TOML syntax error with its line, column and a caret.
fn toml_error(e: &toml::de::Error, text: &str, source: &str) -> Error {
    let mut err = Error::new(ErrorKind::Policy, first_line(e.message())).with_source(source);
    if let Some(span) = e.span() {
        let (line, line_text, column) = crate::policy::jsonc::position(text, span.start);
        err = err
            .with_item(format!("line {line}"))
            .with_text(line_text, column);
    }
    err
}

fn first_line(msg: &str) -> String {
    let line = msg.lines().next().unwrap_or(msg).trim();
    let mut chars = line.chars();
    match chars.next() {
        // One lowercase clause, as every error of the crate.
        Some(c) if c.is_uppercase() && !chars.clone().next().is_some_and(char::is_uppercase) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => line.to_string(),
    }
}

/// The relative path of an installed policy's record:
/// `<dir_prefix>/policies/<id>/policy.toml`.
pub fn installed_record(dir_prefix: &Path, id: &str) -> PathBuf {
    dir_prefix.join("policies").join(id).join("policy.toml")
}

/// Whether `id` can name an installed policy: non-empty, one path
/// component, not `.` or `..`, no `/`, `\` or nul byte.
pub fn valid_policy_id(id: &str) -> bool {
    !id.is_empty() && id != "." && id != ".." && !id.contains(['/', '\\', '\0'])
}

/// The project an installed policy belongs to: the nearest directory at or
/// above one of `starts` (tried in order) that holds
/// `<dir_prefix>/policies/<id>/policy.toml`, or `None`. An `id` that is not
/// a single plain path component finds nothing.
pub fn find_policy_root(starts: &[PathBuf], dir_prefix: &Path, id: &str) -> Option<PathBuf> {
    if !valid_policy_id(id) {
        return None;
    }
    let record = installed_record(dir_prefix, id);
    starts.iter().find_map(|start| {
        start
            .ancestors()
            .find(|dir| dir.join(&record).is_file())
            .map(Path::to_path_buf)
    })
}

/// Reads and validates an installed policy record (its `[policy]`
/// section), as [`TuffPolicy::parse`] does; errors name `path`.
pub fn load_installed_policy(path: &Path) -> Result<TuffPolicy, Error> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot read the policy: {}", io_clause(&e)),
        )
        .with_source(&name)
    })?;
    TuffPolicy::parse(&text, &name)
}

/// An I/O error as one lowercase clause.
pub(crate) fn io_clause(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        std::io::ErrorKind::InvalidData => "not valid utf-8".into(),
        _ => first_line(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> SegPiece {
        SegPiece::Literal(s.into())
    }

    #[test]
    fn path_patterns_follow_tuff() {
        let p = path_pattern(".env").unwrap();
        assert_eq!(p.segments, vec![Segment::Pieces(vec![lit(".env")])]);
        assert!(!p.anchored);
        let p = path_pattern("secrets/").unwrap();
        assert!(!p.anchored);
        assert_eq!(
            p.segments,
            vec![Segment::Pieces(vec![lit("secrets")]), Segment::DoubleStar]
        );
        let p = path_pattern("./config/*.pem").unwrap();
        assert!(p.anchored);
        assert_eq!(
            p.segments,
            vec![
                Segment::Pieces(vec![lit("config")]),
                Segment::Pieces(vec![SegPiece::Star, lit(".pem")])
            ]
        );
        let p = path_pattern("./a.txt").unwrap();
        assert!(!p.anchored);
        let p = path_pattern("a**b/[x]?").unwrap();
        assert_eq!(
            p.segments,
            vec![
                Segment::Pieces(vec![lit("a"), SegPiece::Star, lit("b")]),
                Segment::Pieces(vec![lit("[x]"), SegPiece::Question])
            ]
        );
        let p = path_pattern("secrets/**").unwrap();
        assert_eq!(
            p.segments,
            vec![Segment::Pieces(vec![lit("secrets")]), Segment::DoubleStar]
        );
        assert!(p.anchored);
        assert!(path_pattern("./").is_err());
    }

    #[test]
    fn mcp_globs() {
        let Subject::Mcp { server, tool } = mcp_pattern("git*hub:delete_*x").unwrap() else {
            panic!()
        };
        let tool = tool.replace('*', "?");
        let mut pieces = vec![GlobPiece::Literal("mcp__".into())];
        push_wild(&mut pieces, &server);
        push_wild(&mut pieces, "__");
        push_wild(&mut pieces, &tool);
        assert_eq!(
            pieces,
            vec![
                GlobPiece::Literal("mcp__git".into()),
                GlobPiece::Star,
                GlobPiece::Literal("hub__delete_".into()),
                GlobPiece::Question,
                GlobPiece::Literal("x".into()),
            ]
        );
    }

    #[test]
    fn mcp_refusals() {
        for bad in ["github", ":x", "x:", "a:b:c", "a b:c", "a:b?", "a/b:c"] {
            assert!(mcp_pattern(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn ids() {
        assert!(valid_policy_id("infra-guardrails"));
        for bad in ["", ".", "..", "a/b", "a\\b", "a\0"] {
            assert!(!valid_policy_id(bad), "{bad:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_or_errs_without_panic(text in "[\\[\\]a-z=\" \n.*/~,-]{0,80}") {
            let _ = TuffPolicy::parse(&text, "p.toml");
        }

        #[test]
        fn any_pattern_lowers_without_panic(p in "[a-z./*?\\[\\]]{0,12}") {
            let _ = path_pattern(&p);
        }
    }
}
