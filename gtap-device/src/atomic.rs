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
    #[doc(hidden)]
    /// # Safety
    /// As for `rmw`.
    unsafe fn load(p: *mut Self) -> Self;
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
            #[inline(always)]
            unsafe fn load(p: *mut Self) -> Self {
                use core::sync::atomic::Ordering::Relaxed;
                // SAFETY: per the contract, `p` is live, aligned and only accessed atomically.
                unsafe { <$atomic>::from_ptr(p) }.load(Relaxed)
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
    ($t:ty, $reg:ident, $add:literal, $min:literal, $max:literal, $ls:literal) => {
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
                unsafe { core::arch::asm!(concat!("st.relaxed.gpu.", $ls, " [{p}], {v};"), p = in(reg64) p, v = in($reg) v) }
            }
            #[inline(always)]
            unsafe fn load(p: *mut Self) -> Self {
                let v: $t;
                // SAFETY: per the contract, `p` is a live, aligned element; a relaxed load at
                // GPU scope reads one whole stored value (from L2, not a stale L1 line).
                unsafe { core::arch::asm!(concat!("ld.relaxed.gpu.", $ls, " {v}, [{p}];"), v = out($reg) v, p = in(reg64) p, options(nostack, readonly)) };
                v
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

    /// Atomically reads element `i`: a value some task stored or left there, never a torn
    /// mixture, and never a stale copy from the SM's cache (a plain read of an element that
    /// other tasks change atomically would be a data race). Cheaper than `atomic_add(i, 0)`,
    /// which is a read-modify-write.
    ///
    /// ```
    /// let mut depth = [4i32; 1];
    /// // SAFETY: `depth` outlives the view and is only used through it.
    /// let view = unsafe { gtap_device::SliceMut::from_raw_parts(depth.as_mut_ptr(), 1) };
    /// view.atomic_min(0, 2);
    /// assert_eq!(view.atomic_load(0), 2);
    /// ```
    ///
    /// # Panics
    /// If `i` is out of bounds.
    #[inline(always)]
    #[track_caller]
    pub fn atomic_load(&self, i: usize) -> T {
        // SAFETY: `element` checked the bounds; element `i` is only accessed atomically while
        // tasks use these methods.
        unsafe { T::load(self.element(i)) }
    }
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    use crate::slice::SliceMut;

    /// A view of `data`.
    fn view<T>(data: &mut [T]) -> SliceMut<T> {
        // SAFETY: the callers keep `data` alive, and touch it only through the view, while the
        // view is used.
        unsafe { SliceMut::from_raw_parts(data.as_mut_ptr(), data.len()) }
    }

    #[test]
    fn each_operation_returns_the_old_value_and_updates_the_element() {
        let mut data = [10u32, 20, 30];
        let v = view(&mut data);
        assert_eq!(v.atomic_add(1, 5), 20);
        assert_eq!(v.atomic_min(2, 7), 30);
        assert_eq!(v.atomic_min(2, 9), 7);
        assert_eq!(v.atomic_max(0, 3), 10);
        assert_eq!(v.atomic_max(0, 11), 10);
        v.atomic_store(1, 99);
        assert_eq!(
            [v.atomic_load(0), v.atomic_load(1), v.atomic_load(2)],
            [11, 99, 7]
        );
        assert_eq!(data, [11, 99, 7]);
    }

    #[test]
    fn a_sequence_of_operations_matches_a_sequential_model() {
        let ops: [(u8, i32); 8] = [
            (0, 5),
            (1, -3),
            (2, 40),
            (0, -100),
            (3, 8),
            (1, -90),
            (2, -95),
            (0, 1),
        ];
        let mut data = [0i32; 2];
        let v = view(&mut data);
        let mut model = [0i32; 2];
        for (k, &(op, x)) in ops.iter().enumerate() {
            let i = k % 2;
            let old = model[i];
            model[i] = match op {
                0 => old.wrapping_add(x),
                1 => old.min(x),
                2 => old.max(x),
                _ => x,
            };
            let got = match op {
                0 => v.atomic_add(i, x),
                1 => v.atomic_min(i, x),
                2 => v.atomic_max(i, x),
                _ => {
                    v.atomic_store(i, x);
                    old
                }
            };
            assert_eq!(got, old, "operation {k}");
        }
        assert_eq!(data, model);
    }

    #[test]
    fn add_wraps_and_min_max_compare_by_the_element_type() {
        let mut wide = [u64::MAX - 1];
        let v = view(&mut wide);
        assert_eq!(v.atomic_add(0, 3), u64::MAX - 1);
        assert_eq!(wide, [1]);
        // Signed elements compare as signed, unsigned ones as unsigned.
        let mut signed = [0i32];
        assert_eq!(view(&mut signed).atomic_min(0, -1), 0);
        assert_eq!(signed, [-1]);
        let mut unsigned = [0u32];
        assert_eq!(view(&mut unsigned).atomic_max(0, u32::MAX), 0);
        assert_eq!(unsigned, [u32::MAX]);
    }

    #[test]
    fn operations_from_several_threads_lose_no_update() {
        const THREADS: u64 = 4;
        const EACH: u64 = 10_000;
        // [sum, min, max]
        let mut data = [0u64, u64::MAX, 0];
        let base = data.as_mut_ptr() as usize;
        std::thread::scope(|s| {
            for t in 0..THREADS {
                s.spawn(move || {
                    // SAFETY: `data` outlives the scope and is only accessed atomically in it.
                    let v = unsafe { SliceMut::from_raw_parts(base as *mut u64, 3) };
                    for k in 0..EACH {
                        let x = t * EACH + k;
                        v.atomic_add(0, x);
                        v.atomic_min(1, x + 7);
                        v.atomic_max(2, x);
                    }
                });
            }
        });
        let n = THREADS * EACH;
        assert_eq!(data, [n * (n - 1) / 2, 7, n - 1]);
    }

    #[test]
    fn concurrent_stores_leave_one_stored_value() {
        let mut slot = [0u64];
        let base = slot.as_mut_ptr() as usize;
        let values: Vec<u64> = (1..=4).map(|t| t * 0x0101_0101_0101_0101).collect();
        std::thread::scope(|s| {
            for &value in &values {
                s.spawn(move || {
                    // SAFETY: `slot` outlives the scope and is only accessed atomically in it.
                    let v = unsafe { SliceMut::from_raw_parts(base as *mut u64, 1) };
                    for _ in 0..10_000 {
                        v.atomic_store(0, value);
                    }
                });
            }
        });
        assert!(values.contains(&slot[0]), "torn value {:#x}", slot[0]);
    }

    #[test]
    #[should_panic]
    fn an_index_out_of_bounds_panics() {
        let mut data = [0u32; 2];
        view(&mut data).atomic_add(2, 1);
    }
}
