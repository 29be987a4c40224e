//! Device buffers passed to kernels: a pointer and a length, valid for the launch.

use core::marker::PhantomData;

/// A read-only view of `len` values of `T` in device memory (host memory in the CPU executor).
/// Created on the host by `gtap-host`'s buffers; copied freely into tasks.
#[repr(C)]
pub struct Slice<T> {
    ptr: *const T,
    len: u64,
    _t: PhantomData<T>,
}

impl<T> Clone for Slice<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Slice<T> {}

impl<T> Slice<T> {
    /// A view of `len` values at `ptr`.
    ///
    /// # Safety
    /// `ptr` must point to `len` initialised values of `T` that stay valid and unmodified for as
    /// long as the view is used (normally: the launch it is passed to).
    pub const unsafe fn from_raw_parts(ptr: *const T, len: usize) -> Self {
        Self {
            ptr,
            len: len as u64,
            _t: PhantomData,
        }
    }

    /// Number of values.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the view is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value at `i`, or `None` past the end.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<&T> {
        // SAFETY: `i` is in bounds and the view's contract keeps the values valid.
        (i < self.len()).then(|| unsafe { &*self.ptr.add(i) })
    }
}

impl<T> core::ops::Index<usize> for Slice<T> {
    type Output = T;
    /// # Panics
    /// If `i` is out of bounds (a device error on the GPU).
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(v) => v,
            None => panic!("gtap::Slice index out of bounds"),
        }
    }
}

/// A writable view of `len` values of `T` in device memory. Tasks write disjoint elements, so
/// writes are `unsafe`: the caller promises no other task touches the same element at the
/// same time.
#[repr(C)]
pub struct SliceMut<T> {
    ptr: *mut T,
    len: u64,
    _t: PhantomData<T>,
}

impl<T> Clone for SliceMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SliceMut<T> {}

impl<T> SliceMut<T> {
    /// The first element's address.
    #[inline(always)]
    pub(crate) fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    /// A view of `len` values at `ptr`.
    ///
    /// # Safety
    /// `ptr` must point to `len` initialised values of `T` that stay valid for as long as the
    /// view is used, and nothing outside the launch may access them meanwhile.
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        Self {
            ptr,
            len: len as u64,
            _t: PhantomData,
        }
    }

    /// Number of values.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the view is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes `v` at `i`.
    ///
    /// # Safety
    /// No other task may read or write element `i` concurrently.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    pub unsafe fn write(&self, i: usize, v: T) {
        assert!(i < self.len(), "gtap::SliceMut index out of bounds");
        // SAFETY: in bounds; the caller guarantees exclusive access to element `i`.
        unsafe { self.ptr.add(i).write(v) }
    }

    /// Reads the value at `i`.
    ///
    /// # Safety
    /// No other task may write element `i` concurrently.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    pub unsafe fn read(&self, i: usize) -> T
    where
        T: Copy,
    {
        assert!(i < self.len(), "gtap::SliceMut index out of bounds");
        // SAFETY: in bounds; the caller guarantees no concurrent writer.
        unsafe { self.ptr.add(i).read() }
    }
}
