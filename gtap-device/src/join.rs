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
//! # Finishing: fences per step, not per task
//!
//! Ordering on the GPU costs a fence each time, so finishing is done by the whole warp after
//! the step's polls, with fences shared by all 32 lanes (see [`crate::scheduler`]):
//!
//! 1. During the poll a finishing task wrote its result into its parent's record (or the root's
//!    result area); `returned` read its parent from its header.
//! 2. The fold's release fence, executed by every lane: the results, and every access to the
//!    finished tasks' slots, happen before what follows.
//! 3. [`complete`]: each finished slot goes back to its pool with relaxed operations
//!    (`pool::free`), and each parent's `pending` gets an acquire decrement. The fold's fence,
//!    then that strong write: a *release pattern*. The lane that takes `pending` from 1 to 0
//!    owns the parent, and its decrement is an *acquire* (on the GPU `atom.acquire`: the RMW
//!    plus an L1 invalidation, no membar). Every sibling's decrement is in the release
//!    sequence it read, so every sibling's result happens before the owner's next reads.
//! 4. The owner stages the parent's continuation on its own warp (on the wait's queue), for the
//!    next fold to run or publish (with its release fence); or, if the parent is `COMPLETING`,
//!    finishes the parent in turn in another round, whose decrement is acquire-release (it
//!    passes on what this lane acquired) and whose free is a release (this lane read the
//!    parent's header).
//! 5. The root's completion sets the stop word to finished (`Control::finish`), which ends the
//!    launch: with the implicit wait, every task has finished by then.

use core::sync::atomic::Ordering;

use crate::arch::{self, Lanes, Warp};
use crate::lane::LaneView;
use crate::pool;
use crate::queue;
use crate::record::{COMPLETING, NONE};

/// A finished task whose slot must be freed and whose parent must be notified.
#[derive(Clone, Copy)]
pub(crate) struct Done {
    /// The finished task, or [`NONE`].
    pub(crate) task: u32,
    /// Its parent, [`NONE`] for the root.
    pub(crate) parent: u32,
}

impl Done {
    /// No task finished on this lane.
    pub(crate) const NOTHING: Done = Done {
        task: NONE,
        parent: NONE,
    };
}

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
        return None;
    }
    // SAFETY: as above.
    Some(unsafe { (*h).parent })
}

/// Warp, after the fold's release fence: frees the tasks that finished this step, notifies
/// their parents, and stages each parent whose last child this was (see the module docs).
pub(crate) fn complete(warp: &Warp, done: Lanes<Done>) {
    let rt = warp.runtime();
    let mut job = done;
    // The slots of the step's own tasks were released by the fold's fence; a COMPLETING parent
    // was read after this lane's acquire, so its slot is freed with a release.
    let mut free_order = Ordering::Relaxed;
    // First round: the fold's fence released this step's results, so each decrement only
    // acquires (on the GPU `atom.acquire`: the RMW and an L1 invalidation, no membar). A
    // cascade's decrement must also release what this lane acquired: acquire-release.
    let mut notify = Ordering::Acquire;
    loop {
        let owned = warp.each(job, |_, d| {
            if d.task == NONE {
                return NONE;
            }
            let lane = arch::current_lane();
            pool::free(&lane, d.task, free_order);
            if d.parent == NONE {
                rt.control().finish();
                return NONE;
            }
            let p = rt.header(d.parent);
            // SAFETY: the parent cannot be freed before this decrement (it waits for us).
            // Acquire: the lane that takes the count to zero owns the parent; its header and
            // every sibling's result are visible to it from here on.
            let last = unsafe { (*p).pending.fetch_sub(1, notify) } == 1;
            if last { d.parent } else { NONE }
        });
        if !warp.any(Warp::map(owned, |p| p != NONE)) {
            return;
        }
        job = warp.each(owned, |_, parent| {
            if parent == NONE {
                return Done::NOTHING;
            }
            let lane = arch::current_lane();
            let p = rt.header(parent);
            // SAFETY: the parent is quiescent and owned by this lane.
            let (state, resume, grandparent) =
                unsafe { ((*p).state, (*p).resume_queue as u32, (*p).parent) };
            if state == COMPLETING {
                return Done {
                    task: parent,
                    parent: grandparent,
                };
            }
            queue::stage(&lane, parent, resume);
            Done::NOTHING
        });
        free_order = Ordering::Release;
        notify = Ordering::AcqRel;
    }
}
