//! A driver for counting the instructions of the compiled matchers under
//! callgrind, which counts the same on a busy machine as on an idle one
//! (criterion's times do not). It builds the 10,000-rule sets of
//! `benches/matchers.rs` (the generator is `benches/support/rules.rs`,
//! included by both) and runs one mode:
//!
//! - `novel-commands`, `novel-paths`: the bench's 5,000 never-seen
//!   commands (or read paths) at 10,000 rules, each queried once, right
//!   after the build;
//! - `warm-command`, `warm-path`: the bench's fixed command (or read
//!   path) at 10,000 rules, 1,000 times a round;
//! - `load`: the 10,000-rule image (7,000 command and 3,000 path rules)
//!   loaded from bytes, once a round.
//!
//! ```sh
//! cargo build --release --example count_matchers
//! for r in 0 1; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   --toggle-collect='count_matchers::pass' \
//!   target/release/examples/count_matchers novel-paths $r 2>&1 | grep Collected; done
//! ```
//!
//! Instructions a query = (collected at 1 round − collected at 0 rounds) /
//! queries (the driver prints how many a round makes). The novel modes
//! make no warm-up pass (a second pass would find the automata's caches
//! warm), so each round after the first is a warm one: count them with 1.
//! The warm and load modes make one warm-up pass first, which the
//! difference removes. Needs `../shared/corpora/` (or `TOOLGATE_CORPORA`).

#[path = "../tests/common/mod.rs"]
#[allow(unused)]
mod common;
#[path = "../benches/support/rules.rs"]
mod rules;

use std::hint::black_box;
use toolgate::Rule;
use toolgate::compile::{AnchorDirs, Kind, Matches, Policy};

/// The inputs of one mode's round.
enum Work<'a> {
    Commands(&'a [String]),
    Paths(&'a [String]),
    Load(&'a [u8]),
}

/// One round of a mode; the function callgrind counts (not inlined, so that
/// it keeps its name in any build profile). Loading takes the rules by
/// value (`owned`, cloned outside: a caller that loads has them already)
/// and returns the loaded policy, so that neither the clone nor the drop is
/// counted.
#[inline(never)]
fn pass(
    policy: &Policy,
    work: &Work<'_>,
    owned: Vec<Rule>,
    m: &mut Matches,
) -> (usize, Option<Policy>) {
    let dirs = AnchorDirs {
        home: Some("/home/dev"),
        project: Some(rules::PROJECT),
        sources: &[("settings.json", rules::PROJECT)],
    };
    let mut matched = 0;
    match work {
        Work::Commands(texts) => {
            for t in *texts {
                policy.find(Kind::Command, None, black_box(t), m);
                matched += m.len();
            }
        }
        Work::Paths(abs) => {
            for p in *abs {
                policy.find_path(Kind::Read, None, black_box(p), &dirs, m);
                matched += m.len();
            }
        }
        Work::Load(bytes) => {
            let p = Policy::from_image(owned, black_box(bytes)).expect("the image loads");
            return (p.rule_count(), Some(p));
        }
    }
    (matched, None)
}

fn lines(name: &str) -> Vec<String> {
    common::corpus_lines(name).unwrap_or_else(|| {
        eprintln!("count_matchers: the corpora are absent (../shared/corpora or TOOLGATE_CORPORA)");
        std::process::exit(2)
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "novel-commands".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(1);
    let d = rules::data(
        &lines("tldr-commands.txt"),
        &lines("paths.txt"),
        &lines("claude-policies.jsonl"),
    );
    let abs: Vec<String> = d
        .novel_paths
        .iter()
        .map(|rel| format!("{}/{rel}", rules::PROJECT))
        .collect();
    let warm = vec![rules::WARM_COMMAND.to_string(); 1000];
    let warm_path = vec![format!("{}/{}", rules::PROJECT, rules::WARM_PATH); 1000];
    let all = rules::mixed_10000(&d);
    let (policy, work, warm_up) = match mode.as_str() {
        "novel-commands" => (
            d.sets[2].1.clone(),
            Work::Commands(&d.novel_commands),
            false,
        ),
        "novel-paths" => (d.path_sets[2].1.clone(), Work::Paths(&abs), false),
        "warm-command" => (d.sets[2].1.clone(), Work::Commands(&warm), true),
        "warm-path" => (d.path_sets[2].1.clone(), Work::Paths(&warm_path), true),
        "load" => (all.clone(), Work::Load(&[]), true),
        _ => {
            eprintln!(
                "count_matchers: modes are novel-commands, novel-paths, warm-command, warm-path, load"
            );
            std::process::exit(2)
        }
    };
    let policy = Policy::new(policy).expect("the rules compile");
    let bytes = policy.matchers_to_bytes();
    let work = match work {
        Work::Load(_) => Work::Load(&bytes),
        w => w,
    };
    let per_round = match &work {
        Work::Commands(t) => t.len(),
        Work::Paths(p) => p.len(),
        Work::Load(_) => 1,
    };
    let mut m = Matches::new();
    let mut total = 0usize;
    for _ in 0..rounds + usize::from(warm_up) {
        let owned = match work {
            Work::Load(_) => all.clone(),
            _ => Vec::new(),
        };
        let (n, loaded) = pass(&policy, &work, owned, &mut m);
        total += n;
        drop(loaded);
    }
    eprintln!(
        "{mode}: {per_round} queries a round × ({} + {rounds}) rounds; {total}",
        usize::from(warm_up)
    );
}
