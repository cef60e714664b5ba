//! The reference matcher: deliberately naive, checkable by eye.
