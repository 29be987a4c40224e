//! [`Block`]: the token a block-mode task function receives, and its block-cooperative helpers
//! (the analogue of OpenACC's `routine worker` with `loop vector reduction`).
//!
//! Only block-mode task functions have a `Block` (`#[gtap::function(block)]` passes it as the
//! first parameter, and nothing else can make one), so a thread-mode task function cannot call
//! these helpers: that is checked by the type system.
//!
//! Every helper except [`Block::thread_index`], [`Block::size`] and [`Block::for_each`] is
//! *collective*, like CUDA's `__syncthreads()`: every thread of the block calls it, in the
//! same order. A helper that only some threads reach waits for the others forever (the
//! watchdog then stops the launch).

use core::ops::{Add, Range};
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::abi::EXCHANGE_BYTES;
use crate::arch;

/// The block running a block-mode task: its thread identity and the block-cooperative helpers.
///
/// A block-mode task function takes `block: &gtap::Block` as its first parameter; `task!`
/// does not pass it.
///
/// ```ignore
/// #[gtap::function(block)]
/// fn sum_squares(block: &gtap::Block, n: u32) -> u64 {
///     let mut mine = 0u64;
///     block.for_each(0..n, |i| mine += (i as u64) * (i as u64));
///     block.sum(mine) // the same total on every thread; the task's result is thread 0's
/// }
/// ```
#[derive(Debug)]
pub struct Block {
    _private: (),
}

/// The most threads a block has.
const MAX_THREADS: usize = 1024;

/// Threads of a warp: a block's first warp is its threads `0..WARP`.
const WARP: u32 = arch::WARP_SIZE;

/// One exchange cell: room for any helper value, aligned for any of them.
#[repr(C, align(16))]
struct Cell([u8; EXCHANGE_BYTES]);

impl Block {
    /// The token `#[gtap::function(block)]` hands a block-mode body.
    pub(crate) const TOKEN: Block = Block { _private: () };

    /// Index of the calling thread in its block, `0..size()`.
    #[inline(always)]
    pub fn thread_index(&self) -> u32 {
        arch::block_view().thread
    }

    /// Threads in the block (the kernel's `block = N`).
    #[inline(always)]
    pub fn size(&self) -> u32 {
        arch::block_view().threads
    }

    /// Block barrier (`__syncthreads()`): every thread of the block waits here until all have
    /// arrived, and what each wrote to shared memory before is visible to all after.
    #[inline(always)]
    pub fn sync(&self) {
        arch::user_barrier();
    }

    /// Calls `f(i)` for the indices of `range` this thread takes: `start + thread_index()`,
    /// then every `size()`-th after it, so the block's threads share the range out (a strided
    /// loop; no barrier). The indices are any integer type of 32 bits or more ([`StrideIndex`]);
    /// with `usize` and a range that ends at a slice's length, indexing that slice needs no
    /// bounds check in the loop:
    ///
    /// ```ignore
    /// let (vals, cols) = (&val[lo..hi], &col[lo..hi]); // checked once here
    /// block.for_each(0..vals.len(), |i| mine += vals[i] * x[cols[i] as usize]);
    /// ```
    #[inline(always)]
    pub fn for_each<I: StrideIndex>(&self, range: Range<I>, mut f: impl FnMut(I)) {
        let view = arch::block_view();
        let Some(mut i) = range.start.advance(view.thread) else {
            return;
        };
        while i < range.end {
            f(i);
            i = match i.advance(view.threads) {
                Some(next) => next,
                None => break,
            };
        }
    }

    /// The exchange cell of thread `t`, as a `T` (at most [`EXCHANGE_BYTES`] bytes and 16-byte
    /// aligned: checked at compile time).
    #[inline(always)]
    fn cell<T: Copy>(t: u32) -> *mut T {
        const {
            assert!(
                core::mem::size_of::<T>() <= EXCHANGE_BYTES && core::mem::align_of::<T>() <= 16,
                "a block helper moves values of at most 32 bytes, aligned to at most 16"
            )
        };
        (arch::block_view().exchange as *mut Cell).wrapping_add(t as usize) as *mut T
    }

    /// Combines every thread's `v` with `op` (associative; applied in a tree, so the order of
    /// the operands is not the threads' order unless `op` is also commutative) and returns the
    /// result to every thread. Values of at most 32 bytes (a compile-time check). The tree is
    /// the same on the GPU and the CPU, so floating-point results agree bit for bit.
    #[inline(always)]
    pub fn reduce<T: Copy>(&self, v: T, op: impl Fn(T, T) -> T) -> T {
        let view = arch::block_view();
        let (t, n) = (view.thread, view.threads);
        // The previous helper's readers are done with the cells.
        arch::user_barrier();
        // SAFETY: each thread writes its own cell; the barriers separate every write of a cell
        // from the reads of it by other threads.
        unsafe { Self::cell::<T>(t).write(v) };
        arch::user_barrier();
        if arch::CHEAP_BARRIERS {
            let round = |half: u32| {
                if t < half && t + half < n {
                    // SAFETY: as above; in this round thread `t` alone writes cell `t`, and
                    // cell `t + half` is read by thread `t` alone.
                    unsafe {
                        let a = Self::cell::<T>(t).read();
                        let b = Self::cell::<T>(t + half).read();
                        Self::cell::<T>(t).write(op(a, b));
                    }
                }
            };
            let mut half = n.next_power_of_two() / 2;
            // A round whose writers span warps ends with a block barrier.
            while half > WARP {
                round(half);
                arch::user_barrier();
                half /= 2;
            }
            // From here on only the first warp's threads write, and only they read what was
            // written since the last block barrier: a warp barrier a round, then one block
            // barrier for the result (the same rounds and pairs as before).
            if t < WARP {
                while half > 0 {
                    round(half);
                    half /= 2;
                    if half > 0 {
                        arch::user_warp_barrier();
                    }
                }
            }
            arch::user_barrier();
            // SAFETY: as above; cell 0 is not written again before the next helper's barrier.
            unsafe { Self::cell::<T>(0).read() }
        } else {
            // The same tree, on a copy, by every thread: two barriers instead of one a round
            // (a simulated barrier hands a baton through every thread).
            let mut cells = [v; MAX_THREADS];
            for (i, c) in cells.iter_mut().enumerate().take(n as usize) {
                // SAFETY: every cell was written before the barrier above and is not written
                // again before the next helper's first barrier.
                *c = unsafe { Self::cell::<T>(i as u32).read() };
            }
            let mut half = n.next_power_of_two() / 2;
            while half > 0 {
                for i in 0..half.min(n - half) as usize {
                    cells[i] = op(cells[i], cells[i + half as usize]);
                }
                half /= 2;
            }
            cells[0]
        }
    }

    /// The sum of every thread's `v`, on every thread.
    #[inline(always)]
    pub fn sum<T: Copy + Add<Output = T>>(&self, v: T) -> T {
        self.reduce(v, |a, b| a + b)
    }

    /// The least of every thread's `v`, on every thread.
    #[inline(always)]
    pub fn min<T: Copy + PartialOrd>(&self, v: T) -> T {
        self.reduce(v, |a, b| if b < a { b } else { a })
    }

    /// The greatest of every thread's `v`, on every thread.
    #[inline(always)]
    pub fn max<T: Copy + PartialOrd>(&self, v: T) -> T {
        self.reduce(v, |a, b| if b > a { b } else { a })
    }

    /// Thread `from`'s `v`, on every thread (`from` is taken modulo `size()`).
    #[inline(always)]
    pub fn broadcast<T: Copy>(&self, v: T, from: u32) -> T {
        let view = arch::block_view();
        arch::user_barrier();
        if view.thread == from % view.threads {
            // SAFETY: one thread writes cell 0 between two barriers; the others read it after.
            unsafe { Self::cell::<T>(0).write(v) };
        }
        arch::user_barrier();
        // SAFETY: as above.
        unsafe { Self::cell::<T>(0).read() }
    }

    /// Inclusive scan: thread `t` gets `v_0 op v_1 op ... op v_t` (in thread order; `op`
    /// associative; combined in the rounds of a Hillis-Steele scan, the same on the GPU and the
    /// CPU).
    #[inline(always)]
    pub fn inclusive_scan<T: Copy>(&self, v: T, op: impl Fn(T, T) -> T) -> T {
        let view = arch::block_view();
        let (t, n) = (view.thread, view.threads);
        arch::user_barrier();
        // SAFETY: each thread writes its own cell; barriers separate writes and reads.
        unsafe { Self::cell::<T>(t).write(v) };
        arch::user_barrier();
        if arch::CHEAP_BARRIERS {
            let mut mine = v;
            let mut d = 1;
            while d < n {
                // SAFETY: reads happen between the barriers that bound this round's writes.
                let before = (t >= d).then(|| unsafe { Self::cell::<T>(t - d).read() });
                arch::user_barrier();
                if let Some(b) = before {
                    mine = op(b, mine);
                    // SAFETY: thread `t` alone writes cell `t` in this round.
                    unsafe { Self::cell::<T>(t).write(mine) };
                }
                arch::user_barrier();
                d *= 2;
            }
            mine
        } else {
            // The same rounds on a copy (see `reduce`); the cells end as the GPU's do, for
            // `exclusive_scan`, written back by thread `t` for cell `t` only after a barrier.
            let mut cells = [v; MAX_THREADS];
            for (i, c) in cells.iter_mut().enumerate().take(n as usize) {
                // SAFETY: as in `reduce`.
                *c = unsafe { Self::cell::<T>(i as u32).read() };
            }
            let mut d = 1;
            while d < n {
                for i in (d..n).rev() {
                    cells[i as usize] = op(cells[(i - d) as usize], cells[i as usize]);
                }
                d *= 2;
            }
            let mine = cells[t as usize];
            arch::user_barrier();
            // SAFETY: every thread read the cells before the barrier; each writes its own.
            unsafe { Self::cell::<T>(t).write(mine) };
            arch::user_barrier();
            mine
        }
    }

    /// Exclusive scan: thread `t` gets `identity op v_0 op ... op v_(t-1)`; thread 0 gets
    /// `identity`.
    #[inline(always)]
    pub fn exclusive_scan<T: Copy>(&self, v: T, identity: T, op: impl Fn(T, T) -> T) -> T {
        self.inclusive_scan(v, &op);
        let t = arch::block_view().thread;
        // After the scan's last barrier every cell holds its final inclusive value, and no
        // thread writes a cell before the next helper's first barrier.
        if t == 0 {
            identity
        } else {
            // SAFETY: as above.
            op(identity, unsafe { Self::cell::<T>(t - 1).read() })
        }
    }

    /// Exclusive prefix sum: thread `t` gets the sum of the values of threads `0..t` (thread 0
    /// gets `T::default()`, zero for numbers). [`Block::inclusive_scan`] with `+` includes the
    /// thread's own value.
    #[inline(always)]
    pub fn prefix_sum<T: Copy + Add<Output = T> + Default>(&self, v: T) -> T {
        self.exclusive_scan(v, T::default(), |a, b| a + b)
    }

    /// Lends the block's shared memory (the configuration's `block_shared_bytes`, 4 KiB unless
    /// set, as words of `W`) to `f`. Every thread sees the same memory; separate one thread's
    /// writes from another's reads of the same word with [`Block::sync`]. Its contents do not
    /// survive a wait: `f` is a closure, which cannot contain `taskwait!`, so the memory cannot
    /// be held across one.
    #[inline(always)]
    pub fn shared<W: SharedWord, R>(&self, f: impl FnOnce(&SharedMem<W>) -> R) -> R {
        let view = arch::block_view();
        let mem = SharedMem {
            base: view.user,
            len: view.user_bytes as usize / core::mem::size_of::<W>(),
            _w: core::marker::PhantomData,
        };
        f(&mem)
    }
}

/// The block's shared memory, lent by [`Block::shared`]: words of `W`, read and written with
/// relaxed atomic accesses (so that threads racing on a word read some written value, never
/// undefined behaviour; [`Block::sync`] orders them).
pub struct SharedMem<W> {
    base: *mut u8,
    len: usize,
    _w: core::marker::PhantomData<W>,
}

impl<W: SharedWord> SharedMem<W> {
    /// Words in the area: the configuration's `block_shared_bytes` divided by the word size.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the area holds no word (the configuration lends blocks no shared memory).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    #[track_caller]
    fn at(&self, i: usize) -> *mut u8 {
        // A message without arguments: the GPU keeps only static panic messages.
        assert!(
            i < self.len,
            "block shared memory index out of bounds: the area holds Config::block_shared_bytes bytes"
        );
        self.base.wrapping_add(i * core::mem::size_of::<W>())
    }

    /// Word `i`. Panics (a device error naming the line) when `i >= len()`.
    #[inline(always)]
    #[track_caller]
    pub fn load(&self, i: usize) -> W {
        W::load(self.at(i))
    }

    /// Writes word `i`. Panics (a device error naming the line) when `i >= len()`.
    #[inline(always)]
    #[track_caller]
    pub fn store(&self, i: usize, v: W) {
        W::store(self.at(i), v)
    }
}

mod sealed {
    pub trait Sealed {}
    pub trait Stride {}
}

/// A type [`SharedMem`] holds: 32- and 64-bit integers and floats.
pub trait SharedWord: Copy + sealed::Sealed {
    /// Loads the word at `p` (relaxed).
    #[doc(hidden)]
    fn load(p: *mut u8) -> Self;
    /// Stores `v` at `p` (relaxed).
    #[doc(hidden)]
    fn store(p: *mut u8, v: Self);
}

macro_rules! shared_word {
    ($atomic:ty, $bits:ty, $($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl SharedWord for $t {
            #[inline(always)]
            fn load(p: *mut u8) -> Self {
                // SAFETY: `p` is an aligned word of the block's shared memory (`SharedMem::at`),
                // alive for the kernel and accessed only atomically.
                let bits = unsafe { <$atomic>::from_ptr(p as *mut $bits) }.load(Ordering::Relaxed);
                <$t>::from_ne_bytes(bits.to_ne_bytes())
            }
            #[inline(always)]
            fn store(p: *mut u8, v: Self) {
                let bits = <$bits>::from_ne_bytes(v.to_ne_bytes());
                // SAFETY: as in `load`.
                unsafe { <$atomic>::from_ptr(p as *mut $bits) }.store(bits, Ordering::Relaxed);
            }
        }
    )*};
}
shared_word!(AtomicU32, u32, u32, i32, f32);
shared_word!(AtomicU64, u64, u64, i64, f64);

/// An index type [`Block::for_each`] strides over: a primitive integer of 32 bits or more.
pub trait StrideIndex: Copy + PartialOrd + sealed::Stride {
    /// `self + by`, or `None` past the type's largest value.
    #[doc(hidden)]
    fn advance(self, by: u32) -> Option<Self>;
}

macro_rules! stride_index {
    ($($t:ty),*) => {$(
        impl sealed::Stride for $t {}
        impl StrideIndex for $t {
            #[inline(always)]
            fn advance(self, by: u32) -> Option<Self> {
                self.checked_add(by as $t)
            }
        }
    )*};
}
stride_index!(u32, u64, usize, i32, i64, isize);
