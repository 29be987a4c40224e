//! The work-first CPU executor ([`Mode::WorkFirst`](super::Mode::WorkFirst)): task functions
//! run the way `rayon::join` runs closures, for programs that fall back to the CPU.
//!
//! The GPU scheduler pays for its warps, queues, pools and joins with the width of a GPU; on a
//! CPU core the same trip costs far more than a small task body. This executor keeps the
//! semantics (every child's result is in its destination when its parent's `taskwait!`
//! returns; a task that returns with children outstanding finishes with them) and drops the
//! machinery:
//!
//! * **Spawn.** `task!` writes the child's future and destination into the spawning thread's
//!   [`Arena`] and pushes a [`Child`] onto the thread's child stack. Nothing runs yet.
//! * **Wait.** `taskwait!` takes the task's children off the stack and runs them with
//!   `rayon_core::join`, halving the list: the first half on this thread, at once, the second
//!   stealable by idle threads. A child runs to completion in one poll, because its own waits
//!   run its own children the same way, so no task ever suspends: the parent's wait returns
//!   with every result written, and the parent goes on in the same poll.
//! * **Return.** Children spawned after a task's last wait (spawns it never waits for, as in an
//!   asynchronous BFS or an N-Queens that counts into a buffer) are *detached*: the task
//!   finishes with them, as the rules say. Up to [`MAX_DETACHED_NESTING`] levels deep they run
//!   as an implicit wait at the task's return, as cheap as a fork-join tree. Deeper, their
//!   records move to the heap and they go to `rayon_core::spawn_fifo` as one job, instead of a
//!   recursion as deep as a graph's longest path; a [`Latch`] of the task counts them out,
//!   then counts the task out of its parent's latch, up to the innermost wait, which returns
//!   when its latch is back to zero, running other work meanwhile (`rayon_core::yield_now`).
//!   The jobs' FIFO order keeps a label-correcting search near breadth-first, which it needs
//!   against re-visits.
//!
//! Each OS thread's children and arena are used last-in first-out: a wait runs children above
//! its own task's, and a thread that helps while its join waits for a stolen half runs whole
//! tasks that pop what they pushed before returning. So a wait resets the arena to where its
//! first child's record began, and the records of a stolen child stay where they are (in the
//! parent's arena) until the parent's join has returned.
//!
//! **Stack.** Tasks nest on the thread's stack as calls do: each level costs a few frames.
//! The launch's `stack_bytes` bounds it, checked before a child runs (the same test as an
//! inline child's, see [`crate::task`]): a child that would not fit is the typed
//! `PoolExhausted` error, never a stack overflow.
//!
//! **Failures.** A device error (a bad queue index, a panic caught per task) stops the launch
//! as in the other executors: children not yet started are skipped, a parent whose child
//! failed does not go on past its wait, and the launch ends with the error report.
//!
//! Statistics are per OS thread (reported as one warp each): tasks run, tasks spawned, and
//! children that ran on another thread than their parent's (`steals`). The executor records
//! no event trace (a traced launch runs on [`Mode::Parallel`](super::Mode::Parallel)).

use core::cell::Cell;
use core::future::Future;
use core::mem::{MaybeUninit, align_of, size_of};
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::{Context, Poll, Waker};
use std::boxed::Box;
use std::vec::Vec;

use crate::abi::{ErrorCode, WarpState, WarpStats};
use crate::arch;
use crate::error::{Failure, raise};
use crate::lane::{FAILED, LaneCtx, LaneView, SUSPEND, Scratch, stack_used};
use crate::record::MAX_ALIGN;
use crate::region::Region;
use crate::scheduler::WarpShared;
use crate::task::{INLINE_RESERVE, Site, TaskFunction, TaskInfo, root_result_fits};

/// A spawned child waiting for its parent's wait: how to run it and where its record is.
#[derive(Clone, Copy)]
struct Child {
    /// Polls the record's future to completion, writes its result, drops it; whether the task
    /// finished (false: the launch is failing).
    run: unsafe fn(*mut u8, &LaneView) -> bool,
    /// The child's [`Record`] in its parent's thread's arena.
    record: *mut u8,
    /// The arena's top before the record: where the parent's wait resets it.
    mark: Mark,
    /// The task function (for the lane context while it runs, and error reports).
    info: &'static TaskInfo,
    /// Index of the thread that spawned it.
    thread: u32,
    /// Bytes of its record (to move a detached child's record to the heap).
    bytes: u32,
    /// The [`Latch`] it runs in: its wait's, or its detaching parent's (set when it is handed
    /// to either).
    latch: *const Latch,
}

// SAFETY: a child's record is written before the child is handed to `rayon_core::join`, which
// synchronizes with whichever thread runs it, and exactly one thread runs it; the record stays
// in place until the join returns to the parent's thread.
unsafe impl Send for Child {}
// SAFETY: as above; a shared `Child` is only copied.
unsafe impl Sync for Child {}

/// A child's future and where its result goes.
#[repr(C)]
struct Record<F: Future> {
    fut: F,
    dst: *mut F::Output,
}

/// Runs the child whose [`Record`] of future type `F` is at `record`.
///
/// # Safety
/// `record` holds an initialized `Record<F>` that nothing else uses until this returns, and
/// `lane` is the calling thread's.
unsafe fn run_record<F: Future>(record: *mut u8, lane: &LaneView) -> bool {
    let record = record as *mut Record<F>;
    // SAFETY: the record is initialized and ours (see above); the future is not moved until
    // it is dropped in place below.
    let (fut, dst) = unsafe { (Pin::new_unchecked(&mut (*record).fut), (*record).dst) };
    let finished = match fut.poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(value) => {
            if dst.is_null() {
                drop(value);
            } else {
                // SAFETY: `dst` is null or points to a `F::Output` of the parent that stays
                // allocated until the parent's wait returns (`#[gtap::function]` checks that a
                // wait follows); the old value is overwritten, not dropped, as in a record's
                // poll.
                unsafe { dst.write(value) };
            }
            true
        }
        // Only a failing launch suspends here: the wait found a failed child or spawn.
        Poll::Pending => false,
    };
    // SAFETY: the future is initialized and not used after this.
    unsafe { core::ptr::drop_in_place(&mut (*record).fut) };
    // Spawns it never waited for: it finishes with them. (The flag says whether this task
    // detached any, not whether a task nested in its waits did.)
    DETACHED.set(false);
    if finished {
        detach_children(lane)
    } else {
        discard_children(lane);
        false
    }
}

/// What a task that returns with detached children, or a wait, must see finished: a count of
/// outstanding work and whom to tell when it reaches zero (see the module docs).
///
/// A wait's latch lives in the waiting frame (`up` null): it counts the children of the wait
/// that returned with detached children of their own, and the wait returns when it is back to
/// zero. A detaching task's latch lives on the heap: it counts the task's detached children,
/// each of which, when it finishes (itself and anything it detached), counts itself out; at
/// zero the task is finished, so its latch counts out of its own `up` and is freed. Each
/// latch is shared by siblings only, never by a whole launch's tasks.
struct Latch {
    outstanding: AtomicUsize,
    failed: AtomicBool,
    /// The latch to count out of at zero; null for a wait's latch.
    up: *const Latch,
}

impl Latch {
    /// A wait's latch.
    const fn wait() -> Self {
        Self {
            outstanding: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            up: core::ptr::null(),
        }
    }

    /// Runs other work until the latch is back to zero; whether everything counted in it
    /// finished.
    fn wait_zero(&self) -> bool {
        // Acquire: what the detached children wrote comes before what the waiting task does
        // next, as a wait's children's writes do.
        while self.outstanding.load(Ordering::Acquire) != 0 {
            if rayon_core::yield_now() != Some(rayon_core::Yield::Executed) {
                std::thread::yield_now();
            }
        }
        !self.failed.load(Ordering::Relaxed)
    }

    /// Counts one finished piece of work (`finished`: without failure) out of `latch`, and
    /// out of each heap latch above it that reaches zero, freeing those.
    ///
    /// # Safety
    /// `latch` is live and counts the piece; a heap latch was made by [`detach_children`].
    unsafe fn count_out(mut latch: *const Latch, finished: bool) {
        let mut failed = !finished;
        loop {
            // SAFETY: live until its count reaches zero, which only this call can see.
            let l = unsafe { &*latch };
            if failed {
                l.failed.store(true, Ordering::Relaxed);
            }
            // Release: this work's writes come before whoever sees the count reach zero.
            if l.outstanding.fetch_sub(1, Ordering::Release) != 1 || l.up.is_null() {
                return;
            }
            // Acquire: the siblings' writes come before the count out of the latch above.
            core::sync::atomic::fence(Ordering::Acquire);
            failed = l.failed.load(Ordering::Relaxed);
            let up = l.up;
            // SAFETY: a heap latch at zero is no one else's (see above).
            drop(unsafe { Box::from_raw(latch as *mut Latch) });
            latch = up;
        }
    }
}

std::thread_local! {
    /// The latch of the calling thread's current task: its wait's, or its detaching parent's.
    static LATCH: Cell<*const Latch> = const { Cell::new(core::ptr::null()) };
    /// Whether the calling thread's last task returned with detached children.
    static DETACHED: Cell<bool> = const { Cell::new(false) };
}

/// Levels of detached children a thread runs nested in their parents' returns before it hands
/// the next level to the pool as jobs: a tree of spawns without waits (N-Queens counting into
/// a buffer) then costs what a fork-join tree does, while a chain as long as a graph's longest
/// path (an asynchronous BFS) is cut every few levels, and the jobs' FIFO order keeps the
/// search near breadth-first, which such a label-correcting search needs against re-visits.
const MAX_DETACHED_NESTING: u32 = 8;

std::thread_local! {
    /// Levels of detached children being run nested on the calling thread.
    static DETACHED_NESTING: Cell<u32> = const { Cell::new(0) };
}

/// Detached children handed to the pool as one job: their records, moved to the heap.
struct Batch {
    children: Vec<Child>,
    records: Box<[MaybeUninit<Unit>]>,
}

// SAFETY: the records are moved, not shared, to the one thread that runs the job; the latch
// the children count in outlives them (it is freed only when they have counted out).
unsafe impl Send for Batch {}

/// Runs detached children (each counted in its latch), then counts out each that finished
/// without detaching children of its own (one that did is counted out by its own latch).
/// Halved into `rayon_core::join`s below [`MAX_DETACHED_NESTING`]; one after another at it,
/// because a thread waiting in a join runs other jobs on top of its stack, and those may be
/// detached children too: the nesting count bounds that.
fn run_detached(children: &[Child]) {
    match children {
        [] => {}
        [child] => {
            let finished = run_one(child);
            if !DETACHED.replace(false) || !finished {
                // SAFETY: the latch counts this child and lives until it is counted out.
                unsafe { Latch::count_out(child.latch, finished) };
            }
        }
        _ if DETACHED_NESTING.get() >= MAX_DETACHED_NESTING => {
            for child in children {
                run_detached(core::slice::from_ref(child));
            }
        }
        _ => {
            let (a, b) = children.split_at(children.len() / 2);
            rayon_core::join(|| run_detached(a), || run_detached(b));
        }
    }
}

/// The children the returning task never waited for: run as an implicit wait at its return
/// (up to [`MAX_DETACHED_NESTING`] levels), else handed to the pool as a job, counted in a new
/// latch of the task's, which finishes the task when they have. Whether the task has finished
/// or will (false: a child failed).
fn detach_children(lane: &LaneView) -> bool {
    // SAFETY: the calling lane owns its context.
    let n = unsafe { lane.ctx() }.spawned as usize;
    if n == 0 {
        return true;
    }
    let nesting = DETACHED_NESTING.get();
    if nesting < MAX_DETACHED_NESTING {
        DETACHED_NESTING.set(nesting + 1);
        let finished = run_children(lane);
        DETACHED_NESTING.set(nesting);
        return finished;
    }
    // SAFETY: as above.
    unsafe { lane.ctx() }.spawned = 0;
    let up = LATCH.get();
    // SAFETY: the latch outlives the task that runs in it.
    let parent = unsafe { &*up };
    if parent.up.is_null() {
        // A wait's child: the wait counts it, as it now finishes after its own return. (A
        // detached child is already counted in its parent's latch.)
        parent.outstanding.fetch_add(1, Ordering::Relaxed);
    }
    let latch: *const Latch = Box::into_raw(Box::new(Latch {
        outstanding: AtomicUsize::new(n),
        failed: AtomicBool::new(false),
        up,
    }));
    // SAFETY: in a launch; the reference ends before any child runs.
    let t = unsafe { this_thread() };
    let first = t.children.len() - n;
    let mark = t.children[first].mark;
    let mut children: Vec<Child> = t.children.drain(first..).collect();
    for child in &mut children {
        child.latch = latch;
    }
    // One allocation for all the records, each at a unit boundary.
    let units = |c: &Child| (c.bytes as usize).div_ceil(size_of::<Unit>());
    let total = children.iter().map(units).sum();
    let mut records = Box::new_uninit_slice(total);
    let mut at = 0;
    for child in &mut children {
        let to = records[at..].as_mut_ptr() as *mut u8;
        // SAFETY: the record (never polled, so its future may move) has `bytes` bytes and
        // `to` has room for them; no one else uses it (its parent has returned), and the
        // arena's room is not reused before this copy.
        unsafe { core::ptr::copy_nonoverlapping(child.record, to, child.bytes as usize) };
        child.record = to;
        at += units(child);
    }
    t.arena.top = mark;
    let batch = Batch { children, records };
    rayon_core::spawn_fifo(move || {
        let Batch { children, records } = batch;
        // A level of its own: the job may run on top of a waiting thread's stack.
        let nesting = DETACHED_NESTING.get();
        DETACHED_NESTING.set(nesting + 1);
        run_detached(&children);
        DETACHED_NESTING.set(nesting);
        // The children's records live until they have run.
        drop(records);
    });
    DETACHED.set(true);
    true
}

/// Where an [`Arena`]'s top is: chunk and offset in [`Unit`]s.
#[derive(Clone, Copy)]
struct Mark {
    chunk: usize,
    offset: usize,
}

/// The arena's unit of allocation, aligned for any record ([`MAX_ALIGN`]).
type Unit = u128;

const _: () = assert!(align_of::<Unit>() >= MAX_ALIGN && size_of::<Unit>() == 16);

/// Units of a new chunk, unless a record needs more: 64 KiB.
const CHUNK_UNITS: usize = 4096;

/// A thread's stack of child records: chunks that never move (another thread may be reading a
/// record while this one allocates), reused from the bottom after each wait.
struct Arena {
    chunks: Vec<Box<[MaybeUninit<Unit>]>>,
    top: Mark,
}

impl Arena {
    const fn new() -> Self {
        Self {
            chunks: Vec::new(),
            top: Mark {
                chunk: 0,
                offset: 0,
            },
        }
    }

    /// Room for `bytes` (at most [`MAX_ALIGN`]-aligned) on top.
    #[inline]
    fn alloc(&mut self, bytes: usize) -> *mut u8 {
        let units = bytes.div_ceil(size_of::<Unit>()).max(1);
        loop {
            let Mark { chunk, offset } = self.top;
            if chunk == self.chunks.len() {
                self.chunks
                    .push(Box::new_uninit_slice(units.max(CHUNK_UNITS)));
            }
            let room = self.chunks[chunk].len();
            if offset + units <= room {
                self.top.offset += units;
                return self.chunks[chunk][offset..].as_mut_ptr() as *mut u8;
            }
            if chunk + 1 < self.chunks.len() && self.chunks[chunk + 1].len() < units {
                // A chunk too small for this record: replace it (nothing above the top is live).
                self.chunks[chunk + 1] = Box::new_uninit_slice(units.max(CHUNK_UNITS));
            }
            self.top = Mark {
                chunk: chunk + 1,
                offset: 0,
            };
        }
    }
}

/// What one OS thread of the executor keeps: its lane (context, statistics and scratch as the
/// task functions see them), its children and its arena. Aligned apart from its neighbours:
/// each thread writes its own at every task.
#[repr(align(128))]
struct Thread {
    ctx: LaneCtx,
    shared: WarpShared,
    scratch: Scratch,
    children: Vec<Child>,
    arena: Arena,
    index: u32,
    tasks: u64,
    spawned: u64,
    steals: u64,
}

std::thread_local! {
    /// The calling thread's [`Thread`] during a launch.
    static THREAD: Cell<*mut Thread> = const { Cell::new(core::ptr::null_mut()) };
}

/// The calling thread's state.
///
/// # Safety
/// The thread is in a work-first launch, and the caller keeps no other reference to the state
/// across a call that may run another task on this thread.
#[allow(clippy::mut_from_ref)]
unsafe fn this_thread<'a>() -> &'a mut Thread {
    let t = THREAD.get();
    debug_assert!(!t.is_null(), "gtap: work-first spawn outside a launch");
    // SAFETY: set by `enter` for the launch; only this thread uses it (see above).
    unsafe { &mut *t }
}

/// `task!` on the work-first executor: records child `fut` (of `T`, result into `dst`) for the
/// spawning task's next wait.
pub(crate) fn spawn<T, F>(lane: &LaneView, dst: *mut T::Output, fut: F)
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    // SAFETY: in a launch; no other reference to the state is live.
    let t = unsafe { this_thread() };
    let mark = t.arena.top;
    let record = t.arena.alloc(size_of::<Record<F>>()) as *mut Record<F>;
    // SAFETY: fresh room for a `Record<F>`, aligned (records over MAX_ALIGN were rejected by
    // `spawn_future`).
    unsafe { record.write(Record { fut, dst }) };
    t.children.push(Child {
        run: run_record::<F>,
        record: record as *mut u8,
        mark,
        info: &T::INFO,
        thread: t.index,
        bytes: size_of::<Record<F>>() as u32,
        latch: core::ptr::null(),
    });
    t.spawned += 1;
    // SAFETY: the calling lane owns its context.
    unsafe { lane.ctx() }.spawned += 1;
}

/// `taskwait!` on the work-first executor: runs the waiting task's children. When one of them
/// failed, asks the task to suspend, which ends it (the launch is failing).
pub(crate) fn wait(lane: &LaneView) {
    if !run_children(lane) {
        // SAFETY: the calling lane owns its context.
        unsafe { lane.ctx() }.flags |= FAILED | SUSPEND;
    }
}

/// Runs the children the calling task spawned since its last wait; whether all finished.
#[inline]
fn run_children(lane: &LaneView) -> bool {
    // SAFETY: the calling lane owns its context.
    let n = core::mem::take(&mut unsafe { lane.ctx() }.spawned) as usize;
    n == 0 || run_spawned(n)
}

/// [`run_children`] for `n > 0` children on top of the calling thread's stack.
fn run_spawned(n: usize) -> bool {
    // SAFETY: in a launch; the reference ends before the children run.
    let t = unsafe { this_thread() };
    let first = t.children.len() - n;
    let mark = t.children[first].mark;
    let latch = Latch::wait();
    let in_latch = |child: &Child| Child {
        latch: &latch,
        ..*child
    };
    // The children leave the stack before they run (theirs go on top of it), each with the
    // wait's latch: up to `ON_STACK` are copied to this frame, more to the heap.
    const ON_STACK: usize = 16;
    let finished = if n == 1 {
        // One child (a chain, or a task that splits off one subproblem): no copy, no join.
        let child = t.children.pop().expect("one child");
        run_one(&in_latch(&child))
    } else if n <= ON_STACK {
        let mut few = [MaybeUninit::<Child>::uninit(); ON_STACK];
        for (to, child) in few.iter_mut().zip(&t.children[first..]) {
            to.write(in_latch(child));
        }
        t.children.truncate(first);
        // SAFETY: the first `n` were written just above.
        run_all(unsafe { core::slice::from_raw_parts(few.as_ptr() as *const Child, n) })
    } else {
        let all: Vec<Child> = t.children.drain(first..).map(|c| in_latch(&c)).collect();
        run_all(&all)
    };
    // SAFETY: as above; every child has finished, so nothing uses their records.
    unsafe { this_thread() }.arena.top = mark;
    latch.wait_zero() && finished
}

/// Drops the children a failed task spawned and never waited for, without running them (their
/// futures are leaked: the launch is failing).
fn discard_children(lane: &LaneView) {
    // SAFETY: the calling lane owns its context.
    let n = core::mem::take(&mut unsafe { lane.ctx() }.spawned) as usize;
    if n == 0 {
        return;
    }
    // SAFETY: in a launch.
    let t = unsafe { this_thread() };
    let first = t.children.len() - n;
    t.arena.top = t.children[first].mark;
    t.children.truncate(first);
}

/// Runs `children`, halving them into `rayon_core::join`s; whether all finished.
fn run_all(children: &[Child]) -> bool {
    match children {
        [] => true,
        [one] => run_one(one),
        _ => {
            let (a, b) = children.split_at(children.len() / 2);
            let (x, y) = rayon_core::join(|| run_all(a), || run_all(b));
            x && y
        }
    }
}

/// Runs one child on the calling thread, as a nested poll with its own lane context.
fn run_one(child: &Child) -> bool {
    let lane = arch::current_lane();
    let region = lane.region();
    if region.control().stopping() {
        return false;
    }
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    let need = stack_used(ctx.stack_top).saturating_add(INLINE_RESERVE);
    if need > region.stack_bytes {
        let mut f = Failure::at(ErrorCode::PoolExhausted, &SITE, need as u64, 0);
        f.task = Some(child.info.name);
        raise(f);
        return false;
    }
    let saved = (ctx.spawned, ctx.flags, ctx.info);
    (ctx.spawned, ctx.flags, ctx.info) = (0, 0, child.info);
    let outer = LATCH.replace(child.latch);
    // SAFETY: the record was written by `spawn` and only this thread runs it; `lane` is ours.
    let finished = arch::guard(|| unsafe { (child.run)(child.record, &lane) }) == Some(true);
    LATCH.set(outer);
    // SAFETY: as above; the child's frames are gone.
    let ctx = unsafe { lane.ctx() };
    if !finished && ctx.spawned != 0 {
        // A panic left children of the child on the stack.
        discard_children(&lane);
    }
    (ctx.spawned, ctx.flags, ctx.info) = saved;
    // SAFETY: in a launch; the reference ends here.
    let t = unsafe { this_thread() };
    t.tasks += 1;
    t.steals += u64::from(child.thread != t.index);
    if t.tasks.is_multiple_of(64) {
        // Progress for the watchdog.
        region
            .status(t.index)
            .publish(WarpState::Working, t.tasks as u32);
    }
    finished
}

/// Where a child that the stack cannot hold is reported (the executor, not a user's line).
static SITE: Site = Site {
    function: "work-first executor",
    file: file!(),
    line: line!(),
};

/// A pointer that the launch's threads share, to state that outlives them.
struct Shared<T>(*mut T);
impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<T> {}
// SAFETY: each `Thread` is used by the one OS thread rayon gives its index, and the region
// view is read-only; both outlive the launch's broadcasts and joins.
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}

/// Runs root task `T(args)` on `pool` in a launch with `context`, its result into the region's
/// result area, then writes each thread's statistics. A failure is left in the region's control word and report.
pub(crate) fn run_root<T: TaskFunction>(
    pool: &rayon_core::ThreadPool,
    region: &Region,
    site: &'static Site,
    args: T::Args,
    context: impl Copy,
) {
    // Before the pool's threads start on the launch (`broadcast` and `install` order it).
    crate::context::store(region, context);
    let n = pool.current_num_threads();
    let mut threads: Vec<Thread> = (0..n as u32)
        .map(|index| Thread {
            ctx: LaneCtx::IDLE,
            shared: WarpShared::new(),
            scratch: [0; crate::lane::SCRATCH_WORDS],
            children: Vec::new(),
            arena: Arena::new(),
            index,
            tasks: 0,
            spawned: 0,
            steals: 0,
        })
        .collect();
    let (all, view) = (
        Shared(threads.as_mut_ptr()),
        Shared(region as *const Region as *mut Region),
    );
    pool.broadcast(|b| {
        let (all, view) = (all, view);
        // SAFETY: one `Thread` per pool thread, by index (see `Shared`).
        let t = unsafe { &mut *all.0.add(b.index()) };
        t.ctx = LaneCtx::starting_here();
        t.ctx.task = 0;
        THREAD.set(t);
        let lane = LaneView {
            ctx: &mut t.ctx,
            shared: &t.shared,
            region: view.0,
            warp: t.index,
            scratch: &mut t.scratch,
        };
        arch::enter_work_first_thread(lane, t.index);
    });
    let job = super::Handed((view, args));
    pool.install(move || {
        let (view, args) = job.into_inner();
        // SAFETY: the region view outlives the launch (see `Shared`).
        let region = unsafe { &*view.0 };
        let lane = arch::current_lane();
        if !root_result_fits::<T>(site) {
            return;
        }
        spawn::<T, _>(&lane, region.root_result as *mut T::Output, T::start(args));
        run_children(&lane);
    });
    pool.broadcast(|_| {
        THREAD.set(core::ptr::null_mut());
        arch::leave_work_first_thread();
    });
    for t in &threads {
        let stats = WarpStats {
            tasks: t.tasks,
            spawned: t.spawned,
            steals: t.steals,
            ..WarpStats::ZERO
        };
        // SAFETY: the launch's threads are done; each thread's slot is written once, here.
        unsafe { region.stats(t.index).write(stats) };
        region
            .status(t.index)
            .publish(WarpState::Stopped, t.tasks as u32);
    }
}
