//! Atomic read-modify-writes and stores on elements of a [`SliceMut`], for task code that shares counters
//! or minima between tasks (a solution count, a BFS depth).
//!
//! Every operation is relaxed and has device (GPU) scope: it is atomic with respect to every
//! other atomic operation on the same element from any task, and orders nothing else. Task
//! results and data handed to a parent are ordered by `taskwait!`, not by these.

use crate::slice::SliceMut;

/// Element types with atomic operations on the GPU and in the CPU executor.
///
/// Sealed: implemented for `u32`, `i32` and `u64`, the types PTX has atomic add, min and max
/// for.
pub trait AtomicElement: Copy + sealed::Sealed + 'static {
    #[doc(hidden)]
    /// # Safety
    /// `p` points to a live, aligned element that is only accessed atomically meanwhile.
    unsafe fn rmw(p: *mut Self, op: Op, v: Self) -> Self;
    #[doc(hidden)]
    /// # Safety
    /// As for `rmw`.
    unsafe fn store(p: *mut Self, v: Self);
}

#[doc(hidden)]
#[derive(Clone, Copy)]
pub enum Op {
    Add,
    Min,
    Max,
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for u64 {}
}

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! host_rmw {
    ($t:ty, $atomic:ty) => {
        impl AtomicElement for $t {
            #[inline(always)]
            unsafe fn rmw(p: *mut Self, op: Op, v: Self) -> Self {
                use core::sync::atomic::Ordering::Relaxed;
                // SAFETY: per the contract, `p` is live, aligned and only accessed atomically.
                let a = unsafe { <$atomic>::from_ptr(p) };
                match op {
                    Op::Add => a.fetch_add(v, Relaxed),
                    Op::Min => a.fetch_min(v, Relaxed),
                    Op::Max => a.fetch_max(v, Relaxed),
                }
            }
            #[inline(always)]
            unsafe fn store(p: *mut Self, v: Self) {
                use core::sync::atomic::Ordering::Relaxed;
                // SAFETY: per the contract, `p` is live, aligned and only accessed atomically.
                unsafe { <$atomic>::from_ptr(p) }.store(v, Relaxed)
            }
        }
    };
}
#[cfg(not(target_arch = "nvptx64"))]
host_rmw!(u32, core::sync::atomic::AtomicU32);
#[cfg(not(target_arch = "nvptx64"))]
host_rmw!(i32, core::sync::atomic::AtomicI32);
#[cfg(not(target_arch = "nvptx64"))]
host_rmw!(u64, core::sync::atomic::AtomicU64);

#[cfg(target_arch = "nvptx64")]
macro_rules! ptx_rmw {
    ($t:ty, $reg:ident, $add:literal, $min:literal, $max:literal, $st:literal) => {
        impl AtomicElement for $t {
            #[inline(always)]
            unsafe fn rmw(p: *mut Self, op: Op, v: Self) -> Self {
                use core::arch::asm;
                let old: $t;
                // SAFETY: per the contract, `p` is a live, aligned element; the instruction is
                // atomic at GPU scope.
                unsafe {
                    match op {
                        Op::Add => asm!(concat!("atom.relaxed.gpu.", $add, " {o}, [{p}], {v};"), o = out($reg) old, p = in(reg64) p, v = in($reg) v),
                        Op::Min => asm!(concat!("atom.relaxed.gpu.", $min, " {o}, [{p}], {v};"), o = out($reg) old, p = in(reg64) p, v = in($reg) v),
                        Op::Max => asm!(concat!("atom.relaxed.gpu.", $max, " {o}, [{p}], {v};"), o = out($reg) old, p = in(reg64) p, v = in($reg) v),
                    }
                }
                old
            }
            #[inline(always)]
            unsafe fn store(p: *mut Self, v: Self) {
                // SAFETY: per the contract, `p` is a live, aligned element; a relaxed store at
                // GPU scope is a single indivisible store.
                unsafe { core::arch::asm!(concat!("st.relaxed.gpu.", $st, " [{p}], {v};"), p = in(reg64) p, v = in($reg) v) }
            }
        }
    };
}
#[cfg(target_arch = "nvptx64")]
ptx_rmw!(u32, reg32, "add.u32", "min.u32", "max.u32", "u32");
#[cfg(target_arch = "nvptx64")]
ptx_rmw!(i32, reg32, "add.s32", "min.s32", "max.s32", "s32");
#[cfg(target_arch = "nvptx64")]
ptx_rmw!(u64, reg64, "add.u64", "min.u64", "max.u64", "u64");

impl<T: AtomicElement> SliceMut<T> {
    #[inline(always)]
    #[track_caller]
    fn rmw(&self, i: usize, op: Op, v: T) -> T {
        // SAFETY: `element` checked the bounds; element `i` is only accessed atomically while
        // tasks use these methods (a plain `write` of it concurrently would break `write`'s own
        // contract).
        unsafe { T::rmw(self.element(i), op, v) }
    }

    /// Atomically adds `v` to element `i` (wrapping) and returns its previous value.
    ///
    /// ```
    /// let mut count = [0u32; 1];
    /// // SAFETY: `count` outlives the view and is only used through it.
    /// let view = unsafe { gtap_device::SliceMut::from_raw_parts(count.as_mut_ptr(), 1) };
    /// assert_eq!(view.atomic_add(0, 5), 0);
    /// assert_eq!(view.atomic_add(0, 2), 5);
    /// ```
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub fn atomic_add(&self, i: usize, v: T) -> T {
        self.rmw(i, Op::Add, v)
    }

    /// Atomically replaces element `i` by the smaller of it and `v`; returns its previous value.
    ///
    /// ```
    /// let mut depth = [7i32; 1];
    /// // SAFETY: `depth` outlives the view and is only used through it.
    /// let view = unsafe { gtap_device::SliceMut::from_raw_parts(depth.as_mut_ptr(), 1) };
    /// assert_eq!(view.atomic_min(0, 3), 7);
    /// assert_eq!(view.atomic_min(0, 5), 3);
    /// ```
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub fn atomic_min(&self, i: usize, v: T) -> T {
        self.rmw(i, Op::Min, v)
    }

    /// Atomically replaces element `i` by the larger of it and `v`; returns its previous value.
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub fn atomic_max(&self, i: usize, v: T) -> T {
        self.rmw(i, Op::Max, v)
    }

    /// Atomically stores `v` into element `i`: concurrent stores to one element leave one of
    /// the stored values (the last writer wins), never a torn mixture.
    ///
    /// ```
    /// let mut slot = [0u64; 1];
    /// // SAFETY: `slot` outlives the view and is only used through it.
    /// let view = unsafe { gtap_device::SliceMut::from_raw_parts(slot.as_mut_ptr(), 1) };
    /// view.atomic_store(0, 9);
    /// assert_eq!(view.atomic_add(0, 0), 9);
    /// ```
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub fn atomic_store(&self, i: usize, v: T) {
        // SAFETY: `element` checked the bounds; element `i` is only accessed atomically while
        // tasks use these methods.
        unsafe { T::store(self.element(i), v) }
    }
}
