//! Joins: counting a task's outstanding children and resuming it when the last one finishes.
//!
//! # Protocol
//!
//! * A poll counts the children it spawns in the lane context. Children are only staged during
//!   the poll and become runnable after it returns, so no child can finish before its parent's
//!   poll has ended.
//! * At a `taskwait!` with `k > 0` children outstanding the parent stores `pending = k` and its
//!   resume queue in its header (a relaxed and a plain store, published with the step like any
//!   record) and suspends. With `k == 0` the wait is a no-op.
//! * A task that returns with `k > 0` children spawned after its last wait is not finished yet:
//!   it stores `pending = k` and `resume = COMPLETING` (an implicit wait at the end of every
//!   task function, so that no child outlives the record its result is written into).
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
//!    (`pool::free`), and each parent's `pending` gets a relaxed decrement. The fold's fence,
//!    then that strong write: a *release pattern*. The lane that takes `pending` from 1 to 0
//!    owns the parent, and follows its decrement with an acquire fence: an *acquire pattern*
//!    (on the GPU one L1 invalidation, no membar; the other decrements invalidate nothing,
//!    where an `atom.acquire` invalidated the L1 at each of them). Every sibling's decrement
//!    is in the release sequence the owner's decrement read, so every sibling's result
//!    happens before the owner's next reads.
//! 4. The owner stages the parent's continuation on its own warp (on the wait's queue), for the
//!    next fold to run or publish (with its release fence); or, if the parent is `COMPLETING`,
//!    finishes the parent in turn in another round, whose decrement is acquire-release (it
//!    passes on what this lane acquired) and whose free is a release (this lane read the
//!    parent's header).
//! 5. The root's completion sets the stop word to finished (`Control::finish`), which ends the
//!    launch: with the implicit wait, every task has finished by then.
//!
//! # Owed decrements (block mode)
//!
//! A block's fold keeps one child as its next task and, in a joining launch, holds the others
//! unpublished until thieves see its queue empty (see "Lazy publication" in [`crate::queue`]).
//! When the kept child finishes while its siblings are still held, it cannot be its parent's
//! last child, and no other block can finish a sibling before this block publishes it. So
//! [`complete`] frees it and decrements the parent with a relaxed reduction, neither fenced
//! nor waited for, and the step neither fences nor folds (it staged nothing, and the held
//! ids wait for the next fold to be published):
//!
//! * A sibling that finishes on the same block decrements after it in program order, and the
//!   block's barriers order the child's result before the sibling's own release fence: the
//!   acquire of whoever takes `pending` to zero sees both.
//! * A sibling published later is published by a fold whose release fence follows the
//!   reduction, and a thief reads the published count and fences before it runs the sibling:
//!   the reduction and the child's result happen before the thief's decrement (so it reads a
//!   count the reduction has already lowered) and before whatever the parent's owner reads.
//!
//! The block knows its next task's siblings are held when the task it polled staged two or
//! more children on one queue (`WarpShared::siblings_held`, set by the verdict) and the
//! step's fold did not publish them (a lazy publication clears the flag); only the next
//! step, if it finishes the kept child, owes.
//!
//! # Local pairs (block mode, one queue)
//!
//! When the parent of an owed child waits for exactly two children on a launch's only queue,
//! the held sibling is its last child. If the block publishes nothing before that sibling
//! finishes, the whole join ran on this block: the sibling's decrement is a relaxed reduction
//! too, with no release fence before it and no acquire fence after it (the block's barriers
//! order both children's results before the parent's continuation, which the block runs
//! next), and the parent resumes on the only queue without a read of its header. The owed
//! step records the parent (`WarpShared::pair_parent`); a fold that publishes clears it, and
//! the sibling then finishes as any last child does. The acquire fence it saves is the one
//! that invalidates the multiprocessor's whole L1.
//!
//! # Recycled slots: `pending` is never written plainly
//!
//! A first-round decrement is relaxed and the fold's fence comes before it, so the
//! decrement's own write is released by nothing. When it is not the last one, nothing
//! orders it before what follows on the lane that takes `pending` to zero: that lane resumes
//! the parent, which may finish and free its slot, and another warp writes a new record into
//! it, all while (in the memory model) the earlier decrement has not "happened before" the new
//! record. A plain write of the new record's `pending` would then race with that decrement
//! (ThreadSanitizer reported exactly this on the stress test). Making the decrement
//! acquire-release would order it, at the cost of a membar per finished task on the GPU.
//! Instead `pending` is only ever accessed atomically: [`crate::record::write`] initialises it
//! with a relaxed store (`st.relaxed.gpu`: one more store instruction per spawn than the wide
//! plain store it was part of, to the same sector, and no membar), the wait
//! and the return set it with relaxed stores, children decrement it. Atomic accesses do not
//! race, and the new value is still the one later reads see: the owner's decrement read the
//! earlier one (so follows it in the word's modification order) and happens before the new
//! record's store (through the parent's resumption and the slot's release-acquire handoff in
//! [`crate::pool`]), so by write-write coherence the new store follows every old decrement.
//! The other header fields are only read by the task's owner, after the handoffs that order
//! them.

use core::sync::atomic::Ordering;

use crate::arch::{self, Lanes, Warp};
use crate::lane::LaneView;
use crate::pool;
use crate::queue;
use crate::record::{COMPLETING, NONE, SPAWN_QUEUE};

/// [`Done::parent`] in a `no_taskwait` launch: the slot is freed, nobody is notified. Never a
/// task id (ids stay below `u32::MAX - 1`: `Geometry::check`).
pub(crate) const DETACHED: u32 = NONE - 1;

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
/// wait are still running (the last of them will finish it). `DETACH`: the launch is a
/// `no_taskwait` one ([`crate::region::Region::no_taskwait`]).
#[inline]
pub(crate) fn returned<const DETACH: bool>(lane: &LaneView, id: u32) -> Option<u32> {
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    let region = lane.region();
    if DETACH {
        // Nothing joins in such a launch: the task is finished, whatever it spawned, and has no
        // parent to notify (see "Kernels without waits" in `crate::scheduler`).
        ctx.spawned = 0;
        return Some(DETACHED);
    }
    let h = region.header(id);
    if ctx.spawned > 0 {
        // SAFETY: the task's own lane is the only one touching its header until its children
        // are published at the end of this step.
        unsafe {
            (*h).resume = COMPLETING;
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
/// `DETACH`: the launch is a `no_taskwait` one, whose finished tasks have no parent to notify.
/// `owed`: a block's task whose siblings the block holds unpublished, or the last child of a
/// local pair, with no fence before (see "Owed decrements" and "Local pairs" in the module
/// docs); it stages nothing.
pub(crate) fn complete<const DETACH: bool>(warp: &Warp, done: Lanes<Done>, owed: bool) {
    let region = warp.region();
    let mut job = done;
    // The slots of the step's own tasks were released by the fold's fence. In a launch whose
    // tasks detach the fold fences only when it publishes, so a free releases by itself (only
    // on the ring path: an own slot stays with its worker, see `crate::pool`). A COMPLETING
    // parent was read after this lane's acquire, so its slot is freed with a release.
    let mut free_order = if DETACH {
        Ordering::Release
    } else {
        Ordering::Relaxed
    };
    // First round: the fold's fence released this step's results, so each decrement is
    // relaxed and only the last one acquires, with a fence after it (on the GPU one L1
    // invalidation, no membar; a decrement that is not the last invalidates nothing). A
    // cascade's decrement must also release what this lane acquired: acquire-release.
    let mut notify = Ordering::Relaxed;
    loop {
        let owned = warp.each(job, |_, d| {
            if d.task == NONE {
                return NONE;
            }
            let lane = arch::current_lane();
            // An owed free has no fence before it: a slot borrowed from another warp goes back
            // to its owner's ring with a release (an own slot stays with the block, whose
            // barriers ordered its accesses).
            pool::free(
                &lane,
                d.task,
                if owed { Ordering::Release } else { free_order },
            );
            if DETACH && d.parent == DETACHED {
                return NONE;
            }
            if d.parent == NONE {
                region.control().finish();
                return NONE;
            }
            let p = region.header(d.parent);
            if owed {
                // SAFETY: the parent waits for this task's siblings, so its record outlives
                // the reduction; they are not finished, so it is not the last decrement, or
                // it is a local pair's, whose parent this block resumes without reading it.
                unsafe { (*p).pending.add(1u32.wrapping_neg(), Ordering::Relaxed) };
                return NONE;
            }
            // SAFETY: the parent cannot be freed before this decrement (it waits for us).
            let last = unsafe { (*p).pending.fetch_sub(1, notify) } == 1;
            if !last {
                return NONE;
            }
            if notify == Ordering::Relaxed {
                // The acquire pattern (the decrement read the count, then the fence): the
                // lane that took the count to zero owns the parent; its header and every
                // sibling's result are visible to it from here on.
                arch::fence_acquire();
            }
            d.parent
        });
        if !warp.any(Warp::map(owned, |p| p != NONE)) {
            return;
        }
        job = warp.each(owned, |_, parent| {
            if parent == NONE {
                return Done::NOTHING;
            }
            let lane = arch::current_lane();
            let p = region.header(parent);
            // SAFETY: the parent is quiescent and owned by this lane. All three fields are used
            // on both paths, so they are read together: one wait for memory, not two.
            let (resume, spawn_queue, grandparent) =
                unsafe { ((*p).resume, (*p).queue, (*p).parent) };
            let completing = resume == COMPLETING;
            if !completing {
                let q = if resume == SPAWN_QUEUE {
                    spawn_queue
                } else {
                    resume
                };
                queue::stage(&lane, parent, q);
            }
            // Without a task, `parent` is ignored.
            Done {
                task: if completing { parent } else { NONE },
                parent: grandparent,
            }
        });
        free_order = Ordering::Release;
        notify = Ordering::AcqRel;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::vec::Vec;

    use super::*;
    use crate::region::Region;
    use crate::testing::{Launch, geometry};

    /// The warp that runs the joins; the tasks belong to warp [`OWNER`], so each free goes
    /// through its ring and can be read back.
    const RUNNER: u32 = 0;
    const OWNER: u32 = 1;

    /// Sets up the header of task `id` as a suspended (or, with `resume = COMPLETING`,
    /// completing) task.
    fn set_header(region: &Region, id: u32, parent: u32, pending: u32, resume: u32) {
        let h = region.header(id);
        // SAFETY: the slot of `id` lies in the launch's region and no task runs in it; only
        // plain fields are written (the poll pointer is never read by `complete`).
        unsafe {
            (*h).parent = parent;
            (*h).pending.store(pending, Ordering::Relaxed);
            (*h).resume = resume;
        }
    }

    fn pending(region: &Region, id: u32) -> u32 {
        // SAFETY: as in `set_header`.
        unsafe { (*region.header(id)).pending.load(Ordering::Relaxed) }
    }

    /// `done` on the given lanes, nothing elsewhere.
    fn lanes(done: &[(usize, u32, u32)]) -> Lanes<Done> {
        let mut out = Warp::splat(Done::NOTHING);
        for &(lane, task, parent) in done {
            out[lane] = Done { task, parent };
        }
        out
    }

    /// The ids the owner's free-id ring holds, in the order they were freed.
    fn freed_ids(owner: &Warp, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        owner.each(Warp::splat(()), |lane, ()| {
            if lane == 0 {
                out.extend((0..n).map(|_| pool::alloc(&arch::current_lane())));
            }
        });
        out.into_iter().map(|id| id.expect("a freed id")).collect()
    }

    /// A launch with the owner's free-id ring started just below 2^32, and its two warps.
    fn setup() -> (&'static Launch, Warp, Warp) {
        let launch = Launch::leak(geometry(2, 64, 2));
        let region = launch.region();
        let (runner, owner) = (
            Warp::new(region, RUNNER, None),
            Warp::new(region, OWNER, None),
        );
        pool::preset_ring(region, &owner.shared().pool, OWNER, u32::MAX - 1);
        (launch, runner, owner)
    }

    #[test]
    fn the_last_child_stages_the_parents_continuation() {
        let (launch, runner, owner) = setup();
        let region = launch.region();
        let [p, c1, c2, c3] = [0, 1, 2, 3].map(|i| region.task_id(OWNER, i));
        set_header(region, p, NONE, 3, 1);
        complete::<false>(&runner, lanes(&[(0, c1, p), (7, c2, p)]), false);
        assert_eq!(pending(region, p), 1);
        assert!(!runner.shared().has_staged(2), "one child is still running");
        complete::<false>(&runner, lanes(&[(3, c3, p)]), false);
        assert_eq!(pending(region, p), 0);
        let shared = runner.shared();
        assert_eq!([shared.staged[0].load(), shared.staged[1].load()], [0, 1]);
        assert_eq!(
            shared.keep[1][0].load(),
            p,
            "staged on the wait's resume queue"
        );
        assert_eq!(
            region.pool_meta(OWNER).frees.load(Ordering::Relaxed),
            (u32::MAX - 1).wrapping_add(3),
            "the ring position crossed 2^32"
        );
        assert_eq!(freed_ids(&owner, 3), [c1, c2, c3]);
        assert!(!region.control().finished());
    }

    /// Continuations land on the warp of the last child, whoever owns the parents: here 32
    /// parents of another warp resume on a queue of 16 entries that already has a full kept
    /// batch. A queue overflow once; now 16 go to the ring and 16 to the overflow list.
    #[test]
    fn continuations_beyond_a_full_ring_go_to_the_overflow_list() {
        let launch = Launch::leak(geometry(2, 64, 4));
        let region = launch.region();
        let runner = Warp::new(region, RUNNER, None);
        runner.each(Warp::splat(()), |lane, ()| {
            queue::stage(&arch::current_lane(), region.task_id(RUNNER, lane), 1)
        });
        let parents: Vec<u32> = (0..32).map(|i| region.task_id(OWNER, i)).collect();
        let mut done = Warp::splat(Done::NOTHING);
        for (lane, &p) in parents.iter().enumerate() {
            set_header(region, p, NONE, 1, 1);
            done[lane] = Done {
                task: region.task_id(OWNER, 32 + lane as u32),
                parent: p,
            };
        }
        complete::<false>(&runner, done, false);
        assert_eq!(launch.error(), None);
        let batch = queue::fold::<{ queue::KEEP }, 0, false>(&runner, false);
        assert_eq!(batch.len, 32, "the kept batch");
        assert_eq!(
            region.queue_meta(RUNNER, 1).count.load(Ordering::Relaxed),
            16
        );
        let mut resumed: Vec<u32> = (0..16).map(|k| queue::read(region, RUNNER, 1, k)).collect();
        loop {
            let n = queue::take_overflow(region, runner.shared(), queue::KEEP) as usize;
            if n == 0 {
                break;
            }
            resumed.extend((0..n).map(|k| runner.shared().keep[0][k].load()));
        }
        resumed.sort_unstable();
        assert_eq!(resumed, parents, "every parent resumes exactly once");
    }

    #[test]
    fn an_owed_decrement_frees_the_task_and_leaves_the_parent_to_its_sibling() {
        let (launch, runner, owner) = setup();
        let region = launch.region();
        let [p, c1, c2] = [0, 1, 2].map(|i| region.task_id(OWNER, i));
        set_header(region, p, NONE, 2, 1);
        complete::<false>(&runner, lanes(&[(0, c1, p)]), true);
        assert_eq!(pending(region, p), 1);
        assert!(!runner.shared().has_staged(2), "nothing resumes yet");
        complete::<false>(&runner, lanes(&[(0, c2, p)]), false);
        assert_eq!(pending(region, p), 0);
        assert_eq!(
            runner.shared().keep[1][0].load(),
            p,
            "the sibling's decrement was the last"
        );
        assert_eq!(freed_ids(&owner, 2), [c1, c2]);
    }

    #[test]
    fn a_wait_without_a_queue_clause_resumes_on_the_spawn_queue() {
        let (launch, runner, _owner) = setup();
        let region = launch.region();
        let [p, c] = [0, 1].map(|i| region.task_id(OWNER, i));
        set_header(region, p, NONE, 1, SPAWN_QUEUE);
        // SAFETY: as in `set_header`.
        unsafe { (*region.header(p)).queue = 1 };
        complete::<false>(&runner, lanes(&[(5, c, p)]), false);
        let shared = runner.shared();
        assert_eq!([shared.staged[0].load(), shared.staged[1].load()], [0, 1]);
        assert_eq!(shared.keep[1][0].load(), p);
    }

    #[test]
    fn a_completing_parent_finishes_and_notifies_its_own_parent() {
        let (launch, runner, owner) = setup();
        let region = launch.region();
        let [g, p, c1, c2] = [0, 1, 2, 3].map(|i| region.task_id(OWNER, i));
        set_header(region, g, NONE, 1, 0);
        set_header(region, p, g, 2, COMPLETING);
        complete::<false>(&runner, lanes(&[(4, c1, p), (9, c2, p)]), false);
        assert_eq!([pending(region, p), pending(region, g)], [0, 0]);
        let shared = runner.shared();
        assert_eq!([shared.staged[0].load(), shared.staged[1].load()], [1, 0]);
        assert_eq!(shared.keep[0][0].load(), g);
        assert_eq!(
            freed_ids(&owner, 3),
            [c1, c2, p],
            "the parent is freed after its children"
        );
    }

    #[test]
    fn a_completing_parent_with_children_left_waits() {
        let (launch, runner, _owner) = setup();
        let region = launch.region();
        let [g, p, c1] = [0, 1, 2].map(|i| region.task_id(OWNER, i));
        set_header(region, g, NONE, 1, 0);
        set_header(region, p, g, 2, COMPLETING);
        complete::<false>(&runner, lanes(&[(0, c1, p)]), false);
        assert_eq!([pending(region, p), pending(region, g)], [1, 1]);
        assert!(!runner.shared().has_staged(2));
        assert_eq!(
            region.pool_meta(OWNER).frees.load(Ordering::Relaxed),
            u32::MAX,
            "only the child was freed"
        );
    }

    #[test]
    fn the_root_finishing_ends_the_launch() {
        let (launch, runner, owner) = setup();
        let region = launch.region();
        let root = region.task_id(OWNER, 0);
        complete::<false>(&runner, lanes(&[(2, root, NONE)]), false);
        assert!(region.control().finished());
        assert!(!region.control().aborted());
        assert_eq!(freed_ids(&owner, 1), [root]);
    }

    #[test]
    fn a_completing_root_finishes_through_the_cascade() {
        let (launch, runner, owner) = setup();
        let region = launch.region();
        let [root, c] = [0, 1].map(|i| region.task_id(OWNER, i));
        set_header(region, root, NONE, 1, COMPLETING);
        complete::<false>(&runner, lanes(&[(31, c, root)]), false);
        assert!(region.control().finished());
        assert!(!runner.shared().has_staged(2));
        assert_eq!(freed_ids(&owner, 2), [c, root]);
    }
}
