//! [`Slice`]: the shared, read-only view.

use core::ops::Deref;

use super::index::ViewIndex;
use super::raw::Raw;

/// A read-only view of `len` values of `T` in device memory (host memory in the CPU executor).
/// Created on the host by `gtap-host`'s buffers; `Copy`, so any number of tasks may hold it.
///
/// It dereferences to `[T]`, so indexing, `iter`, `get`, `binary_search` and the rest of the
/// slice API work on it; [`split_at`](Self::split_at) and [`range`](Self::range) give smaller
/// views to hand to children:
///
/// ```
/// let values = [1u32, 2, 3, 4, 5];
/// // SAFETY: `values` outlives the view and is not modified meanwhile.
/// let all = unsafe { gtap_device::Slice::from_raw_parts(values.as_ptr(), values.len()) };
/// let (left, right) = all.split_at(2);
/// assert_eq!(left.iter().sum::<u32>(), 3);
/// assert_eq!(right[0], 3);
/// assert_eq!(&all[1..4], &[2, 3, 4]);
/// assert_eq!(&*all.range(1..4), &all[1..4]);
/// ```
#[repr(C)]
pub struct Slice<T> {
    raw: Raw<T>,
}

view_common!(Slice, "shared views", Copy);

impl<T> Slice<T> {
    /// A view of `len` values at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be non-null, aligned, and point to `len` initialised values of `T` that stay
    /// valid and unmodified for as long as the view (or a view made from it) is used (normally:
    /// the launch it is passed to).
    pub const unsafe fn from_raw_parts(ptr: *const T, len: usize) -> Self {
        Self {
            raw: Raw::new(ptr.cast_mut(), len),
        }
    }
}

impl<T> Deref for Slice<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `from_raw_parts`'s contract: the values stay initialised and unmodified.
        unsafe { self.raw.as_slice() }
    }
}

impl<T, I: ViewIndex<T>> core::ops::Index<I> for Slice<T> {
    type Output = I::Output;
    /// # Panics
    /// If the index is out of bounds or the range decreasing or past the end (a device error
    /// on the GPU).
    #[inline(always)]
    #[track_caller]
    fn index(&self, i: I) -> &I::Output {
        // SAFETY: the view's own pointer and length, and `locate` checked the bounds; the
        // values stay unmodified by the view's contract.
        unsafe { &*i.locate(self.raw.ptr(), self.raw.len()) }
    }
}
