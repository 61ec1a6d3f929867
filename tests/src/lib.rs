//! Helpers for integration tests.
