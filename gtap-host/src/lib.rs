//! Host side of gtap (placeholder).
