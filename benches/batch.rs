//! Throughput of `toolgate eval`'s batch loop (read each call line, decide
//! it, write its decision line, in order) over the 30,478 tldr commands as
//! Bash call lines, with the largest real policy of the corpus, on a rayon
//! pool of one thread and of two. Before timing, the batch's verdict
//! counts are checked against `Evaluator::evaluate` called on each call,
//! and the two pools' outputs against each other, byte for byte.
//!
//! Every figure is measured twice: in wall-clock time (`batch/…`) and in
//! the CPU time of the whole process, every thread's (`batch-cpu/…`),
//! which a machine shared with other work does not inflate; the two-thread
//! figure's CPU time against its wall-clock time shows how much of the two
//! cores it got.
//!
//! Run: `cargo bench --bench batch`.

#[path = "../tests/common/mod.rs"]
#[allow(unused)]
mod common;
#[path = "support/cpu_time.rs"]
mod cpu_time;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{BenchmarkGroup, SamplingMode, Throughput};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::sync::OnceLock;
use std::time::Duration;
use toolgate::ToolCall;
use toolgate::cli::eval::{ContextArgs, Defaults, Totals, eval_batch};
use toolgate::eval::{Evaluator, Verdict};

/// CPU time of the whole process: the sum over its threads of
/// `/proc/self/task/*/schedstat` (Linux; zero elsewhere). The batch runs
/// on pool threads, not on the benchmarking thread.
struct ProcessCpuTime;

fn process_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

impl Measurement for ProcessCpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        process_ns()
    }
    fn end(&self, start: u64) -> u64 {
        process_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // (The same units as the per-thread measurement.)
        static THREAD: cpu_time::CpuTime = cpu_time::CpuTime;
        THREAD.formatter()
    }
}

struct Setup {
    engine: Evaluator,
    defaults: Defaults,
    /// The call lines, newline-terminated.
    input: Vec<u8>,
    lines: u64,
    pools: Vec<(usize, rayon::ThreadPool)>,
}

fn setup() -> Option<&'static Setup> {
    static SETUP: OnceLock<Option<Setup>> = OnceLock::new();
    SETUP
        .get_or_init(|| {
            let (Some(policies), Some(commands)) = (
                common::corpus_lines("claude-policies.jsonl"),
                common::corpus_lines("tldr-commands.txt"),
            ) else {
                return None;
            };
            let (policy, n) = common::largest_corpus_policy(&policies, "policy.json", "/w");
            assert_eq!(n, 591, "the largest real policy has 591 rules");
            let engine = Evaluator::new(&policy).expect("the policy compiles");
            let defaults = Defaults::new(&ContextArgs {
                cwd: Some("/w".into()),
                home: Some("/home/me".into()),
                ..ContextArgs::default()
            })
            .expect("the flags are good");
            let mut input = Vec::new();
            for c in &commands {
                input.extend_from_slice(
                    json!({"tool": "Bash", "input": {"command": c}})
                        .to_string()
                        .as_bytes(),
                );
                input.push(b'\n');
            }
            // The answers, call by call.
            let ctx = engine
                .with_policy_dirs(defaults.base().expect("a context"))
                .expect("a context")
                .with_mode(engine.effective_mode(defaults.mode()));
            let mut want = [0u64; 4];
            for c in &commands {
                let call = ToolCall::from_json(&json!({"tool": "Bash", "input": {"command": c}}))
                    .expect("a call");
                let d = engine.evaluate(&call, &ctx).expect("a well-formed call");
                want[match d.verdict {
                    Verdict::Allow => 0,
                    Verdict::Ask => 1,
                    Verdict::Deny => 2,
                    Verdict::None => 3,
                }] += 1;
            }
            let pools: Vec<(usize, rayon::ThreadPool)> = [1, 2]
                .into_iter()
                .map(|t| {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(t)
                        .build()
                        .expect("a thread pool");
                    (t, pool)
                })
                .collect();
            let mut outputs = Vec::new();
            for (_, pool) in &pools {
                let mut out = Vec::new();
                let totals: Totals = pool
                    .install(|| eval_batch(&input[..], &mut out, &engine, &defaults))
                    .expect("the batch runs");
                assert_eq!(totals.lines, commands.len() as u64);
                assert_eq!(totals.errors, 0);
                assert_eq!(totals.verdicts, want, "batch and evaluate disagree");
                assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), commands.len());
                outputs.push(out);
            }
            assert!(
                outputs.windows(2).all(|w| w[0] == w[1]),
                "one thread and two write different bytes"
            );
            eprintln!(
                "{} call lines (allow/ask/deny/none): {want:?}",
                commands.len()
            );
            Some(Setup {
                engine,
                defaults,
                lines: commands.len() as u64,
                input,
                pools,
            })
        })
        .as_ref()
}

fn batch<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let Some(s) = setup() else {
        return;
    };
    let mut g: BenchmarkGroup<'_, M> = c.benchmark_group(format!("{prefix}/591 rules"));
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(s.lines));
    for (threads, pool) in &s.pools {
        g.bench_function(
            format!("30,478 tldr call lines, {threads} thread(s)"),
            |b| {
                b.iter(|| {
                    let totals = pool
                        .install(|| {
                            eval_batch(&s.input[..], std::io::sink(), &s.engine, &s.defaults)
                        })
                        .expect("the batch runs");
                    assert_eq!(totals.lines, s.lines);
                    totals
                })
            },
        );
    }
    g.finish();
}

fn batch_wall(c: &mut Criterion) {
    batch(c, "batch");
}

fn batch_cpu(c: &mut Criterion<ProcessCpuTime>) {
    batch(c, "batch-cpu");
}

criterion_group!(benches, batch_wall);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ProcessCpuTime);
    targets = batch_cpu
}
criterion_main!(benches, cpu);
