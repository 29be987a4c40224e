//! Divide-and-conquer SpMV `y = A x` (GTaP's `examples/spmv/spmv_thread.cu`, thread mode): a
//! task halves its row range down to [`RANGE_CUTOFF`] rows, then spawns one task per row, which
//! sums its row's products. No task waits for its children.
//!
//! [`range_spmv_block`] and [`spmv_row_block`] are GTaP's block-mode variant (`spmv_block.cu`,
//! label `spmv1m_block`, blocks of [`SPMV_BLOCK`] threads): thread 0 splits the ranges and spawns
//! the rows; a row's block shares its nonzeros and sums them with a tree reduction.

use gtap::{Slice, SliceMut};

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
mod matrix;
#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Spmv, paper, quick, run_host};
#[cfg(not(target_arch = "nvptx64"))]
pub use matrix::{Csr, Mt19937, gen_random_csr};

/// What every task of a product reads, the launch's context: the CSR matrix (`row_ptr`
/// offsets into `col` and `val`), the vector `x` and the result `y`. As GTaP's tasks read
/// them from globals, they are not copied into every task's record.
#[derive(Clone, Copy)]
pub struct Product {
    row_ptr: Slice<i32>,
    col: Slice<i32>,
    val: Slice<f64>,
    x: Slice<f64>,
    y: SliceMut<f64>,
}

/// Row ranges of at most this many rows spawn one task per row (`RANGE_CUTOFF`).
pub const RANGE_CUTOFF: i32 = 16;

/// `y[row] = sum_k val[k] * x[col[k]]` over row `row`'s nonzeros.
#[gtap::function]
pub fn spmv_row(product: gtap::Context<Product>, row: i32) {
    let Product {
        row_ptr,
        col,
        val,
        x,
        y,
    } = *product;
    let (lo, hi) = (
        row_ptr[row as usize] as usize,
        row_ptr[row as usize + 1] as usize,
    );
    let mut sum = 0.0;
    // One bounds check for the row's values and columns, one per gathered `x`.
    for (&v, &c) in val[lo..hi].iter().zip(&col[lo..hi]) {
        // nvcc contracts GTaP's `sum += a * b` into a fused multiply-add; so does this.
        sum = gtap::math::fma(v, x[c as usize], sum);
    }
    // SAFETY: only this row's task writes `y[row]`, and nothing reads it during the launch.
    unsafe { y.write(row as usize, sum) };
}

/// Computes rows `begin..end`: halves the range down to [`RANGE_CUTOFF`] rows, then one
/// [`spmv_row`] task per row. It reads no operand, but takes the launch's [`Product`] to spawn
/// tasks that do.
#[gtap::function]
pub fn range_spmv(_product: gtap::Context<Product>, begin: i32, end: i32) {
    if end - begin <= RANGE_CUTOFF {
        for i in begin..end {
            gtap::task!(spmv_row(i));
        }
    } else {
        let mid = (begin + end) >> 1;
        gtap::task!(range_spmv(begin, mid));
        gtap::task!(range_spmv(mid, end));
    }
}

/// Threads per block of [`spmv_block_kernel`] (GTaP's block SpMV: `GTAP_BLOCK_SIZE=128`).
pub const SPMV_BLOCK: u32 = 128;

/// Block mode: `y[row]`, every thread summing every `size()`-th product of the row, then the
/// block's tree reduction (GTaP's shared-memory reduction, the same pairs).
#[gtap::function(block)]
pub fn spmv_row_block(block: &gtap::Block, product: gtap::Context<Product>, row: i32) {
    let Product {
        row_ptr,
        col,
        val,
        x,
        ..
    } = *product;
    let (lo, hi) = (
        row_ptr[row as usize] as u32 as usize,
        row_ptr[row as usize + 1] as u32 as usize,
    );
    // The row's values and columns, checked once: the strided loop's indices stay below their
    // common length, so it checks only the gathered `x` and keeps no lengths of its own.
    let (vals, cols) = (&val[lo..hi], &col[lo..hi]);
    let mut mine = 0.0;
    block.for_each(0..vals.len(), |i| {
        mine = gtap::math::fma(vals[i], x[cols[i] as usize], mine);
    });
    let sum = block.sum(mine);
    if block.thread_index() == 0 {
        // `y` is read here, after the loop, so that its pointer and length take no registers
        // during it.
        // SAFETY: only this row's task writes `y[row]`, and nothing reads it during the launch.
        unsafe { product.y.write(row as usize, sum) };
    }
}

/// Block mode: thread 0 halves `begin..end` down to [`RANGE_CUTOFF`] rows, then spawns one
/// [`spmv_row_block`] per row.
#[gtap::function(block)]
pub fn range_spmv_block(
    block: &gtap::Block,
    _product: gtap::Context<Product>,
    begin: i32,
    end: i32,
) {
    if block.thread_index() != 0 {
        return;
    }
    if end - begin <= RANGE_CUTOFF {
        for i in begin..end {
            gtap::task!(spmv_row_block(i));
        }
    } else {
        let mid = (begin + end) >> 1;
        gtap::task!(range_spmv_block(begin, mid));
        gtap::task!(range_spmv_block(mid, end));
    }
}

/// Root kernel of [`range_spmv_block`] over all `y.len()` rows. At most 40 registers a thread:
/// with no shared memory lent to tasks, 12 blocks a multiprocessor instead of 9 at 56, for a
/// kernel that waits on memory; its spills cost less than the blocks gain once the row loop
/// keeps no lengths (`bench/NOTES.md` entry 82). No task waits: `no_taskwait`, as GTaP
/// lowers functions without a `taskwait` (their children get no counter, and a parent finishes
/// when it returns).
#[gtap::kernel(block = 128, max_registers = 40, no_taskwait, queues = 1)]
pub fn spmv_block_kernel(
    row_ptr: Slice<i32>,
    col: Slice<i32>,
    val: Slice<f64>,
    x: Slice<f64>,
    y: SliceMut<f64>,
) {
    let product = Product {
        row_ptr,
        col,
        val,
        x,
        y,
    };
    gtap::entry!(context(product), range_spmv_block(0, y.len() as i32))
}

/// Root kernel of [`range_spmv`] over all `y.len()` rows (at most `i32::MAX`). It runs with one
/// queue but is compiled for any count: `queues = 1` made it 4 % slower (`bench/NOTES.md`).
/// No task waits: `no_taskwait`, as for [`spmv_block_kernel`]. At most 4 blocks a
/// multiprocessor: 7.4 % faster on an H100 than on the 5 its registers allow (entry 103).
#[gtap::kernel(no_taskwait, max_blocks_per_sm = 4)]
pub fn spmv_kernel(
    row_ptr: Slice<i32>,
    col: Slice<i32>,
    val: Slice<f64>,
    x: Slice<f64>,
    y: SliceMut<f64>,
) {
    let product = Product {
        row_ptr,
        col,
        val,
        x,
        y,
    };
    gtap::entry!(context(product), range_spmv(0, y.len() as i32))
}
