//! Structured arbitrary rules (up to 8), compiled once with one strategy
//! configuration the case picks (mostly cheap ones: no shared automaton,
//! or dense automata under tight size limits; the images of two loaded
//! back), then asked at least 100 inputs: every compiled matcher returns
//! the reference's set of rules. A mismatch prints the case as JSON lines,
//! a reproducer for `tests/data/fuzz/matchers/` (replayed with every
//! configuration).
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use toolgate::{Dialect, Effect};
use toolgate_fuzz::matchers_check::{Spec, case_text, check_matchers_in};

/// The fewest inputs asked of each compiled rule set.
const MIN_INPUTS: usize = 100;

#[derive(Arbitrary, Debug, Clone, Copy)]
enum GenKind {
    Bash,
    PowerShell,
    Read,
    Edit,
    Write,
    WebFetch,
    Tool,
    Mcp,
    Field,
    Agent,
    Skill,
}

#[derive(Arbitrary, Debug)]
struct GenRule {
    effect: u8,
    claude: bool,
    second_source: bool,
    kind: GenKind,
    body: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
struct Case {
    rules: Vec<GenRule>,
    inputs: Vec<Vec<u8>>,
    seed: u64,
    config: u8,
}

/// The most rules of a case: small sets compile fast.
const MAX_RULES: usize = 8;

/// The configuration a case is compiled with: mostly the cheap ones (no
/// shared automaton, or dense ones under tight size limits), sometimes the
/// defaults. `cargo test` replays a finding with every configuration.
fn config_name(b: u8) -> &'static str {
    match b % 16 {
        0..=5 => "one-shot",
        6 => "blowup-0",
        7..=9 => "small",
        10..=11 => "small-latch-1",
        12 => "split",
        13 => "fallback",
        14 => "latch-1",
        _ => "default",
    }
}

/// Characters that exercise escaping, separators, wildcards and case
/// folding (`K` and the Kelvin sign, `s` and the long s).
const CMD: &[char] = &[
    'a', 'b', 'A', ' ', ' ', '-', '.', '/', ':', '*', '*', '\\', '(', ')', '|', '$', '\n', 'k',
    'K', '\u{212A}', 's', 'ſ', 'é', 'É', '?', '[', ']',
];
const PATH: &[char] = &[
    'a', 'b', 'A', 'B', '.', '/', '/', '*', '*', '?', '[', ']', '!', '^', '-', '~', '\\', 'é', 'É',
    'k', '\u{212A}', ' ',
];
const HOST: &[char] = &['a', 'b', 'c', '-', '1', '.', '.', '*', 'A', 'é'];
const TOOL: &[char] = &['m', 'c', 'p', '_', '_', 'a', 'b', 'T', '*'];

fn text(body: &[u8], alphabet: &[char]) -> String {
    body.iter()
        .take(14)
        .map(|&b| alphabet[usize::from(b) % alphabet.len()])
        .collect()
}

fn spec(g: &GenRule) -> Spec {
    let t = match g.kind {
        GenKind::Bash => format!("Bash({})", text(&g.body, CMD)),
        GenKind::PowerShell => format!("PowerShell({})", text(&g.body, CMD)),
        GenKind::Read => format!("Read({})", text(&g.body, PATH)),
        GenKind::Edit => format!("Edit({})", text(&g.body, PATH)),
        GenKind::Write => format!("Write({})", text(&g.body, PATH)),
        GenKind::WebFetch => format!("WebFetch(domain:{})", text(&g.body, HOST)),
        GenKind::Tool => text(&g.body, TOOL),
        GenKind::Mcp => format!("mcp__{}", text(&g.body, TOOL)),
        GenKind::Field => format!("Bash(description:{})", text(&g.body, CMD)),
        GenKind::Agent => format!("Agent({})", text(&g.body, CMD)),
        GenKind::Skill => format!("Skill({})", text(&g.body, CMD)),
    };
    Spec {
        text: t,
        effect: match g.effect % 3 {
            0 => Effect::Deny,
            1 => Effect::Ask,
            _ => Effect::Allow,
        },
        dialect: if g.claude {
            Dialect::ClaudeCode
        } else {
            Dialect::Strict
        },
        source: if g.second_source { "b.json" } else { "a.json" }.to_string(),
    }
}

/// A small deterministic generator (xorshift64*): the inputs of a case
/// follow from its seed, so that a reproducer lists them all.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick(&mut self, alphabet: &[char], max: usize) -> String {
        let n = self.below(max + 1);
        (0..n)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}

/// The text a rule matches against, roughly: its specifier (or tool name)
/// without the spelling the parser removes.
fn shape(text: &str) -> String {
    let inner = match (text.find('('), text.ends_with(')')) {
        (Some(o), true) => &text[o + 1..text.len() - 1],
        _ => text,
    };
    let inner = inner
        .strip_prefix("domain:")
        .or_else(|| inner.strip_prefix("description:"))
        .unwrap_or(inner);
    let inner = inner
        .strip_prefix("*.")
        .or_else(|| inner.strip_prefix("//"))
        .or_else(|| inner.strip_prefix("~/"))
        .or_else(|| inner.strip_prefix("./"))
        .or_else(|| inner.strip_prefix('/'))
        .unwrap_or(inner);
    inner.strip_suffix(":*").unwrap_or(inner).to_string()
}

/// An instance of a rule's shape: stars filled, escapes dropped at random,
/// one character's case flipped, something appended.
fn instance(rng: &mut Rng, shape: &str, alphabet: &[char]) -> String {
    let mut out = String::new();
    let mut chars = shape.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => out.push_str(&rng.pick(alphabet, 3)),
            '\\' if rng.below(2) == 0 => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '?' if rng.below(2) == 0 => out.push(alphabet[rng.below(alphabet.len())]),
            c => out.push(c),
        }
    }
    match rng.below(6) {
        0 => out = out.to_uppercase(),
        1 => out = out.to_lowercase(),
        2 => out.push_str(&format!(" {}", rng.pick(alphabet, 3))),
        3 => out.push_str(&format!("/{}", rng.pick(alphabet, 3))),
        4 => out = format!("{}.{out}", rng.pick(HOST, 2)),
        _ => {}
    }
    out
}

fn inputs(case: &Case, specs: &[Spec]) -> Vec<String> {
    let mut rng = Rng(case.seed | 1);
    let mut out: Vec<String> = case.inputs.iter().take(32).map(|b| text(b, CMD)).collect();
    let all: Vec<char> = CMD
        .iter()
        .chain(PATH)
        .chain(HOST)
        .chain(TOOL)
        .copied()
        .collect();
    while out.len() < MIN_INPUTS {
        if specs.is_empty() || rng.below(8) == 0 {
            out.push(rng.pick(&all, 10));
            continue;
        }
        let s = &specs[rng.below(specs.len())];
        let alphabet = match s.text.split('(').next() {
            Some("Read" | "Edit" | "Write") => PATH,
            Some("WebFetch") => HOST,
            Some(t) if !s.text.contains('(') || t.starts_with("mcp__") => TOOL,
            _ => CMD,
        };
        out.push(instance(&mut rng, &shape(&s.text), alphabet));
    }
    out
}

fuzz_target!(|case: Case| {
    let specs: Vec<Spec> = case.rules.iter().take(MAX_RULES).map(spec).collect();
    let inputs = inputs(&case, &specs);
    let which = [config_name(case.config)];
    if let Err(msg) = check_matchers_in(&specs, &inputs, Some(&which)) {
        panic!(
            "{msg}\nreproducer (tests/data/fuzz/matchers/NAME.jsonl):\n{}",
            case_text(&specs, &inputs)
        );
    }
});
