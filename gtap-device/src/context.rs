//! The launch context: read-only data that every task of a launch can read, given once to
//! `entry!` instead of being copied into every task's record.
//!
//! A BFS's tasks all read the same graph. Passed as arguments, its three slices would be 48
//! bytes of every task's record, written by every spawn and read by every poll; as the launch's
//! context they are written once per launch. A task function receives it as a parameter of type
//! [`Context<C>`] (its first, or its second after a block-mode function's `&gtap::Block`),
//! which `task!` does not pass:
//!
//! ```ignore
//! #[derive(Clone, Copy)]
//! pub struct Graph { row: Slice<i32>, col: Slice<i32>, depth: SliceMut<i32> }
//!
//! #[gtap::function]
//! fn visit(graph: gtap::Context<Graph>, v: i32) {
//!     let dv = graph.depth.atomic_load(v as usize);
//!     for e in graph.row[v as usize]..graph.row[v as usize + 1] {
//!         let u = graph.col[e as usize];
//!         if graph.depth.atomic_min(u as usize, dv + 1) > dv + 1 {
//!             gtap::task!(visit(u));
//!         }
//!     }
//! }
//!
//! #[gtap::kernel]
//! fn bfs(row: Slice<i32>, col: Slice<i32>, depth: SliceMut<i32>) {
//!     gtap::entry!(context(Graph { row, col, depth }), visit(0))
//! }
//! ```
//!
//! # Where it lives
//!
//! In the runtime's region ([`Layout::context`](crate::abi::Layout::context), [`CONTEXT_BYTES`]),
//! on the GPU as on the CPU executor. The lane that creates the root task writes it
//! ([`store`]) just before it publishes the root, and a task reads it only after it obtained
//! its record, which every task does through a chain of publications (release) and claims
//! (acquire) that starts at the root's (see `crate::scheduler`): the same order that makes a
//! task's arguments, written by its parent before the spawn, visible to the lane that polls
//! it. No task writes it, so each block may keep it in its L1 cache for the rest of the launch.
//! (A copy in each block's shared memory was tried first: 256 more bytes of shared memory a
//! block cost the block BFS one block a multiprocessor, and its gain; `bench/NOTES.md`,
//! entry 52.)
//!
//! # Which code may read which context
//!
//! Every task function implements [`RunsIn<C>`] for the contexts it can run under: a function
//! with a `Context<X>` parameter for `X` only, one without for every `C`. `entry!` requires its
//! root to run in the context it gives (`()` without a `context(..)` clause), and `task!` its
//! child in the spawning function's (`()` for a function without a context parameter), so a
//! task never reads a context of another type than the launch's, or one the launch lacks.

use core::marker::PhantomData;
use core::ops::Deref;

use crate::abi::{CONTEXT_ALIGN, CONTEXT_BYTES};
use crate::arch;
use crate::region::Region;

/// The launch's context, as a task function's parameter `ctx: gtap::Context<C>`: dereferences to
/// the `C` that `entry!(context(value), ..)` gave. `task!` does not pass it.
///
/// Neither `Copy` nor `Clone`: it points into the running launch, so it must not outlive it
/// (a kernel's result is `Copy`). Borrow it (`&ctx`, `&*ctx`) to hand it to helper functions,
/// or copy the value out (`*ctx`).
///
/// ```ignore
/// #[derive(Clone, Copy)]
/// pub struct Rows { ptr: gtap::Slice<i32>, out: gtap::SliceMut<i32> }
///
/// /// Writes each row's length, splitting the row range in halves.
/// #[gtap::function]
/// pub fn lengths(rows: gtap::Context<Rows>, begin: u32, end: u32) {
///     if end <= begin {
///         return;
///     }
///     if end - begin > 1 {
///         let mid = (begin + end) / 2;
///         gtap::task!(lengths(begin, mid)); // the context is not passed
///         gtap::task!(lengths(mid, end));
///         return;
///     }
///     let n = rows.ptr[begin as usize + 1] - rows.ptr[begin as usize];
///     rows.out.atomic_store(begin as usize, n);
/// }
///
/// #[gtap::kernel]
/// pub fn lengths_kernel(ptr: gtap::Slice<i32>, out: gtap::SliceMut<i32>) {
///     gtap::entry!(context(Rows { ptr, out }), lengths(0, out.len() as u32))
/// }
/// ```
pub struct Context<C: 'static> {
    value: *const C,
    /// Not `Send`: the handle belongs to the task that received it.
    _task: PhantomData<*const C>,
}

impl<C: 'static> Deref for Context<C> {
    type Target = C;

    #[inline(always)]
    fn deref(&self) -> &C {
        // SAFETY: `launch_context` made the handle from the running launch's context, a `C`
        // that stays in place and unchanged until the launch ends; the handle cannot outlive
        // the launch (module docs).
        unsafe { &*self.value }
    }
}

/// Implemented by every task function for each context type `C` it can run under (module
/// docs): a function with a `Context<X>` parameter for `X` only, one without for every `C`.
/// `#[gtap::function]` writes the impl.
#[diagnostic::on_unimplemented(
    message = "`{Self}` reads a launch context of another type than the code that starts it (`{C}`)",
    label = "its `gtap::Context<..>` parameter needs another context",
    note = "a kernel gives the context with `gtap::entry!(context(value), f(..))`, and a task function that spawns a child reading a context must take the same `gtap::Context<..>` parameter"
)]
pub trait RunsIn<C: ?Sized> {}

/// Whether a `C` fits the context area: at most [`CONTEXT_BYTES`] bytes, aligned to at most
/// [`CONTEXT_ALIGN`]. [`store`] checks it at compile time.
pub(crate) const fn fits<C>() -> bool {
    core::mem::size_of::<C>() <= CONTEXT_BYTES && core::mem::align_of::<C>() <= CONTEXT_ALIGN
}

/// Writes the launch's context into the region: on the lane that creates the root, before it
/// publishes the root (or, on the CPU executor's work-first mode, before any thread starts).
#[inline(always)]
pub(crate) fn store<C: Copy>(region: &Region, value: C) {
    // Evaluated when `store` is instantiated for the context type of a kernel's `entry!`.
    const {
        assert!(
            fits::<C>(),
            "a gtap launch context must be at most 256 bytes and aligned to at most 16: keep \
             large data in a device buffer and put a `Slice` of it in the context"
        )
    };
    // SAFETY: the context area is `CONTEXT_BYTES` long and aligned to `REGION_ALIGN`, and a
    // `C` fits it (checked above); no task runs yet, so nothing reads the area while it is
    // written.
    unsafe { (region.context as *mut C).write(value) };
}

/// The context of the running launch, for the parameter `#[gtap::function]` binds.
///
/// # Safety
/// Called in a task body of a function that implements only `RunsIn<C>` for contexts other
/// than `()`: `entry!` then gave the launch a `C` (module docs).
#[inline(always)]
pub unsafe fn launch_context<C: 'static>() -> Context<C> {
    Context {
        value: arch::current_lane().region().context as *const C,
        _task: PhantomData,
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn contexts_up_to_the_area_fit() {
        assert!(fits::<()>());
        assert!(fits::<[u64; CONTEXT_BYTES / 8]>());
        assert!(!fits::<[u8; CONTEXT_BYTES + 1]>());
        #[repr(align(32))]
        struct Wide;
        assert!(!fits::<Wide>());
    }
}
