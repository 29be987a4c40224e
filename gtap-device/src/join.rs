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
//! * A finishing child writes its result into the parent's record, frees its own slot, and
//!   decrements the parent's `pending` with acquire-release ordering. The child that takes it
//!   from 1 to 0 owns the parent: the release sequence of the decrements makes every sibling's
//!   result visible to it. It stages the parent's continuation on its own warp (on the wait's
//!   queue), or, if the parent is `COMPLETING`, finishes the parent in turn.
//! * The root's completion raises the `finished` flag, which ends the launch: with the implicit
//!   wait, every task has finished by then.

use core::sync::atomic::Ordering;

use crate::lane::{LaneView, WROTE};
use crate::pool;
use crate::queue;
use crate::record::{COMPLETING, NONE};

/// The poll of task `id` returned a value (already written to its destination).
#[inline]
pub(crate) fn complete(lane: &LaneView, id: u32) {
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    if ctx.spawned > 0 {
        let h = lane.rt().header(id);
        // SAFETY: the task's own lane is the only one touching its header until its children
        // are published at the end of this step.
        unsafe {
            (*h).state = COMPLETING;
            (*h).pending.store(ctx.spawned, Ordering::Relaxed);
        }
        ctx.spawned = 0;
        ctx.flags |= WROTE;
        return;
    }
    finish(lane, id);
}

/// Task `id` and all its children are done: free it and notify its parent.
#[inline]
pub(crate) fn finish(lane: &LaneView, mut id: u32) {
    let rt = lane.rt();
    loop {
        // SAFETY: `id` is a finished task owned by this lane; nobody else reads its header now.
        let parent = unsafe { (*rt.header(id)).parent };
        pool::free(rt, id);
        if parent == NONE {
            rt.control().finish();
            return;
        }
        let p = rt.header(parent);
        // SAFETY: the parent cannot be freed before this decrement (it waits for us).
        if unsafe { (*p).pending.fetch_sub(1, Ordering::AcqRel) } != 1 {
            return;
        }
        // We were the last child: the acquire above makes the parent's header and all sibling
        // results visible to this lane, which now owns the parent.
        // SAFETY: as above; the parent is quiescent and owned by this lane.
        let (state, resume) = unsafe { ((*p).state, (*p).resume_queue as u32) };
        if state == COMPLETING {
            id = parent;
            continue;
        }
        queue::stage(lane, parent, resume);
        return;
    }
}
