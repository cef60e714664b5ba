//! Shadowing is sound: whenever lint says a deny rule shadows an allow
//! rule, every text the allow rule matches (all texts up to 6 characters
//! over a small alphabet, checked with the reference matcher) is matched
//! by the deny rule; and whenever such a text escapes the deny rule, lint
//! does not say shadowed.

use proptest::prelude::*;
use toolgate::lint::{Kind, LintInput, lint};
use toolgate::rule::Pattern;
use toolgate::rule::claude::parse_rule;
use toolgate::{Dialect, Effect, List, Provenance, reference};

fn texts() -> Vec<String> {
    let alphabet = ['a', 'b', ' ', ':'];
    let mut out = vec![String::new()];
    let mut level = vec![String::new()];
    for _ in 0..6 {
        let mut next = Vec::new();
        for s in &level {
            for c in alphabet {
                next.push(format!("{s}{c}"));
            }
        }
        out.extend(next.iter().cloned());
        level = next;
    }
    out
}

fn spec() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![Just('a'), Just('b'), Just(' '), Just('*'), Just(':')],
        1..5,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    #[test]
    fn shadowed_means_included(a in spec(), b in spec()) {
        let (ta, tb) = (format!("Bash({a})"), format!("Bash({b})"));
        prop_assume!(ta != tb);
        let pa = parse_rule(&ta, Effect::Deny, Dialect::ClaudeCode, Provenance::standalone(List::Deny));
        let pb = parse_rule(&tb, Effect::Allow, Dialect::ClaudeCode, Provenance::standalone(List::Allow));
        let (Ok(ra), Ok(rb)) = (pa, pb) else { return Ok(()) };
        let (Pattern::Command(ca), Pattern::Command(cb)) = (&ra.pattern, &rb.pattern) else {
            return Ok(());
        };
        let mut input = LintInput::new();
        input.add_rule_text("p", List::Deny, 0, &ta);
        input.add_rule_text("p", List::Allow, 0, &tb);
        let shadowed = lint(&input).findings().iter().any(|f| f.kind == Kind::Shadowed);
        let witness = texts()
            .into_iter()
            .find(|t| reference::command_matches(cb, t) && !reference::command_matches(ca, t));
        if shadowed {
            prop_assert!(witness.is_none(), "{tb} shadowed by {ta}, but {witness:?}");
        }
    }
}
