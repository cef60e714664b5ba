//! Claude Code rule strings: `Tool` or `Tool(specifier)` → [`crate::Rule`].
