//! Indexing the views by position (`v[i]`) and by range (`v[a..b]`), with the views' own bounds
//! checks: their panic messages are literals, which the GPU keeps (core's formatted ones are
//! dropped there).

use core::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use super::raw::Raw;

/// What a view can be indexed by: `usize` (one value) and the ranges of `usize` (a sub-slice).
/// Sealed: implemented here only.
pub trait ViewIndex<T> {
    /// A value or a slice of values.
    type Output: ?Sized;
    /// The address of the indexed value(s) among the `len` values at `ptr`.
    ///
    /// # Safety
    /// `ptr` points to `len` values of `T` (the view's own pointer and length).
    ///
    /// # Panics
    /// If the index is out of bounds or the range decreasing or past the end.
    unsafe fn locate(self, ptr: *mut T, len: usize) -> *mut Self::Output;
}

impl<T> ViewIndex<T> for usize {
    type Output = T;
    #[inline(always)]
    #[track_caller]
    unsafe fn locate(self, ptr: *mut T, len: usize) -> *mut T {
        Raw::new(ptr, len).at(self)
    }
}

macro_rules! by_range {
    ($($range:ty),*) => {$(
        impl<T> ViewIndex<T> for $range {
            type Output = [T];
            #[inline(always)]
            #[track_caller]
            unsafe fn locate(self, ptr: *mut T, len: usize) -> *mut [T] {
                let sub = Raw::new(ptr, len).range(self);
                core::ptr::slice_from_raw_parts_mut(sub.ptr(), sub.len())
            }
        }
    )*};
}
by_range!(
    Range<usize>,
    RangeFrom<usize>,
    RangeTo<usize>,
    RangeFull,
    RangeInclusive<usize>,
    RangeToInclusive<usize>
);
