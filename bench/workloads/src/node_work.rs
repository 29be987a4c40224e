//! The synthetic per-node work of GTaP's tree benchmarks (`do_memory_and_compute` and the
//! EPAQ tree's divergent variants), written once and used by the task functions, the
//! sequential references and the rayon peers alike, so every runner computes bit-identical
//! node values.
//!
//! Floating point: GTaP calls `fma` in `mix_fma`, and [`gtap::math::fma`] is that single
//! rounding on both sides; every other addition (the `acc` sum) stays a separate add, which
//! Rust never contracts into an FMA.

use gtap::Slice;

/// The array the memory part loads from, taken by value: a [`Slice`] is copied into registers
/// once per node instead of being read back from the task record on every load.
pub trait Input: Copy {
    /// Number of values (a power of two).
    fn value_count(self) -> usize;
    /// The value at `i` (panics past the end, as indexing does).
    fn load(self, i: usize) -> f64;
}

impl Input for &[f64] {
    #[inline(always)]
    fn value_count(self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn load(self, i: usize) -> f64 {
        self[i]
    }
}

impl Input for Slice<f64> {
    #[inline(always)]
    fn value_count(self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn load(self, i: usize) -> f64 {
        self[i]
    }
}

/// Loads of the memory part issued before any of them is added: the loads are independent, so
/// they overlap in the memory system (GTaP's nvcc build unrolls the same loop), while the sum
/// still adds them one by one in GTaP's order.
const LOADS_IN_FLIGHT: usize = 8;

/// GTaP's `mix_fma`.
#[inline(always)]
fn mix_fma(x: f64) -> f64 {
    gtap::math::fma(x, 1.000_000_119_209_289_6, 0.999_999_940_395_355_2)
}

/// GTaP's `xorshift32`.
#[inline(always)]
pub fn xorshift32(mut x: u32) -> u32 {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    x
}

/// GTaP's `hash32` (the EPAQ tree's node classifier and queue clause, the B-ary tree's seed
/// and sink slot).
#[inline(always)]
pub fn hash32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// The memory part: `mem_ops` pseudo-random loads from `input` (a power-of-two length),
/// summed in order, [`LOADS_IN_FLIGHT`] loads at a time.
#[inline(always)]
fn memory_part(input: impl Input, seed: u32, mem_ops: i32) -> f64 {
    let mask = (input.value_count() as u32).wrapping_sub(1);
    let load = |m: i32| {
        let r = xorshift32(seed.wrapping_add((m as u32).wrapping_mul(747_796_405)));
        input.load((r & mask) as usize)
    };
    let mut acc = 0.0;
    let mut m = 0;
    while mem_ops - m >= LOADS_IN_FLIGHT as i32 {
        let group: [f64; LOADS_IN_FLIGHT] = core::array::from_fn(|k| load(m + k as i32));
        for v in group {
            acc += v;
        }
        m += LOADS_IN_FLIGHT as i32;
    }
    for m in m..mem_ops {
        acc += load(m);
    }
    acc
}

/// The compute part: `compute_iters` rounds of `mix_fma`, folded into `mix`.
#[inline(always)]
fn compute_part(seed: u32, mut mix: u32, compute_iters: i32) -> f64 {
    for it in 0..compute_iters {
        let x = xorshift32(seed.wrapping_add((it as u32).wrapping_mul(747_796_405))) as f64;
        let y = mix_fma(x);
        mix ^= y.to_bits() as u32;
    }
    mix as f64
}

/// GTaP's `do_memory_and_compute` (binary tree and B-ary tree): loads, then compute seeded by
/// the node and the loaded sum. `(uint32_t)acc` saturates in PTX, as Rust's `as` does.
#[inline(always)]
pub fn do_memory_and_compute(
    input: impl Input,
    node: u32,
    mem_ops: i32,
    compute_iters: i32,
) -> f64 {
    let seed = xorshift32(node ^ 0x9e37_79b9);
    let acc = memory_part(input, seed, mem_ops);
    let mix = (0x9e37_79b9 ^ node).wrapping_add(acc as u32);
    compute_part(seed, mix, compute_iters)
}

/// GTaP's block-mode `do_memory_and_compute` as thread `first` of a block of `stride` threads
/// runs it: the loads `m = first, first + stride, ..` and the compute rounds likewise. The
/// block tree writes thread 0's value (`first = 0`).
#[inline(always)]
pub fn do_memory_and_compute_strided(
    input: impl Input,
    node: u32,
    mem_ops: i32,
    compute_iters: i32,
    first: u32,
    stride: u32,
) -> f64 {
    let seed = xorshift32(node ^ 0x9e37_79b9);
    let mask = (input.value_count() as u32).wrapping_sub(1);
    let mut acc = 0.0;
    let mut m = first as i32;
    while m < mem_ops {
        let r = xorshift32(seed.wrapping_add((m as u32).wrapping_mul(747_796_405)));
        acc += input.load((r & mask) as usize);
        m += stride as i32;
    }
    let mut mix = (0x9e37_79b9 ^ node).wrapping_add(acc as u32);
    let mut it = first as i32;
    while it < compute_iters {
        let x = xorshift32(seed.wrapping_add((it as u32).wrapping_mul(747_796_405))) as f64;
        mix ^= mix_fma(x).to_bits() as u32;
        it += stride as i32;
    }
    mix as f64
}

/// The EPAQ tree's `do_memory_or_compute_divergent`: by `hash32(node) % 3`, compute only,
/// memory only, or both (their sum).
#[inline(always)]
pub fn do_memory_or_compute_divergent(
    input: impl Input,
    node: u32,
    mem_ops: i32,
    compute_iters: i32,
) -> f64 {
    let seed = xorshift32(node ^ 0x9e37_79b9);
    let compute_only = || compute_part(seed, 0x9e37_79b9 ^ node, compute_iters);
    match hash32(node) % 3 {
        0 => compute_only(),
        1 => memory_part(input, seed, mem_ops),
        _ => {
            let mem = memory_part(input, seed, mem_ops);
            mem + compute_only()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    use super::*;

    /// GTaP's loop as written: one load, then its addition.
    fn memory_part_one_by_one(input: &[f64], seed: u32, mem_ops: i32) -> f64 {
        let mask = (input.len() as u32).wrapping_sub(1);
        let mut acc = 0.0;
        for m in 0..mem_ops {
            let r = xorshift32(seed.wrapping_add((m as u32).wrapping_mul(747_796_405)));
            acc += input[(r & mask) as usize];
        }
        acc
    }

    #[test]
    fn grouped_loads_sum_bit_identically_for_every_count() {
        // Values of very different magnitudes, so that a changed order of additions shows.
        let input: Vec<f64> = (0..64u32)
            .map(|i| f64::from(xorshift32(i + 1)) * 10f64.powi(i as i32 % 17 - 8))
            .collect();
        for mem_ops in -1..=40 {
            for seed in [1, 0x9e37_79b9, 12345] {
                let got = memory_part(&input[..], seed, mem_ops);
                let want = memory_part_one_by_one(&input, seed, mem_ops);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{mem_ops} loads, seed {seed}"
                );
            }
        }
    }
}
