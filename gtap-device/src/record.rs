//! Task records: a fixed header followed by the task's future, in one pool slot.
//!
//! A record never moves once written, so the future may hold pointers into itself and children
//! may write their results into the parent's locals through raw pointers. The header's `poll`
//! is a monomorphised shim that knows the future's concrete type.

use core::future::Future;
use core::pin::Pin;
use core::sync::atomic::Ordering;
use core::task::{Context, Poll, Waker};

use crate::abi::HEADER_BYTES;
use crate::arch::{self, AtomicU32};
use crate::task::TaskFunction;

/// The largest alignment a task future may require.
pub const MAX_ALIGN: usize = 16;

/// Polls the record's future once. Returns `true` when it has completed (and its result has been
/// written to the destination).
pub(crate) type PollFn = unsafe fn(*mut Header) -> bool;

/// [`Header::resume`]: the continuation runs on the queue the task was spawned on (a wait
/// without a queue clause).
pub(crate) const SPAWN_QUEUE: u32 = u32::MAX - 1;

/// [`Header::resume`]: the task returned but children it spawned after its last wait are still
/// running: the last of them finishes it.
pub(crate) const COMPLETING: u32 = u32::MAX;

/// Sentinel for "no task".
pub(crate) const NONE: u32 = u32::MAX;

/// The fixed part of a task record.
#[repr(C, align(16))]
pub(crate) struct Header {
    /// Polls the future that follows the header.
    pub(crate) poll: PollFn,
    /// Where the result goes (a local of the parent's future, or the root result); null to
    /// discard it.
    pub(crate) dst: *mut u8,
    /// Parent task id, [`NONE`] for the root.
    pub(crate) parent: u32,
    /// Children still running at the current wait (or at the implicit wait on return). Only
    /// ever accessed atomically, even when a record is written (see [`crate::join`]).
    pub(crate) pending: AtomicU32,
    /// Queue the task was spawned on; the default queue for its continuations.
    pub(crate) queue: u32,
    /// What follows the current wait: the queue its continuation runs on, [`SPAWN_QUEUE`], or
    /// [`COMPLETING`]. One word, so that the last child's lane learns both what to do and
    /// where from one read (next to `queue`, so a wait need not read `queue` to set it).
    pub(crate) resume: u32,
}

/// Bytes a record of `F` needs, or `None` if `F` is aligned beyond [`MAX_ALIGN`].
pub const fn record_bytes<F>() -> Option<usize> {
    if core::mem::align_of::<F>() > MAX_ALIGN {
        None
    } else {
        Some(HEADER_BYTES + core::mem::size_of::<F>())
    }
}

#[inline(always)]
fn payload<F>(h: *mut Header) -> *mut F {
    // SAFETY: the payload starts right after the 16-aligned header inside the same slot.
    unsafe { (h as *mut u8).add(HEADER_BYTES) as *mut F }
}

/// Writes a new record for task function `T` with future `fut` into slot `h`.
///
/// # Safety
/// `h` is a free slot of at least `record_bytes::<F>()` bytes, owned by the caller.
#[inline(always)]
pub(crate) unsafe fn write<T, F>(
    h: *mut Header,
    fut: F,
    dst: *mut T::Output,
    parent: u32,
    queue: u32,
) where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    #[cfg(loom)]
    arch::shadow::write(h as usize);
    // Field by field, so that `pending` is written atomically: a child of the slot's previous
    // task may still be in its decrement of that word (see "Recycled slots" in
    // `crate::join`). The plain fields are written first, so they can still merge into wide
    // stores.
    // SAFETY: per the contract, the slot is free and large enough; nobody else can see its
    // plain fields yet.
    unsafe {
        (&raw mut (*h).poll).write(poll_shim::<T, F>);
        (&raw mut (*h).dst).write(dst as *mut u8);
        (&raw mut (*h).parent).write(parent);
        (&raw mut (*h).queue).write(queue);
        (&raw mut (*h).resume).write(SPAWN_QUEUE);
        (*h).pending.store(0, Ordering::Relaxed);
        payload::<F>(h).write(fut);
    }
}

/// The poll shim that [`write`] stores in the records of task function `T`.
#[inline(always)]
pub(crate) fn poll_fn<T: TaskFunction>() -> PollFn {
    const fn of<T, A, F>(_start: fn(A) -> F) -> PollFn
    where
        T: TaskFunction,
        F: Future<Output = T::Output>,
    {
        poll_shim::<T, F>
    }
    of::<T, T::Args, _>(T::start)
}

/// A claimed record and the poll shim its header holds, as the scheduler hands them to
/// [`TaskFunction::poll_this`] and [`TaskFunction::poll_spawned`] (thread and block mode).
#[doc(hidden)]
pub struct PollRequest {
    pub(crate) poll: PollFn,
    pub(crate) h: *mut Header,
}

/// [`TaskFunction::poll_this`] of a thread-mode function `T`: polls the request's record with
/// a direct call if it is one of `T`'s.
///
/// # Safety
/// The record is claimed by the calling lane.
#[inline(always)]
pub(crate) unsafe fn poll_if<T: TaskFunction>(r: &PollRequest) -> Option<bool> {
    // SAFETY: the shim is `T`'s, so the record is one of `T` (written by `write`).
    core::ptr::fn_addr_eq(r.poll, poll_fn::<T>()).then(|| unsafe { poll_as::<T>(r.h) })
}

/// Polls a record of task function `T`: the same as calling [`poll_fn::<T>()`](poll_fn), but a
/// direct call that inlines, where the scheduler knows the function.
///
/// # Safety
/// `h` is a record written by [`write`] for `T`, owned by the calling lane.
#[inline(always)]
pub(crate) unsafe fn poll_as<T: TaskFunction>(h: *mut Header) -> bool {
    #[inline(always)]
    unsafe fn with<T, A, F>(_start: fn(A) -> F, h: *mut Header) -> bool
    where
        T: TaskFunction,
        F: Future<Output = T::Output>,
    {
        // SAFETY: per `poll_as`'s contract, `h` holds a `T` record with future `F`.
        unsafe { poll_future::<T, F>(h) }
    }
    // SAFETY: as above.
    unsafe { with::<T, T::Args, _>(T::start, h) }
}

/// The function whose address [`write`] stores in the records of `T`: [`poll_future`], out of
/// line. (`gtap-builder` finds the task functions a kernel reaches by this name.)
///
/// Why not `poll_future` itself: rustc copies an `#[inline]` function into every codegen unit
/// that uses it, each copy with its own address, so the address `write` stored (taken in the
/// unit that spawns) and the one the scheduler compares with [`poll_fn`] (taken in the
/// kernel's unit) belonged to different copies, and the scheduler's direct, inlined poll of
/// the root function never ran. A generic function that is not `#[inline]` has one instance
/// per crate.
#[inline(never)]
unsafe fn poll_shim<T, F>(h: *mut Header) -> bool
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    // SAFETY: the caller's contract is `poll_future`'s.
    unsafe { poll_future::<T, F>(h) }
}

/// Polls the future of a record written by [`write`] for the same `T` and `F`.
#[inline(always)]
unsafe fn poll_future<T, F>(h: *mut Header) -> bool
where
    T: TaskFunction,
    F: Future<Output = T::Output>,
{
    let lane = arch::current_lane();
    // SAFETY: the polling lane owns its context.
    unsafe { lane.ctx() }.info = &T::INFO;
    let fut = payload::<F>(h);
    // Read before the poll, so that its latency hides behind the task's own work: read after,
    // the lane waited for it at every task's end.
    // SAFETY: the record is this lane's while it polls it.
    let dst = unsafe { (*h).dst } as *mut T::Output;
    let mut cx = Context::from_waker(Waker::noop());
    // SAFETY: the record was written by `write::<T, F>` and never moves, so pinning it in place
    // is sound; only this lane polls it now (it was claimed from a queue).
    match unsafe { Pin::new_unchecked(&mut *fut) }.poll(&mut cx) {
        Poll::Ready(v) => {
            // For loom: the result lands in the parent's record, beside its siblings' results.
            // Marked as a read of the parent's record, so that loom checks it against the
            // parent's polls (writes) but not against the siblings.
            #[cfg(loom)]
            {
                // SAFETY: the record is this lane's until the task is freed.
                let parent = unsafe { (*h).parent };
                if parent != NONE {
                    arch::shadow::read(lane.region().header(parent) as usize);
                }
            }
            // SAFETY: `dst` is null or points to a `T::Output` slot that stays allocated until this
            // task's parent resumes (the parent waits for it; `#[gtap::function]` checks that a
            // wait follows in the destination's scope). The old value is overwritten, not
            // dropped: a parent that already returned has dropped its locals itself.
            unsafe {
                if dst.is_null() {
                    drop(v);
                } else {
                    dst.write(v);
                }
                core::ptr::drop_in_place(fut);
            }
            true
        }
        Poll::Pending => false,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use core::cell::Cell;
    use core::future::Future;
    use core::pin::Pin;
    use core::sync::atomic::Ordering;
    use core::task::{Context, Poll};

    use super::*;
    use crate::arch::Warp;
    use crate::task::TaskInfo;
    use crate::testing::{Launch, geometry};

    /// Returns `Pending` once, then `Ready`: a task that waits once.
    struct YieldOnce(bool);

    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                Poll::Pending
            }
        }
    }

    std::thread_local! {
        /// [`Counted`] values dropped on this thread (tests run on threads of their own).
        static DROPS: Cell<u32> = const { Cell::new(0) };
    }

    /// A result that counts its drops.
    struct Counted;

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.set(DROPS.get() + 1);
        }
    }

    /// `x + 1` after one wait.
    struct Inc;

    impl TaskFunction for Inc {
        type Args = (u64,);
        type Output = u64;
        const INFO: TaskInfo = TaskInfo {
            name: "inc",
            file: file!(),
            line: line!(),
        };
        async fn start((x,): (u64,)) -> u64 {
            YieldOnce(false).await;
            x + 1
        }
    }

    /// Returns a [`Counted`].
    struct Make;

    impl TaskFunction for Make {
        type Args = ();
        type Output = Counted;
        const INFO: TaskInfo = TaskInfo {
            name: "make",
            file: file!(),
            line: line!(),
        };
        async fn start((): ()) -> Counted {
            Counted
        }
    }

    /// Runs `f` with a free slot of a fresh launch, as lane 0 of warp 0 polling a task.
    fn in_a_lane(f: impl Fn(*mut Header)) {
        let launch = Launch::leak(geometry(1, 64, 2));
        let region = launch.region();
        let h = region.header(region.task_id(0, 3));
        let warp = Warp::new(region, 0, None);
        warp.each(Warp::splat(()), |lane, ()| {
            if lane == 0 {
                f(h)
            }
        });
    }

    #[test]
    fn a_record_is_the_header_then_the_future() {
        assert_eq!(record_bytes::<[u8; 40]>(), Some(HEADER_BYTES + 40));
        assert_eq!(record_bytes::<u128>(), Some(HEADER_BYTES + 16));
        #[repr(align(32))]
        struct Wide;
        assert_eq!(record_bytes::<Wide>(), None);
    }

    #[test]
    fn a_written_record_polls_to_its_result_through_its_stored_shim() {
        in_a_lane(|h| {
            let mut out = 0u64;
            // SAFETY: `h` is a free slot of the launch, large enough for `Inc`'s record.
            unsafe { write::<Inc, _>(h, Inc::start((41,)), &mut out, 9, 1) };
            // SAFETY: the record was just written and is this lane's.
            let header = unsafe { &*h };
            assert_eq!(
                (header.parent, header.queue, header.resume),
                (9, 1, SPAWN_QUEUE)
            );
            assert_eq!(header.pending.load(Ordering::Relaxed), 0);
            // The scheduler's direct dispatch compares the stored shim with `poll_fn`.
            assert!(core::ptr::fn_addr_eq(header.poll, poll_fn::<Inc>()));
            let poll = header.poll;
            // SAFETY: `poll` is the record's own shim; the lane owns the record.
            assert!(!unsafe { poll(h) }, "suspends at its wait");
            assert_eq!(out, 0, "no result before it completes");
            // SAFETY: as above.
            assert!(unsafe { poll(h) }, "completes after the wait");
            assert_eq!(out, 42);
        });
    }

    #[test]
    fn a_result_is_moved_into_its_destination_or_dropped_when_there_is_none() {
        in_a_lane(|h| {
            // A destination holding a value the parent already dropped: overwritten, not
            // dropped again.
            let mut out = core::mem::ManuallyDrop::new(Counted);
            let dst = &mut *out as *mut Counted;
            let before = DROPS.get();
            // SAFETY: `h` is a free slot of the launch, large enough for `Make`'s record.
            unsafe { write::<Make, _>(h, Make::start(()), dst, NONE, 0) };
            // SAFETY: the record is `Make`'s and this lane's.
            assert!(unsafe { poll_as::<Make>(h) });
            assert_eq!(
                DROPS.get(),
                before,
                "the old value is not dropped, the new one kept"
            );
            // SAFETY: as above, with no destination.
            unsafe { write::<Make, _>(h, Make::start(()), core::ptr::null_mut(), NONE, 0) };
            // SAFETY: as above.
            assert!(unsafe { poll_as::<Make>(h) });
            assert_eq!(DROPS.get(), before + 1, "a discarded result is dropped");
        });
    }

    #[test]
    fn the_sentinels_are_distinct_and_no_queue_index() {
        assert_ne!(SPAWN_QUEUE, COMPLETING);
        assert!(SPAWN_QUEUE as usize >= crate::abi::MAX_QUEUES);
        assert_eq!(core::mem::align_of::<Header>(), MAX_ALIGN);
    }
}
