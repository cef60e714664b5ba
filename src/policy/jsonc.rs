//! JSON with comments and trailing commas (JSONC), as some settings files
//! are written, reduced to plain JSON for `serde_json`.
//!
//! Hand-written because no allowed crate reads JSONC, and the job is small:
//! comments and trailing commas are overwritten with spaces, byte for byte,
//! so every byte offset (and so every line and column an error names) is the
//! same in the reduced text as in the file.

/// What JSONC's extensions were found, and where the first one is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reduced {
    /// The text with comments and trailing commas blanked out.
    pub text: String,
    /// Byte offset and name (`"comment"`, `"trailing comma"`) of the first
    /// extension found, if any.
    pub first: Option<(usize, &'static str)>,
}

/// Blanks out `//` and `/* */` comments and trailing commas outside
/// strings. An unterminated block comment is left as it is, so that the
/// JSON parser reports it.
pub(crate) fn reduce(text: &str) -> Reduced {
    let mut bytes = text.as_bytes().to_vec();
    let mut first: Option<(usize, &'static str)> = None;

    // Pass 1: comments.
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, bytes.get(i + 1)) {
            (b'"', _) => {
                in_string = true;
                i += 1;
            }
            (b'/', Some(b'/')) => {
                note(i, "comment", &mut first);
                while i < bytes.len() && bytes[i] != b'\n' {
                    bytes[i] = b' ';
                    i += 1;
                }
            }
            (b'/', Some(b'*')) => {
                let Some(len) = find(&bytes[i + 2..], b"*/") else {
                    // Unterminated: leave it for the parser to report.
                    break;
                };
                note(i, "comment", &mut first);
                let end = i + 2 + len + 2;
                for byte in &mut bytes[i..end] {
                    if *byte != b'\n' {
                        *byte = b' ';
                    }
                }
                i = end;
            }
            _ => i += 1,
        }
    }

    // Pass 2: trailing commas (comments are blanks by now).
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let next = bytes[i + 1..]
                .iter()
                .find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
            if matches!(next, Some(b']' | b'}')) {
                note(i, "trailing comma", &mut first);
                bytes[i] = b' ';
            }
        }
        i += 1;
    }

    // Only ASCII bytes were replaced, and only whole UTF-8 sequences (every
    // byte of a comment is blanked), so the text is still UTF-8.
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Reduced { text, first }
}

fn note(at: usize, what: &'static str, first: &mut Option<(usize, &'static str)>) {
    if first.is_none_or(|(f, _)| at < f) {
        *first = Some((at, what));
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The 1-based line, the line's text and the 0-based character column of
/// byte offset `at` in `text` (an offset past the end points after the last
/// character).
pub(crate) fn position(text: &str, at: usize) -> (usize, &str, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
    let line = 1 + text[..start].matches('\n').count();
    let line_text = text[start..end]
        .strip_suffix('\r')
        .unwrap_or(&text[start..end]);
    let column = text[start..at].chars().count();
    (line, line_text, column)
}

/// The byte offset of 1-based `line` and 1-based byte `column` (as
/// `serde_json` reports them) in `text`.
pub(crate) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line - 2)
            .map_or(text.len(), |(n, _)| n + 1)
    };
    (start + column.saturating_sub(1)).min(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_become_blanks() {
        let text = "{\n  // a comment\n  \"a\": [1, 2,], /* x\ny */ \"b\": \"//,]\",\n}";
        let r = reduce(text);
        assert_eq!(r.text.len(), text.len());
        let v: serde_json::Value = serde_json::from_str(&r.text).unwrap();
        assert_eq!(v, serde_json::json!({"a": [1, 2], "b": "//,]"}));
        assert_eq!(r.first, Some((4, "comment")));
    }

    #[test]
    fn plain_json_is_unchanged() {
        let text = r#"{"a": "x\"//", "b": [1]}"#;
        let r = reduce(text);
        assert_eq!(r.text, text);
        assert_eq!(r.first, None);
    }

    #[test]
    fn unterminated_block_comment_is_left() {
        let r = reduce("{ /* x ");
        assert_eq!(r.text, "{ /* x ");
    }

    #[test]
    fn multibyte_text_in_comments_keeps_offsets() {
        let text = "{ // é ü\n\"a\": 1 }";
        let r = reduce(text);
        assert_eq!(r.text.len(), text.len());
        assert!(serde_json::from_str::<serde_json::Value>(&r.text).is_ok());
    }

    #[test]
    fn positions() {
        let text = "ab\ncdé\r\nf";
        assert_eq!(position(text, 0), (1, "ab", 0));
        assert_eq!(position(text, 5), (2, "cdé", 2));
        assert_eq!(position(text, 99), (3, "f", 1));
        assert_eq!(offset_of(text, 2, 2), 4);
        assert_eq!(offset_of(text, 1, 1), 0);
    }

    proptest::proptest! {
        #[test]
        fn reduce_keeps_offsets_and_never_panics(text in "[{}\\[\\]\",/*a\n\\\\ é]{0,40}") {
            let r = reduce(&text);
            proptest::prop_assert_eq!(r.text.len(), text.len());
            let _ = position(&text, r.first.map_or(0, |(at, _)| at));
        }

        #[test]
        fn valid_json_is_unchanged(v in proptest::collection::vec("[a-z/*,\\]\\[\"]{0,6}", 0..5)) {
            let text = serde_json::to_string(&v).unwrap();
            let r = reduce(&text);
            proptest::prop_assert_eq!(r.text, text);
            proptest::prop_assert_eq!(r.first, None);
        }
    }
}
