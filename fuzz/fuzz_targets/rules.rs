//! Arbitrary bytes as a Claude rule: the parser never panics, errors point
//! inside the text, and a parsed rule printed canonically parses back to
//! the same IR.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_fuzz::print::{check_rule, mode};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let (effect, dialect) = mode(first);
    if let Err(msg) = check_rule(text, effect, dialect) {
        panic!("rule {text:?} ({effect}, {dialect:?}): {msg}");
    }
});
