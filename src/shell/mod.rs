//! The shell reader: a command string → a [`Reading`] (no policy knowledge).
