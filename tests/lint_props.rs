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

fn rule_text() -> impl Strategy<Value = String> {
    let tool = prop_oneof![
        Just("Bash"),
        Just("Read"),
        Just("Edit"),
        Just("Write"),
        Just("WebFetch"),
        Just("Agent"),
        Just("mcp__s__t"),
        Just("Bahs"),
        Just("*"),
    ];
    let spec = proptest::collection::vec(
        prop_oneof![
            Just('('),
            Just(')'),
            Just('\\'),
            Just('*'),
            Just(':'),
            Just('/'),
            Just(' '),
            Just('.'),
            Just('~'),
            Just('['),
            Just(']'),
            Just('!'),
            Just('a'),
            Just('-'),
            Just('é'),
        ],
        0..12,
    );
    (tool, spec, any::<bool>()).prop_map(|(t, s, paren)| {
        let s: String = s.into_iter().collect();
        if paren {
            format!("{t}({s})")
        } else {
            format!("{t}{s}")
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Lint reads any rule strings without panicking, and a rule that does
    /// not parse is always an error or a dropped rule, never silence.
    #[test]
    fn any_rules_lint_without_panic(
        allow in proptest::collection::vec(rule_text(), 0..6),
        deny in proptest::collection::vec(rule_text(), 0..6),
    ) {
        let mut input = LintInput::new();
        for (i, r) in allow.iter().enumerate() {
            input.add_rule_text("p", List::Allow, i, r);
        }
        for (i, r) in deny.iter().enumerate() {
            input.add_rule_text("p", List::Deny, i, r);
        }
        let report = lint(&input);
        let _ = report.to_text();
        let _ = report.to_json();
        for (list, rules, effect) in [(List::Allow, &allow, Effect::Allow), (List::Deny, &deny, Effect::Deny)] {
            for (i, r) in rules.iter().enumerate() {
                if parse_rule(r, effect, Dialect::ClaudeCode, Provenance::standalone(list)).is_err() {
                    let item = format!("{}[{i}]", list.as_str());
                    prop_assert!(
                        report.findings().iter().any(|f| f.rule.item() == item && matches!(
                            f.kind,
                            Kind::ParseError | Kind::DroppedAllow | Kind::PrimaryField | Kind::ParameterLooksLikeProgram
                        )),
                        "{r:?} does not parse and lint says nothing"
                    );
                }
            }
        }
    }
}
