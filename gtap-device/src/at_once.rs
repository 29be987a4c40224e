//! A child polled at once, in the spawning lane, instead of queued: lazy task creation on the
//! parallel CPU executor, and child-first schedules in the deterministic one.
//!
//! On a GPU a spawn is cheap next to what a warp gains from running 32 tasks side by side; on a
//! CPU core a task's trip through the scheduler (a step, the fold, a steal, the join) costs far
//! more than a small task body. So the parallel CPU executor
//! ([`OPT_LAZY_SPAWN`](crate::abi::OPT_LAZY_SPAWN)) runs children
//! *work-first* while its warp already has work published for other threads to steal:
//!
//! 1. The child gets a task slot and its record as usual ([`record::write`]), but is not staged.
//! 2. The spawning lane polls it at once, nested inside the parent's poll, with its own lane
//!    context (task, spawn count, flags) saved and restored around the poll.
//! 3. If the child finished (it returned, and nothing it spawned is outstanding), its result is
//!    in its destination, the parent does not count the child, and its slot is kept for the
//!    nest's next child (the spares go back to the pool when the nest ends). Otherwise the child is a task like any other: suspended at a wait (its last child
//!    will stage its continuation) or completing; the parent counts it among the children its
//!    next wait waits for, and the join protocol takes over ([`crate::join`]).
//!
//! Its own spawns inside are candidates for the same treatment, so a thread runs whole subtrees
//! with no queue traffic, while the tree's top, spawned the ordinary way when the warp has
//! nothing published, keeps the other threads busy. Nesting stops at [`MAX_NESTING`] levels and
//! where the thread's stack would not hold another level (the test of [`crate::task`]'s inline
//! children): then the child is spawned as usual, and its parent, a real task, may suspend;
//! nothing fails for lack of stack. A thread whose children polled at once mostly outlive
//! their poll stops nesting for the rest of the launch ([`worth_it`]).
//!
//! Why this is sound: a nested child's descendants are staged on the spawning warp and run only
//! after the current step's poll, as every child does; a child that finished inside its
//! parent's poll has no outstanding children and notifies no one. Completing a child before its
//! parent continues is one of the schedules the rules allow (it is what an inline child does).
//! The GPU never nests (this module is host-only).
//!
//! **Child-first schedules.** The deterministic executor uses the same mechanism to explore
//! schedules ([`OPT_CHILD_FIRST`](crate::abi::OPT_CHILD_FIRST)): at spawns its seed picks, the
//! child runs at once, before its parent goes on, where the queues alone always run a parent up
//! to its wait first. A program that reads what a child writes before the wait that joins it
//! (through a buffer, where the macros cannot see it) then gives different results under
//! different seeds, and `check_schedules` reports it.

use core::future::Future;
use core::sync::atomic::Ordering;

use crate::join;
use crate::lane::{FAILED, INLINE, LaneView};
use crate::math::XorShift64;
use crate::record::NONE;
use crate::task::{TaskFunction, inline_stack_need};
use crate::{pool, queue, record};

/// Published ids of its warp from which a spawn polls its child at once: enough that a thief
/// finds work without this warp's help.
const SURPLUS: u32 = 4;

/// Most children polled at once inside one another on a thread. Unbounded nesting would turn
/// the schedule depth-first, which a label-correcting search (an asynchronous BFS lowering
/// depths) pays for with many re-visits: a few levels keep most of the gain on fork-join
/// trees (2^8 tasks per nest on a binary tree) and keep the order near the queues' own.
const MAX_NESTING: u32 = 8;

/// Children a thread polls at once before it judges whether that pays (see [`worth_it`]).
const TRIAL: u32 = 256;

std::thread_local! {
    /// Children being polled at once on this thread, inside one another.
    static NESTING: core::cell::Cell<u32> = const { core::cell::Cell::new(0) };
    /// Task ids of children that finished inside a nest, kept for the nest's next child
    /// instead of a trip through the pool (given back when the nest ends).
    static SPARES: core::cell::RefCell<Spares> = const { core::cell::RefCell::new(Spares::EMPTY) };
    /// Children this thread has polled at once (in this launch: the executor's worker threads
    /// live for one launch), and how many of them returned with children still outstanding.
    static OUTCOMES: core::cell::Cell<(u32, u32)> = const { core::cell::Cell::new((0, 0)) };
    /// The deterministic executor's generator of child-first choices ([`coin`]), once seeded.
    static COIN: core::cell::Cell<Option<XorShift64>> = const { core::cell::Cell::new(None) };
}

/// The deterministic executor's choice for one spawn: whether its child runs first. Drawn from
/// a generator seeded with the launch's seed on the thread's first draw (the deterministic
/// executor runs a launch on a thread of its own, so the draws are the same every run).
fn coin(seed: u32) -> bool {
    let mut rng = COIN
        .get()
        .unwrap_or(XorShift64::new((seed as u64) << 32 | 0x2545_f491));
    let heads = rng.next_u64() >> 63 == 0;
    COIN.set(Some(rng));
    heads
}

/// Whether polling children at once still pays on this thread. It pays for fork-join
/// recursion, where a child waits for its own children (finishing inside the poll, or
/// suspending at its wait where the nesting stopped): the parent would wait for it anyway.
/// When most children polled at once return with their own children still outstanding, the
/// tasks spawn without waiting (a graph search), and nesting only turns the order depth-first,
/// which a label-correcting search pays for with re-visits: then the thread stops, after
/// [`TRIAL`] children.
fn worth_it() -> bool {
    let (polled, detached) = OUTCOMES.get();
    polled < TRIAL || detached * 2 <= polled
}

/// Records how a child polled at once ended.
fn record(end: End) {
    let (polled, detached) = OUTCOMES.get();
    OUTCOMES.set((
        polled.saturating_add(1),
        detached.saturating_add(u32::from(end == End::Detached)),
    ));
}

/// How a child polled at once came out of its poll.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    /// Returned, with nothing it spawned outstanding: done.
    Finished,
    /// Suspended at a wait for children still outstanding.
    Waiting,
    /// Returned with children it spawned still outstanding (it finishes with the last).
    Detached,
}

/// A few free task ids of the calling thread's warp (see [`SPARES`]).
struct Spares {
    ids: [u32; SPARE_IDS],
    len: usize,
}

/// Ids a thread keeps in [`SPARES`]: one per level of nesting and a few more.
const SPARE_IDS: usize = 2 * MAX_NESTING as usize;

impl Spares {
    const EMPTY: Spares = Spares {
        ids: [0; SPARE_IDS],
        len: 0,
    };
}

/// A spare id for a child polled at once, counted as handed out like any allocation.
fn take_spare(lane: &LaneView) -> Option<u32> {
    let id = SPARES.with_borrow_mut(|s| {
        s.len = s.len.checked_sub(1)?;
        Some(s.ids[s.len])
    })?;
    pool::count_reuse(lane);
    Some(id)
}

/// Keeps the id of a child that finished inside the nest; gives it back to the pool when
/// there is no room.
fn keep_spare(lane: &LaneView, id: u32) {
    let kept = SPARES.with_borrow_mut(|s| {
        let room = s.len < SPARE_IDS;
        if room {
            s.ids[s.len] = id;
            s.len += 1;
        }
        room
    });
    if !kept {
        free(lane, id);
    }
}

/// Gives every spare id back to the pool (the nest ended).
fn free_spares(lane: &LaneView) {
    let spares = SPARES.with_borrow_mut(|s| core::mem::replace(s, Spares::EMPTY));
    for &id in &spares.ids[..spares.len] {
        free(lane, id);
    }
}

/// Returns a finished child's id to its pool.
fn free(lane: &LaneView, id: u32) {
    // Release: this thread's accesses to the slot come before its next owner's.
    pool::free(lane, id, Ordering::Release);
}

/// One level of [`NESTING`], left when dropped, also when a panic in the child unwinds
/// through it (the executor catches it at the task's own poll and aborts the launch, and the
/// thread may run another launch).
struct Nested;

impl Nested {
    fn enter() -> Self {
        NESTING.set(NESTING.get() + 1);
        Nested
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        NESTING.set(NESTING.get() - 1);
    }
}

/// Spawns child `fut` (of `T`, resuming on queue `q`, result into `dst`) by polling it at once,
/// when the executor asks for it and the warp and the stack allow; else hands the future back
/// for an ordinary spawn.
#[inline]
pub(crate) fn spawn<T, F>(lane: &LaneView, q: u32, dst: *mut T::Output, fut: F) -> Option<F>
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    let region = lane.region();
    let (lazy, child_first) = (region.lazy_spawn(), region.child_first());
    if !lazy && !child_first {
        return Some(fut);
    }
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    let nesting = NESTING.get();
    // Only a task's spawns: the root is created by the kernel's entry, and its end must go
    // through the scheduler's joins, which finish the launch.
    if ctx.task == NONE
        || ctx.flags & INLINE != 0
        || nesting >= MAX_NESTING
        || inline_stack_need::<F>(ctx) > region.stack_bytes
    {
        return Some(fut);
    }
    // The warp's queues are read where a nest would start only: inside one, the thieves' hold
    // on those cache lines is not worth a read per child.
    if lazy && (!worth_it() || (nesting == 0 && queue::published(region, lane.warp) < SURPLUS)) {
        return Some(fut);
    }
    if child_first && !coin(region.seed) {
        return Some(fut);
    }
    let Some(id) = take_spare(lane)
        .or_else(|| pool::take_ready(lane))
        .or_else(|| pool::alloc_slow(lane))
    else {
        return Some(fut);
    };
    // SAFETY: `id` was just allocated to this lane, and `spawn_future` checked that the record
    // fits a slot.
    unsafe { record::write::<T, F>(region.header(id), fut, dst, ctx.task, q) };
    lane.shared().pool.count_at_once();
    let end = poll_nested(lane, id);
    record(end);
    if end == End::Finished {
        keep_spare(lane, id);
    } else {
        // SAFETY: as above.
        unsafe { lane.ctx() }.spawned += 1;
    }
    if nesting == 0 {
        free_spares(lane);
    }
    None
}

/// Polls record `id`, just written by this lane, nested in the lane's current poll.
#[inline(never)]
fn poll_nested(lane: &LaneView, id: u32) -> End {
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    let saved = (ctx.task, ctx.spawned, ctx.flags, ctx.info);
    ctx.task = id;
    ctx.spawned = 0;
    ctx.flags = 0;
    let h = lane.region().header(id);
    let nested = Nested::enter();
    // SAFETY: the record was written by `record::write` with its poll shim and is this lane's;
    // nobody else can see it (it is in no queue).
    let returned = unsafe { ((*h).poll)(h) };
    drop(nested);
    let finished = || with_detach!(lane.region().no_taskwait(), D => join::returned::<D>(lane, id));
    let end = if !returned {
        End::Waiting
    } else if finished().is_some() {
        End::Finished
    } else {
        End::Detached
    };
    // SAFETY: as above; the nested poll's frames are gone.
    let ctx = unsafe { lane.ctx() };
    let failed = ctx.flags & FAILED;
    (ctx.task, ctx.spawned, ctx.flags, ctx.info) = saved;
    // A device error inside the child must stop the parent at its next wait, as if the parent's
    // own spawn had failed.
    ctx.flags |= failed;
    end
}
