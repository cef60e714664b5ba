//! Speed of the reducer (reading included and excluded): typical commands
//! and the whole tldr corpus. Each bench checks its answers first.
//!
//! Run: `cargo bench --bench programs`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::PathBuf;
use toolgate::shell::{self, reduce};

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

fn typical(c: &mut Criterion) {
    let wrapped = "FOO=1 sudo -u root /usr/bin/git -C . push --force origin main";
    let reading_w = shell::read(wrapped);
    let r = reduce::invocations(&reading_w);
    assert!(r.is_complete());
    assert_eq!(r.invocations.len(), 2);
    assert_eq!(
        r.invocations[1].form.as_deref(),
        Some("/usr/bin/git push --force origin main")
    );
    let files = "cd secrets && grep -rn key . | tee out.txt > /dev/null";
    let reading_f = shell::read(files);
    let r = reduce::invocations(&reading_f);
    assert_eq!(r.invocations.len(), 3);
    assert_eq!(
        r.invocations[1].files[0]
            .path
            .as_ref()
            .map(|p| p.to_string())
            .as_deref(),
        Some("secrets")
    );
    let mut g = c.benchmark_group("programs/typical");
    g.bench_function("sudo git -C push: reduce", |b| {
        b.iter(|| reduce::invocations(black_box(&reading_w)))
    });
    g.bench_function("cd && grep | tee: reduce", |b| {
        b.iter(|| reduce::invocations(black_box(&reading_f)))
    });
    g.bench_function("sudo git -C push: read + reduce", |b| {
        b.iter(|| {
            let reading = shell::read(black_box(wrapped));
            reduce::invocations(&reading).invocations.len()
        })
    });
    g.finish();
}

fn corpus(c: &mut Criterion) {
    let Some(lines) = corpus_lines("tldr-commands.txt") else {
        return;
    };
    let readings: Vec<_> = lines.iter().map(|l| shell::read(l)).collect();
    let complete = readings
        .iter()
        .filter(|r| reduce::invocations(r).is_complete())
        .count();
    assert!(
        complete * 100 >= lines.len() * 97,
        "{complete} of {}",
        lines.len()
    );
    let bytes: usize = lines.iter().map(String::len).sum();
    let mut g = c.benchmark_group("programs/tldr");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10);
    g.bench_function("reduce all lines", |b| {
        b.iter(|| {
            readings
                .iter()
                .map(|r| reduce::invocations(black_box(r)).invocations.len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, typical, corpus);
criterion_main!(benches);
