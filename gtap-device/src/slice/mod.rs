//! Views of device buffers: what kernels receive and tasks read and write.
//!
//! Three views, by who may access the values:
//!
//! | view | `Copy` | access | for |
//! |---|---|---|---|
//! | [`Slice`] | yes | safe reads | inputs every task may read (graphs, matrices) |
//! | [`SliceMut`] | yes | atomics; `unsafe` reads and writes | counters and results shared by unrelated tasks; kernel arguments |
//! | [`Part`] | no | safe reads and writes | divide and conquer: a range one task owns |
//!
//! # Why `Part` is an owned value moved between tasks
//!
//! A child task outlives the statement that spawns it: its arguments are stored in its task
//! record until it runs, so they must be `'static`, and a borrow of the parent's data (as in
//! `rayon::join`) cannot be passed. What the borrow checker can still prove is *ownership*: a
//! `Part` is neither `Copy` nor `Clone`, so once `task!` has moved it into a child, the parent
//! cannot name it any more (`use of moved value`), before the wait or after. Splitting a part
//! consumes it, so the two halves are disjoint by construction, and a task holding a part is
//! its only user: safe indexing, `iter_mut`, `swap` and the rest of `[T]`'s API follow.
//!
//! The parent gets the values back the same way they left: the child returns its part as (part
//! of) its result, which the parent reads after `taskwait!` (the macros already forbid reading
//! a destination earlier). [`Part::lend`] splits like [`Part::split_at`] and also hands out a
//! [`Loan`], which holds no access of its own; [`Loan::join`] turns it and the two returned
//! halves back into the whole, after checking that they are the halves it lent (two parts
//! never overlap, so matching addresses and lengths identify them). This costs the 16 bytes of
//! a part per result and one compare per join, and no `unsafe` in any task function.
//!
//! The one `unsafe` step is [`SliceMut::claim`], once per buffer in the kernel: only the
//! kernel knows that the host did not pass the same buffer twice, or also as a [`Slice`].
//!
//! The shared views stay `Copy`: atomics on a [`SliceMut`] are meant for many tasks at once,
//! and a [`Slice`] is read by all. Their [`split_at`](Slice::split_at) and
//! [`range`](Slice::range) give smaller shared views.
//!
//! Out-of-bounds indices, split points and ranges panic, which on the GPU is a device error
//! naming the task and line; the check is one compare and a branch to a cold function, as in
//! a Rust slice.

/// What every view has over its [`raw::Raw`] core, written once so the three cannot drift:
/// `Debug`, [`split_at`](Slice::split_at) and [`range`](Slice::range) (which consume the view:
/// for a [`Part`] that gives the rest away), and, for the `Copy` views, `Clone` and `Copy`.
macro_rules! view_common {
    ($view:ident, $kind:literal $(, $copy:ident)?) => {
        $(
            impl<T> Clone for $view<T> {
                fn clone(&self) -> Self {
                    *self
                }
            }
            impl<T> $copy for $view<T> {}
        )?

        impl<T> core::fmt::Debug for $view<T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                self.raw.debug(stringify!($view), f)
            }
        }

        impl<T> $view<T> {
            #[doc = concat!("The first `mid` values and the rest, as two ", $kind, ".")]
            ///
            /// # Panics
            /// If `mid > len` (a device error on the GPU).
            #[inline(always)]
            #[track_caller]
            pub fn split_at(self, mid: usize) -> (Self, Self) {
                let (left, right) = self.raw.split_at(mid);
                (Self { raw: left }, Self { raw: right })
            }

            #[doc = concat!("The values in `range`, as one of the ", $kind, ".")]
            ///
            /// # Panics
            /// If the range is decreasing or ends past `len` (a device error on the GPU).
            #[inline(always)]
            #[track_caller]
            pub fn range(self, range: impl core::ops::RangeBounds<usize>) -> Self {
                Self {
                    raw: self.raw.range(range),
                }
            }
        }
    };
}

mod index;
mod part;
mod raw;
mod shared;
mod shared_mut;
#[cfg(test)]
mod tests;

pub use part::{Loan, Part};
pub use shared::Slice;
pub use shared_mut::SliceMut;
