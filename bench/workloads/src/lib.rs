//! GTaP's evaluation workloads, ported to gtap with the same algorithm, cutoff rule, per-node
//! work and parameters as GTaP's sources (the hand-lowered copies in the GTaP baseline's
//! `src/*.cu` name the original files), each with its input generator, a sequential Rust
//! reference and a rayon peer.
//!
//! The crate is `no_std` and compiles for the GPU and for the host: `build.rs` builds it to PTX
//! ([`DEVICE_CODE`]). On the host, every workload implements [`measure::Workload`], which
//! `gtap-bench` drives.

#![no_std]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod fib;
pub mod node_work;
pub mod nqueens;
pub mod probtree;
pub mod tree;

#[cfg(not(target_arch = "nvptx64"))]
pub mod measure;
#[cfg(not(target_arch = "nvptx64"))]
pub mod rng;

pub mod bfs;
pub mod cilksort;
#[cfg(not(target_arch = "nvptx64"))]
pub mod gen_vector;
pub mod mergesort;
#[cfg(not(target_arch = "nvptx64"))]
pub mod resident;
#[cfg(not(target_arch = "nvptx64"))]
pub mod sort_case;
pub mod spmv;

/// The PTX of this crate's kernels, built by `build.rs` (or why there is none).
#[cfg(not(target_arch = "nvptx64"))]
pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();
