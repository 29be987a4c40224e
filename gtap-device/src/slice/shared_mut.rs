//! [`SliceMut`]: the shared, writable view.

use super::part::Part;
use super::raw::Raw;

/// A writable view of `len` values of `T` in device memory, shared: `Copy`, so any number of
/// tasks may hold it at once. That is what kernels receive and what the atomics
/// ([`atomic_add`](Self::atomic_add), ...) work on, for counters and minima that unrelated
/// tasks update together.
///
/// Plain reads and writes through it are `unsafe` (the caller promises no other task touches
/// the element meanwhile). For divide and conquer, turn it once into a [`Part`]
/// ([`claim`](Self::claim)): an exclusive view with safe access, split between children.
#[repr(C)]
pub struct SliceMut<T> {
    raw: Raw<T>,
}

view_common!(SliceMut, "shared writable views", Copy);

impl<T> SliceMut<T> {
    /// A view of `len` values at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be non-null, aligned, and point to `len` initialised values of `T` that stay
    /// valid for as long as the view (or a view made from it) is used, and nothing outside the
    /// launch may access them meanwhile.
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        Self {
            raw: Raw::new(ptr, len),
        }
    }

    /// Number of values.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the view is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The address of element `i`, for the atomics.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn element(&self, i: usize) -> *mut T {
        self.raw.at(i)
    }

    /// The same values as an exclusive [`Part`], whose reads and writes are safe and which
    /// splits into disjoint parts for child tasks. A kernel claims each writable buffer once
    /// and hands the part to its root task.
    ///
    /// ```
    /// let mut values = [3, 1, 2];
    /// // SAFETY: `values` outlives the view and is only used through it.
    /// let view = unsafe { gtap_device::SliceMut::from_raw_parts(values.as_mut_ptr(), 3) };
    /// // SAFETY: nothing else accesses `values` while the part is used.
    /// let mut part = unsafe { view.claim() };
    /// part.sort();
    /// assert_eq!(&*part, &[1, 2, 3]);
    /// ```
    ///
    /// # Safety
    /// While the part, or any part split from it, is in use, nothing else reads or writes
    /// these values: not another claim of an overlapping view (a kernel whose host passes one
    /// buffer as two arguments must not claim both), not this view's `read`/`write` or
    /// atomics, not a [`Slice`](super::Slice) of the same buffer.
    #[inline(always)]
    pub unsafe fn claim(self) -> Part<T> {
        // SAFETY: the caller hands over exclusive access to the values.
        unsafe { Part::from_raw(self.raw) }
    }

    /// Writes `v` at `i`.
    ///
    /// # Safety
    /// No other task may read or write element `i` concurrently.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn write(&self, i: usize, v: T) {
        // SAFETY: `element` checked the bounds; the caller guarantees exclusive access.
        unsafe { self.element(i).write(v) }
    }

    /// Reads the value at `i`.
    ///
    /// # Safety
    /// No other task may write element `i` concurrently.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn read(&self, i: usize) -> T
    where
        T: Copy,
    {
        // SAFETY: `element` checked the bounds; the caller guarantees no concurrent writer.
        unsafe { self.element(i).read() }
    }
}
