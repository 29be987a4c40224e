//! Block-mode task records: the header of thread mode ([`crate::record::Header`]), a prefix, the
//! task's arguments, then one future frame per thread of the block.
//!
//! ```text
//! [Header 32][Prefix 16][args, padded to 16][frame 0][frame 1] ... [frame threads-1]
//! ```
//!
//! The spawning thread writes the header, the prefix (`started = 0`) and the arguments. At the
//! task's first poll every thread builds its future in its own frame
//! ([`BlockTask::start_shared`]: the future reads the record's arguments through
//! [`PolledArgs`] rather than holding a copy or a pointer, so a frame holds only what the body
//! keeps across a wait, and frames are one future apart); thread 0 sets
//! `started` in the verdict that follows ([`super::worker`]). The arguments stay in place until
//! the record is freed, after the task's last poll. A frame never moves, so a future may point
//! into itself and children write into their spawning thread's locals, as in thread mode.
//!
//! A function that cannot suspend (no `taskwait!`: [`SUSPENDS`](crate::task::TaskFunction::SUSPENDS) is `false`) has
//! no frames: its one poll builds the future on each thread's stack, where LLVM keeps it in
//! registers, and runs it to completion. Nothing points into that future from outside (a spawn
//! with a destination needs a wait after it), so it may live and die within the poll. That
//! saves every thread's write of the whole future to device memory, and keeps the record at the
//! header and the arguments.

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::Ordering;
use core::task::{Context, Poll, Waker};

use crate::abi::{HEADER_BYTES, RecordSize};
use crate::arch;
use crate::record::{Header, MAX_ALIGN, PollFn, SPAWN_QUEUE};
use crate::task::BlockTask;

/// Bytes between the header and the arguments.
const PREFIX_BYTES: usize = 16;

/// Where the arguments start.
const ARGS_OFFSET: usize = HEADER_BYTES + PREFIX_BYTES;

const fn align16(n: usize) -> usize {
    (n + 15) & !15
}

/// Where the frames of a record with arguments `A` and future `F` start, and their stride (0
/// when `suspends` is false: no frames); `None` when either is aligned beyond 16 bytes.
///
/// The stride is the future's size (a multiple of its alignment, so every frame is aligned: the
/// frames start 16-byte aligned), not a whole sector a thread. A warp's access to one field of
/// its frames then touches `32 × stride` bytes: one sector for a future of one byte, where
/// 16-byte frames made it 16 (`bench/NOTES.md` entry 95).
///
/// The branches stay in this order, the zero-sized case (never an `async` body's future) with
/// them: written as `if suspends { size } else { 0 }`, the same values moved LLVM's block
/// placement in every spawn, then ptxas's spills in the kernels without waits, and cost the
/// block BFS 9 % on an H200 (entry 95).
pub(crate) const fn layout<A, F>(suspends: bool) -> Option<(usize, usize)> {
    if core::mem::align_of::<A>() > MAX_ALIGN || core::mem::align_of::<F>() > MAX_ALIGN {
        return None;
    }
    let stride = if !suspends {
        0
    } else if core::mem::size_of::<F>() == 0 {
        16
    } else {
        core::mem::size_of::<F>()
    };
    Some((align16(ARGS_OFFSET + core::mem::size_of::<A>()), stride))
}

/// Bytes of a record with arguments `A` and future `F` in blocks of `threads` threads.
pub(crate) const fn record_bytes<A, F>(suspends: bool, threads: u32) -> Option<usize> {
    match layout::<A, F>(suspends) {
        Some((frames, stride)) => Some(frames + threads as usize * stride),
        None => None,
    }
}

/// The export of block-mode task function `T`'s record size ([`RecordSize::block`]).
pub const fn record_size_u32<T: BlockTask>() -> u32 {
    match record_layout::<T>() {
        Some((frames, stride)) => RecordSize::block(frames as u32, stride as u32),
        None => crate::abi::OVER_ALIGNED,
    }
}

/// [`record_bytes`] of `T`'s records in blocks of `threads` threads.
pub(crate) const fn record_bytes_for<T: BlockTask>(threads: u32) -> Option<usize> {
    const fn of<A, F: Future>(
        _start: fn(&'static A) -> F,
        suspends: bool,
        threads: u32,
    ) -> Option<usize> {
        record_bytes::<A, F>(suspends, threads)
    }
    of(T::start_shared, T::SUSPENDS, threads)
}

/// [`layout`] of `T`'s records: its arguments, and the future its frames hold.
pub(crate) const fn record_layout<T: BlockTask>() -> Option<(usize, usize)> {
    const fn of<A, F: Future>(
        _start: fn(&'static A) -> F,
        suspends: bool,
    ) -> Option<(usize, usize)> {
        layout::<A, F>(suspends)
    }
    of(T::start_shared, T::SUSPENDS)
}

#[inline(always)]
fn prefix(h: *mut Header) -> *mut u32 {
    (h as *mut u8).wrapping_add(HEADER_BYTES) as *mut u32
}

/// Writes a new block-mode record for `T(args)` into slot `h`.
///
/// # Safety
/// `h` is a free slot, owned by the caller, of at least
/// `record_bytes::<T::Args, F>(T::SUSPENDS, threads)` bytes for the launch's block size, where
/// `F` is `T`'s future.
#[inline(always)]
pub(crate) unsafe fn write<T: BlockTask>(
    h: *mut Header,
    args: T::Args,
    dst: *mut T::Output,
    parent: u32,
    queue: u32,
) {
    // As `crate::record::write`: plain fields first, `pending` atomically (see "Recycled slots"
    // in `crate::join`).
    // SAFETY: per the contract, the slot is free and large enough, and nobody else sees it.
    unsafe {
        (&raw mut (*h).poll).write(poll_fn::<T>());
        (&raw mut (*h).dst).write(dst as *mut u8);
        (&raw mut (*h).parent).write(parent);
        (&raw mut (*h).queue).write(queue);
        (&raw mut (*h).resume).write(SPAWN_QUEUE);
        (*h).pending.store(0, Ordering::Relaxed);
        prefix(h).write(0);
        ((h as *mut u8).add(ARGS_OFFSET) as *mut T::Args).write(args);
    }
}

/// Where a block-mode body reads its task's arguments from (`gtap::__private::block_args`).
pub trait ArgsSource<A>: Copy {
    /// Reads a copy of the arguments.
    ///
    /// # Safety
    /// `A` is a `BlockTask`'s `Args` (which are `Copy`), and the source refers to them: a live
    /// reference, or a [`PolledArgs`] read while its task is polled.
    unsafe fn read_args(self) -> A;
}

impl<A> ArgsSource<A> for &A {
    #[inline(always)]
    unsafe fn read_args(self) -> A {
        // SAFETY: per the contract, `A: Copy`.
        unsafe { core::ptr::read(self) }
    }
}

/// The arguments of the task the calling thread polls, read from its record: what
/// [`BlockTask::start_shared`]'s future reads them from. It is zero-sized, so the future holds
/// no pointer to the record in any frame (the record is found from the lane's task id), and a
/// frame holds only what the body keeps across a wait.
pub struct PolledArgs<A>(core::marker::PhantomData<fn() -> A>);

impl<A> PolledArgs<A> {
    /// The polled task's arguments.
    #[inline(always)]
    pub const fn new() -> Self {
        Self(core::marker::PhantomData)
    }
}

impl<A> Default for PolledArgs<A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A> Clone for PolledArgs<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A> Copy for PolledArgs<A> {}

impl<A> ArgsSource<A> for PolledArgs<A> {
    #[inline(always)]
    unsafe fn read_args(self) -> A {
        let lane = arch::current_block_lane();
        // SAFETY: the polling thread owns its context; the worker set `task` to the polled
        // task before the poll (`super::worker`).
        let task = unsafe { lane.ctx() }.task;
        let h = lane.region().header(task);
        // SAFETY: per the contract, `task` is a block-mode record of a function whose arguments
        // are `A` (written by `write`), which stay in place while it is polled.
        unsafe { ((h as *const u8).add(ARGS_OFFSET) as *const A).read() }
    }
}

/// Marks the record's frames as built (thread 0, in the verdict after the first poll).
///
/// # Safety
/// `h` is a block-mode record owned by the calling block.
#[inline(always)]
pub(crate) unsafe fn set_started(h: *mut Header) {
    // SAFETY: per the contract; only thread 0 writes it, between two block barriers.
    unsafe { prefix(h).write(1) };
}

/// The poll shim [`write`] stores in the records of block-mode task function `T`.
#[inline(always)]
pub(crate) fn poll_fn<T: BlockTask>() -> PollFn {
    const fn of<T, A, F>(_start: fn(&'static A) -> F) -> PollFn
    where
        T: BlockTask,
        F: Future<Output = T::Output>,
    {
        poll_shim::<T, F>
    }
    of::<T, T::Args, _>(T::start_shared)
}

/// Polls the calling thread's frame of a record of `T`: [`poll_fn::<T>()`](poll_fn) as a direct
/// call that inlines.
///
/// # Safety
/// `h` is a record written by [`write`] for `T`, run by the calling block.
#[inline(always)]
pub(crate) unsafe fn poll_as<T: BlockTask>(h: *mut Header) -> bool {
    #[inline(always)]
    unsafe fn with<T, A, F>(_start: fn(&'static A) -> F, h: *mut Header) -> bool
    where
        T: BlockTask,
        F: Future<Output = T::Output>,
    {
        // SAFETY: per `poll_as`'s contract, `h` holds a `T` record with future `F`.
        unsafe { poll_frame::<T, F>(h) }
    }
    // SAFETY: as above.
    unsafe { with::<T, T::Args, _>(T::start_shared, h) }
}

/// [`TaskFunction::poll_this`](crate::task::TaskFunction::poll_this) of a block-mode function
/// `T`: polls the calling thread's frame of the request's record with a direct call if it is
/// one of `T`'s.
///
/// # Safety
/// The record is run by the calling block; every thread of the block polls its own frame.
#[inline(always)]
pub(crate) unsafe fn poll_if<T: BlockTask>(r: &crate::record::PollRequest) -> Option<bool> {
    // SAFETY: the shim is `T`'s, so the record is one of `T` (written by `write`).
    core::ptr::fn_addr_eq(r.poll, poll_fn::<T>()).then(|| unsafe { poll_as::<T>(r.h) })
}

/// Out of line, one instance per crate, and named `poll_shim` like thread mode's: `gtap-builder`
/// finds the task functions a kernel reaches by that name (see `crate::record`).
#[inline(never)]
unsafe fn poll_shim<T, F>(h: *mut Header) -> bool
where
    T: BlockTask,
    F: Future<Output = T::Output>,
{
    // SAFETY: the caller's contract is `poll_frame`'s.
    unsafe { poll_frame::<T, F>(h) }
}

/// Builds `T`'s future over the arguments at `args` at `frame`. Written through an inferred
/// pointer type, so the future is stored as the very type `T::start_shared` returns.
///
/// # Safety
/// `frame` is valid for writes of that future and aligned for it; `args` is the record's
/// arguments, which stay in place while the future lives (until the record is freed).
#[inline(always)]
unsafe fn start_into<T: BlockTask>(args: *const T::Args, frame: *mut u8) {
    // SAFETY: per the contract, the reference outlives every use the future makes of it.
    let fut = T::start_shared(unsafe { &*args });
    // SAFETY: per the contract.
    unsafe { core::ptr::write(frame.cast(), fut) };
}

/// Polls the calling thread's frame once. Returns `true` when its future completed (thread 0's
/// result is then in the destination).
///
/// # Safety
/// `h` is a record written by [`write`] for `T`, whose future type is `F`, run by the calling
/// block; every thread of the block polls its own frame.
#[inline(always)]
unsafe fn poll_frame<T, F>(h: *mut Header) -> bool
where
    T: BlockTask,
    F: Future<Output = T::Output>,
{
    let lane = arch::current_block_lane();
    // SAFETY: the polling thread owns its context.
    unsafe { lane.ctx() }.info = &T::INFO;
    let Some((frames, stride)) = layout::<T::Args, F>(T::SUSPENDS) else {
        // Never written: the spawn checked the layout.
        return false;
    };
    let thread = arch::block_view().thread as usize;
    // SAFETY: the record is the block's while it polls it.
    let dst = unsafe { (*h).dst } as *mut T::Output;
    let mut cx = Context::from_waker(Waker::noop());
    let args = (h as *const u8).wrapping_add(ARGS_OFFSET) as *const T::Args;
    if !T::SUSPENDS {
        // No frame: the future lives on this thread's stack for its one poll (see the module
        // docs).
        // SAFETY: the arguments are `Copy` (`BlockTask`), written by the spawner.
        let fut = core::pin::pin!(T::start(unsafe { args.read() }));
        return match fut.poll(&mut cx) {
            // SAFETY: as in the frame's case below.
            Poll::Ready(v) => unsafe { deliver(thread, dst, v) },
            Poll::Pending => panic!("a task function without a wait suspended"),
        };
    }
    let frame = (h as *mut u8).wrapping_add(frames + thread * stride) as *mut F;
    // Loaded with the prefix rather than after it.
    arch::prefetch(frame as *const u8);
    // SAFETY: the record is the block's while it runs it; `started` is written by thread 0
    // only between the block barriers around the verdict, never during a poll.
    if unsafe { prefix(h).read() } == 0 {
        // SAFETY: the frame lies inside the slot (checked at the spawn) and is this thread's
        // alone; the arguments were written by the spawner and stay until the slot is freed.
        unsafe { start_into::<T>(args, frame as *mut u8) };
    }
    // SAFETY: the frame was built by `start_into::<T>`, whose future type `F` is (this shim is
    // instantiated from `T::start_shared`), and never moves.
    match unsafe { Pin::new_unchecked(&mut *frame) }.poll(&mut cx) {
        Poll::Ready(v) => {
            // SAFETY: the future completed and is dropped once, here; the destination as in
            // `deliver`.
            unsafe {
                core::ptr::drop_in_place(frame);
                deliver(thread, dst, v)
            }
        }
        Poll::Pending => false,
    }
}

/// Thread 0 writes the task's result `v` to `dst` (unless null); the other threads drop theirs.
/// Returns `true`, the poll's "completed".
///
/// # Safety
/// As in `crate::record::poll_future`: `dst` is null or a live `T::Output` of the spawning
/// thread's frame (or the root result), written only by thread 0 of the block running the task.
#[inline(always)]
unsafe fn deliver<O>(thread: usize, dst: *mut O, v: O) -> bool {
    if thread == 0 && !dst.is_null() {
        // SAFETY: per the contract.
        unsafe { dst.write(v) };
    } else {
        drop(v);
    }
    true
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn frames_follow_the_arguments_16_byte_aligned_one_future_apart() {
        assert_eq!(layout::<(u32,), [u8; 40]>(true), Some((64, 40)));
        assert_eq!(layout::<(u64, u64, u64), u8>(true), Some((80, 1)));
        assert_eq!(layout::<(u32,), (u64, u8)>(true), Some((64, 16)));
        assert_eq!(record_bytes::<(u32,), [u8; 40]>(true, 4), Some(64 + 4 * 40));
        // Without a wait there are no frames.
        assert_eq!(layout::<(u32,), [u8; 40]>(false), Some((64, 0)));
        assert_eq!(record_bytes::<(u32,), [u8; 40]>(false, 256), Some(64));
        #[repr(align(32))]
        struct Wide;
        assert_eq!(layout::<(u32,), Wide>(true), None);
        assert_eq!(layout::<(u32,), Wide>(false), None);
    }
}
