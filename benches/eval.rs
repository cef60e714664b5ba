//! Speed of evaluation end to end (read + match + decide) with the largest
//! real policy of the corpus: one Bash call (tldr commands, cycled) and one
//! Read call (repository paths, cycled). Before timing, every call's
//! verdict and deciding rule are checked against the reference evaluator.
//!
//! Every figure is measured twice: in wall-clock time (`eval/…`) and in
//! the CPU time of the benchmarking thread (`eval-cpu/…`, see
//! `support/cpu_time.rs`), which a machine shared with other work does not
//! inflate.
//!
//! Run: `cargo bench --bench eval`.

#[path = "../tests/common/mod.rs"]
#[allow(unused)]
mod common;
#[path = "support/cpu_time.rs"]
mod cpu_time;

use cpu_time::CpuTime;
use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, SamplingMode};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use std::sync::OnceLock;
use toolgate::ToolCall;
use toolgate::eval::{EvalContext, Evaluator, Verdict};
use toolgate::reference_eval::ReferenceEvaluator;

/// CPU time is read at scheduler ticks: every sample must span many of
/// them, so the CPU-time groups use samples of equal, long size.
fn flat_for_cpu<M: Measurement>(g: &mut BenchmarkGroup<'_, M>, prefix: &str) {
    if prefix.ends_with("-cpu") {
        g.sampling_mode(SamplingMode::Flat);
    }
}

/// Checks every call against the reference; returns the verdict counts.
fn check(
    engine: &Evaluator,
    reference: &ReferenceEvaluator,
    calls: &[ToolCall],
    ctx: &EvalContext,
) -> [usize; 4] {
    let mut counts = [0; 4];
    for call in calls {
        let a = engine.evaluate(call, ctx).expect("a well-formed call");
        let b = reference.evaluate(call, ctx).expect("a well-formed call");
        assert_eq!(
            (a.verdict, a.rule.map(|r| r.index)),
            (b.verdict, b.rule.map(|r| r.index)),
            "engine and reference disagree on {call:?}"
        );
        counts[match a.verdict {
            Verdict::Allow => 0,
            Verdict::Ask => 1,
            Verdict::Deny => 2,
            Verdict::None => 3,
        }] += 1;
    }
    counts
}

struct Setup {
    engine: Evaluator,
    ctx: EvalContext,
    bash: Vec<ToolCall>,
    reads: Vec<ToolCall>,
    status: ToolCall,
}

/// Loads, compiles and checks once for both measurements.
fn setup() -> Option<&'static Setup> {
    static SETUP: OnceLock<Option<Setup>> = OnceLock::new();
    SETUP
        .get_or_init(|| {
            let (Some(policies), Some(commands), Some(paths)) = (
                common::corpus_lines("claude-policies.jsonl"),
                common::corpus_lines("tldr-commands.txt"),
                common::corpus_lines("paths.txt"),
            ) else {
                return None;
            };
            let (policy, n) =
                common::largest_corpus_policy(&policies, "/repo/.claude/settings.json", "/repo");
            assert_eq!(n, 591, "the largest real policy has 591 rules");
            let engine = Evaluator::new(&policy).expect("the policy compiles");
            let reference = ReferenceEvaluator::new(&policy);
            let ctx = EvalContext::new("/repo")
                .unwrap()
                .with_home("/home/me")
                .unwrap();
            let bash: Vec<ToolCall> = commands
                .iter()
                .step_by(30)
                .filter_map(|c| {
                    ToolCall::from_json(&json!({"tool": "Bash", "input": {"command": c}})).ok()
                })
                .collect();
            let reads: Vec<ToolCall> = paths
                .iter()
                .skip(1)
                .step_by(20)
                .filter_map(|p| {
                    ToolCall::from_json(&json!({"tool": "Read", "input": {"file_path": p}})).ok()
                })
                .collect();
            let bash_counts = check(&engine, &reference, &bash, &ctx);
            let read_counts = check(&engine, &reference, &reads, &ctx);
            eprintln!(
                "{} Bash calls (allow/ask/deny/none): {bash_counts:?}; {} Read calls: {read_counts:?}",
                bash.len(),
                reads.len()
            );
            assert_eq!(bash_counts.iter().sum::<usize>(), bash.len());
            let status =
                ToolCall::from_json(&json!({"tool": "Bash", "input": {"command": "git status"}}))
                    .expect("a call");
            Some(Setup {
                engine,
                ctx,
                bash,
                reads,
                status,
            })
        })
        .as_ref()
}

fn eval<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let Some(s) = setup() else {
        return;
    };
    let (engine, ctx, bash, reads) = (&s.engine, &s.ctx, &s.bash, &s.reads);
    let mut g = c.benchmark_group(format!("{prefix}/591 rules"));
    flat_for_cpu(&mut g, prefix);
    let mut i = 0;
    g.bench_function("Bash call (tldr, cycled)", |b| {
        b.iter(|| {
            let call = &bash[i % bash.len()];
            i += 1;
            black_box(engine.evaluate(black_box(call), ctx).map(|d| d.verdict))
        })
    });
    let mut i = 0;
    g.bench_function("Read call (paths, cycled)", |b| {
        b.iter(|| {
            let call = &reads[i % reads.len()];
            i += 1;
            black_box(engine.evaluate(black_box(call), ctx).map(|d| d.verdict))
        })
    });
    g.bench_function("Bash git status", |b| {
        b.iter(|| {
            black_box(
                engine
                    .evaluate(black_box(&s.status), ctx)
                    .map(|d| d.verdict),
            )
        })
    });
    g.finish();
}

fn eval_wall(c: &mut Criterion) {
    eval(c, "eval");
}

fn eval_cpu(c: &mut Criterion<CpuTime>) {
    eval(c, "eval-cpu");
}

criterion_group!(benches, eval_wall);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(CpuTime);
    targets = eval_cpu
}
criterion_main!(benches, cpu);
