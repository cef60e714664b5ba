//! Every distinct real rule of the corpus (`rules.txt`, and the odd rules
//! of `odd-rules.tsv`) parses, or is refused with an error naming the rule
//! and a column — in both dialects and as deny, ask and allow rules, never
//! with a panic. Prints how many rules of each form were found.

mod common;

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use toolgate::rule::claude::parse_rule;
use toolgate::rule::{Anchor, CommandForm, DomainPattern, ToolMatch};
use toolgate::{Dialect, Effect, ErrorKind, List, Pattern, Provenance};

/// A rule's form, for the counts.
fn form(p: &Pattern, t: &ToolMatch) -> String {
    let tool = match t {
        ToolMatch::Name(n) => n.clone(),
        ToolMatch::McpServer(_) => return "mcp server".into(),
        ToolMatch::Glob(_) => return "tool-name glob".into(),
    };
    let tool = if tool.starts_with("mcp__") {
        "mcp tool".to_string()
    } else {
        tool
    };
    match p {
        Pattern::Any => "bare tool, Tool() or Tool(*)".into(),
        Pattern::Command(c) => match &c.form {
            CommandForm::Exact(_) => format!("{tool} exact"),
            CommandForm::Prefix(_) => format!("{tool} prefix"),
            CommandForm::PrefixGlob(_) => format!("{tool} prefix with wildcards"),
            CommandForm::Glob(_) => format!("{tool} glob"),
        },
        Pattern::Path(p) => format!(
            "{tool} path {}",
            match p.anchor {
                Anchor::Root => "//",
                Anchor::Home => "~/",
                Anchor::Source => "/",
                Anchor::Project => "relative",
            }
        ),
        Pattern::Domain(DomainPattern::Any) => "WebFetch domain:*".into(),
        Pattern::Domain(DomainPattern::Host { subdomains, .. }) => if *subdomains {
            "WebFetch domain:*.host"
        } else {
            "WebFetch domain:host"
        }
        .into(),
        Pattern::Field { field, .. } => format!("{tool} field {field}"),
        Pattern::Tokens(_) => "tokens".into(),
        Pattern::Opaque(_) => format!("{tool} (spec kept, never matched)"),
    }
}

/// The rules of `rules.txt` (a line starting with `"` is JSON-encoded).
fn corpus_rules() -> Option<Vec<String>> {
    let lines = common::corpus_lines("rules.txt")?;
    Some(
        lines
            .into_iter()
            .map(|l| {
                if l.starts_with('"') {
                    serde_json::from_str(&l).expect("a JSON-encoded rule line")
                } else {
                    l
                }
            })
            .collect(),
    )
}

/// The rules of `odd-rules.tsv` (third column, JSON-encoded).
fn odd_rules() -> Option<Vec<String>> {
    let lines = common::corpus_lines("odd-rules.tsv")?;
    Some(
        lines
            .iter()
            .skip(1)
            .filter_map(|l| l.split('\t').nth(2))
            .filter_map(|j| serde_json::from_str::<String>(j).ok())
            .collect(),
    )
}

/// Parses every rule in every dialect and effect; returns the problems and
/// the counts of forms (claude-code, deny) and of refusals.
fn check(rules: &[String], name: &str) -> (Vec<String>, BTreeMap<String, usize>) {
    let mut problems = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (i, rule) in rules.iter().enumerate() {
        for dialect in [Dialect::Strict, Dialect::ClaudeCode] {
            for effect in [Effect::Deny, Effect::Ask, Effect::Allow] {
                let prov = Provenance {
                    source: name.into(),
                    list: List::Deny,
                    index: i,
                };
                let got =
                    catch_unwind(AssertUnwindSafe(|| parse_rule(rule, effect, dialect, prov)));
                let tally = dialect == Dialect::ClaudeCode && effect == Effect::Deny;
                match got {
                    Err(_) => problems.push(format!("{name}:{i}: panic on {rule:?}")),
                    Ok(Ok(r)) => {
                        if tally {
                            *counts.entry(form(&r.pattern, &r.tool)).or_default() += 1;
                        }
                    }
                    Ok(Err(e)) => {
                        let loc = e.location();
                        if loc.text.as_deref() != Some(rule.as_str())
                            || loc.column.is_none()
                            || loc.source.as_deref() != Some(name)
                            || loc.item.is_none()
                        {
                            problems.push(format!(
                                "{name}:{i}: error without rule, column or source: {e}"
                            ));
                        }
                        let shown = e.to_string();
                        if !shown.contains('^') {
                            problems.push(format!("{name}:{i}: error without a caret: {shown}"));
                        }
                        if tally {
                            let what = match e.kind() {
                                ErrorKind::Unsupported => "refused as unsupported",
                                _ => "refused as malformed",
                            };
                            *counts.entry(what.into()).or_default() += 1;
                            eprintln!("{name}:{i}: {e}");
                        }
                    }
                }
            }
        }
    }
    (problems, counts)
}

fn print_counts(title: &str, total: usize, counts: &BTreeMap<String, usize>) {
    eprintln!("{title}: {total} distinct rules (claude-code, read as deny rules)");
    let mut sorted: Vec<_> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (form, n) in sorted {
        eprintln!("{n:>6}  {form}");
    }
}

#[test]
fn every_real_rule_parses_or_is_refused_clearly() {
    let Some(rules) = corpus_rules() else { return };
    assert!(rules.len() > 3000, "rules.txt has {} rules", rules.len());
    let (problems, counts) = check(&rules, "rules.txt");
    print_counts("rules.txt", rules.len(), &counts);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Nearly every real rule is well-formed: a parser that refused them
    // wholesale would fail here.
    let refused: usize = counts
        .iter()
        .filter(|(k, _)| k.starts_with("refused"))
        .map(|(_, v)| v)
        .sum();
    assert!(refused < 20, "{refused} real rules refused");
}

#[test]
fn every_odd_rule_parses_or_is_refused_clearly() {
    let Some(rules) = odd_rules() else { return };
    assert!(rules.len() > 400, "odd-rules.tsv has {} rules", rules.len());
    let (problems, counts) = check(&rules, "odd-rules.tsv");
    print_counts("odd-rules.tsv", rules.len(), &counts);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
