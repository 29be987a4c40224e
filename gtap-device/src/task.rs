//! What `#[gtap::function]`, `task!`, `taskwait!` and `entry!` expand to.
//!
//! A task function becomes a type implementing [`TaskFunction`] whose `start` returns the body
//! as an `async` block: the compiler builds the state machine, saves exactly the locals that
//! live across each wait, and sizes the record. `task!` calls [`spawn`]; `taskwait!` calls
//! [`prepare_wait`] and awaits [`Suspend`], a zero-sized future.
//!
//! # Inline children
//!
//! Capacity must not fail a computation that can finish. When a spawn finds no free task slot
//! (`pool::alloc_slow`: the warp's ids, and the fresh ids of the warps it asked, are all out), the
//! spawning lane runs the child at once, on its own stack, to completion ([`run_inline`]):
//! while it does, the lane context's [`INLINE`] bit makes every spawn inside run inline too,
//! so each `taskwait!` in the subtree finds its children done and never suspends. The child's
//! result is in its destination when the spawn returns, before the parent's wait, as the rules
//! require. The subtree runs sequentially; the warp counts it (`WarpStats::inlined`).
//!
//! Inline execution is impossible only when the thread's stack cannot hold one more level: the
//! lane measures the stack used since its worker started ([`crate::lane::stack_used`]) and
//! compares it, plus the child's future and a reserve for the frames around it
//! ([`INLINE_RESERVE`]), with the launch's `stack_bytes`. Then the spawn fails with the typed
//! `PoolExhausted` error instead of overflowing the stack. The common path pays one branch on
//! the allocation's result.

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

use crate::abi::ErrorCode;
use crate::abi::ROOT_RESULT_BYTES;
use crate::arch::{self, Warp};
use crate::context::RunsIn;
use crate::error::{Failure, raise};
use crate::lane::{FAILED, INLINE, LaneCtx, LaneView, SUSPEND, stack_used};
use crate::record::{self, MAX_ALIGN, NONE, PollRequest};
use crate::{pool, queue};

/// Static description of a task function, for error reports and pool sizing.
#[derive(Debug)]
pub struct TaskInfo {
    /// The function's name.
    pub name: &'static str,
    /// Source file of its definition.
    pub file: &'static str,
    /// Source line of its definition.
    pub line: u32,
}

/// A function marked `#[gtap::function]`. Implemented by the macro; not meant to be written by
/// hand.
pub trait TaskFunction: 'static {
    /// The parameters, as a tuple.
    type Args;
    /// The return type.
    type Output;
    /// Name and source location.
    const INFO: TaskInfo;
    /// Whether the body can suspend: it contains a `taskwait!`, the only suspension point.
    /// `false` promises that the future completes in its first poll and that no child writes
    /// into it (a spawn with a destination needs a wait after it), so block mode keeps such a
    /// future on each thread's stack instead of in a frame of the record ([`crate::block`]).
    /// The macro writes `false` for a body without a wait.
    const SUSPENDS: bool = true;
    /// The body as a future; polling it runs the task up to its next wait.
    fn start(args: Self::Args) -> impl Future<Output = Self::Output>;

    /// Polls the request's record with a direct call, if it is a record of this function, and
    /// says whether the poll finished it; `None` for another function's record. The macro
    /// writes it ([`poll_thread`] or [`poll_block`]); the default never matches.
    ///
    /// # Safety
    /// The record is claimed by the caller (the lane, or in block mode the block), as for any
    /// poll.
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn poll_this(request: &PollRequest) -> Option<bool> {
        let _ = request;
        None
    }

    /// [`TaskFunction::poll_this`] of each function this one spawns directly (its body's
    /// `task!` targets), in turn. A kernel's scheduler asks its root function, so that the
    /// root's children are polled with direct calls, which inline, rather than through the
    /// record's poll pointer: an indirect call saves and restores the caller's registers in
    /// local memory at every poll.
    ///
    /// # Safety
    /// As for [`TaskFunction::poll_this`].
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn poll_spawned(request: &PollRequest) -> Option<bool> {
        let _ = request;
        None
    }
}

/// `T::poll_this`: what [`TaskFunction::poll_spawned`] calls for each function it spawns.
///
/// # Safety
/// As for [`TaskFunction::poll_this`].
#[doc(hidden)]
#[inline(always)]
pub unsafe fn poll_child<T: TaskFunction>(request: &PollRequest) -> Option<bool> {
    // SAFETY: per the contract.
    unsafe { T::poll_this(request) }
}

/// [`TaskFunction::poll_this`] of a thread-mode function (what `#[gtap::function]` writes).
///
/// # Safety
/// As for [`TaskFunction::poll_this`].
#[doc(hidden)]
#[inline(always)]
pub unsafe fn poll_thread<T: ThreadTask>(request: &PollRequest) -> Option<bool> {
    // SAFETY: per the contract.
    unsafe { record::poll_if::<T>(request) }
}

/// [`TaskFunction::poll_this`] of a block-mode function (what `#[gtap::function(block)]`
/// writes).
///
/// # Safety
/// As for [`TaskFunction::poll_this`].
#[doc(hidden)]
#[inline(always)]
pub unsafe fn poll_block<T: BlockTask>(request: &PollRequest) -> Option<bool> {
    // SAFETY: per the contract.
    unsafe { crate::block::record::poll_if::<T>(request) }
}

/// A thread-mode task function (`#[gtap::function]`): the bound of `task!` and `entry!` in
/// thread-mode code, so that a block-mode function spawned from there fails to compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a block-mode task function; thread-mode code cannot spawn or enter it",
    label = "a block-mode task function, in thread-mode code",
    note = "a kernel and its tasks use one mode: spawn it from a `#[gtap::function(block)]`, enter it from a `#[gtap::kernel(block = N)]`, or remove `(block)` from its `#[gtap::function]`"
)]
pub trait ThreadTask: TaskFunction {}

/// A block-mode task function (`#[gtap::function(block)]`): the bound of `task!` and `entry!`
/// in block-mode code. Its arguments are `Copy`: every thread of the block starts from them.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a thread-mode task function; block-mode code cannot spawn or enter it",
    label = "a thread-mode task function, in block-mode code",
    note = "a kernel and its tasks use one mode: spawn it from a thread-mode `#[gtap::function]`, enter it from a `#[gtap::kernel]` without `block`, or mark it `#[gtap::function(block)]`"
)]
pub trait BlockTask: TaskFunction<Args: Copy> {
    /// The body as the future a block-mode record's frames hold: like
    /// [`TaskFunction::start`], but reading the arguments from the record's one copy at `args`
    /// instead of capturing a copy in every thread's frame. The macro binds them as locals at
    /// the start of the body and binds them again after each `taskwait!` statement, so an
    /// argument used after a wait is read from the record there rather than saved in each
    /// thread's frame (unless it is `mut`, or a name the body binds again).
    fn start_shared(args: &'static Self::Args) -> impl Future<Output = Self::Output>;
}

/// Bound of the direct-call trap that `#[gtap::function]` emits under the task function's name:
/// it has no implementations, so calling a task function like an ordinary function fails to
/// compile with the message below.
#[diagnostic::on_unimplemented(
    message = "`{F}` is a gtap task function and cannot be called directly",
    label = "direct call of task function `{F}`",
    note = "spawn it as a child with `gtap::task!(x = {F}(..))` and join it with `gtap::taskwait!()`, or start it from a `#[gtap::kernel]` with `gtap::entry!({F}(..))`"
)]
pub trait DirectCall<F> {}

/// Bytes a record of task function `T` needs (header plus future), or `None` if its future is
/// aligned beyond 16 bytes.
pub const fn record_bytes_of<T: TaskFunction>() -> Option<usize> {
    const fn of<A, F: Future>(_start: fn(A) -> F) -> Option<usize> {
        record::record_bytes::<F>()
    }
    of(T::start)
}

/// Where a `task!`, `taskwait!` or `entry!` appears, for error reports.
#[derive(Debug)]
pub struct Site {
    /// The enclosing task function or kernel.
    pub function: &'static str,
    /// Source file.
    pub file: &'static str,
    /// Source line.
    pub line: u32,
}

/// Integer types accepted by a `queue(...)` clause.
#[diagnostic::on_unimplemented(
    message = "the queue index must be an integer, found `{Self}`",
    label = "not an integer",
    note = "queues are numbered 0..num_queues; write e.g. `queue(1)` or `queue(kind as u32)`"
)]
pub trait QueueIndex: Copy {
    /// The index, widened without loss (negative values stay negative and are rejected at
    /// run time).
    fn widen(self) -> i128;
}

macro_rules! queue_index {
    ($($t:ty),*) => {$(
        impl QueueIndex for $t {
            #[inline(always)]
            fn widen(self) -> i128 { self as i128 }
        }
    )*};
}
queue_index!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

/// Converts a `queue(...)` clause's value.
#[inline(always)]
pub fn queue_index<Q: QueueIndex>(q: Q) -> i128 {
    q.widen()
}

#[inline(always)]
pub(crate) fn check_queue(site: &'static Site, q: i128, num_queues: u32) -> Option<u32> {
    if (0..num_queues as i128).contains(&q) {
        Some(q as u32)
    } else {
        invalid_queue(site, q, num_queues);
        None
    }
}

/// Reports a `queue(...)` clause's index `q` outside `0..num_queues`. Out of line and cold, as
/// [`record_too_large`]: the report's text copies take registers that, inlined at a spawn site
/// in a task's loop, the whole kernel would pay for (`bench/NOTES.md` entry 101: the thread BFS
/// 16 % faster on an H100). The block-mode spawn keeps its reports inline: out of line they
/// made the block kernels 2-13 % slower (same entry).
#[cold]
#[inline(never)]
fn invalid_queue(site: &'static Site, q: i128, num_queues: u32) {
    let clamped = q.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    let mut f = Failure::at(
        ErrorCode::InvalidQueue,
        site,
        clamped as u64,
        num_queues as u64,
    );
    f.queue = clamped as u32;
    raise(f);
}

/// Reports a child of task function `task` whose record (`bytes`, its future's size) does not
/// fit the launch's task slots (`payload` bytes beside the header). Out of line and cold (see
/// [`invalid_queue`]).
#[cold]
#[inline(never)]
fn record_too_large(site: &'static Site, task: &'static str, bytes: u64, payload: u64) {
    let mut f = Failure::at(ErrorCode::RecordTooLarge, site, bytes, payload);
    f.task = Some(task);
    raise(f);
}

/// `task!` in thread-mode code: [`spawn`], for thread-mode task functions that run in `C`, the
/// spawning function's context (`crate::context`).
#[inline(always)]
pub fn spawn_thread<T: ThreadTask + RunsIn<C>, C: ?Sized>(
    site: &'static Site,
    queue: Option<i128>,
    dst: *mut T::Output,
    args: T::Args,
) {
    spawn::<T>(site, queue, dst, args);
}

/// `task!`: spawns `T(args)` as a child of the running task; its result will be written to
/// `dst` (null: discarded) before the parent resumes from its next wait.
#[inline(always)]
pub fn spawn<T: TaskFunction>(
    site: &'static Site,
    queue: Option<i128>,
    dst: *mut T::Output,
    args: T::Args,
) {
    spawn_future::<T, _>(site, queue, dst, T::start(args));
}

#[inline(always)]
fn spawn_future<T, F>(site: &'static Site, queue: Option<i128>, dst: *mut T::Output, fut: F)
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    let lane = arch::current_lane();
    let region = lane.region();
    let q = match queue {
        None => 0,
        Some(q) => match check_queue(site, q, region.num_queues) {
            Some(q) => q,
            None => return,
        },
    };
    let fits = match record::record_bytes::<F>() {
        Some(bytes) => bytes <= region.slot_bytes as usize,
        None => false,
    };
    if !fits {
        record_too_large(
            site,
            T::INFO.name,
            (core::mem::size_of::<F>().max(core::mem::align_of::<F>())) as u64,
            region.payload_bytes() as u64,
        );
        return;
    }
    #[cfg(not(target_arch = "nvptx64"))]
    if region.work_first() {
        let _ = q;
        crate::cpu::work_first::spawn::<T, F>(&lane, dst, fut);
        return;
    }
    #[cfg(not(target_arch = "nvptx64"))]
    let Some(fut) = crate::at_once::spawn::<T, F>(&lane, q, dst, fut) else {
        return;
    };
    // SAFETY: the calling lane owns its context.
    let inline = unsafe { lane.ctx() }.flags & INLINE != 0;
    match if inline {
        None
    } else {
        pool::take_ready(&lane)
    } {
        Some(id) => start_child::<T, F>(&lane, id, q, dst, fut),
        // One call for everything off the common path, as the slow allocation alone was: each
        // call site in a kernel's inlined polls costs registers around it.
        None => spawn_slow::<T, F>(site, q, dst, fut),
    }
}

/// Writes child `fut`'s record into slot `id`, newly allocated to the calling lane, and stages
/// it on queue `q`.
#[inline(always)]
fn start_child<T, F>(lane: &LaneView, id: u32, q: u32, dst: *mut T::Output, fut: F)
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    // SAFETY: `id` was just allocated to this lane, and the record fits the slot (checked by
    // `spawn_future`).
    unsafe { record::write::<T, F>(lane.region().header(id), fut, dst, ctx.task, q) };
    ctx.spawned += 1;
    queue::stage(lane, id, q);
}

/// A spawn the warp's stash of ids could not serve: allocation from the ring, fresh or
/// borrowed ids, else the child inline (or, inside an inline run, the child inline at once).
/// It finds the calling lane's view itself: a view passed by reference would be stored to
/// local memory at every spawn site, on the common path too.
#[inline(never)]
fn spawn_slow<T, F>(site: &'static Site, q: u32, dst: *mut T::Output, fut: F)
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    let lane = &arch::current_lane();
    // SAFETY: the calling lane owns its context.
    let inline = unsafe { lane.ctx() }.flags & INLINE != 0;
    match if inline { None } else { pool::alloc_slow(lane) } {
        Some(id) => start_child::<T, F>(lane, id, q, dst, fut),
        None => run_inline::<T, F>(lane, site, dst, fut),
    }
}

/// Stack an inline child must leave free beyond its future (counted twice: it is built in the
/// spawning frame and moved into the inline run's), for the frames of one more level of spawn
/// and poll and a modest sequential leaf. GPU frames are small (the bench kernels' ptxas
/// reports give well under 256 bytes a level); the CPU's, in debug builds, are not.
#[cfg(target_arch = "nvptx64")]
pub(crate) const INLINE_RESERVE: u32 = 1024;
/// See the GPU's value.
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) const INLINE_RESERVE: u32 = 64 * 1024;

/// Runs child `fut` of task function `T` to completion on the calling lane, because no task
/// slot is free (see *Inline children* in the module docs), or raises `PoolExhausted` when the
/// stack cannot hold it. Also reached when the launch aborted during the allocation: then it
/// only marks the spawn failed.
#[inline(always)]
fn run_inline<T, F>(lane: &LaneView, site: &'static Site, dst: *mut T::Output, fut: F)
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    let region = lane.region();
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    if region.control().aborted() {
        ctx.flags |= FAILED;
        return;
    }
    let need = inline_stack_need::<F>(ctx);
    if need > region.stack_bytes {
        let mut f = Failure::at(
            ErrorCode::PoolExhausted,
            site,
            need as u64,
            region.slots_per_warp as u64,
        );
        f.task = Some(T::INFO.name);
        raise(f);
        return;
    }
    let (flags, spawned, info) = (ctx.flags, ctx.spawned, ctx.info);
    ctx.flags = flags | INLINE;
    ctx.spawned = 0;
    ctx.info = &T::INFO;
    let fut = core::pin::pin!(fut);
    // Every spawn inside runs inline, so no wait suspends: the first poll completes, unless a
    // spawn inside failed (the launch is aborting; the child's result is never read).
    if let Poll::Ready(v) = poll_inline(fut) {
        if dst.is_null() {
            drop(v);
        } else {
            // SAFETY: `dst` is null or points to a `T::Output` of the spawning task that stays
            // allocated until its next wait (`#[gtap::function]` checks that one follows); the
            // old value is overwritten, not dropped, as in a record's poll.
            unsafe { dst.write(v) };
        }
    }
    lane.shared().pool.count_inline();
    // SAFETY: as above; the child's frames are gone, the context is this lane's again.
    let ctx = unsafe { lane.ctx() };
    ctx.flags = flags | (ctx.flags & FAILED);
    ctx.spawned = spawned;
    ctx.info = info;
}

/// Stack a child of future type `F` run on the calling lane needs, counted from where the
/// lane's worker started: what it has used so far, the future (twice: it is built in the
/// spawning frame and moved) and [`INLINE_RESERVE`].
#[inline(always)]
pub(crate) fn inline_stack_need<F>(ctx: &LaneCtx) -> u32 {
    stack_used(ctx.stack_top)
        .saturating_add(2 * core::mem::size_of::<F>() as u32)
        .saturating_add(INLINE_RESERVE)
}

/// Polls an inline child once. A function of its own, so that the child's poll (inlined here)
/// does not add its registers to every function that may run a child inline.
#[inline(never)]
fn poll_inline<F: Future>(fut: Pin<&mut F>) -> Poll<F::Output> {
    fut.poll(&mut Context::from_waker(Waker::noop()))
}

/// First half of `taskwait!`: records how many children the task waits for and on which queue
/// it resumes. With no children outstanding the wait is a no-op; in a `no_taskwait` launch
/// any wait is the device error `WaitInNoTaskwaitKernel`.
#[inline(always)]
pub fn prepare_wait(site: &'static Site, queue: Option<i128>) {
    let lane = arch::current_lane();
    // SAFETY: the calling lane owns its context.
    let ctx = unsafe { lane.ctx() };
    if ctx.flags & FAILED != 0 {
        // A spawn of this task failed: park it for good rather than run on without a child.
        ctx.flags |= SUSPEND;
        return;
    }
    if lane.region().no_taskwait() {
        raise(Failure::at(ErrorCode::WaitInNoTaskwaitKernel, site, 0, 0));
        ctx.flags |= SUSPEND;
        return;
    }
    let n = ctx.spawned;
    if n == 0 {
        return;
    }
    let region = lane.region();
    #[cfg(not(target_arch = "nvptx64"))]
    if region.work_first() {
        // The queue is checked as on the GPU, though this executor resumes on no queue.
        if let Some(q) = queue
            && check_queue(site, q, region.num_queues).is_none()
        {
            ctx.flags |= SUSPEND;
            return;
        }
        crate::cpu::work_first::wait(&lane);
        return;
    }
    let h = region.header(ctx.task);
    let resume = match queue {
        // Resolved by the last child's lane, which reads `queue` with `resume` anyway: reading
        // it here would make this store wait for a load.
        None => record::SPAWN_QUEUE,
        Some(q) => match check_queue(site, q, region.num_queues) {
            Some(q) => q,
            None => {
                ctx.flags |= SUSPEND;
                return;
            }
        },
    };
    // SAFETY: the running task's header belongs to this lane during the poll. The children
    // cannot run before this poll ends, so plain stores suffice; they are published with the
    // step.
    unsafe {
        (*h).pending.store(n, core::sync::atomic::Ordering::Relaxed);
        (*h).resume = resume;
    }
    ctx.spawned = 0;
    ctx.flags |= SUSPEND;
}

/// Second half of `taskwait!`: suspends the task if [`prepare_wait`] asked for it. Zero-sized,
/// so it adds nothing to the task record.
pub struct Suspend;

impl Future for Suspend {
    type Output = ();
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let lane = arch::current_lane();
        // SAFETY: the calling lane owns its context.
        let ctx = unsafe { lane.ctx() };
        if ctx.flags & SUSPEND != 0 {
            ctx.flags &= !SUSPEND;
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// Creates the root task on lane 0 of warp 0 (every other lane does nothing), in a launch with
/// `context` (`()` for none). Its result goes to the runtime's root-result area.
pub(crate) fn create_root<T: TaskFunction>(
    warp: &Warp,
    site: &'static Site,
    args: T::Args,
    context: impl Copy,
) {
    create_root_with::<T>(warp, site, args, context, |dst, args| {
        spawn::<T>(site, Some(0), dst, args)
    });
}

/// What both modes' root creation share: on lane 0 of `warp`, checks that `T`'s result fits
/// the root-result area (else raises `ResultTooLarge`), stores the launch's `context`, then
/// calls `spawn` with that area as the destination and the arguments.
pub(crate) fn create_root_with<T: TaskFunction>(
    warp: &Warp,
    site: &'static Site,
    args: T::Args,
    context: impl Copy,
    spawn: impl FnOnce(*mut T::Output, T::Args),
) {
    let mut job = Some((args, spawn));
    warp.each(Warp::splat(()), |lane, ()| {
        if lane != 0 {
            return;
        }
        let view = arch::current_lane();
        let region = view.region();
        if !root_result_fits::<T>(site) {
            return;
        }
        // SAFETY: the calling lane owns its context; an idle lane has no task, so the root's
        // parent is NONE.
        debug_assert_eq!(unsafe { view.ctx() }.task, NONE);
        if let Some((args, spawn)) = job.take() {
            crate::context::store(region, context);
            spawn(region.root_result as *mut T::Output, args);
        }
    });
}

/// Whether `T`'s result fits the root-result area; raises `ResultTooLarge` (on the calling
/// lane) when it does not.
pub(crate) fn root_result_fits<T: TaskFunction>(site: &'static Site) -> bool {
    let (size, align) = (
        core::mem::size_of::<T::Output>(),
        core::mem::align_of::<T::Output>(),
    );
    if size <= ROOT_RESULT_BYTES && align <= MAX_ALIGN {
        return true;
    }
    let mut f = Failure::at(
        ErrorCode::ResultTooLarge,
        site,
        size as u64,
        ROOT_RESULT_BYTES as u64,
    );
    f.task = Some(T::INFO.name);
    raise(f);
    false
}

/// Bytes of `T`'s record as a `u32`, `u32::MAX` when its future is aligned beyond 16 bytes.
/// Exported per task function into the PTX (`__gtap_record_*` globals) so the host can size
/// task slots from what the device compiler produced.
pub const fn record_bytes_u32<T: TaskFunction>() -> u32 {
    match record_bytes_of::<T>() {
        Some(b) => b as u32,
        None => u32::MAX,
    }
}

/// One task function's record size, collected on the host for the CPU executor's slots.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Debug)]
pub struct HostRecord {
    /// The task function's name.
    pub name: &'static str,
    /// Bytes of its record, `u32::MAX` when over-aligned.
    pub bytes: u32,
}

/// Every task function linked into the host program (filled in by `#[gtap::function]`).
#[cfg(not(target_arch = "nvptx64"))]
#[linkme::distributed_slice]
pub static TASK_RECORDS: [HostRecord];

#[cfg(all(test, not(loom)))]
mod tests {
    use core::sync::atomic::Ordering;

    use super::*;
    use crate::abi::HEADER_BYTES;
    use crate::pool;
    use crate::record::Header;
    use crate::region::Region;
    use crate::scheduler::{Step, Worker};
    use crate::testing::{Fib, Launch, fib, geometry, root_fib, run_fib, within};

    const SITE: &Site = &Site {
        function: "test",
        file: file!(),
        line: line!(),
    };

    /// The header of task `id`.
    fn header(region: &Region, id: u32) -> &Header {
        // SAFETY: the slot lies in the launch's region; the tests read it between steps, when
        // no lane runs the task.
        unsafe { &*region.header(id) }
    }

    #[test]
    fn one_poll_spawns_children_and_suspends_at_the_wait() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let region = launch.region();
        let warp = Warp::new(region, 0, None);
        let mut worker = <Worker>::new(&warp);
        worker.start_root(|w| root_fib(w, 5));
        let root = region.task_id(0, 0);
        let h = header(region, root);
        assert_eq!(
            (h.parent, h.queue, h.pending.load(Ordering::Relaxed)),
            (NONE, 0, 0)
        );
        assert_eq!(
            h.dst, region.root_result,
            "the root writes to the result area"
        );
        assert_eq!(worker.step::<Fib>(), Step::Worked);
        // Fib(5) spawned Fib(4) on queue 0 and Fib(3) on queue 1, then waits for both and
        // resumes on its own queue.
        assert_eq!(h.pending.load(Ordering::Relaxed), 2);
        assert_eq!(h.resume, record::SPAWN_QUEUE);
        // One child per queue: the fold keeps queue 0's and publishes queue 1's.
        assert_eq!(region.queue_meta(0, 0).count.load(Ordering::Relaxed), 0);
        assert_eq!(region.queue_meta(0, 1).count.load(Ordering::Relaxed), 1);
        let b = queue::read(region, 0, 1, 0);
        assert_ne!(b, root);
        let hb = header(region, b);
        assert_eq!(
            (hb.parent, hb.queue, hb.resume),
            (root, 1, record::SPAWN_QUEUE)
        );
        assert_eq!(launch.error(), None);
    }

    /// Spawns `Fib(3)` on the queue given as its argument and waits for it.
    struct SpawnOn;

    impl TaskFunction for SpawnOn {
        type Args = (i128,);
        type Output = u64;
        const INFO: TaskInfo = TaskInfo {
            name: "spawn_on",
            file: file!(),
            line: line!(),
        };
        async fn start((q,): (i128,)) -> u64 {
            let mut a = 0u64;
            spawn::<Fib>(SITE, Some(q), &raw mut a, (3,));
            prepare_wait(SITE, None);
            Suspend.await;
            a
        }
    }

    #[test]
    fn a_queue_outside_the_geometry_is_a_device_error() {
        for q in [2i128, -1, i128::MAX] {
            let code = within(10, move || {
                let launch = Launch::leak(geometry(1, 64, 2));
                let warp = Warp::new(launch.region(), 0, None);
                let mut worker = <Worker>::new(&warp);
                worker.start_root(|w| create_root::<SpawnOn>(w, SITE, (q,), ()));
                while worker.step::<SpawnOn>() != Step::Stopped {}
                (launch.error(), launch.region().control().aborted())
            });
            assert_eq!(code, (Some(ErrorCode::InvalidQueue), true), "queue {q}");
        }
    }

    #[test]
    fn a_queue_inside_the_geometry_runs() {
        let launch = Launch::leak(geometry(1, 64, 2));
        let result = within(10, move || {
            let warp = Warp::new(launch.region(), 0, None);
            let mut worker = <Worker>::new(&warp);
            worker.start_root(|w| create_root::<SpawnOn>(w, SITE, (1,), ()));
            while worker.step::<SpawnOn>() != Step::Stopped {}
            launch.fib_result()
        });
        assert_eq!(result, Ok(2), "Fib(3) through queue 1");
    }

    #[test]
    fn with_no_free_slot_children_run_inline_and_the_result_is_exact() {
        for seed in [1u64, 2, 3, 4] {
            // Two warps of two slots, rings of one entry: most of Fib(12)'s 465 tasks run
            // inline, the rest borrow slots and wait on overflow lists.
            let launch = Launch::leak(geometry(2, 2, 2));
            let (result, inlined) = within(20, move || {
                let (result, warps) = run_fib(launch, 12, seed, |_| {});
                let inlined: u32 = warps.iter().map(|w| pool::inlined(&w.shared().pool)).sum();
                (result, inlined)
            });
            assert_eq!(result, Ok(fib(12)), "seed {seed}");
            assert!(inlined > 200, "seed {seed}: {inlined} run inline");
        }
    }

    #[test]
    fn an_inline_child_the_stack_cannot_hold_is_pool_exhausted() {
        let launch = Launch::leak_with_stack(geometry(1, 2, 2), INLINE_RESERVE);
        let code = within(20, move || {
            let (result, _) = run_fib(launch, 12, 1, |_| {});
            result
        });
        assert_eq!(code, Err(ErrorCode::PoolExhausted));
        assert!(launch.region().control().aborted());
    }

    #[test]
    fn records_are_the_header_plus_the_future() {
        #[repr(align(32))]
        struct Wide;
        assert_eq!(record::record_bytes::<u64>(), Some(HEADER_BYTES + 8));
        assert_eq!(
            record::record_bytes::<[u8; 100]>(),
            Some(HEADER_BYTES + 100)
        );
        assert_eq!(
            record::record_bytes::<Wide>(),
            None,
            "aligned beyond 16 bytes"
        );
        assert_eq!(
            record_bytes_u32::<SpawnOn>() as usize,
            record_bytes_of::<SpawnOn>().unwrap()
        );
    }
}
