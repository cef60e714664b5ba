//! `lint` over the real corpora: the odd rules the corpus curators marked
//! get the findings they deserve, the lowering lint decides shadowing on
//! agrees with the reference matcher, and every shadowed rule really is
//! covered.

mod common;

use std::collections::HashMap;

use toolgate::lint::{Kind, LintInput, Report, lint, lowered_regex};
use toolgate::rule::Pattern;
use toolgate::rule::claude::parse_rule;
use toolgate::{Dialect, Effect, List, Provenance, reference};

fn policies() -> Option<Vec<(String, LintInput)>> {
    let lines = common::corpus_lines("claude-policies.jsonl")?;
    let mut out = Vec::new();
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        let source = v["source"].as_str().expect("source").to_string();
        let mut input = LintInput::new();
        for list in [List::Allow, List::Ask, List::Deny] {
            if let Some(entries) = v[list.as_str()].as_array() {
                input.add_list(&source, list, entries);
            }
        }
        out.push((source, input));
    }
    Some(out)
}

fn has(report: &Report, text: &str, kinds: &[Kind]) -> bool {
    report
        .findings()
        .iter()
        .any(|f| f.rule.text == text && kinds.contains(&f.kind))
}

#[test]
fn odd_rules_get_their_findings() {
    let Some(policies) = policies() else { return };
    let Some(odd) = common::corpus_lines("odd-rules.tsv") else {
        return;
    };
    let reports: HashMap<String, Report> =
        policies.iter().map(|(s, i)| (s.clone(), lint(i))).collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    for row in odd.iter().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        let [category, list, rule_json, source] = cols[..] else {
            continue;
        };
        let Ok(serde_json::Value::String(rule)) = serde_json::from_str(rule_json) else {
            continue;
        };
        let tool = rule.split('(').next().unwrap_or("");
        let kinds: &[Kind] = if category.starts_with(":* not at end") {
            if rule.ends_with(":*)") {
                continue;
            }
            &[Kind::MisplacedPrefix]
        } else if category.starts_with("single-slash") {
            &[Kind::SingleSlashPath]
        } else if category.starts_with("duplicate entry") {
            &[Kind::Duplicate]
        } else if category.starts_with("unknown tool name") {
            if toolgate::lint::KNOWN_TOOLS.contains(&tool) {
                continue;
            }
            &[Kind::UnknownTool, Kind::LikelyTypo]
        } else if category == "space in path" && list == "deny" && tool == "Read" {
            &[Kind::SpaceInPath]
        } else {
            continue;
        };
        let Some(report) = reports.get(source) else {
            failures.push(format!("{source}: no such policy"));
            continue;
        };
        checked += 1;
        if !has(report, &rule, kinds) {
            failures.push(format!(
                "{source}: {list} {rule}: no {kinds:?} ({category})"
            ));
        }
    }
    assert!(checked > 50, "only {checked} odd rules checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Candidate texts from rule specifiers: the spec with its wildcards left
/// out or filled, so that many candidates match many rules.
fn spec_texts(rules: &[String], tool: &str) -> Vec<String> {
    let mut out = Vec::new();
    for r in rules {
        let Some(spec) = r
            .strip_prefix(tool)
            .and_then(|s| s.strip_prefix('('))
            .and_then(|s| s.strip_suffix(')'))
        else {
            continue;
        };
        let plain = spec.replace(":*", "");
        out.push(plain.replace('*', ""));
        out.push(plain.replace('*', "x y"));
        out.push(format!("{} --flag", plain.replace('*', "")));
    }
    out
}

#[test]
fn lowering_agrees_with_the_reference_matcher() {
    let Some(rules) = common::corpus_lines("rules.txt") else {
        return;
    };
    let Some(tldr) = common::corpus_lines("tldr-commands.txt") else {
        return;
    };
    let Some(paths) = common::corpus_lines("paths.txt") else {
        return;
    };
    let mut commands: Vec<String> = tldr.iter().step_by(300).cloned().collect();
    let specs = spec_texts(&rules, "Bash");
    commands.extend(specs.iter().step_by(16).cloned());
    let mut path_texts: Vec<String> = paths.iter().step_by(200).cloned().collect();
    for p in spec_texts(&rules, "Read")
        .into_iter()
        .chain(spec_texts(&rules, "Edit"))
        .step_by(4)
    {
        let p = p
            .trim_start_matches("./")
            .trim_start_matches('/')
            .to_string();
        if !p.is_empty() && !p.contains("//") && !p.ends_with('/') {
            path_texts.push(p);
        }
    }
    let mut failures = Vec::new();
    let mut compared = 0usize;
    for (i, text) in rules.iter().enumerate() {
        for effect in [Effect::Deny, Effect::Allow] {
            let Ok(rule) = parse_rule(
                text,
                effect,
                Dialect::ClaudeCode,
                Provenance::standalone(List::Deny),
            ) else {
                continue;
            };
            let (haystacks, is_command): (&[String], bool) = match &rule.pattern {
                Pattern::Command(_) if i % 8 == 0 => (&commands, true),
                Pattern::Path(_) if i % 3 == 0 => (&path_texts, false),
                _ => continue,
            };
            let Some(re) = lowered_regex(&rule) else {
                failures.push(format!("{text}: not lowered"));
                continue;
            };
            let re = match regex::Regex::new(&format!("^(?:{re})$")) {
                Ok(re) => re,
                Err(e) => {
                    failures.push(format!("{text}: {e}"));
                    continue;
                }
            };
            for h in haystacks {
                let want = match &rule.pattern {
                    Pattern::Command(c) if is_command => reference::command_matches(c, h),
                    Pattern::Path(p) => reference::path_matches(p, h),
                    _ => continue,
                };
                compared += 1;
                if re.is_match(h) != want && failures.len() < 30 {
                    failures.push(format!("{effect} {text} vs {h:?}: reference says {want}"));
                }
            }
        }
    }
    assert!(compared > 100_000, "only {compared} comparisons");
    eprintln!("{compared} comparisons");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn shadowing_findings_hold_on_samples() {
    let Some(policies) = policies() else { return };
    let mut failures = Vec::new();
    let mut shadowing = 0;
    for (source, input) in &policies {
        let report = lint(input);
        for f in report.findings() {
            if !matches!(f.kind, Kind::Shadowed | Kind::Redundant) {
                continue;
            }
            shadowing += 1;
            let Some(a) = &f.related else {
                failures.push(format!("{source}: {} has no related rule", f.rule.item()));
                continue;
            };
            let effect = |l: List| match l {
                List::Allow => Effect::Allow,
                List::Ask => Effect::Ask,
                _ => Effect::Deny,
            };
            let parse = |text: &str, list: List| {
                parse_rule(
                    text,
                    effect(list),
                    Dialect::ClaudeCode,
                    Provenance::standalone(list),
                )
                .ok()
            };
            let (Some(ra), Some(rb)) = (parse(&a.text, a.list), parse(&f.rule.text, f.rule.list))
            else {
                failures.push(format!("{source}: unparsable pair"));
                continue;
            };
            if ra.effect > rb.effect {
                failures.push(format!(
                    "{source}: {} shadowed by a lower rule",
                    f.rule.item()
                ));
            }
            // Texts B matches must all be matched by A.
            if let (Pattern::Command(ca), Pattern::Command(cb)) = (&ra.pattern, &rb.pattern) {
                for t in spec_texts(std::slice::from_ref(&f.rule.text), "Bash") {
                    if reference::command_matches(cb, &t) && !reference::command_matches(ca, &t) {
                        failures.push(format!(
                            "{source}: {} matches {t:?}, {} does not",
                            f.rule.text, a.text
                        ));
                    }
                }
            }
        }
    }
    assert!(shadowing > 10, "only {shadowing} shadowing findings");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Checks a shadowed-normalised or shadowed-across-kinds finding with the
/// evaluator on texts its rule matches, beyond the witness lint used;
/// returns how many texts were checked.
fn confirm(source: &str, f: &toolgate::lint::Finding, failures: &mut Vec<String>) -> usize {
    let ctx = toolgate::EvalContext::new("/project")
        .and_then(|c| c.with_home("/home/user"))
        .expect("a context");
    let Some(a) = &f.related else {
        failures.push(format!("{source}: {} has no related rule", f.rule.item()));
        return 0;
    };
    let effect = |l: List| match l {
        List::Allow => Effect::Allow,
        List::Ask => Effect::Ask,
        _ => Effect::Deny,
    };
    let parse = |text: &str, list: List| {
        parse_rule(
            text,
            effect(list),
            Dialect::ClaudeCode,
            Provenance::standalone(list),
        )
        .ok()
    };
    let (Some(ra), Some(rb)) = (parse(&a.text, a.list), parse(&f.rule.text, f.rule.list)) else {
        failures.push(format!("{source}: unparsable pair"));
        return 0;
    };
    if ra.effect >= rb.effect {
        failures.push(format!(
            "{source}: {} shadowed by a weaker rule",
            f.rule.item()
        ));
    }
    let Pattern::Command(cb) = &rb.pattern else {
        failures.push(format!("{source}: {} is not a command rule", f.rule.item()));
        return 0;
    };
    let want = match ra.effect {
        Effect::Deny => toolgate::Verdict::Deny,
        _ => toolgate::Verdict::Ask,
    };
    let eval = toolgate::Evaluator::from_rules(vec![ra.clone(), rb.clone()]).unwrap();
    let mut checked = 0;
    for t in spec_texts(std::slice::from_ref(&f.rule.text), "Bash") {
        if !reference::command_matches(cb, &t) || t.contains(['|', ';', '&', '\n', '#']) {
            continue;
        }
        let call = toolgate::ToolCall::from_json(&serde_json::json!(
            {"tool": "Bash", "input": {"command": t}}))
        .unwrap();
        let d = eval.evaluate(&call, &ctx).unwrap();
        checked += 1;
        if d.verdict != want {
            failures.push(format!(
                "{source}: {} `{}` on {t:?}: {} rather than {want} by {}",
                f.rule.item(),
                f.rule.text,
                d.verdict,
                a.text
            ));
        }
    }
    checked
}

#[test]
fn evaluator_confirms_shadowing_through_reading_and_across_kinds() {
    let Some(policies) = policies() else { return };
    let mut failures = Vec::new();
    for (source, input) in &policies {
        for f in lint(input).findings() {
            if matches!(f.kind, Kind::ShadowedNormalised | Kind::ShadowedAcrossKinds) {
                confirm(source, f, &mut failures);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every real deny command rule, written behind `sudo`, `env A=1` or
/// `/usr/bin/` as an allow: lint reports the allow shadowed through the
/// reading, and the evaluator agrees on the texts it matches.
#[test]
fn wrapped_real_denies_are_shadowed_through_the_reading() {
    let Some(rules) = common::corpus_lines("rules.txt") else {
        return;
    };
    let mut failures = Vec::new();
    let (mut eligible, mut checked) = (0usize, 0usize);
    for text in rules.iter().filter(|r| r.starts_with("Bash(")).step_by(3) {
        let Ok(deny) = parse_rule(
            text,
            Effect::Deny,
            Dialect::ClaudeCode,
            Provenance::standalone(List::Deny),
        ) else {
            continue;
        };
        let Pattern::Command(c) = &deny.pattern else {
            continue;
        };
        // A front of whole plain words the reader reads as written.
        let front = match &c.form {
            toolgate::rule::CommandForm::Prefix(p) => p.clone(),
            toolgate::rule::CommandForm::Glob(g) => match g.first() {
                Some(toolgate::rule::GlobPiece::Literal(l)) => match l.rfind(' ') {
                    Some(i) => l[..i].to_string(),
                    None => continue,
                },
                _ => continue,
            },
            _ => continue,
        };
        let plain = |s: &str| {
            !s.is_empty()
                && !s.contains("  ")
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || " _@%+=:,./-".contains(c))
        };
        let program = front.split(' ').next().unwrap_or("");
        let spec = &text["Bash(".len()..text.len() - 1];
        let filled = spec.replace(":*", " x").replace('*', "x");
        if !plain(&filled)
            || filled.ends_with(' ')
            || program.contains('/')
            || toolgate::shell::programs::wrapper(program).is_some()
        {
            continue;
        }
        for wrapped in [
            format!("Bash(sudo {spec})"),
            format!("Bash(env A=1 {spec})"),
            format!("Bash(/usr/bin/{spec})"),
        ] {
            eligible += 1;
            let mut input = LintInput::new();
            input.add_rule_text("p.json", List::Deny, 0, text);
            input.add_rule_text("p.json", List::Allow, 0, &wrapped);
            let report = lint(&input);
            let found: Vec<_> = report
                .findings()
                .iter()
                .filter(|f| f.kind == Kind::ShadowedNormalised)
                .collect();
            match found.as_slice() {
                [f] if f.rule.text == wrapped => checked += confirm(text, f, &mut failures),
                _ if failures.len() < 40 => {
                    failures.push(format!("{wrapped} under deny {text}: not reported"))
                }
                _ => {}
            }
        }
    }
    eprintln!("{eligible} wrapped rules, {checked} texts checked");
    assert!(eligible > 300, "only {eligible} wrapped rules");
    assert!(checked > eligible, "only {checked} texts checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
