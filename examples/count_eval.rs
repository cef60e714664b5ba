//! A driver for counting the instructions of evaluation under callgrind,
//! which counts the same on a busy machine as on an idle one (criterion's
//! times do not). It compiles the largest real policy of the corpus (591
//! rules), then evaluates the benches' calls (every 30th tldr command as a
//! Bash call, or every 20th repository path as a Read call) ROUNDS times.
//!
//! ```sh
//! cargo build --release --example count_eval
//! for r in 0 3; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   --toggle-collect='count_eval::pass' \
//!   target/release/examples/count_eval bash $r 2>&1 | grep Collected; done
//! ```
//!
//! Instructions a call = (collected at 3 rounds − collected at 0 rounds) /
//! (3 × calls); both runs make one warm-up pass first, which the difference
//! removes. Needs `../shared/corpora/` (or `TOOLGATE_CORPORA`).

#[path = "../tests/common/mod.rs"]
#[allow(unused)]
mod common;

use serde_json::json;
use std::hint::black_box;
use toolgate::ToolCall;
use toolgate::eval::{EvalContext, Evaluator};

/// One evaluation of every call; the function callgrind counts (not
/// inlined, so that it keeps its name in any build profile).
#[inline(never)]
fn pass(engine: &Evaluator, calls: &[ToolCall], ctx: &EvalContext) -> usize {
    let mut verdicts = 0;
    for call in calls {
        let d = engine
            .evaluate(black_box(call), ctx)
            .expect("a well-formed call");
        verdicts += d.verdict as usize;
    }
    verdicts
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "bash".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let (Some(policies), Some(commands), Some(paths)) = (
        common::corpus_lines("claude-policies.jsonl"),
        common::corpus_lines("tldr-commands.txt"),
        common::corpus_lines("paths.txt"),
    ) else {
        eprintln!("count_eval: the corpora are absent (../shared/corpora or TOOLGATE_CORPORA)");
        std::process::exit(2);
    };
    let (policy, _) =
        common::largest_corpus_policy(&policies, "/repo/.claude/settings.json", "/repo");
    let engine = Evaluator::new(&policy).expect("the policy compiles");
    let ctx = EvalContext::new("/repo")
        .unwrap()
        .with_home("/home/me")
        .unwrap();
    let calls: Vec<ToolCall> = if mode == "read" {
        paths
            .iter()
            .skip(1)
            .step_by(20)
            .filter_map(|p| {
                ToolCall::from_json(&json!({"tool": "Read", "input": {"file_path": p}})).ok()
            })
            .collect()
    } else {
        commands
            .iter()
            .step_by(30)
            .filter_map(|c| {
                ToolCall::from_json(&json!({"tool": "Bash", "input": {"command": c}})).ok()
            })
            .collect()
    };
    // One warm-up pass, then the counted rounds.
    let mut verdicts = 0usize;
    for _ in 0..rounds + 1 {
        verdicts += pass(&engine, &calls, &ctx);
    }
    eprintln!("{} calls × (1 + {rounds}) passes; {verdicts}", calls.len());
}
