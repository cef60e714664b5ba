//! `lint` on the real policy corpus: the largest policy (591 rules) with
//! shadowing, and every policy of the corpus. Each iteration's report is
//! checked against the first run's.
//!
//! ```text
//! cargo bench --bench lint
//! ```

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::List;
use toolgate::lint::{Kind, LintInput, lint};

fn policies() -> Option<Vec<(usize, LintInput)>> {
    let dir = std::env::var_os("TOOLGATE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora"));
    let text = match std::fs::read_to_string(dir.join("claude-policies.jsonl")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("skipping the lint benches: {e}");
            return None;
        }
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let source = v["source"].as_str().unwrap_or("?").to_string();
        let mut input = LintInput::new();
        let mut n = 0;
        for list in [List::Allow, List::Ask, List::Deny] {
            if let Some(entries) = v[list.as_str()].as_array() {
                n += entries.len();
                input.add_list(&source, list, entries);
            }
        }
        out.push((n, input));
    }
    Some(out)
}

fn bench(c: &mut Criterion) {
    let Some(policies) = policies() else { return };
    let Some((largest_rules, largest)) = policies.iter().max_by_key(|(n, _)| *n) else {
        return;
    };
    assert_eq!(*largest_rules, 591, "the largest real policy");
    let expected = lint(largest);
    assert!(
        expected
            .findings()
            .iter()
            .any(|f| f.kind == Kind::Redundant),
        "the largest policy has redundant rules"
    );
    let all_expected: Vec<usize> = policies
        .iter()
        .map(|(_, p)| lint(p).findings().len())
        .collect();

    let mut g = c.benchmark_group("lint");
    g.sample_size(20);
    g.bench_function("largest_policy_591_rules", |b| {
        b.iter(|| {
            let r = lint(largest);
            assert_eq!(r, expected);
            r
        })
    });
    g.bench_function("whole_corpus_142_policies", |b| {
        b.iter(|| {
            for ((_, p), &n) in policies.iter().zip(&all_expected) {
                assert_eq!(lint(p).findings().len(), n);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
