//! Hook adapters: each harness's hook input read into a [`ToolCall`] with
//! its context, and a decision written as that harness's answer (SPEC §11).
//!
//! This module only translates JSON; deciding is [`crate::eval`]'s job, and
//! running a hook process (time budget, panics, policy loading) is the
//! command line's.
//!
//! Every adapter fails closed: input it cannot read is an [`Error`], which
//! the caller turns into the harness's refusal.
//!
//! [`ToolCall`]: crate::ToolCall

use std::io::Read;

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};
pub(crate) use crate::eval::call::json_type;

pub mod claude;
pub mod codex;
pub mod cursor;
pub mod redact;

/// The most hook input read (8 MiB, as tuff reads): more is an error.
pub const MAX_INPUT: u64 = 8 * 1024 * 1024;

/// Reads all of `r`, at most [`MAX_INPUT`] bytes: longer input is an error,
/// not a truncated call.
pub fn read_input(r: impl Read) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    r.take(MAX_INPUT + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::new(ErrorKind::Call, format!("cannot read the hook input: {e}")))?;
    if buf.len() as u64 > MAX_INPUT {
        return Err(Error::new(
            ErrorKind::Call,
            format!("the hook input is longer than {MAX_INPUT} bytes"),
        ));
    }
    Ok(buf)
}

/// Parses hook input bytes as one JSON object.
pub(crate) fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, Error> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::new(
            ErrorKind::Call,
            format!("the hook input is not valid json: {e}"),
        )
    })?;
    match v {
        Value::Object(m) => Ok(m),
        other => Err(Error::new(
            ErrorKind::Call,
            format!(
                "the hook input must be a json object, not {}",
                json_type(&other)
            ),
        )),
    }
}

/// A required string field of hook input.
pub(crate) fn required_str<'a>(obj: &'a Map<String, Value>, key: &str) -> Result<&'a str, Error> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        None => Err(Error::new(
            ErrorKind::Call,
            format!("the hook input has no {key} field"),
        )),
        Some(v) => Err(Error::new(
            ErrorKind::Call,
            format!(
                "the hook input's {key} must be a string, not {}",
                json_type(v)
            ),
        )),
    }
}

/// An optional string field of hook input (present with another type is an
/// error).
pub(crate) fn optional_str<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a str>, Error> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => required_str(obj, key).map(Some),
    }
}

/// A required object field of hook input.
pub(crate) fn required_object<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a Map<String, Value>, Error> {
    match obj.get(key) {
        Some(Value::Object(m)) => Ok(m),
        None => Err(Error::new(
            ErrorKind::Call,
            format!("the hook input has no {key} field"),
        )),
        Some(v) => Err(Error::new(
            ErrorKind::Call,
            format!(
                "the hook input's {key} must be an object, not {}",
                json_type(v)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_is_capped() {
        let big = vec![b' '; MAX_INPUT as usize + 1];
        assert!(read_input(&big[..]).is_err());
        let ok = [b' '; 10];
        assert_eq!(read_input(&ok[..]).unwrap().len(), 10);
    }

    #[test]
    fn fields_have_types() {
        let m = parse_object(br#"{"a": "x", "b": 1, "c": {}}"#).unwrap();
        assert_eq!(required_str(&m, "a").unwrap(), "x");
        assert!(required_str(&m, "b").is_err());
        assert!(required_str(&m, "z").is_err());
        assert_eq!(optional_str(&m, "z").unwrap(), None);
        assert!(optional_str(&m, "b").is_err());
        assert!(required_object(&m, "c").is_ok());
        assert!(required_object(&m, "a").is_err());
        assert!(parse_object(b"[1]").is_err());
        assert!(parse_object(b"{").is_err());
    }
}
