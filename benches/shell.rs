//! Speed of the shell reader: a typical command, the whole tldr corpus,
//! and hostile 64 KiB inputs. Each bench checks its answers first.
//!
//! Every figure is measured twice: in wall-clock time (`shell/…`) and in
//! the CPU time of the benchmarking thread (`shell-cpu/…`, see
//! `support/cpu_time.rs`), which a machine shared with other work does not
//! inflate.
//!
//! Run: `cargo bench --bench shell`.

#[path = "support/cpu_time.rs"]
mod cpu_time;
#[path = "support/hostile.rs"]
mod hostile;

use cpu_time::CpuTime;
use criterion::measurement::Measurement;
use criterion::{BenchmarkGroup, SamplingMode};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hostile::hostile_inputs;
use std::hint::black_box;
use std::path::PathBuf;
use toolgate::shell::{self, MAX_INPUT};

/// Complete readings among the tldr corpus's lines (a regression check:
/// change it only with a reason). 30,066: `declare -i variable="value"` and
/// `local -i variable="value"` are incomplete since a value bash evaluates
/// as arithmetic (`value` names a variable) makes a reading incomplete.
const TLDR_COMPLETE: usize = 30_066;

/// CPU time is read at scheduler ticks: every sample must span many of
/// them, so the CPU-time groups use samples of equal, long size.
fn flat_for_cpu<M: Measurement>(g: &mut BenchmarkGroup<'_, M>, prefix: &str) {
    if prefix.ends_with("-cpu") {
        g.sampling_mode(SamplingMode::Flat);
    }
}

fn corpus_lines(name: &str) -> Option<Vec<String>> {
    let dir = std::env::var_os("TOOLGATE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora"));
    match std::fs::read_to_string(dir.join(name)) {
        Ok(t) => Some(t.lines().map(str::to_string).collect()),
        Err(_) => {
            eprintln!("skipping the corpus bench: {name} is absent");
            None
        }
    }
}

fn typical<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let cmd = "tar -czf archive.tar.gz path/to/dir";
    let r = shell::read(cmd);
    assert!(r.is_complete());
    assert_eq!(r.commands.len(), 1);
    assert_eq!(r.commands[0].words(&r).len(), 4);
    let cmd2 = "git commit -m \"fix: typo\" && git push";
    let r = shell::read(cmd2);
    assert!(r.is_complete());
    assert_eq!(r.commands.len(), 2);
    let mut g = c.benchmark_group(format!("{prefix}/typical"));
    flat_for_cpu(&mut g, prefix);
    g.bench_function("tar 35 bytes", |b| b.iter(|| shell::read(black_box(cmd))));
    g.bench_function("git commit && push 38 bytes", |b| {
        b.iter(|| shell::read(black_box(cmd2)))
    });
    g.finish();
}

fn corpus<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    static LINES: std::sync::OnceLock<Option<Vec<String>>> = std::sync::OnceLock::new();
    let Some(lines) = LINES
        .get_or_init(|| {
            let lines = corpus_lines("tldr-commands.txt")?;
            let complete = lines
                .iter()
                .filter(|l| shell::read(l).is_complete())
                .count();
            assert_eq!(
                complete, TLDR_COMPLETE,
                "complete readings over the tldr corpus"
            );
            Some(lines)
        })
        .as_ref()
    else {
        return;
    };
    let bytes: usize = lines.iter().map(String::len).sum();
    let mut g = c.benchmark_group(format!("{prefix}/tldr"));
    flat_for_cpu(&mut g, prefix);
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(20);
    g.bench_function("all lines", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for l in lines {
                n += shell::read(black_box(l)).commands.len();
            }
            n
        })
    });
    g.finish();
}

fn hostile<M: Measurement>(c: &mut Criterion<M>, prefix: &str) {
    let inputs = hostile_inputs();
    for (name, s, reason) in &inputs {
        assert!(s.len() <= MAX_INPUT, "{name} is {} bytes", s.len());
        let r = shell::read(s);
        match reason {
            Some(want) => assert!(
                r.incomplete.iter().any(|i| i.reason == *want),
                "{name}: expected {want:?}, got {:?}",
                r.incomplete
            ),
            None => assert!(r.is_complete(), "{name}: {:?}", r.incomplete),
        }
    }
    let mut g = c.benchmark_group(format!("{prefix}/hostile-64k"));
    flat_for_cpu(&mut g, prefix);
    g.sample_size(30);
    for (name, s, _) in &inputs {
        g.bench_function(*name, |b| b.iter(|| shell::read(black_box(s))));
    }
    g.finish();
}

fn wall(c: &mut Criterion) {
    typical(c, "shell");
    corpus(c, "shell");
    hostile(c, "shell");
}

fn cpu(c: &mut Criterion<CpuTime>) {
    typical(c, "shell-cpu");
    corpus(c, "shell-cpu");
    hostile(c, "shell-cpu");
}

criterion_group!(benches, wall);
criterion_group! {
    name = cpu_benches;
    config = Criterion::default().with_measurement(CpuTime);
    targets = cpu
}
criterion_main!(benches, cpu_benches);
