//! Where the calling task runs. Only meaningful until the task's next `taskwait!`: a task may
//! resume on another lane, warp or block, so never carry these values across a wait (the CPU
//! executor's deterministic mode moves tasks around on purpose to catch programs that do).

use crate::arch;

/// Lane (0..32) of the thread running the calling task.
#[inline(always)]
pub fn lane() -> u32 {
    arch::lane_index()
}

/// Global index of the warp running the calling task.
#[inline(always)]
pub fn warp() -> u32 {
    arch::warp_index()
}

/// Index of the thread block running the calling task.
#[inline(always)]
pub fn block() -> u32 {
    arch::block_index()
}

/// Index, within its block, of the thread running the calling task.
#[inline(always)]
pub fn thread() -> u32 {
    arch::thread_index()
}

/// Number of divergence-aware queues the runtime was configured with: `queue(...)` clauses
/// must name a queue below it.
#[inline(always)]
pub fn num_queues() -> u32 {
    arch::current_lane().rt().num_queues
}
