//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The path of a file of the shared corpora (`../shared/corpora/NAME`
/// beside the checkout), or `None` — with a message on stderr — when the
/// corpora are absent. With `TOOLGATE_REQUIRE_CORPORA=1` a missing corpus
/// fails the test instead.
pub fn corpus(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TOOLGATE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora"));
    let path = dir.join(name);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("TOOLGATE_REQUIRE_CORPORA").is_ok_and(|v| v == "1") {
        panic!(
            "corpus file {} is missing and TOOLGATE_REQUIRE_CORPORA=1",
            path.display()
        );
    }
    eprintln!(
        "skipping: corpus file {} is absent (set TOOLGATE_CORPORA to its folder)",
        path.display()
    );
    None
}

/// The lines of a corpus file, or `None` when it is absent (see [`corpus`]).
pub fn corpus_lines(name: &str) -> Option<Vec<String>> {
    let path = corpus(name)?;
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Some(text.lines().map(str::to_string).collect())
}

/// A Claude Code rule of the given effect, parsed in the `claude-code`
/// dialect, as the `index`th entry of that effect's list in
/// `settings.json`.
pub fn claude_rule(text: &str, effect: toolgate::Effect, index: usize) -> toolgate::Rule {
    use toolgate::{Dialect, Effect, List, Provenance};
    let list = match effect {
        Effect::Deny => List::Deny,
        Effect::Ask => List::Ask,
        Effect::Allow => List::Allow,
    };
    let prov = Provenance {
        source: std::sync::Arc::from("settings.json"),
        list,
        index,
    };
    toolgate::rule::claude::parse_rule(text, effect, Dialect::ClaudeCode, prov)
        .expect("rule parses")
}

/// `n` distinct tuff token rules (`["git", "push"]`, `["tar", "xf", "a.tar"]`)
/// from the leading two or three words of `commands` that are plain
/// words; fewer when the commands run out.
pub fn tuff_token_rules(commands: &[String], n: usize) -> Vec<Vec<String>> {
    let simple = |w: &str| {
        !w.is_empty()
            && !w.starts_with('-')
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    let mut rules: Vec<Vec<String>> = Vec::new();
    for (k, c) in commands.iter().enumerate() {
        let words: Vec<String> = c
            .split_whitespace()
            .take(2 + k % 2)
            .map(String::from)
            .collect();
        if words.len() >= 2 && words.iter().all(|w| simple(w)) && !rules.contains(&words) {
            rules.push(words);
            if rules.len() == n {
                break;
            }
        }
    }
    rules
}
