//! Indexed access to `i32` arrays, shared by the device task functions (through a
//! [`SliceMut`]) and the host references (through a plain slice), so that the sequential
//! helpers of the sorts are one piece of code on both sides.

use gtap::SliceMut;

/// An array of `i32` read and written by index.
pub trait Elements {
    /// The value at `i`.
    fn get(&self, i: usize) -> i32;
    /// Writes `v` at `i`.
    fn set(&mut self, i: usize, v: i32);
}

impl Elements for [i32] {
    #[inline(always)]
    fn get(&self, i: usize) -> i32 {
        self[i]
    }
    #[inline(always)]
    fn set(&mut self, i: usize, v: i32) {
        self[i] = v;
    }
}

/// A device buffer seen by one task that owns the elements it touches.
#[derive(Clone, Copy)]
pub struct Owned(SliceMut<i32>);

impl Owned {
    /// A view of `s` for the calling task.
    ///
    /// # Safety
    /// While the view is used, no other task writes an element the view reads or writes, and no
    /// other task reads an element the view writes (the fork-join structure of the sorts gives
    /// every task disjoint ranges; data written by children is read after their `taskwait!`).
    #[inline(always)]
    pub unsafe fn new(s: SliceMut<i32>) -> Self {
        Self(s)
    }
}

impl Elements for Owned {
    #[inline(always)]
    fn get(&self, i: usize) -> i32 {
        // SAFETY: by `Owned::new`'s contract, no other task writes element `i` meanwhile.
        unsafe { self.0.read(i) }
    }
    #[inline(always)]
    fn set(&mut self, i: usize, v: i32) {
        // SAFETY: by `Owned::new`'s contract, this task alone accesses element `i` meanwhile.
        unsafe { self.0.write(i, v) }
    }
}
