//! The `policy` fuzz property, shared with the main package's regression
//! tests (which include this file): settings JSON or policy.toml text
//! loads, or is refused with an error that leaves the policy as it was.

use toolgate::policy::{LoadedPolicy, SourceKind, SourceRoot};
use toolgate::{Effect, Pattern};

/// Runs one fuzz input: the first byte picks settings JSON (even, with the
/// kind of settings file) or a tuff `policy.toml` (odd); the rest, read as
/// UTF-8 (lossily), is the file text. `Err` describes a failure.
pub fn check_policy(data: &[u8]) -> Result<(), String> {
    let Some((&first, rest)) = data.split_first() else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(rest);
    let mut policy = LoadedPolicy::new();
    // A rule given first, so that a refused load can be seen to add nothing.
    policy
        .add_rule(Effect::Deny, "Bash(rm:*)")
        .map_err(|e| format!("the fixed rule: {e}"))?;
    let before = policy.rules().len();
    let result = if first % 2 == 0 {
        let kinds = [
            SourceKind::Managed,
            SourceKind::User,
            SourceKind::Project,
            SourceKind::Local,
        ];
        let kind = kinds[usize::from(first / 2) % kinds.len()];
        policy
            .add_settings_text(&text, "settings.json", None, kind, SourceRoot::Project)
            .map(|_| ())
    } else {
        policy
            .add_tuff_text(
                &text,
                "policy.toml",
                None,
                SourceKind::Tuff,
                SourceRoot::Project,
            )
            .map(|_| ())
    };
    match result {
        Ok(()) => {
            for rule in policy.rules() {
                if rule.text.is_empty() && rule.pattern != Pattern::Any {
                    return Err(format!("a loaded rule without text: {rule:?}"));
                }
            }
            Ok(())
        }
        Err(e) => {
            if e.to_string().is_empty() {
                return Err("an empty error message".into());
            }
            if policy.rules().len() != before {
                return Err(format!("a refused load added rules: {e}"));
            }
            Ok(())
        }
    }
}
