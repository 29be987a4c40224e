//! The host-device contract: every shape and number that `gtap-host` (and `gtap-builder`) and
//! the device code must agree on, in one place.
//!
//! The host allocates the runtime's region, fills in [`LaunchParams`], sizes the dynamic shared
//! memory, reads back the [`ErrorReport`] and the [`WarpStats`], and picks the pool's shape; the
//! device addresses the same memory through the same offsets. Both sides are compiled from
//! this module, so they agree by construction, as long as every item here keeps the same
//! layout on `x86_64` and `nvptx64`: that is why each shared struct is `#[repr(C)]`, holds
//! only fixed-width integers, and is padded explicitly.
//!
//! | item | what the host does with it |
//! |---|---|
//! | [`Geometry`], [`Layout`] | sizes and allocates the region, zeroes [`Layout::reset_range`] |
//! | [`LaunchParams`], [`OPT_RANDOM_QUEUE`] | the first parameter of every kernel |
//! | [`shared_bytes`], [`block_mode_shared_bytes`] | dynamic shared memory per block at launch (thread mode, block mode) |
//! | [`RecordSize`] | decodes each task function's exported record size (either mode) to size the slots |
//! | [`ErrorReport`], [`ErrorCode`] | decodes the first device failure |
//! | [`WarpStats`] | reads one per warp after a launch |
//! | [`WarpStatus`], [`WarpState`], [`STOPPED_BY_WATCHDOG`], [`Layout::stop_word`] | the watchdog reads each warp's status while a launch runs, and stops a stalled one |
//! | [`TraceEvent`], [`TraceKind`], [`BlockPollEnd`], [`WarpTraceMeta`], [`Layout::with_trace`] | sizes the opt-in event trace, reads each worker's events after a launch |
//! | [`MAX_QUEUES`], [`HEADER_BYTES`], [`ROOT_RESULT_BYTES`] | validates the configuration |
//! | [`CONTEXT_BYTES`], [`CONTEXT_ALIGN`] | sizes the region's context area ([`Layout::context`]); `entry!` checks a context against them at compile time |
//! | [`RING_ENTRY_BYTES`], [`POOL_CELL_BYTES`] | the memory each task slot costs beyond itself |
//! | [`MAX_REGISTERS`] | the register ceiling of `ptxas` (builder) and of the driver's JIT (host) |
//! | [`probe_value`] | checks the self-test kernel `gtap_probe` |
//! | [`each_entry_param`] | a kernel entry's parameters, in the order the host passes them |

mod error;
mod layout;
mod record_size;
mod shared;
mod stats;
mod status;
mod trace;

pub use error::{ErrorCode, ErrorReport};
pub use layout::{Geometry, GeometryError, LaunchParams, Layout, Line};
pub use record_size::{OVER_ALIGNED, RecordSize};
pub use shared::{
    DEFAULT_BLOCK_SHARED_BYTES, EXCHANGE_BYTES, block_mode_shared_bytes, shared_bytes,
    shared_bytes_without_scratch,
};
#[cfg_attr(not(target_arch = "nvptx64"), allow(unused_imports))]
// placed by the GPU layer only
pub(crate) use shared::{
    block_area_offset, exchange_area_offset, lane_area_offset, scratch_area_offset,
    user_area_offset, warp_area_offset,
};
pub use stats::WarpStats;
pub use status::{STOPPED_BY_WATCHDOG, WarpState, WarpStatus};
pub use trace::{BlockPollEnd, TraceEvent, TraceKind, WarpTraceMeta};

pub use crate::kernel::each_entry_param;

/// The most divergence-aware queues a warp may have: a warp keeps per-queue state for this
/// many in shared memory.
pub const MAX_QUEUES: usize = 16;

/// Bytes of a task record's header; the task's future starts right after it, 16-byte aligned.
pub const HEADER_BYTES: usize = 32;

/// Alignment of a task slot, and so of its size: a record's future may need 16, and a header
/// that starts a 32-byte sector is read in one memory transaction (on the H200 fib(40) ran 2 %
/// faster with 64-byte slots than with 48: `bench/NOTES.md`, entry 25).
pub const SLOT_ALIGN: u64 = 32;

/// Bytes reserved for the root task's result.
pub const ROOT_RESULT_BYTES: usize = 256;

/// Bytes of a launch's context (`entry!(context(..), ..)`), an area of the region
/// ([`Layout::context`]); a larger context does not compile (keep large data in a device
/// buffer and put a `Slice` of it in the context).
pub const CONTEXT_BYTES: usize = 256;

/// The largest alignment a launch's context may have.
pub const CONTEXT_ALIGN: usize = 16;

/// Alignment of the runtime's region (every region inside it starts on such a boundary; queue
/// and pool metadata are padded to it to keep warps off each other's cache lines).
pub const REGION_ALIGN: usize = 128;

/// Bytes of one ring-queue entry: a task id.
pub const RING_ENTRY_BYTES: u64 = 4;

/// Bytes of one cell of a warp's free-id ring: a sequence number and a task id, written
/// together.
pub const POOL_CELL_BYTES: u64 = 8;

/// [`LaunchParams::options`] bit, deterministic executor only: pick a random non-empty queue
/// instead of the fullest one.
pub const OPT_RANDOM_QUEUE: u32 = 1;

/// [`LaunchParams::options`] bit, parallel CPU executor only: *lazy task creation*. While the
/// spawning warp already has work published for thieves, a spawn polls its child at once in
/// the spawning lane instead of queueing it, so that the threads' time goes into task bodies
/// instead of queues, steps and joins (see `at_once.rs`).
pub const OPT_LAZY_SPAWN: u32 = 2;

/// [`LaunchParams::options`] bit, deterministic executor only: at spawns the seed picks, the
/// child is polled at once in the spawning lane and runs (and, unless it waits for children of
/// its own, finishes) before its parent goes on: a schedule the queues never produce, in which
/// a read of what a child writes before the wait that joins it sees the child's write, so a
/// program that depends on that order gives different results under different seeds (see
/// `at_once.rs`).
pub const OPT_CHILD_FIRST: u32 = 4;
/// Option bit: the work-first CPU executor runs the launch: `task!` and `taskwait!` go to
/// `cpu::work_first` instead of the pools and queues.
pub const OPT_WORK_FIRST: u32 = 8;

/// [`LaunchParams::options`] bit, set by a `#[gtap::kernel(no_taskwait)]` kernel itself: no
/// task of the launch waits, so a task is finished when its poll returns (its slot is freed at
/// once and no parent is notified), and the launch ends when no task is left (a grid-wide
/// count of live tasks reaches zero) rather than when the root's descendants have joined it.
/// A `taskwait!` reached in such a launch is [`ErrorCode::WaitInNoTaskwaitKernel`]. GTaP's
/// `GTAP_ASSUME_NO_TASKWAIT`.
pub const OPT_NO_TASKWAIT: u32 = 16;

/// [`LaunchParams::options`] bit, set by the host for a runtime configured without thread-mode
/// scratch memory (`gtap-host`'s `Config::thread_scratch(false)`): a thread-mode block reserves
/// no [`Scratch`](crate::lane::Scratch) per thread ([`shared_bytes_without_scratch`]), so the
/// L1 gets that shared memory back, and `gtap::thread::scratch` is a typed panic at its caller.
pub const OPT_NO_SCRATCH: u32 = 32;

/// The most registers per thread a kernel may use: the persistent grid's blocks of 256 threads
/// then fit at least two to a multiprocessor (16 warps), which the scheduler needs to hide
/// memory latency. `gtap-builder` gives it to `ptxas` for the SASS it embeds, and `gtap-host`
/// to the driver when it JIT-compiles PTX, so both paths give a kernel the same budget.
pub const MAX_REGISTERS: u32 = 128;

/// `v` rounded up to a multiple of `to` (a power of two).
pub const fn align_up(v: u64, to: u64) -> u64 {
    (v + to - 1) & !(to - 1)
}

/// What thread `gid` (global index) of the self-test kernel `gtap_probe` writes, before it adds
/// its lane index.
pub const fn probe_value(gid: u32) -> u32 {
    gid.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

const _: () = assert!(core::mem::size_of::<crate::record::Header>() == HEADER_BYTES);
const _: () = assert!(core::mem::size_of::<crate::pool::PoolCell>() as u64 == POOL_CELL_BYTES);
const _: () = assert!(core::mem::size_of::<u32>() as u64 == RING_ENTRY_BYTES);
// The error report is written by the device and read by the host; keep its size stable.
const _: () = assert!(core::mem::size_of::<ErrorReport>() == 368);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn align_up_rounds_to_the_next_multiple() {
        assert_eq!(align_up(0, 16), 0);
        assert_eq!(align_up(1, 16), 16);
        assert_eq!(align_up(16, 16), 16);
        assert_eq!(align_up(129, 128), 256);
    }

    #[test]
    fn probe_values_differ_between_threads() {
        // The host finds a thread that wrote another's slot only if their values differ.
        let mut values: std::vec::Vec<u32> = (0..1 << 16).map(probe_value).collect();
        values.sort_unstable();
        values.dedup();
        assert_eq!(values.len(), 1 << 16);
        assert_ne!(probe_value(0), 0, "a zeroed buffer does not pass");
    }
}
