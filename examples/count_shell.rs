//! A driver for counting the shell reader's instructions under callgrind,
//! which counts the same on a busy machine as on an idle one (criterion's
//! times do not). It reads one hostile input of the shell bench (by name,
//! as `benches/support/hostile.rs` lists them) or every line of the tldr
//! corpus (`tldr`) ROUNDS times; `list` names the inputs. `repeat:UNIT`
//! reads UNIT repeated to 64 KiB (cut there), for shapes not in the list.
//!
//! ```sh
//! cargo build --release --example count_shell
//! for r in 0 3; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   --toggle-collect='count_shell::pass' \
//!   target/release/examples/count_shell '64 KiB of &&' $r 2>&1 | grep Collected; done
//! ```
//!
//! Instructions a read = (collected at 3 rounds − collected at 0 rounds) / 3
//! (for `tldr`, a pass over the whole corpus); both runs make one warm-up
//! pass first, which the difference removes. `tldr` needs `../shared/corpora/` (or
//! `TOOLGATE_CORPORA`).

#[path = "../benches/support/hostile.rs"]
mod hostile;

#[path = "../tests/common/mod.rs"]
#[allow(unused)]
mod common;

use std::hint::black_box;
use toolgate::shell;

/// One reading of every input; the function callgrind counts (not
/// inlined, so that it keeps its name in any build profile).
#[inline(never)]
fn pass(inputs: &[String]) -> usize {
    let mut commands = 0;
    for s in inputs {
        commands += shell::read(black_box(s)).commands.len();
    }
    commands
}

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "tldr".into());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let hostile = hostile::hostile_inputs();
    if name == "list" {
        for (n, _, _) in &hostile {
            println!("{n}");
        }
        return;
    }
    let inputs: Vec<String> = if name == "tldr" {
        let Some(lines) = common::corpus_lines("tldr-commands.txt") else {
            eprintln!("count_shell: the corpus is absent (../shared/corpora or TOOLGATE_CORPORA)");
            std::process::exit(2);
        };
        lines
    } else if let Some(unit) = name.strip_prefix("repeat:") {
        let mut s = unit.repeat(shell::MAX_INPUT / unit.len().max(1));
        s.truncate(shell::MAX_INPUT);
        vec![s]
    } else {
        match hostile.into_iter().find(|(n, _, _)| *n == name) {
            Some((_, s, _)) => vec![s],
            None => {
                eprintln!("count_shell: no input named {name:?} (`list` names them)");
                std::process::exit(2);
            }
        }
    };
    // One warm-up pass, then the counted rounds.
    let mut commands = 0usize;
    for _ in 0..rounds + 1 {
        commands += pass(&inputs);
    }
    eprintln!(
        "{} inputs × (1 + {rounds}) passes; {commands}",
        inputs.len()
    );
}
