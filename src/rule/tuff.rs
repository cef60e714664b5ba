//! tuff `policy.toml` policies → [`crate::Rule`]s.
