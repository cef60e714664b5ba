//! Stage 3: from a tool call to a decision.

pub mod call;
