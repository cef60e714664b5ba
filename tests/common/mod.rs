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
