//! The gtap task runtime: a persistent, work-stealing scheduler for fork-join task graphs, one
//! task per GPU thread (thread mode).
//!
//! This crate is `no_std` and compiles for `nvptx64-nvidia-cuda` (the GPU) and for the host,
//! where [`cpu`] runs the very same scheduler on OS threads or in a seeded deterministic
//! simulation. Only [`arch`] differs between the two. Users reach it through the `gtap` crate;
//! launching lives in `gtap-host`.
//!
//! How the pieces fit, in the order a task meets them:
//!
//! | module | concept |
//! |---|---|
//! | [`task`] | what the macros expand to: task functions as futures, spawn, wait |
//! | [`record`] | a task record: header + the task's future, in one slot |
//! | [`pool`] | per-warp task-ID pools |
//! | [`queue`] | per-warp ring queues: staging, publishing, pops, steals, DAQ |
//! | [`join`] | join counters and continuations |
//! | [`scheduler`] | the warp loop tying them together, termination |
//! | [`error`] | device failures recorded for the host |
//! | [`layout`] | where everything lives in device memory |
//! | [`arch`] | the GPU/CPU layer: atomics with explicit ordering, warps, lane context |
//!
//! The scheduler's protocol (queues, steals, joins, termination, memory ordering) is written
//! down in the module docs of [`queue`], [`pool`], [`join`] and [`scheduler`], next to the code
//! that relies on it.

#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(asm_experimental_arch, stdarch_nvptx, abi_ptx, allow_internal_unstable)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![warn(missing_docs)]
// The protocol docs of the modules link to the private items that implement each step; those
// links resolve in `cargo doc --document-private-items`, the documentation of this crate's
// internals.
#![allow(rustdoc::private_intra_doc_links)]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod arch;
pub mod atomic;
#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
pub mod device_code;
pub mod error;
pub mod join;
pub mod kernel;
pub mod lane;
pub mod launch;
pub mod layout;
#[cfg(all(test, loom))]
mod loom_tests;
pub mod math;
pub mod pool;
pub mod probe;
pub mod queue;
pub mod record;
pub mod scheduler;
pub mod slice;
pub mod stats;
pub mod task;
#[cfg(test)]
mod testing;
pub mod thread;

pub use atomic::AtomicElement;
pub use device_code::{Cubin, DeviceCode, KernelModule};
pub use kernel::{Kernel, KernelArg, KernelArgs};
pub use lane::SCRATCH_WORDS;
pub use layout::{Geometry, LaunchParams, Layout};
pub use slice::{Loan, Part, Slice, SliceMut};
pub use task::{TaskFunction, TaskInfo};

/// What the `gtap` macros expand to. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__ptx_kernel as ptx_kernel;
    pub use crate::kernel::{Kernel, KernelArg, KernelArgs, entry, write_result};
    pub use crate::layout::LaunchParams;
    pub use crate::task::{
        DirectCall, QueueIndex, Site, Suspend, TaskFunction, TaskInfo, prepare_wait, queue_index,
        record_bytes_of, record_bytes_u32, spawn,
    };
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::task::{HostRecord, TASK_RECORDS};
    pub use core;
    #[cfg(not(target_arch = "nvptx64"))]
    pub use linkme;
}
