//! What an evaluation returns (SPEC §9.4).

use crate::policy::PermissionMode;
use crate::rule::{Effect, Rule};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// The answer for a whole call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The call may go ahead.
    Allow,
    /// A person is asked.
    Ask,
    /// The call is refused.
    Deny,
    /// No rule decided and no mode was given: the harness decides as it
    /// would without toolgate.
    None,
}

impl Verdict {
    /// `"allow"`, `"ask"`, `"deny"` or `"none"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
            Verdict::None => "none",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Verdict {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Verdict, crate::Error> {
        Ok(match s {
            "allow" => Verdict::Allow,
            "ask" => Verdict::Ask,
            "deny" => Verdict::Deny,
            "none" => Verdict::None,
            _ => {
                return Err(crate::Error::new(
                    crate::ErrorKind::Call,
                    format!("unknown verdict {s:?}: expected allow, ask, deny or none"),
                ));
            }
        })
    }
}

/// What an action does (SPEC §9.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionKind {
    /// A run of one program invocation (a Bash call's command, with its
    /// wrappers).
    Run,
    /// A Bash command as a whole, as one text (exact rules; every command
    /// rule when the reading is incomplete).
    Command,
    /// A file read.
    Read,
    /// A file edit (write, create, move, remove).
    Edit,
    /// A fetch of a host.
    Fetch,
    /// A use of the tool itself (every call has one; MCP tools, `Agent`,
    /// `Skill` and tools without a specifier are decided here).
    Use,
}

impl ActionKind {
    /// `"run"`, `"command"`, `"read"`, `"edit"`, `"fetch"`, `"use"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Run => "run",
            ActionKind::Command => "command",
            ActionKind::Read => "read",
            ActionKind::Edit => "edit",
            ActionKind::Fetch => "fetch",
            ActionKind::Use => "use",
        }
    }
}

/// How a rule matched an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum How {
    /// It matches the action as read.
    Matches,
    /// It could match some value of a dynamic or glob word, or some file
    /// below a directory read or written recursively (SPEC §8.4, §13): a
    /// deny or ask rule that only could match makes the action ask.
    Could,
}

/// One rule that matched one action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleMatch<'p> {
    /// The rule.
    pub rule: &'p Rule,
    /// Its position in policy order (files in load order, then list order).
    pub index: usize,
    /// How it matched.
    pub how: How,
}

impl RuleMatch<'_> {
    /// The effect this match has on its action: a deny rule that only
    /// could match asks.
    pub fn level(&self) -> Effect {
        match (self.rule.effect, self.how) {
            (Effect::Deny, How::Could) => Effect::Ask,
            (e, _) => e,
        }
    }
}

/// What became of one action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// A deny rule matched it.
    Denied,
    /// An ask rule matched it (or a deny rule could).
    Asked,
    /// An allow rule matched it.
    Allowed,
    /// It needs no approval of its own (a read inside the working
    /// directories, covered by its command's approval).
    Covered,
    /// The mode allows it (SPEC §9.3: a read inside the working
    /// directories, a read-only command, an edit under `acceptEdits`, a
    /// tool that never prompts).
    ModeAllowed,
    /// Nothing decided it.
    Unmatched,
}

impl Outcome {
    /// A short name: `"denied"`, `"asked"`, `"allowed"`, `"covered"`,
    /// `"mode-allowed"`, `"unmatched"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Denied => "denied",
            Outcome::Asked => "asked",
            Outcome::Allowed => "allowed",
            Outcome::Covered => "covered",
            Outcome::ModeAllowed => "mode-allowed",
            Outcome::Unmatched => "unmatched",
        }
    }
}

/// What an action is about ([`ActionReport::subject`]), read as a `&str`
/// (it dereferences to one).
///
/// A subject costs no copy where it can: a tool's name is a static text,
/// a path or a host the evaluation built is moved in, and the subjects a
/// Bash call's reduction wrote (its command, its runs) share one text —
/// one allocation for all of them, however many there are.
#[derive(Clone)]
pub struct Subject(Repr);

#[derive(Clone)]
enum Repr {
    /// `text[range]`, shared with other subjects of the decision.
    Shared(Arc<str>, Range<usize>),
    /// A text of its own.
    Owned(String),
    /// A name.
    Static(&'static str),
}

impl Subject {
    /// `text[range]`, a subject sharing `text` with others.
    pub(crate) fn shared(text: &Arc<str>, range: Range<usize>) -> Subject {
        Subject(Repr::Shared(Arc::clone(text), range))
    }

    /// A subject that owns its text.
    pub(crate) fn owned(text: String) -> Subject {
        Subject(Repr::Owned(text))
    }

    /// A subject that is a static name.
    pub(crate) fn name(text: &'static str) -> Subject {
        Subject(Repr::Static(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Shared(text, range) => text.get(range.clone()).unwrap_or(""),
            Repr::Owned(text) => text,
            Repr::Static(text) => text,
        }
    }
}

impl From<&str> for Subject {
    fn from(s: &str) -> Subject {
        Subject::owned(s.to_string())
    }
}

impl std::ops::Deref for Subject {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Subject {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Subject {
    fn eq(&self, other: &Subject) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Subject {}

impl PartialEq<str> for Subject {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Subject {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Subject {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One action of a call, with every rule that matched it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionReport<'p> {
    /// What it does.
    pub kind: ActionKind,
    /// What it is about: the command text, the absolute path, the host,
    /// the tool name.
    pub subject: Subject,
    /// Whether it needs approval for the call to be allowed (SPEC §9.2:
    /// every run of a Bash call, the file tool's path, the host, the tool
    /// use; and the files of a command as SPEC §13 says).
    pub needs_approval: bool,
    /// Every rule that matched it, in precedence order (deny, ask, allow;
    /// each in policy order).
    pub matches: Vec<RuleMatch<'p>>,
    /// What became of it.
    pub outcome: Outcome,
}

/// The rule that decided a call, with its provenance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecidingRule<'p> {
    /// The rule: its text, effect, source, list, index and tuff `reason`.
    pub rule: &'p Rule,
    /// Its position in policy order.
    pub index: usize,
    /// How it matched (a deny rule that only could match gives ask).
    pub how: How,
}

/// The decision on one call (SPEC §9.4).
///
/// It borrows the rules from the [`Evaluator`](super::Evaluator) (or the
/// reference evaluator) that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision<'p> {
    /// The verdict.
    pub verdict: Verdict,
    /// The deciding rule: the first rule, in policy order, of the effect
    /// that decided (SPEC §9.2). `None` when no rule decided (no match, or
    /// the mode, or an incomplete reading no rule matched).
    pub rule: Option<DecidingRule<'p>>,
    /// What the rules (and the reading) said before the mode resolved it.
    pub rules_verdict: Verdict,
    /// `plan` withheld an allow rule from an edit or a command.
    pub plan_withheld: bool,
    /// Every action of the call, with every rule that matched it (empty
    /// in a decision from [`Evaluator::decide`](super::Evaluator::decide)).
    pub actions: Vec<ActionReport<'p>>,
    /// The first action nothing decided (its kind and subject), which the
    /// reason of a call no rule decided names; `None` when every action
    /// was decided. Kept even when `actions` is not.
    pub unmatched: Option<(ActionKind, Subject)>,
    /// Why the shell reading (or the URL) could not be read completely;
    /// empty when it could.
    pub incomplete: Vec<String>,
    /// The mode the call was evaluated in, if any.
    pub mode: Option<PermissionMode>,
}

impl Decision<'_> {
    /// The deciding rule's text, if a rule decided.
    pub fn rule_text(&self) -> Option<&str> {
        self.rule.map(|r| r.rule.text.as_str())
    }

    /// One line saying why (built on demand: evaluation itself formats
    /// nothing).
    pub fn reason(&self) -> String {
        let mut s = String::new();
        // (Writing into a `String` cannot fail.)
        let _ = self.write_reason(&mut s);
        s
    }

    /// [`Decision::reason`], written into `out` instead of returned: a batch
    /// reuses one buffer for every call.
    pub fn write_reason(&self, out: &mut impl fmt::Write) -> fmt::Result {
        match (self.rules_verdict, self.rule) {
            (v, Some(r)) => {
                let what = match v {
                    Verdict::Deny => "denied by",
                    Verdict::Ask => "asked by",
                    _ => "allowed by",
                };
                let p = &r.rule.provenance;
                let could = if r.how == How::Could {
                    " (could match)"
                } else {
                    ""
                };
                write!(
                    out,
                    "{what} {}{could} ({} {})",
                    r.rule.text,
                    p.source,
                    p.item()
                )?;
                if let Some(reason) = &r.rule.reason {
                    out.write_str(": ")?;
                    out.write_str(reason)?;
                }
            }
            (Verdict::Ask, None) if self.plan_withheld => {
                out.write_str("plan mode asks before edits and commands")?;
            }
            (Verdict::Ask | Verdict::Allow, None) if !self.incomplete.is_empty() => {
                out.write_str("not read completely: ")?;
                out.write_str(self.incomplete.first().map_or("", String::as_str))?;
            }
            (Verdict::Allow, None) => out.write_str("every action is allowed by the mode")?,
            (_, None) => match &self.unmatched {
                Some((kind, subject)) => {
                    write!(out, "no rule decided {} {subject}", kind.as_str())?
                }
                None => out.write_str("the call runs nothing")?,
            },
        }
        match self.mode {
            Some(m) if self.verdict != self.rules_verdict => {
                write!(out, "; {m} mode makes it {}", self.verdict)
            }
            _ => Ok(()),
        }
    }
}
