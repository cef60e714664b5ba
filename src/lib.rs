//! toolgate decides whether an AI coding agent's tool call — a shell
//! command, a file read or edit, a web fetch, an MCP tool — is allowed,
//! asked about, or denied, by matching it against permission rules.
//!
//! # The pipeline
//!
//! ```text
//! rule text / policy files ─▶ rule::    (text → Rule IR, with provenance)
//!                               │
//!                               ▼
//!                           compile::   (IR → one matcher per tool kind)
//!                               │
//! tool call ─▶ shell:: (command → Reading) ─▶ eval:: (call → actions → match
//!                                                ids → precedence → Decision)
//! ```
//!
//! [`reference`](mod@reference) is a deliberately naive matcher — a loop over rules, each
//! checked by a small hand-written matcher — kept as the oracle every
//! compiled engine is tested against.
//!
//! # Guarantees
//!
//! - Nothing in the library panics on input: bad rules, calls and commands
//!   are [`Error`]s or incomplete readings.
//! - Nothing fails open: what cannot be read is never allowed.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod compile;
mod error;
pub mod eval;
pub mod hook;
pub mod lint;
pub mod paths;
pub mod policy;
pub mod policy_eval;
pub mod reference;
pub mod reference_eval;
pub mod rule;
pub mod shell;

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;

pub use crate::error::{Error, ErrorKind, Location};
pub use crate::eval::call::ToolCall;
pub use crate::eval::{Decision, EvalContext, Evaluator, Verdict};
pub use crate::reference::MatchContext;
pub use crate::rule::{Dialect, Effect, List, Pattern, Provenance, Rule};

/// Does the rule string `rule` match `call`? The `match-rules` question
/// (SPEC §10.1) in the `strict` dialect, with no session directory: the
/// rule is read as a deny rule (the widest reading, SPEC §4.2).
///
/// ```
/// use toolgate::{match_rule, ToolCall};
/// let call = ToolCall::from_json(&serde_json::json!(
///     {"tool": "Bash", "input": {"command": "npm run build"}})).unwrap();
/// assert!(match_rule("Bash(npm run *)", &call).unwrap());
/// assert!(!match_rule("Bash(npm test)", &call).unwrap());
/// assert!(match_rule("Bash((ls)", &call).is_err());
/// ```
pub fn match_rule(rule: &str, call: &ToolCall) -> Result<bool, Error> {
    match_rule_with(rule, call, Dialect::Strict, &MatchContext::default())
}

/// [`match_rule`] in a chosen dialect and context.
pub fn match_rule_with(
    rule: &str,
    call: &ToolCall,
    dialect: Dialect,
    ctx: &MatchContext,
) -> Result<bool, Error> {
    let rule = rule::claude::parse_rule(
        rule,
        Effect::Deny,
        dialect,
        Provenance::standalone(List::Deny),
    )?;
    compile::match_rule(&rule, call, ctx)
}
