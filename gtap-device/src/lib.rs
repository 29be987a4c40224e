//! The gtap task runtime: a persistent, work-stealing scheduler for fork-join task graphs, one
//! task per GPU thread (thread mode) or one task per thread block (block mode, [`block`]).
//!
//! This crate is `no_std` and compiles for `nvptx64-nvidia-cuda` (the GPU) and for the host,
//! where [`cpu`] runs the very same scheduler on OS threads or in a seeded deterministic
//! simulation. Only [`arch`] differs between the two. Users reach it through the `gtap` crate;
//! launching lives in `gtap-host`.
//!
//! What other crates see is short: the user-facing types (re-exported by `gtap`), [`abi`] (the
//! contract with `gtap-host` and `gtap-builder`: every shared `#[repr(C)]` shape, limit and
//! size), [`cpu::run`] (the CPU executor's entry point), and `__private` for the macros. Every
//! other module is private. How they fit, in the order a task meets them:
//!
//! | module | concept |
//! |---|---|
//! | [`task`] | what the macros expand to: task functions as futures, spawn, wait |
//! | [`context`] | the launch context: data every task of a launch reads, kept once per launch |
//! | [`kernel`] | kernels and `entry!`: every thread becomes a scheduler worker |
//! | [`record`] | a task record: header + the task's future, in one slot |
//! | [`pool`] | per-warp task-ID pools |
//! | [`queue`] | per-warp ring queues: staging, publishing, pops, steals, DAQ |
//! | [`join`] | join counters and continuations |
//! | [`scheduler`] | the worker loop (a worker is a warp in thread mode) tying them together, termination |
//! | [`trace`] | the opt-in event trace: task runs, steals and idle spans per warp (block mode: per block), for profiles |
//! | [`block`] | block mode: block records, the block worker, collective waits, the `Block` helpers |
//! | [`error`] | device failures reported to the host |
//! | [`region`] | the device's view of one launch: typed pointers into the region |
//! | [`abi`] | the host-device contract: layout, launch parameters, shared-memory map, error report, statistics, limits |
//! | [`cpu`] | the CPU executor: `State` (the region in host memory) and `run` |
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

/// Evaluates `$body` with `const $detach: bool` set to `$no_taskwait`, so that the body can pass
/// it to the scheduler as a const generic (`DETACH`: a `no_taskwait` launch, whose tasks detach
/// from their parents). The one place where a run-time option picks between the two compiled
/// schedulers; a GPU kernel's option is a constant there (see `kernel.rs`), so only its own
/// scheduler is compiled in.
macro_rules! with_detach {
    ($no_taskwait:expr, $detach:ident => $body:expr) => {
        if $no_taskwait {
            const $detach: bool = true;
            $body
        } else {
            const $detach: bool = false;
            $body
        }
    };
}

// The contract with gtap-host and gtap-builder, and the CPU executor's entry point.
pub mod abi;
#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;

// What user code names (through the `gtap` facade).
pub mod math;
pub mod thread;

// The runtime's internals: private, reached only through the items re-exported below and the
// macros' `__private` module.
mod arch;
#[cfg(not(target_arch = "nvptx64"))]
mod at_once;
mod atomic;
mod block;
mod context;
mod device_code;
mod error;
mod join;
mod kernel;
mod lane;
#[cfg(all(test, loom))]
mod loom_tests;
mod pool;
mod probe;
mod queue;
mod record;
mod region;
mod scheduler;
mod slice;
mod task;
#[cfg(test)]
mod testing;
mod trace;

pub use atomic::AtomicElement;
pub use block::{Block, SharedMem, SharedWord, StrideIndex};
pub use context::Context;
pub use device_code::{Cubin, DeviceCode, KernelModule};
pub use kernel::{Kernel, KernelArg, KernelArgs};
pub use lane::SCRATCH_WORDS;
pub use slice::{Loan, Part, Slice, SliceMut};
pub use task::{TaskFunction, TaskInfo};

/// What the `gtap` macros expand to. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__ptx_kernel as ptx_kernel;
    pub use crate::abi::{LaunchParams, OPT_NO_TASKWAIT};
    pub use crate::block::record::record_size_u32 as block_record_size_u32;
    pub use crate::block::task::{prepare_wait_block, spawn_block};
    pub use crate::context::{RunsIn, launch_context};
    #[cfg(target_arch = "nvptx64")]
    pub use crate::kernel::assume_block_size;
    pub use crate::kernel::{
        Kernel, KernelArg, KernelArgs, entry, entry_block, entry_thread, write_result,
    };
    pub use crate::record::PollRequest;
    pub use crate::task::{
        BlockTask, DirectCall, QueueIndex, Site, Suspend, TaskFunction, TaskInfo, ThreadTask,
        poll_block, poll_child, poll_thread, prepare_wait, queue_index, record_bytes_of,
        record_bytes_u32, spawn, spawn_thread,
    };

    /// The `&Block` a block-mode body receives (`#[gtap::function(block)]` binds its first
    /// parameter to it).
    #[inline(always)]
    pub const fn block_token() -> &'static crate::block::Block {
        &crate::block::Block::TOKEN
    }

    pub use crate::block::record::{ArgsSource, PolledArgs};

    /// A block-mode task's arguments, read from its record (`BlockTask::start_shared`, through
    /// a [`PolledArgs`]) or from a copy (`TaskFunction::start`, through a reference). No
    /// `Copy` bound: `BlockTask` already requires one, and repeating it here would only add a
    /// second error to the first when the arguments are not `Copy`.
    ///
    /// # Safety
    /// As [`ArgsSource::read_args`]: `A` is a `BlockTask`'s `Args`, which are `Copy`, so the
    /// read is a copy, and a [`PolledArgs`] is read while its task is polled.
    #[inline(always)]
    pub unsafe fn block_args<A, S: ArgsSource<A>>(source: S) -> A {
        // SAFETY: per the contract.
        unsafe { source.read_args() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    pub use crate::task::{HostRecord, TASK_RECORDS};
    pub use core;
    #[cfg(not(target_arch = "nvptx64"))]
    pub use linkme;
}
