//! Joins: counting a task's outstanding children and resuming it when the last one finishes.
//!
//! # Protocol
//!
//! * A poll counts the children it spawns in the lane context. Children are only staged during
//!   the poll and become runnable after it returns, so no child can finish before its parent's
//!   poll has ended.
//! * At a `taskwait!` with `k > 0` children outstanding the parent stores `pending = k` and its
//!   resume queue in its header (plain stores, published with the step like any record) and
//!   suspends. With `k == 0` the wait is a no-op.
//! * A task that returns with `k > 0` children spawned after its last wait is not finished yet:
//!   it stores `pending = k` and `state = COMPLETING` (an implicit wait at the end of every task
//!   function, so that no child outlives the record its result is written into).
//!
//! # Finishing, and the one fence per task
//!
//! Ordering on the GPU costs a fence each time, so a finishing task uses the fence its lane
//! issues after every poll that wrote something ([`crate::scheduler`]) for everything it must
//! publish, and otherwise relaxed operations:
//!
//! 1. The poll wrote the result into the parent's record (or the root's result area), and the
//!    lane read what it needs of the task's header (its parent).
//! 2. `fence.acq_rel` (the lane's fence): the result, and every read of the task's own slot,
//!    happen before what follows.
//! 3. The slot goes back to its pool with relaxed operations (`pool::free`).
//! 4. A relaxed decrement of the parent's `pending`. Fence, then a strong write: a *release
//!    pattern*. The child that takes `pending` from 1 to 0 owns the parent and issues
//!    `fence.acq_rel` after its decrement: an *acquire pattern*. Every sibling's decrement is
//!    in the release sequence it read, so every sibling's result happens before its next reads.
//! 5. The owner stages the parent's continuation on its own warp (on the wait's queue), then
//!    fences again so the ring entry is visible before the warp publishes it; or, if the parent
//!    is `COMPLETING`, finishes the parent in turn (freeing it with a release, since this lane
//!    read its header after the last fence).
//! 6. The root's completion raises the `finished` flag, which ends the launch: with the
//!    implicit wait, every task has finished by then.

use core::sync::atomic::Ordering;

use crate::arch;
use crate::lane::{LaneView, WROTE};
use crate::pool;
use crate::queue;
use crate::record::{COMPLETING, NONE};

/// The poll of task `id` returned a value (already written to its destination). Returns the
/// task's parent if the task is finished now, or `None` if children it spawned after its last
/// wait are still running (the last of them will finish it).
#[inline]
pub(crate) fn returned(lane: &LaneView, id: u32) -> Option<u32> {
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    let h = lane.rt().header(id);
    if ctx.spawned > 0 {
        // SAFETY: the task's own lane is the only one touching its header until its children
        // are published at the end of this step.
        unsafe {
            (*h).state = COMPLETING;
            (*h).pending.store(ctx.spawned, Ordering::Relaxed);
        }
        ctx.spawned = 0;
        ctx.flags |= WROTE;
        return None;
    }
    // SAFETY: as above.
    Some(unsafe { (*h).parent })
}

/// Task `id`, whose parent is `parent`, and all its children are done: free it and notify the
/// parent. The calling lane has fenced since it wrote the result and read the header (step 2).
#[inline]
pub(crate) fn finish(lane: &LaneView, mut id: u32, mut parent: u32) {
    let rt = lane.rt();
    let mut free_order = Ordering::Relaxed;
    loop {
        pool::free(lane, id, free_order);
        if parent == NONE {
            rt.control().finish();
            return;
        }
        let p = rt.header(parent);
        // SAFETY: the parent cannot be freed before this decrement (it waits for us).
        if unsafe { (*p).pending.fetch_sub(1, Ordering::Relaxed) } != 1 {
            return;
        }
        // Acquire: we were the last child and own the parent; its header and every sibling's
        // result are visible after this fence.
        arch::fence();
        // SAFETY: the parent is quiescent and owned by this lane.
        let (state, resume, grandparent) =
            unsafe { ((*p).state, (*p).resume_queue as u32, (*p).parent) };
        if state == COMPLETING {
            (id, parent, free_order) = (parent, grandparent, Ordering::Release);
            continue;
        }
        queue::stage(lane, parent, resume);
        // Release: the ring entry is visible before the warp publishes it.
        arch::fence();
        return;
    }
}
