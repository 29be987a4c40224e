//! The pointer and length every view is made of, and the bounds arithmetic they share.

use core::marker::PhantomData;
use core::ops::{Bound, RangeBounds};

/// `len` values of `T` at `ptr`. Says nothing about who may read or write them: that is what
/// the view wrapping it ([`Slice`](super::Slice), [`SliceMut`](super::SliceMut),
/// [`Part`](super::Part)) decides. `#[repr(C)]`: the layout the host passes to kernels.
#[repr(C)]
pub(super) struct Raw<T> {
    ptr: *mut T,
    len: u64,
    _t: PhantomData<T>,
}

impl<T> Clone for Raw<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Raw<T> {}

impl<T> Raw<T> {
    /// `len` values at `ptr`; the wrapping view's constructor states the contract.
    #[inline(always)]
    pub(super) const fn new(ptr: *mut T, len: usize) -> Self {
        Self {
            ptr,
            len: len as u64,
            _t: PhantomData,
        }
    }

    /// No values, at a dangling but aligned address.
    #[inline(always)]
    pub(super) const fn empty() -> Self {
        Self::new(core::ptr::NonNull::dangling().as_ptr(), 0)
    }

    #[inline(always)]
    pub(super) fn ptr(self) -> *mut T {
        self.ptr
    }

    #[inline(always)]
    pub(super) fn len(self) -> usize {
        self.len as usize
    }

    /// The address of element `i`.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub(super) fn at(self, i: usize) -> *mut T {
        if i >= self.len() {
            out_of_bounds();
        }
        // SAFETY: `i < len`, so the offset stays inside the `len` values.
        unsafe { self.ptr.add(i) }
    }

    /// The first `mid` values and the rest.
    ///
    /// # Panics
    /// If `mid > len`.
    #[inline(always)]
    #[track_caller]
    pub(super) fn split_at(self, mid: usize) -> (Self, Self) {
        if mid > self.len() {
            split_past_end();
        }
        // SAFETY: `mid <= len`, so the offset stays inside (or one past) the values.
        let right = unsafe { self.ptr.add(mid) };
        (Self::new(self.ptr, mid), Self::new(right, self.len() - mid))
    }

    /// The values in `range`.
    ///
    /// # Panics
    /// If the range is decreasing or ends past `len`.
    #[inline(always)]
    #[track_caller]
    pub(super) fn range(self, range: impl RangeBounds<usize>) -> Self {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1).unwrap_or_else(|| range_invalid()),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1).unwrap_or_else(|| range_invalid()),
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len(),
        };
        if start > end || end > self.len() {
            range_invalid();
        }
        // SAFETY: `start <= end <= len`.
        Self::new(unsafe { self.ptr.add(start) }, end - start)
    }

    /// Writes `name { ptr, len }`: the views print where they point, not the values (which may
    /// be device memory).
    pub(super) fn debug(self, name: &str, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct(name)
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }

    /// The values as a Rust slice.
    ///
    /// # Safety
    /// The values are initialised, and nothing writes them while the slice lives.
    #[inline(always)]
    pub(super) unsafe fn as_slice<'a>(self) -> &'a [T] {
        // SAFETY: `ptr` is non-null and aligned for every view (buffers, `empty`) and points to
        // `len` initialised values; the caller rules out writers.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len()) }
    }

    /// The values as a mutable Rust slice.
    ///
    /// # Safety
    /// The values are initialised, and nothing else reads or writes them while the slice lives.
    #[inline(always)]
    pub(super) unsafe fn as_mut_slice<'a>(self) -> &'a mut [T] {
        // SAFETY: as for `as_slice`; the caller guarantees exclusive access.
        unsafe { core::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }
}

// The panics are out of line with literal messages: the GPU keeps only literal panic messages
// (formatted ones are dropped), and the hot loops keep one compare and one branch per access.

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds() -> ! {
    panic!("gtap slice index out of bounds")
}

#[cold]
#[inline(never)]
#[track_caller]
fn split_past_end() -> ! {
    panic!("gtap slice split point past the end")
}

#[cold]
#[inline(never)]
#[track_caller]
fn range_invalid() -> ! {
    panic!("gtap slice range decreasing or past the end")
}
