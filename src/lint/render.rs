//! The report as text (for a person) and as JSON (for machines).

use std::fmt::Write;

use serde_json::{Value, json};

use super::{Finding, Report, RuleRef, Severity};

/// The rule text with control characters escaped, and the caret column
/// moved to match.
fn shown(text: &str, column: Option<usize>) -> (String, Option<usize>) {
    let mut out = String::new();
    let mut caret = None;
    for (i, c) in text.chars().enumerate() {
        if Some(i) == column {
            caret = Some(out.chars().count());
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if caret.is_none() && column.is_some() {
        caret = Some(out.chars().count());
    }
    (out, caret)
}

fn finding_text(f: &Finding, out: &mut String) {
    let r = &f.rule;
    let place = if r.text.is_empty() {
        format!("{}", r.source)
    } else {
        format!("{}: {}", r.source, r.item())
    };
    let _ = writeln!(
        out,
        "{}[{}]: {place}: {}",
        f.severity,
        f.kind.name(),
        f.message
    );
    if !r.text.is_empty() {
        let (text, caret) = shown(&r.text, f.column);
        let _ = writeln!(out, "    {text}");
        if let Some(c) = caret {
            let _ = writeln!(out, "    {}^", " ".repeat(c));
        }
    }
    if let Some(other) = &f.related {
        if other.source != r.source {
            let _ = writeln!(out, "    see: {}: {}", other.source, other.item());
        }
    }
    if !f.fix.is_empty() {
        let _ = writeln!(out, "    fix: {}", f.fix);
    }
}

pub(super) fn text(report: &Report) -> String {
    let mut out = String::new();
    for severity in [Severity::Error, Severity::Warning, Severity::Note] {
        for f in report.findings().iter().filter(|f| f.severity == severity) {
            finding_text(f, &mut out);
            out.push('\n');
        }
    }
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "{}, {}, {}",
        plural(report.count(Severity::Error), "error"),
        plural(report.count(Severity::Warning), "warning"),
        plural(report.count(Severity::Note), "note"),
    );
    out
}

fn rule_json(r: &RuleRef) -> Value {
    json!({
        "text": r.text,
        "source": &*r.source,
        "list": r.list.as_str(),
        "index": r.index,
    })
}

pub(super) fn json(report: &Report) -> Value {
    let findings: Vec<Value> = report
        .findings()
        .iter()
        .map(|f| {
            json!({
                "kind": f.kind.name(),
                "severity": f.severity.as_str(),
                // A load error is about a whole file, not a rule.
                "source": &*f.rule.source,
                "rule": (!f.rule.text.is_empty()).then(|| rule_json(&f.rule)),
                "message": f.message,
                "column": f.column,
                "fix": f.fix,
                "related": f.related.as_ref().map(rule_json),
            })
        })
        .collect();
    json!({
        "findings": findings,
        "errors": report.count(Severity::Error),
        "warnings": report.count(Severity::Warning),
        "notes": report.count(Severity::Note),
    })
}
