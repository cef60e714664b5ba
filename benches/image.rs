//! What a hook process does between reading its input and answering, with
//! the largest real policy of the corpus (591 rules) and a typical Bash
//! call (`go vet ./internal/config/`, allowed by `allow[12]`):
//!
//! - `image`: decode a precompiled image whole (its policy with rules and
//!   warnings), check its files, build the evaluator, decide (`toolgate
//!   eval --policy FILE.tgimage`);
//! - `image to decide`: the same as a hook does it (given `--policy
//!   FILE.tgimage`, or a cache hit): the image decoded to decide with
//!   ([`DecidingImage`]), its rules decoded when a decision asks for them;
//! - `settings one-shot`: parse the settings file, build the lazy
//!   one-shot matchers, decide (a hook with `--no-cache`);
//! - `settings one-shot + image`: the same, then serialize the image (a
//!   first call that fills the cache, without the file write).
//!
//! Every iteration checks the answer. Whole-process figures (hyperfine) are
//! in BENCHMARKS.md.
//!
//! Run: `cargo bench --bench image`.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::path::PathBuf;
use toolgate::ToolCall;
use toolgate::compile::{Config, Policy};
use toolgate::eval::{EvalContext, Evaluator, Verdict};
use toolgate::policy::{DecidingImage, LoadedPolicy, PolicyImage};

fn corpus_lines(name: &str) -> Option<Vec<String>> {
    let dir = std::env::var_os("TOOLGATE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora"));
    match std::fs::read_to_string(dir.join(name)) {
        Ok(t) => Some(t.lines().map(str::to_string).collect()),
        Err(_) => {
            eprintln!("skipping the image bench: {name} is absent");
            None
        }
    }
}

/// The longest line of the corpus as a settings file (BENCHMARKS.md, Hook).
fn settings_file() -> Option<PathBuf> {
    let lines = corpus_lines("claude-policies.jsonl")?;
    let line = lines.iter().max_by_key(|l| l.len())?;
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let text = json!({"permissions": {"allow": v["allow"], "ask": v["ask"], "deny": v["deny"]}});
    let dir = std::env::temp_dir().join(format!("toolgate-bench-image-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("settings.json");
    std::fs::write(&path, text.to_string()).ok()?;
    Some(path)
}

fn decide(e: &Evaluator) -> Verdict {
    let mut input = serde_json::Map::new();
    input.insert("command".into(), json!("go vet ./internal/config/"));
    let call = ToolCall::new("Bash", input).expect("call");
    let ctx = EvalContext::new("/tmp/project")
        .and_then(|c| c.with_project_dir("/tmp/project"))
        .and_then(|c| e.with_policy_dirs(c))
        .expect("context");
    let d = e.evaluate(&call, &ctx).expect("decides");
    let rule = d.rule.as_ref().map(|r| r.rule.provenance.item());
    assert_eq!(rule.as_deref(), Some("allow[12]"));
    d.verdict
}

fn one_shot(path: &std::path::Path) -> (LoadedPolicy, Policy) {
    let p = LoadedPolicy::from_file(path).expect("loads");
    let c = Policy::builder()
        .configure(Config::one_shot())
        .build(p.rules().to_vec())
        .expect("compiles");
    (p, c)
}

fn image(c: &mut Criterion) {
    let Some(path) = settings_file() else {
        return;
    };
    let (p, compiled) = one_shot(&path);
    assert_eq!(p.rules().len(), 591);
    let bytes = PolicyImage::new("bench", p, compiled)
        .to_bytes()
        .expect("image");
    let mut g = c.benchmark_group("hook");
    g.sample_size(50);
    g.bench_function("image", |b| {
        b.iter(|| {
            let img = PolicyImage::from_bytes(&bytes, "bench").expect("image loads");
            img.check_fresh("bench").expect("fresh");
            let (p, c) = img.into_parts();
            let e = Evaluator::with_compiled(&p, c).expect("evaluator");
            assert_eq!(decide(&e), Verdict::Allow);
        })
    });
    g.bench_function("image to decide", |b| {
        b.iter(|| {
            let img = DecidingImage::from_bytes(bytes.clone(), "bench").expect("image loads");
            img.check_fresh("bench").expect("fresh");
            let e = img.into_evaluator().expect("evaluator");
            assert_eq!(decide(&e), Verdict::Allow);
        })
    });
    g.bench_function("settings one-shot", |b| {
        b.iter(|| {
            let (p, c) = one_shot(&path);
            let e = Evaluator::with_compiled(&p, c).expect("evaluator");
            assert_eq!(decide(&e), Verdict::Allow);
        })
    });
    g.bench_function("settings one-shot + image", |b| {
        b.iter(|| {
            let (p, c) = one_shot(&path);
            let img = PolicyImage::new("bench", p, c);
            assert!(img.to_bytes().expect("image").len() > 100_000);
            let (p, c) = img.into_parts();
            let e = Evaluator::with_compiled(&p, c).expect("evaluator");
            assert_eq!(decide(&e), Verdict::Allow);
        })
    });
    g.finish();
}

criterion_group!(benches, image);
criterion_main!(benches);
