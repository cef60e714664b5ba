//! OpenAI Codex's `PreToolUse` hook (SPEC §11).
//!
//! Codex sends the same input shape as Claude Code (`cwd`,
//! `hook_event_name`, `tool_name`, `tool_input`, …), read by
//! [`claude::Input`], and reads the same
//! `hookSpecificOutput` answer. It cannot ask and refuses a call only with
//! a deny, so:
//!
//! - deny → deny;
//! - ask → deny, the reason starting "needs approval; this harness cannot
//!   ask";
//! - allow and no match → nothing (Codex's own approval decides);
//! - input or policy that cannot be read → deny, exit code 2.

use serde_json::Value;

use super::claude;
use crate::eval::Verdict;

/// What an ask becomes.
pub const CANNOT_ASK: &str = "needs approval; this harness cannot ask";

/// The answer for `verdict`: `Some(json)` for deny and ask (as a deny),
/// `None` (print nothing) for allow and [`Verdict::None`].
///
/// ```
/// use toolgate::{Verdict, hook::codex::answer};
/// let a = answer(Verdict::Ask, "asked by Bash(git push *)").unwrap();
/// assert_eq!(a["hookSpecificOutput"]["permissionDecision"], "deny");
/// assert!(answer(Verdict::Allow, "allowed by Bash(ls)").is_none());
/// ```
pub fn answer(verdict: Verdict, reason: &str) -> Option<Value> {
    match verdict {
        Verdict::Deny => claude::answer(Verdict::Deny, reason),
        Verdict::Ask => claude::answer(Verdict::Deny, &format!("{CANNOT_ASK}: {reason}")),
        Verdict::Allow | Verdict::None => None,
    }
}
