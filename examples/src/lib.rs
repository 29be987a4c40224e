//! Example gtap programs, each a set of task functions with a root kernel and a sequential
//! reference:
//!
//! * [`fib`]: Fibonacci without and with a sequential cutoff (divergence-aware queues);
//! * [`integrate`]: adaptive numerical integration of a sharply peaked function;
//! * [`integrate_block`]: the same in block mode, a thread block per task summing trapezoids
//!   cooperatively;
//! * [`nqueens`]: N-Queens with a sequential cutoff;
//! * [`tree`]: a complete binary tree with work per node, and a sum over a random-shape tree.
//!
//! The crate is `no_std` and compiles for the GPU and for the host: `build.rs` builds its device
//! code ([`DEVICE_CODE`]), and the host build gives the kernels' launch descriptors and the CPU
//! executor's code. `gtap-demo` runs them all.

#![no_std]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod fib;
pub mod integrate;
pub mod integrate_block;
pub mod nqueens;
pub mod tree;

/// This crate's device code, one module per kernel, built by `build.rs` (or why there is none).
#[cfg(not(target_arch = "nvptx64"))]
pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();
