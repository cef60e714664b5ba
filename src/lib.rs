//! toolgate decides whether an AI coding agent's tool call — a shell
//! command, a file read or edit, a web fetch, an MCP tool — is allowed,
//! asked about, or denied, by matching it against permission rules.
//!
//! # The pipeline
//!
//! ```text
//! rule text / policy files ─▶ rule::    (text → Rule IR, with provenance)
//!                               │
//!                               ▼
//!                           compile::   (IR → one matcher per tool kind)
//!                               │
//! tool call ─▶ shell:: (command → Reading) ─▶ eval:: (call → actions → match
//!                                                ids → precedence → Decision)
//! ```
//!
//! [`reference`] is a deliberately naive matcher — a loop over rules, each
//! checked by a small hand-written matcher — kept as the oracle every
//! compiled engine is tested against.
//!
//! # Guarantees
//!
//! - Nothing in the library panics on input: bad rules, calls and commands
//!   are [`Error`]s or incomplete readings.
//! - Nothing fails open: what cannot be read is never allowed.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod compile;
mod error;
pub mod eval;
pub mod policy;
pub mod reference;
pub mod rule;
pub mod shell;

#[cfg(feature = "cli")]
#[doc(hidden)]
pub mod cli;

pub use crate::error::{Error, ErrorKind, Location};
pub use crate::rule::{Dialect, Effect, List, Pattern, Provenance, Rule};
