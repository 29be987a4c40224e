//! [`Part`]: the exclusive view, and [`Loan`]: the receipt that joins lent halves back.

use core::ops::{Deref, DerefMut};

use super::index::ViewIndex;
use super::raw::Raw;

/// Values of `T` in device memory that one task owns: nobody else reads or writes them while
/// it holds the part. Not `Copy` and not `Clone`, so ownership moves: into a child with
/// `task!`, back to the parent as the child's result.
///
/// Reads and writes are safe. It dereferences to `[T]`, so indexing, `iter`, `iter_mut`,
/// `swap`, `copy_from_slice`, `chunks_mut`, `sort` and the rest of the slice API work on it.
/// To hand pieces to children, split it: [`split_at`](Self::split_at) gives the halves away
/// for good, [`lend`](Self::lend) also returns a [`Loan`] that joins the halves back once the
/// children have returned them.
///
/// A kernel gets its parts from its writable arguments with [`SliceMut::claim`]
/// (`unsafe`: the kernel promises the buffer is not also reached another way).
///
/// ```
/// # let mut values = [4, 3, 2, 1];
/// # // SAFETY: `values` outlives the view and is only used through the part.
/// # let mut part = unsafe { gtap_device::SliceMut::from_raw_parts(values.as_mut_ptr(), 4).claim() };
/// let (mut left, mut right, loan) = part.lend(2);
/// left.swap(0, 1); // in a task: `gtap::task!(l = sort(left))`, ...
/// right.sort();
/// let whole = loan.join(left, right); // ... and this after `gtap::taskwait!()`
/// assert_eq!(&*whole, &[3, 4, 1, 2]);
/// ```
///
/// [`SliceMut::claim`]: super::SliceMut::claim
pub struct Part<T> {
    raw: Raw<T>,
}

view_common!(Part, "parts");

impl<T> Part<T> {
    /// The part owning exactly the values of `raw`.
    ///
    /// # Safety
    /// Nothing else reads or writes those values while this part, or a part split from it,
    /// is in use.
    #[inline(always)]
    pub(super) unsafe fn from_raw(raw: Raw<T>) -> Self {
        Self { raw }
    }

    /// A part of no values (the initial value of a destination that a child fills).
    #[inline(always)]
    pub const fn empty() -> Self {
        Self { raw: Raw::empty() }
    }

    /// The first `mid` values and the rest, as two parts, and the [`Loan`] that joins them
    /// back into this part once they are returned.
    ///
    /// # Panics
    /// If `mid > len` (a device error on the GPU).
    #[inline(always)]
    #[track_caller]
    pub fn lend(self, mid: usize) -> (Self, Self, Loan<T>) {
        let whole = self.raw;
        let (left, right) = self.split_at(mid);
        (left, right, Loan { whole })
    }
}

impl<T> Default for Part<T> {
    /// [`Part::empty`].
    fn default() -> Self {
        Self::empty()
    }
}

impl<T> Deref for Part<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: the part owns its values (`from_raw`'s contract); the borrow of `self` keeps
        // writers through it away while the slice lives.
        unsafe { self.raw.as_slice() }
    }
}

impl<T> DerefMut for Part<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: the part owns its values; the mutable borrow of `self` makes the slice the
        // only access while it lives.
        unsafe { self.raw.as_mut_slice() }
    }
}

impl<T, I: ViewIndex<T>> core::ops::Index<I> for Part<T> {
    type Output = I::Output;
    /// # Panics
    /// If the index is out of bounds or the range decreasing or past the end (a device error
    /// on the GPU).
    #[inline(always)]
    #[track_caller]
    fn index(&self, i: I) -> &I::Output {
        // SAFETY: the part's own pointer and length, and `locate` checked the bounds; the part
        // owns the values.
        unsafe { &*i.locate(self.raw.ptr(), self.raw.len()) }
    }
}

impl<T, I: ViewIndex<T>> core::ops::IndexMut<I> for Part<T> {
    /// # Panics
    /// If the index is out of bounds or the range decreasing or past the end (a device error
    /// on the GPU).
    #[inline(always)]
    #[track_caller]
    fn index_mut(&mut self, i: I) -> &mut I::Output {
        // SAFETY: the part's own pointer and length, and `locate` checked the bounds; the part
        // owns the values and `self` is borrowed mutably.
        unsafe { &mut *i.locate(self.raw.ptr(), self.raw.len()) }
    }
}

/// The receipt of [`Part::lend`]: gives the lent part back, whole, in exchange for its two
/// halves. It holds no access itself, so the parent cannot touch the values while the halves
/// are away (in children, until `taskwait!`).
#[must_use = "a loan is the only way to join the halves back"]
pub struct Loan<T> {
    whole: Raw<T>,
}

impl<T> Loan<T> {
    /// The lent part, from its two halves.
    ///
    /// # Panics
    /// If `left` and `right` are not the halves this loan lent (a device error on the GPU).
    #[inline(always)]
    #[track_caller]
    pub fn join(self, left: Part<T>, right: Part<T>) -> Part<T> {
        // Parts never overlap, so halves at the lent addresses and lengths are the lent ones.
        let (l, r) = (left.raw, right.raw);
        let right_start = l.ptr().wrapping_add(l.len());
        if l.ptr() != self.whole.ptr() || r.ptr() != right_start {
            not_the_halves();
        }
        if l.len() + r.len() != self.whole.len() {
            not_the_halves();
        }
        Part { raw: self.whole }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn not_the_halves() -> ! {
    panic!("gtap Loan::join: these parts are not the halves this loan lent")
}
