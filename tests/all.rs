//! The one integration-test binary: every suite under `tests/suite/`, linked
//! once, with the shared fixtures of `tests/support/`. It never holds tests
//! of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;
