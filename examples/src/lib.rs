#![no_std]
//! Example gtap programs (placeholder).
