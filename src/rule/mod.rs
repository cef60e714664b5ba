//! Stage 1: rule text and policy files → the rule IR. No regex here.
//!
//! Every source (Claude rule strings, tuff policies, rules on the command
//! line) produces [`Rule`]s: an effect, the tools it governs, a typed
//! [`Pattern`] and its [`Provenance`]. Everything that depends on the
//! dialect and on the effect (case folding, any-depth widening of paths,
//! the optional trailing ` *`) is decided here, at parse time, so that the
//! matchers downstream need to know nothing but the pattern.

pub mod claude;
pub mod pattern;
pub mod tuff;

pub use pattern::{
    Anchor, CommandForm, CommandPattern, DomainLabel, DomainPattern, GlobPiece, PathPattern,
    Pattern, SegPiece, Segment, ToolMatch,
};

use std::fmt;
use std::sync::Arc;

/// What a rule does when it matches. The order is precedence:
/// deny over ask over allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Effect {
    /// The call is refused.
    Deny,
    /// A person is asked.
    Ask,
    /// The call may go ahead.
    Allow,
}

impl Effect {
    /// `"deny"`, `"ask"` or `"allow"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Deny => "deny",
            Effect::Ask => "ask",
            Effect::Allow => "allow",
        }
    }

    /// Whether rules of this effect may use widened candidates (§8.4):
    /// deny and ask only.
    pub fn widens(self) -> bool {
        self != Effect::Allow
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The few points where rule sources differ (SPEC §3.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// The rule-matcher stage: a rule governs its own tool only; the
    /// trailing ` *` is required; paths are case-sensitive.
    Strict,
    /// Claude Code's settings files.
    #[default]
    ClaudeCode,
    /// tuff `policy.toml` policies.
    Tuff,
}

impl Dialect {
    /// `"strict"`, `"claude-code"` or `"tuff"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Strict => "strict",
            Dialect::ClaudeCode => "claude-code",
            Dialect::Tuff => "tuff",
        }
    }
}

impl std::str::FromStr for Dialect {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Dialect, crate::Error> {
        match s {
            "strict" => Ok(Dialect::Strict),
            "claude-code" => Ok(Dialect::ClaudeCode),
            "tuff" => Ok(Dialect::Tuff),
            _ => Err(crate::Error::new(
                crate::ErrorKind::Call,
                format!("unknown dialect {s:?}: expected strict, claude-code or tuff"),
            )),
        }
    }
}

/// Which list of its source a rule came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum List {
    /// `permissions.allow`
    Allow,
    /// `permissions.ask`
    Ask,
    /// `permissions.deny`
    Deny,
    /// a tuff policy's `[[policy.rules]]`
    Rules,
}

impl List {
    /// The list's name as it is written in its file.
    pub fn as_str(self) -> &'static str {
        match self {
            List::Allow => "allow",
            List::Ask => "ask",
            List::Deny => "deny",
            List::Rules => "rules",
        }
    }
}

/// Where a rule came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Provenance {
    /// The file (or `<command line>`, `<case N>`).
    pub source: Arc<str>,
    /// The list within the file.
    pub list: List,
    /// 0-based index within the list.
    pub index: usize,
}

impl Provenance {
    /// A provenance for a rule that stands on its own (a `match-rules`
    /// case, a rule given in code).
    pub fn standalone(list: List) -> Provenance {
        Provenance {
            source: Arc::from("<rule>"),
            list,
            index: 0,
        }
    }

    /// `deny[3]`, as errors and explanations name a rule.
    pub fn item(&self) -> String {
        format!("{}[{}]", self.list.as_str(), self.index)
    }
}

/// One rule of a policy, in the internal representation every source
/// compiles into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule as written (for a tuff rule, a rendering of it).
    pub text: String,
    /// What the rule does when it matches.
    pub effect: Effect,
    /// The dialect the rule was read in.
    pub dialect: Dialect,
    /// Which tool calls the rule governs.
    pub tool: ToolMatch,
    /// What the rule matches within a governed call.
    pub pattern: Pattern,
    /// Where the rule came from.
    pub provenance: Provenance,
    /// A tuff rule's `reason`.
    pub reason: Option<String>,
}

/// The tools whose calls a `Read(spec)` rule governs in `claude-code`.
pub const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LSP", "NotebookRead"];

/// The tools whose calls an `Edit(spec)` rule governs in `claude-code`.
pub const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// The tools whose calls a `Bash(spec)` rule governs in `claude-code`.
pub const COMMAND_TOOLS: &[&str] = &["Bash", "Monitor"];

impl Rule {
    /// Whether this rule governs calls of `call_tool` (SPEC §2 table, §13
    /// "Which calls a rule governs"). `Task` is read as `Agent`.
    ///
    /// - A bare rule (`Tool`, `Tool()`, `Tool(*)`) governs its own tool only.
    /// - `strict`: a rule governs its own tool only.
    /// - `claude-code` (and `tuff`): `Bash(spec)` also governs `Monitor`,
    ///   `Read(spec)` the read tools ([`READ_TOOLS`]) — and, as a
    ///   `claude-code` deny rule, the edit tools too (a Read deny also denies edits and writes of
    ///   the same path, SPEC §13 "Evaluation") — `Edit(spec)` the edit
    ///   tools ([`EDIT_TOOLS`]); field rules (`Tool(param:value)`) govern
    ///   their own tool only. (`Write(spec)` and the like are
    ///   [`Pattern::Opaque`] there: governed, never matched.)
    /// - MCP server rules and tool-name globs govern the names they match.
    ///
    /// ```
    /// use toolgate::rule::claude::parse_rule;
    /// use toolgate::{Dialect, Effect, List, Provenance};
    ///
    /// let p = Provenance::standalone(List::Deny);
    /// let r = parse_rule("Read(.env)", Effect::Deny, Dialect::ClaudeCode, p.clone()).unwrap();
    /// assert!(r.governs("Grep"));
    /// let r = parse_rule("Read(.env)", Effect::Deny, Dialect::Strict, p).unwrap();
    /// assert!(!r.governs("Grep"));
    /// ```
    pub fn governs(&self, call_tool: &str) -> bool {
        let call_tool = claude::canonical_tool(call_tool);
        match &self.tool {
            ToolMatch::Name(name) => {
                if name == call_tool {
                    return true;
                }
                if self.dialect == Dialect::Strict {
                    return false;
                }
                let family: &[&str] = match (&self.pattern, name.as_str()) {
                    (Pattern::Any | Pattern::Field { .. }, _) => return false,
                    (_, "Bash") => COMMAND_TOOLS,
                    (_, "Read") => {
                        // A Read deny also denies edits and writes of the
                        // same path (Claude Code >= 2.1.208, SPEC §13).
                        if self.dialect == Dialect::ClaudeCode
                            && self.effect == Effect::Deny
                            && EDIT_TOOLS.contains(&call_tool)
                        {
                            return true;
                        }
                        READ_TOOLS
                    }
                    (_, "Edit") => EDIT_TOOLS,
                    _ => return false,
                };
                family.contains(&call_tool)
            }
            t @ (ToolMatch::McpServer(_) | ToolMatch::Glob(_)) => {
                crate::reference::tool_matches(t, call_tool)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC §2's table and §13 "Which calls a rule governs", one row per
    /// rule: the tools it governs among a fixed set of calls.
    #[test]
    fn which_calls_a_rule_governs() {
        const CALLS: &[&str] = &[
            "Bash",
            "Monitor",
            "PowerShell",
            "Read",
            "Glob",
            "Grep",
            "LSP",
            "NotebookRead",
            "Edit",
            "Write",
            "MultiEdit",
            "NotebookEdit",
            "WebFetch",
            "Agent",
            "Task",
            "Skill",
            "mcp__gh__get",
            "mcp__ghx__get",
        ];
        let s = Dialect::Strict;
        let c = Dialect::ClaudeCode;
        let (d, a) = (Effect::Deny, Effect::Allow);
        let rows: &[(&str, Effect, Dialect, &[&str])] = &[
            ("Bash", d, c, &["Bash"]),
            ("Bash(ls)", d, s, &["Bash"]),
            ("Bash(ls)", d, c, &["Bash", "Monitor"]),
            ("Read", d, c, &["Read"]),
            ("Read(*)", d, c, &["Read"]),
            ("Read(x)", d, s, &["Read"]),
            (
                "Read(x)",
                a,
                c,
                &["Read", "Glob", "Grep", "LSP", "NotebookRead"],
            ),
            (
                "Read(x)",
                d,
                c,
                &[
                    "Read",
                    "Glob",
                    "Grep",
                    "LSP",
                    "NotebookRead",
                    "Edit",
                    "Write",
                    "MultiEdit",
                    "NotebookEdit",
                ],
            ),
            ("Read(offset:1)", d, c, &["Read"]),
            ("Edit(x)", d, s, &["Edit"]),
            (
                "Edit(x)",
                d,
                c,
                &["Edit", "Write", "MultiEdit", "NotebookEdit"],
            ),
            ("Edit", d, c, &["Edit"]),
            ("Write(x)", d, s, &["Write"]),
            ("Write(x)", d, c, &["Write"]),
            ("WebFetch(domain:x.com)", d, c, &["WebFetch"]),
            ("Agent(Explore)", d, c, &["Agent", "Task"]),
            ("Task", d, s, &["Agent", "Task"]),
            ("mcp__gh", d, s, &["mcp__gh__get"]),
            ("mcp__gh__*", a, c, &["mcp__gh__get"]),
            ("mcp__*", d, s, &["mcp__gh__get", "mcp__ghx__get"]),
        ];
        let mut bad = Vec::new();
        for &(text, effect, dialect, want) in rows {
            let rule =
                claude::parse_rule(text, effect, dialect, Provenance::standalone(List::Deny))
                    .expect("the rule parses");
            let got: Vec<&str> = CALLS.iter().copied().filter(|t| rule.governs(t)).collect();
            if got != want {
                bad.push(format!(
                    "{text} ({effect}, {dialect:?}): {got:?}, want {want:?}"
                ));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}
