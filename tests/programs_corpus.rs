//! Every line of the real-command corpora reads and reduces without panic;
//! prints the share read completely and the reasons for the rest, by count,
//! each with one example command (the figures of BENCHMARKS.md's "Program
//! knowledge" section come from this output).

mod common;

use std::collections::BTreeMap;
use toolgate::shell::{self, reduce};

/// Reads and reduces every line; returns (complete, reasons by count).
fn survey(lines: &[String]) -> (usize, BTreeMap<String, (usize, String)>, Vec<String>) {
    let mut complete = 0;
    let mut reasons: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut panics = Vec::new();
    for line in lines {
        // Why a line is not read completely (nothing when it is).
        let result = std::panic::catch_unwind(|| {
            let reading = shell::read(line);
            let r = reduce::invocations(&reading);
            let mut why: Vec<String> = Vec::new();
            if r.is_complete() {
                return (true, why);
            }
            for i in &reading.incomplete {
                why.push(format!("reading: {}", i.reason));
            }
            for s in &r.scripts {
                for i in &s.incomplete {
                    why.push(format!("script: {}", i.reason));
                }
            }
            for inv in &r.invocations {
                for g in &inv.gaps {
                    let g = match g {
                        reduce::Gap::UnknownOption(_) => {
                            format!("reduce: unknown option of {}", inv.program.base)
                        }
                        reduce::Gap::Mode(o) => format!("reduce: {} mode {o}", inv.program.base),
                        g => format!("reduce: {}", g.describe()),
                    };
                    why.push(g);
                }
            }
            (false, why)
        });
        let Ok((read_completely, mut why)) = result else {
            panics.push(line.clone());
            continue;
        };
        if read_completely {
            complete += 1;
            continue;
        }
        why.sort();
        why.dedup();
        for w in why {
            let e = reasons.entry(w).or_insert((0, line.clone()));
            e.0 += 1;
        }
    }
    (complete, reasons, panics)
}

fn report(name: &str, lines: &[String]) -> f64 {
    let (complete, reasons, panics) = survey(lines);
    let share = 100.0 * complete as f64 / lines.len().max(1) as f64;
    println!(
        "{name}: {complete} of {} lines read completely ({share:.2} %)",
        lines.len()
    );
    let mut by_count: Vec<_> = reasons.into_iter().collect();
    by_count.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
    for (why, (n, example)) in by_count {
        println!("  {n:>6}  {why}    e.g. {example}");
    }
    assert!(panics.is_empty(), "{name}: panics on {panics:?}");
    share
}

/// The rules' own escaping (SPEC §13, one left-to-right scan): `\(` `\)`
/// `\\` `\*` stand for `(` `)` `\` `*`; any other `\x` stays.
fn unescape(rule: &str) -> String {
    let mut out = String::with_capacity(rule.len());
    let mut chars = rule.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(n @ ('(' | ')' | '\\' | '*')) => out.push(n),
            Some(n) => {
                out.push('\\');
                out.push(n);
            }
            None => out.push('\\'),
        }
    }
    out
}

#[test]
fn tldr_commands_reduce() {
    let Some(lines) = common::corpus_lines("tldr-commands.txt") else {
        return;
    };
    let share = report("tldr-commands.txt", &lines);
    assert!(
        share >= 97.0,
        "only {share:.2} % of tldr commands read completely"
    );
}

#[test]
fn agent_approved_commands_reduce() {
    let Some(lines) = common::corpus_lines("agent-approved-bash-commands.txt") else {
        return;
    };
    let lines: Vec<String> = lines.iter().map(|l| unescape(l)).collect();
    report("agent-approved-bash-commands.txt", &lines);
}
