//! Secrets taken out of text before it is written to a decision log.
//!
//! What is redacted (each replaced by `[REDACTED]`, the part before it
//! kept so the log still says what kind of secret was there):
//!
//! | Shape | Example |
//! |---|---|
//! | OpenAI / Anthropic keys | `sk-…`, `sk-ant-…` |
//! | GitHub tokens | `ghp_…`, `gho_…`, `ghu_…`, `ghs_…`, `ghr_…`, `github_pat_…` |
//! | Slack tokens | `xoxb-…`, `xoxp-…`, `xoxa-…`, `xoxr-…`, `xoxs-…` |
//! | AWS access key ids | `AKIA…`, `ASIA…` (16 more characters) |
//! | HTTP authorization | `Bearer …`, `Basic …`, `token …` after `Authorization:` |
//! | Secret-named assignments | `password=…`, `passwd:…`, `secret=…`, `token=…`, `api_key=…`, `apikey=…`, `access_key=…`, `client_secret=…`, `aws_secret_access_key=…` (any case, `=` or `:`, also `--password …` options) |
//! | Passwords in URLs | `https://user:…@host` |
//!
//! The list is short on purpose: it catches the common shapes, not every
//! secret. A log is opt-in; keep it somewhere private.

use std::sync::OnceLock;

use regex_automata::meta::Regex;

/// What replaces a secret.
pub const MARK: &str = "[REDACTED]";

/// Each pattern's group 1 is kept; the rest of the match is the secret.
const PATTERNS: &[&str] = &[
    r"(sk-)[A-Za-z0-9_\-]{8,}",
    r"(gh[pousr]_)[A-Za-z0-9]{16,}",
    r"(github_pat_)[A-Za-z0-9_]{16,}",
    r"(xox[abprs]-)[A-Za-z0-9\-]{8,}",
    r"((?:AKIA|ASIA))[0-9A-Z]{16}",
    r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=\-]{8,}",
    r"(?i)(authorization:\s*(?:token\s+)?)[A-Za-z0-9._~+/=\-]{8,}",
    r#"(?i)((?:^|[^A-Za-z0-9])-{0,2}(?:[A-Za-z0-9]+_)*(?:password|passwd|pwd|secret|token|api_?key|access_?key|client_?secret|secret_access_key)["']?\s*[=:]\s*["']?)[^\s"'&;|]+"#,
    r#"(?i)(--(?:password|passwd|token|secret|api-key)\s+["']?)[^\s"']+"#,
    r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]+:)[^\s/@]+(@)",
];

fn compiled() -> &'static [Regex] {
    static RES: OnceLock<Vec<Regex>> = OnceLock::new();
    RES.get_or_init(|| {
        PATTERNS
            .iter()
            // The patterns are constants checked by the tests below; one
            // that failed to build would only redact less.
            .filter_map(|p| Regex::new(p).ok())
            .collect()
    })
}

/// `text` with the secrets of the table above replaced by [`MARK`].
///
/// ```
/// use toolgate::hook::redact::redact;
/// assert_eq!(
///     redact("curl -H 'Authorization: Bearer abcdefgh12345' https://x"),
///     "curl -H 'Authorization: Bearer [REDACTED]' https://x"
/// );
/// assert_eq!(redact("mysql --password=hunter22 db"), "mysql --password=[REDACTED] db");
/// ```
pub fn redact(text: &str) -> String {
    let mut out = text.to_string();
    for re in compiled() {
        out = replace(re, &out);
    }
    out
}

fn replace(re: &Regex, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut caps = re.create_captures();
    let mut at = 0;
    while at <= text.len() {
        re.search_captures(&regex_automata::Input::new(text).range(at..), &mut caps);
        let Some(m) = caps.get_match() else { break };
        let keep_end = caps.get_group(1).map_or(m.start(), |g| g.end);
        let tail = caps.get_group(2).map(|g| g.start);
        out.push_str(&text[last..keep_end]);
        out.push_str(MARK);
        if let Some(t) = tail {
            out.push_str(&text[t..m.end()]);
        }
        last = m.end();
        // Patterns never match empty, but step on regardless.
        at = if m.end() > m.start() {
            m.end()
        } else {
            m.end() + 1
        };
    }
    out.push_str(text.get(last..).unwrap_or(""));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(compiled().len(), PATTERNS.len());
    }

    #[test]
    fn secrets_go() {
        let cases = [
            (
                "OPENAI_API_KEY=sk-proj-abcdefghijkl python x.py",
                "OPENAI_API_KEY=[REDACTED] python x.py",
            ),
            ("echo sk-ant-api03-abcdefghij", "echo sk-[REDACTED]"),
            (
                "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123@github.com/a/b",
                "git clone https://ghp_[REDACTED]@github.com/a/b",
            ),
            (
                "gh auth login --with-token github_pat_11ABCDEFGHIJKLMNOPQRST",
                "gh auth login --with-token github_pat_[REDACTED]",
            ),
            (
                "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE",
                "AWS_ACCESS_KEY_ID=AKIA[REDACTED]",
            ),
            (
                "export aws_secret_access_key=wJalrXUtnFEMI/K7MDENG",
                "export aws_secret_access_key=[REDACTED]",
            ),
            (
                "mysql -u root --password hunter22",
                "mysql -u root --password [REDACTED]",
            ),
            (
                "psql postgres://me:hunter22@db/x",
                "psql postgres://me:[REDACTED]@db/x",
            ),
            (
                "curl -H \"Authorization: token abcdefgh1234\" u",
                "curl -H \"Authorization: token [REDACTED]\" u",
            ),
            ("slack xoxb-1234567890-abc", "slack xoxb-[REDACTED]"),
            (
                "DB_PASSWORD='s3cret value'",
                "DB_PASSWORD='[REDACTED] value'",
            ),
        ];
        let mut bad = Vec::new();
        for (input, want) in cases {
            let got = redact(input);
            if got != want {
                bad.push(format!("{input:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn ordinary_commands_stay() {
        for s in [
            "git push origin main",
            "npm test -- --token-file x",
            "cat password.txt",
            "ls ~/.ssh",
            "echo skip-this",
        ] {
            assert_eq!(redact(s), s);
        }
    }
}
