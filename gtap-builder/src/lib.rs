//! Device build helper (placeholder).
