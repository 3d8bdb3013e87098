//! Property tests: to come.
