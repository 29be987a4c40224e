//! The thread running the calling task: where it is, and its scratch memory.
//!
//! A task may resume on another lane, warp or block after a `taskwait!`, so nothing tied to
//! the thread can carry over a wait. Scratch memory is only reachable inside the closure given
//! to [`scratch`]: the closure cannot contain a wait (`#[gtap::function]` rejects waits in
//! closures) and nothing borrowed from the memory can leave it, so holding it across a wait
//! does not compile. The positions below are plain numbers: never carry them across a wait
//! either; the CPU executor's deterministic mode moves tasks around on purpose to catch
//! programs whose results depend on them.

use crate::arch;
use crate::lane::{SCRATCH, Scratch};

/// Runs `f` with the calling thread's scratch memory ([`crate::SCRATCH_WORDS`] words; shared memory
/// on the GPU). Its contents are unspecified when `f` starts: whatever the thread's previous
/// task left there.
///
/// ```
/// # fn inside_a_task() -> u32 {
/// let digits = gtap_device::thread::scratch(|s| {
///     s[0] = 4;
///     s[1] = 2;
///     s[0] * 10 + s[1]
/// });
/// # digits }
/// ```
///
/// A reference to the memory cannot escape the closure, so it cannot cross a wait:
///
/// ```compile_fail
/// let kept: &mut [u32; gtap_device::SCRATCH_WORDS] = gtap_device::thread::scratch(|s| s);
/// ```
///
/// # Panics
/// If called again inside `f` (the memory is already lent).
#[inline]
pub fn scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    let lane = arch::current_lane();
    // SAFETY: the calling lane owns its context; the borrow ends before `f` runs.
    let flags = unsafe { &mut lane.ctx().flags };
    assert!(
        *flags & SCRATCH == 0,
        "gtap::thread::scratch called while the scratch memory is lent"
    );
    *flags |= SCRATCH;
    // SAFETY: the scratch memory belongs to this thread and is lent to `f` alone (the flag above
    // stops a nested call); it is separate from the lane context that `task!` uses inside `f`.
    let r = f(unsafe { &mut *lane.scratch });
    // SAFETY: as above.
    unsafe { lane.ctx() }.flags &= !SCRATCH;
    r
}

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
    arch::current_lane().region().num_queues
}
