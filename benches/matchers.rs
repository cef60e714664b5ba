//! Compiled matchers: query, compile and load figures, side by side with
//! `regex::bytes::RegexSet` and `globset` on the same rules.
//!
//! Rules: the largest real policy of the corpora (591 rules), and
//! synthetic 1,000- and 10,000-rule sets shaped like the real rules (the
//! shape mix of `rules.txt`, words from tldr commands and real repository
//! paths; `support/rules.rs`, shared with `examples/count_matchers.rs`).
//! Inputs: a fixed ~40-byte command and path (warm), and 5,000
//! never-seen commands and paths, each queried once (novel).
//!
//! Every bench checks its answers first: toolgate's matches against the
//! reference matcher (warm inputs), and against RegexSet / globset (novel
//! inputs); a mismatch panics.
//!
//! `cargo bench --bench matchers`; the novel-input percentiles are printed
//! by the `novel` bench (they need per-call timing, which criterion does
//! not do). `TOOLGATE_BENCH_OWN=1` leaves the competitors out (no
//! RegexSet or globset is built or timed, and the novel answers are not
//! compared with theirs; the differential tests hold them to the
//! reference), for a quick re-measurement, with a criterion filter such
//! as `'toolgate|load|compile/100$'`.
//!
//! On Linux the criterion figures are the benchmark thread's CPU time
//! (`/proc/thread-self/schedstat`), not wall-clock time, so that a machine
//! shared with other work measures this code rather than the wait for a
//! core; elsewhere they are wall-clock time. Set `TOOLGATE_BENCH_WALL=1`
//! for wall-clock time everywhere. Each sample lasts at least 50 ms (see
//! `timed`).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/rules.rs"]
mod rules;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rules::{Data, PROJECT, WARM_COMMAND, WARM_PATH, parse};
use std::hint::black_box;
use std::time::{Duration, Instant};
use toolgate::compile::{AnchorDirs, Config, Kind, Matches, Policy};
use toolgate::reference;
use toolgate::rule::{CommandForm, GlobPiece, PathPattern, SegPiece, Segment};
use toolgate::{Effect, Pattern, Rule};

/// Thread CPU time, or wall-clock time where it cannot be read. The
/// kernel's figure advances at scheduler events (ticks, switches), so one
/// criterion sample should last many milliseconds (the groups below ask
/// for seconds).
struct Clock {
    cpu: bool,
}

impl Clock {
    fn new() -> Clock {
        Clock { cpu: use_cpu() }
    }
    fn now(&self) -> Duration {
        now()
    }
}

fn use_cpu() -> bool {
    static CPU: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CPU.get_or_init(|| {
        let wall = std::env::var("TOOLGATE_BENCH_WALL").is_ok_and(|v| v == "1");
        !wall && thread_cpu().is_some()
    })
}

fn now() -> Duration {
    if use_cpu() {
        thread_cpu().unwrap_or_default()
    } else {
        epoch().elapsed()
    }
}

/// Runs `f` for a criterion sample of `iters` iterations. The clock may
/// advance in steps of a scheduler tick, so the routine is repeated, in
/// batches that double (reading the clock costs microseconds), until at
/// least `SAMPLE` of time has passed, and the time is scaled back to
/// `iters` iterations.
fn timed<O, F: FnMut() -> O>(b: &mut criterion::Bencher<'_, Clock>, mut f: F) {
    const SAMPLE: Duration = Duration::from_millis(50);
    b.iter_custom(|iters| {
        let iters = iters.max(1);
        let start = now();
        let mut done = 0u64;
        let mut batch = iters;
        loop {
            for _ in 0..batch {
                black_box(f());
            }
            done += batch;
            batch = batch.saturating_mul(2);
            let el = now().saturating_sub(start);
            if el >= SAMPLE {
                return el.mul_f64(iters as f64 / done as f64);
            }
        }
    })
}

/// Whether the competitors are left out (`TOOLGATE_BENCH_OWN=1`).
fn own_only() -> bool {
    std::env::var("TOOLGATE_BENCH_OWN").is_ok_and(|v| v == "1")
}

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// CPU time of the calling thread (Linux).
fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split(' ').next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

struct NsFormatter;

impl ValueFormatter for NsFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (div, unit) = if typical < 1e3 {
            (1.0, "ns")
        } else if typical < 1e6 {
            (1e3, "µs")
        } else if typical < 1e9 {
            (1e6, "ms")
        } else {
            (1e9, "s")
        };
        for v in values {
            *v /= div;
        }
        unit
    }
    fn scale_throughputs(&self, _: f64, _: &Throughput, values: &mut [f64]) -> &'static str {
        for v in values {
            *v = 0.0;
        }
        "-"
    }
    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}

impl Measurement for Clock {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        self.now()
    }
    fn end(&self, i: Duration) -> Duration {
        self.now().saturating_sub(i)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NsFormatter
    }
}

type C = Criterion<Clock>;

fn lines(name: &str) -> Vec<String> {
    common::corpus_lines(name).unwrap_or_else(|| panic!("the benches need the corpus {name}"))
}

// ---------------------------------------------------------------------------
// The competitors' view of the same rules.

fn escape_into(re: &mut String, s: &str) {
    re.push_str(&regex::escape(s));
}

fn glob_regex(pieces: &[GlobPiece], re: &mut String) {
    for p in pieces {
        match p {
            GlobPiece::Literal(l) => escape_into(re, l),
            GlobPiece::Star => re.push_str(".*"),
            GlobPiece::Question => re.push('.'),
        }
    }
}

/// A command rule as one whole-string regex (for RegexSet).
fn command_regex(rule: &Rule) -> Option<String> {
    let Pattern::Command(p) = &rule.pattern else {
        return None;
    };
    let mut re = String::from(if p.case_insensitive {
        "(?si)^"
    } else {
        "(?s)^"
    });
    match &p.form {
        CommandForm::Exact(s) => escape_into(&mut re, s),
        CommandForm::Prefix(s) => {
            escape_into(&mut re, s);
            re.push_str("(?: .*)?");
        }
        CommandForm::Glob(g) => glob_regex(g, &mut re),
        CommandForm::PrefixGlob(g) => {
            glob_regex(g, &mut re);
            re.push_str("(?: .*)?");
        }
    }
    re.push('$');
    Some(re)
}

/// A path rule as globset globs (itself and what it covers).
fn path_globs(p: &PathPattern) -> Vec<String> {
    let mut g = String::new();
    if !p.anchored {
        g.push_str("**/");
    }
    for (i, s) in p.segments.iter().enumerate() {
        if i > 0 {
            g.push('/');
        }
        match s {
            Segment::DoubleStar => g.push_str("**"),
            Segment::Pieces(ps) => {
                for piece in ps {
                    match piece {
                        SegPiece::Literal(l) => {
                            for c in l.chars() {
                                if "*?[]{}\\!".contains(c) {
                                    g.push('\\');
                                }
                                g.push(c);
                            }
                        }
                        SegPiece::Star => g.push('*'),
                        SegPiece::Question => g.push('?'),
                        SegPiece::Class { negated, ranges } => {
                            g.push('[');
                            if *negated {
                                g.push('!');
                            }
                            for (a, b) in ranges {
                                g.push(*a);
                                g.push('-');
                                g.push(*b);
                            }
                            g.push(']');
                        }
                    }
                }
            }
        }
    }
    vec![g.clone(), format!("{g}/**")]
}

struct PathSet {
    set: globset::GlobSet,
    owner: Vec<u32>,
}

fn globset_for(policy: &Policy, kind: Kind) -> PathSet {
    let mut b = globset::GlobSetBuilder::new();
    let mut owner = Vec::new();
    for (id, r) in policy.rules().iter().enumerate() {
        let Pattern::Path(p) = &r.pattern else {
            continue;
        };
        let tools: &[&str] = if kind == Kind::Read {
            &["Read"]
        } else {
            &["Edit"]
        };
        if !tools.iter().any(|t| r.governs(t)) {
            continue;
        }
        for g in path_globs(p) {
            let glob = globset::GlobBuilder::new(&g)
                .literal_separator(true)
                .case_insensitive(p.case_insensitive)
                .backslash_escape(true)
                .build()
                .expect("glob");
            b.add(glob);
            owner.push(id as u32);
        }
    }
    PathSet {
        set: b.build().expect("globset"),
        owner,
    }
}

fn globset_ids(s: &PathSet, rel: &str, hits: &mut Vec<usize>, out: &mut Vec<u32>) {
    hits.clear();
    s.set.matches_into(rel, hits);
    out.clear();
    out.extend(hits.iter().map(|&i| s.owner[i]));
    out.sort_unstable();
    out.dedup();
}

/// The lazy-DFA cache a RegexSet of these regexes needs at least (the
/// number regex-automata reports when given too little).
fn min_cache(res: &[String]) -> usize {
    let err = regex_automata::hybrid::dfa::DFA::builder()
        .configure(regex_automata::hybrid::dfa::Config::new().cache_capacity(1024))
        .build_many(res)
        .err();
    let msg = err.map(|e| e.to_string()).unwrap_or_default();
    msg.split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse::<usize>().ok())
        .max()
        .unwrap_or(0)
}

struct CommandSet {
    set: regex::bytes::RegexSet,
    owner: Vec<u32>,
}

fn regexset_for(policy: &Policy) -> CommandSet {
    let mut res = Vec::new();
    let mut owner = Vec::new();
    for (id, r) in policy.rules().iter().enumerate() {
        if let Some(re) = command_regex(r) {
            res.push(re);
            owner.push(id as u32);
        }
    }
    let cache = min_cache(&res).max(2 << 20);
    let set = regex::bytes::RegexSetBuilder::new(&res)
        .dfa_size_limit(cache)
        .size_limit(256 << 20)
        .build()
        .expect("regexset");
    CommandSet { set, owner }
}

fn regexset_ids(s: &CommandSet, text: &str, out: &mut Vec<u32>) {
    out.clear();
    out.extend(s.set.matches(text.as_bytes()).iter().map(|i| s.owner[i]));
}

// ---------------------------------------------------------------------------

fn data() -> Data {
    rules::data(
        &lines("tldr-commands.txt"),
        &lines("paths.txt"),
        &lines("claude-policies.jsonl"),
    )
}

fn dirs() -> AnchorDirs<'static> {
    AnchorDirs {
        home: Some("/home/dev"),
        project: Some(PROJECT),
        sources: &[("settings.json", PROJECT)],
    }
}

/// The reference's answer for a command (input positions → ids).
fn reference_command(policy: &Policy, text: &str) -> Vec<u32> {
    (0..policy.rules().len() as u32)
        .filter(|&id| match &policy.rule(id).map(|r| &r.pattern) {
            Some(Pattern::Command(p)) => reference::command_matches(p, text),
            _ => false,
        })
        .collect()
}

fn reference_path(policy: &Policy, kind: Kind, rel: &str) -> Vec<u32> {
    let tools: &[&str] = if kind == Kind::Read {
        &["Read"]
    } else {
        &["Edit"]
    };
    (0..policy.rules().len() as u32)
        .filter(|&id| {
            let r = policy.rule(id).expect("rule");
            match &r.pattern {
                Pattern::Path(p) => {
                    tools.iter().any(|t| r.governs(t)) && reference::path_matches(p, rel)
                }
                _ => false,
            }
        })
        .collect()
}

fn percentiles(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
    let mean = v.iter().sum::<Duration>() / v.len() as u32;
    (at(0.5), at(0.99), mean)
}

/// [`percentiles`], or zeros when nothing was timed.
fn percentiles_or_zero(v: Vec<Duration>) -> (Duration, Duration, Duration) {
    if v.is_empty() {
        return Default::default();
    }
    percentiles(v)
}

fn bench_warm(c: &mut C, d: &Data) {
    let mut g = c.benchmark_group("warm");
    g.sample_size(30)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1));
    let mut m = Matches::new();
    for (name, rules) in &d.sets {
        let policy = Policy::new(rules.clone()).expect("compiles");
        policy.find(Kind::Command, None, WARM_COMMAND, &mut m);
        assert_eq!(m.ids(), reference_command(&policy, WARM_COMMAND), "{name}");
        let want = m.len();
        g.bench_function(BenchmarkId::new("command/toolgate", name), |b| {
            timed(b, || {
                policy.find(Kind::Command, None, black_box(WARM_COMMAND), &mut m);
                assert_eq!(m.len(), want);
            })
        });
        if own_only() {
            continue;
        }
        let rs = regexset_for(&policy);
        let mut out = Vec::new();
        regexset_ids(&rs, WARM_COMMAND, &mut out);
        assert_eq!(out.len(), want, "{name}: regexset disagrees");
        g.bench_function(BenchmarkId::new("command/regexset", name), |b| {
            timed(b, || regexset_ids(&rs, black_box(WARM_COMMAND), &mut out))
        });
    }
    let abs = format!("{PROJECT}/{WARM_PATH}");
    for (name, rules) in &d.path_sets {
        let policy = Policy::new(rules.clone()).expect("compiles");
        policy.find_path(Kind::Read, None, &abs, &dirs(), &mut m);
        assert_eq!(
            m.ids(),
            reference_path(&policy, Kind::Read, WARM_PATH),
            "{name}"
        );
        let want = m.len();
        g.bench_function(BenchmarkId::new("path/toolgate", name), |b| {
            timed(b, || {
                policy.find_path(Kind::Read, None, black_box(&abs), &dirs(), &mut m);
                assert_eq!(m.len(), want);
            })
        });
        if own_only() {
            continue;
        }
        let gs = globset_for(&policy, Kind::Read);
        let (mut hits, mut out) = (Vec::new(), Vec::new());
        g.bench_function(BenchmarkId::new("path/globset", name), |b| {
            timed(b, || {
                globset_ids(&gs, black_box(WARM_PATH), &mut hits, &mut out)
            })
        });
    }
    g.finish();
}

/// Never-seen inputs: each queried once, right after the build, timed one
/// by one (the timer's own ~20-30 ns included). Prints p50 / p99 / mean.
fn bench_novel(c: &mut C, d: &Data) {
    let mut m = Matches::new();
    let mut out = Vec::new();
    let mut hits = Vec::new();
    eprintln!("\nnovel inputs, each queried once (p50 / p99 / mean per call):");
    for (name, rules) in d.sets.iter().skip(1) {
        let policy = Policy::new(rules.clone()).expect("compiles");
        let rs = (!own_only()).then(|| regexset_for(&policy));
        let mut t_tg = Vec::new();
        let mut t_rs = Vec::new();
        let mut matched = 0;
        // Each engine in a pass of its own: interleaved, each would find
        // the caches filled by the other.
        let mut answers = Vec::with_capacity(d.novel_commands.len());
        for text in &d.novel_commands {
            let t = Instant::now();
            policy.find(Kind::Command, None, text, &mut m);
            t_tg.push(t.elapsed());
            answers.push(m.ids().to_vec());
        }
        for (text, want) in d.novel_commands.iter().zip(&answers) {
            let Some(rs) = &rs else {
                matched += want.len();
                continue;
            };
            let t = Instant::now();
            regexset_ids(rs, text, &mut out);
            t_rs.push(t.elapsed());
            out.sort_unstable();
            assert_eq!(
                want, &out,
                "{name}: toolgate and RegexSet disagree on {text:?}"
            );
            matched += want.len();
        }
        let (a, b, c) = percentiles(t_tg);
        let (x, y, z) = percentiles_or_zero(t_rs);
        eprintln!(
            "  command {name:>6}: toolgate {a:?} / {b:?} / {c:?}; regexset {x:?} / {y:?} / {z:?}; {matched} matches"
        );
    }
    for (name, rules) in d.path_sets.iter().skip(1) {
        let policy = Policy::new(rules.clone()).expect("compiles");
        let gs = (!own_only()).then(|| globset_for(&policy, Kind::Read));
        let (mut t_tg, mut t_gs) = (Vec::new(), Vec::new());
        let mut matched = 0;
        let mut abs = String::new();
        let mut answers = Vec::with_capacity(d.novel_paths.len());
        for rel in &d.novel_paths {
            abs.clear();
            abs.push_str(PROJECT);
            abs.push('/');
            abs.push_str(rel);
            let t = Instant::now();
            policy.find_path(Kind::Read, None, &abs, &dirs(), &mut m);
            t_tg.push(t.elapsed());
            answers.push(m.ids().to_vec());
        }
        for (rel, want) in d.novel_paths.iter().zip(&answers) {
            let Some(gs) = &gs else {
                matched += want.len();
                continue;
            };
            let t = Instant::now();
            globset_ids(gs, rel, &mut hits, &mut out);
            t_gs.push(t.elapsed());
            assert_eq!(
                want, &out,
                "{name}: toolgate and globset disagree on {rel:?}"
            );
            matched += want.len();
        }
        let (a, b, c) = percentiles(t_tg);
        let (x, y, z) = percentiles_or_zero(t_gs);
        eprintln!(
            "  path    {name:>6}: toolgate {a:?} / {b:?} / {c:?}; globset  {x:?} / {y:?} / {z:?}; {matched} matches"
        );
    }
    // The timer's own part of each figure above: the same loop timing an
    // empty call as many times (not subtracted from them).
    let mut t_empty = Vec::with_capacity(d.novel_paths.len());
    for _ in &d.novel_paths {
        let t = Instant::now();
        black_box(());
        t_empty.push(t.elapsed());
    }
    let (p50, p99, mean) = percentiles(t_empty);
    eprintln!(
        "  timer floor (an empty call timed the same way, {} times): {p50:?} / {p99:?} / {mean:?}",
        d.novel_paths.len()
    );
    // A criterion figure too: the mean over one pass of the novel inputs.
    let mut g = c.benchmark_group("novel");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for (name, rules) in d.sets.iter().skip(1) {
        let policy = Policy::new(rules.clone()).expect("compiles");
        g.bench_function(BenchmarkId::new("command-pass/toolgate", name), |b| {
            timed(b, || {
                for text in &d.novel_commands {
                    policy.find(Kind::Command, None, text, &mut m);
                }
            })
        });
    }
    let abs: Vec<String> = d
        .novel_paths
        .iter()
        .map(|rel| format!("{PROJECT}/{rel}"))
        .collect();
    for (name, rules) in d.path_sets.iter().skip(1) {
        let policy = Policy::new(rules.clone()).expect("compiles");
        g.bench_function(BenchmarkId::new("path-pass/toolgate", name), |b| {
            timed(b, || {
                for p in &abs {
                    policy.find_path(Kind::Read, None, p, &dirs(), &mut m);
                }
            })
        });
    }
    g.finish();
}

fn bench_compile(c: &mut C, d: &Data) {
    let mut g = c.benchmark_group("compile");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    let hundred: Vec<Rule> = d.sets[1]
        .1
        .iter()
        .take(70)
        .chain(d.path_sets[1].1.iter().take(30))
        .cloned()
        .collect();
    g.bench_function("100", |b| {
        timed(b, || Policy::new(hundred.clone()).expect("compiles"))
    });
    let all = rules::mixed_10000(d);
    let p = Policy::new(all.clone()).expect("compiles");
    let mem: usize = [Kind::Command, Kind::Domain, Kind::Tool]
        .iter()
        .filter_map(|k| p.matcher(*k))
        .map(|m| m.memory_usage())
        .chain(
            [Kind::Read, Kind::Edit]
                .iter()
                .filter_map(|k| p.path_matcher(*k))
                .flat_map(|pm| pm.groups().map(|(_, m)| m.memory_usage())),
        )
        .sum();
    eprintln!(
        "\n10,000 rules (7,000 command + 3,000 path): matchers hold {:.1} MiB; command shape {:?}; read path shapes {:?}",
        mem as f64 / (1 << 20) as f64,
        p.matcher(Kind::Command).map(|m| m.shape()),
        p.path_matcher(Kind::Read)
            .map(|pm| pm.groups().map(|(_, m)| m.shape()).collect::<Vec<_>>())
    );
    g.bench_function("10000", |b| {
        timed(b, || Policy::new(all.clone()).expect("compiles"))
    });
    let bytes = p.matchers_to_bytes();
    eprintln!(
        "image of 10,000 rules: {:.1} MiB",
        bytes.len() as f64 / (1 << 20) as f64
    );
    // The rules are cloned outside the timed part: loading takes them by
    // value, and a caller that loads has them already.
    g.bench_function("load-10000", |b| {
        b.iter_custom(|iters| {
            let iters = iters.max(1);
            let mut spent = Duration::ZERO;
            let mut done = 0u64;
            while done < iters || spent < Duration::from_millis(50) {
                let rules = all.clone();
                let start = now();
                black_box(Policy::from_image(rules, &bytes).expect("loads"));
                spent += now().saturating_sub(start);
                done += 1;
            }
            spent.mul_f64(iters as f64 / done as f64)
        })
    });
    // Adversarial: hundreds of two-literal contains rules, which blow up a
    // single DFA.
    let adv: Vec<Rule> = (0..300)
        .filter_map(|i| parse(&format!("Bash(*a{i}*b{}*)", i * 7), Effect::Deny, i))
        .collect();
    let pa = Policy::new(adv.clone()).expect("compiles");
    eprintln!(
        "adversarial 300 *a*b*: {:?}",
        pa.matcher(Kind::Command).map(|m| m.shape())
    );
    g.bench_function("adversarial-300-latching", |b| {
        timed(b, || Policy::new(adv.clone()).expect("compiles"))
    });
    let adv2: Vec<Rule> = (0..300)
        .filter_map(|i| parse(&format!("Bash(git *a{i}*b{}*)", i * 7), Effect::Deny, i))
        .collect();
    g.bench_function("adversarial-300-prefixed-latching", |b| {
        timed(b, || Policy::new(adv2.clone()).expect("compiles"))
    });
    let contains: Vec<Rule> = (0..1000)
        .filter_map(|i| parse(&format!("Bash(*x{i}y*)"), Effect::Deny, i))
        .collect();
    g.bench_function("adversarial-1000-contains", |b| {
        timed(b, || Policy::new(contains.clone()).expect("compiles"))
    });
    let mut mm = Matches::new();
    let text = "git push a17 then b119 and more";
    pa.find(Kind::Command, None, text, &mut mm);
    assert_eq!(mm.ids(), reference_command(&pa, text));
    g.bench_function("adversarial-300-latching/query", |b| {
        timed(b, || pa.find(Kind::Command, None, black_box(text), &mut mm))
    });
    // Shapes whose automaton doubles its states per `?` after a `*` and a
    // character that tells positions apart (issue #3: the fuzzer found
    // single rules taking seconds to determinize). Each is built alone,
    // and 300 of them together; every build answers an instance as the
    // reference does first.
    let shapes: &[(&str, &str, &str)] = &[
        ("star-11-folded", "Read(É*!???????????)", "éxy!abcdefghijk"),
        (
            "anchored-star-8",
            "Read(./src/*a????????*)",
            "src/xa12345678z",
        ),
        (
            "stars-with-between",
            "Read(./a*!??*!??*!??*!??)",
            "ax!ab!cd!ef!gh",
        ),
        ("class-then-8", "Read(**/x*[ab]????????)", "d/xya12345678"),
        ("folded-k-s", "Read(k*?ſ??????)", "\u{212A}abs123456"),
        ("star-5-in-automaton", "Read(É*!?????)", "É!abcde"),
    ];
    let mut mm = Matches::new();
    let mut check = |p: &Policy, rel: &str| {
        let pm = p.path_matcher(Kind::Read).expect("read");
        pm.find_relative(&toolgate::compile::AnchorKey::Project, rel, &mut mm);
        let want = reference_path(p, Kind::Read, rel);
        assert!(!want.is_empty(), "{rel:?} is an instance");
        assert_eq!(mm.ids(), want, "{rel:?}");
    };
    for (name, text, instance) in shapes {
        let rules: Vec<Rule> = parse(text, Effect::Deny, 0).into_iter().collect();
        check(&Policy::new(rules.clone()).expect("compiles"), instance);
        g.bench_function(format!("exponential/{name}"), |b| {
            timed(b, || Policy::new(rules.clone()).expect("compiles"))
        });
    }
    // Without the shape check (every such pattern in an automaton, up to
    // its size limit, then the fallback): what one build cost before.
    for (name, text, instance) in &shapes[..2] {
        let rules: Vec<Rule> = parse(text, Effect::Deny, 0).into_iter().collect();
        let cfg = || Config::new().blowup_limit(u32::MAX);
        let build = || {
            Policy::builder()
                .configure(cfg())
                .build(rules.clone())
                .expect("compiles")
        };
        check(&build(), instance);
        g.bench_function(format!("exponential/{name}/no-shape-check"), |b| {
            timed(b, build)
        });
    }
    let many: Vec<Rule> = (0..300)
        .filter_map(|i| parse(&format!("Read(x{i}*!???????????)"), Effect::Allow, i))
        .collect();
    check(
        &Policy::new(many.clone()).expect("compiles"),
        "x17ab!abcdefghijk",
    );
    g.bench_function("exponential/300-star-11", |b| {
        timed(b, || Policy::new(many.clone()).expect("compiles"))
    });
    g.finish();
}

fn benches(c: &mut C) {
    let d = data();
    bench_warm(c, &d);
    bench_novel(c, &d);
    bench_compile(c, &d);
}

fn config() -> C {
    let clock = Clock::new();
    eprintln!(
        "criterion figures: {}",
        if clock.cpu {
            "thread CPU time"
        } else {
            "wall-clock time"
        }
    );
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        eprintln!("load average at the start: {}", l.trim());
    }
    Criterion::default().with_measurement(clock)
}

criterion_group! {
    name = matchers;
    config = config();
    targets = benches
}
criterion_main!(matchers);
