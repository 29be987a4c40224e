//! Adaptive numerical integration in block mode (the block-mode program of GTaP's
//! execution-modes chapter), beside the thread-mode [`crate::integrate`]: each task runs on a
//! whole thread block, which evaluates the trapezoid sums cooperatively ([`block_trap`]); only
//! thread 0 spawns the two halves.

use crate::integrate::peak;

/// Threads per block of [`integrate_block_kernel`].
pub const BLOCK: u32 = 64;

/// Trapezoids of the coarse estimate (the fine one has twice as many).
pub const NTRAP: u32 = 256;

/// Trapezoid `i` of `n` over `[a, b]`.
#[inline]
fn piece(a: f64, b: f64, n: u32, i: u32) -> f64 {
    let h = (b - a) / n as f64;
    let x = a + h * i as f64;
    (peak(x) + peak(x + h)) * h * 0.5
}

/// The sum of the `n` trapezoids of `[a, b]`, by the whole block: each thread adds the pieces
/// `i ≡ thread (mod size)` in order, then the block reduces the partial sums; every thread gets
/// the total.
#[inline]
pub fn block_trap(block: &gtap::Block, a: f64, b: f64, n: u32) -> f64 {
    let mut mine = 0.0;
    block.for_each(0..n, |i| mine += piece(a, b, n, i));
    block.sum(mine)
}

#[inline]
fn abs(x: f64) -> f64 {
    if x < 0.0 { -x } else { x }
}

/// ∫ₐᵇ peak to tolerance `eps` per interval, one block per task.
#[gtap::function(block)]
pub fn integrate_block(block: &gtap::Block, a: f64, b: f64, eps: f64) -> f64 {
    let coarse = block_trap(block, a, b, NTRAP);
    let fine = block_trap(block, a, b, 2 * NTRAP);
    if abs(fine - coarse) < eps {
        return (4.0 * fine - coarse) / 3.0;
    }
    let m = 0.5 * (a + b);
    let (mut left, mut right) = (0.0, 0.0);
    if block.thread_index() == 0 {
        gtap::task!(left = integrate_block(a, m, eps));
        gtap::task!(right = integrate_block(m, b, eps));
    }
    // Every thread waits (a block-mode wait is collective); only thread 0 has the results, and
    // the task's result is thread 0's.
    gtap::taskwait!();
    left + right
}

/// Root kernel of [`integrate_block`], blocks of [`BLOCK`] threads.
#[gtap::kernel(block = 64)]
pub fn integrate_block_kernel(a: f64, b: f64, eps: f64) -> f64 {
    gtap::entry!(integrate_block(a, b, eps))
}

/// [`block_trap`] computed sequentially with the same additions in the same order: per-thread
/// partial sums, then the block's tree reduction (pairs `t`, `t + half`, halving).
pub fn block_trap_seq(a: f64, b: f64, n: u32, threads: u32) -> f64 {
    let mut cells: [f64; 1024] = [0.0; 1024];
    for t in 0..threads {
        let mut mine = 0.0;
        let mut i = t;
        while i < n {
            mine += piece(a, b, n, i);
            i += threads;
        }
        cells[t as usize] = mine;
    }
    let mut half = threads.next_power_of_two() / 2;
    while half > 0 {
        for t in 0..half {
            if t + half < threads {
                cells[t as usize] += cells[(t + half) as usize];
            }
        }
        half /= 2;
    }
    cells[0]
}

/// Sequential reference of [`integrate_block`] for blocks of `threads` threads: the same sums
/// and splits, so the result is identical.
pub fn integrate_block_seq(a: f64, b: f64, eps: f64, threads: u32) -> f64 {
    let coarse = block_trap_seq(a, b, NTRAP, threads);
    let fine = block_trap_seq(a, b, 2 * NTRAP, threads);
    if abs(fine - coarse) < eps {
        return (4.0 * fine - coarse) / 3.0;
    }
    let m = 0.5 * (a + b);
    integrate_block_seq(a, m, eps, threads) + integrate_block_seq(m, b, eps, threads)
}
