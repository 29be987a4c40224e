//! The sorts' input: GTaP's `evaluation/util/gen_vector.c` (a 64-bit LCG, seed 123456789,
//! values `rng_int(INT_MIN, INT_MAX)`); the benchmark scripts feed the binaries the first `n`
//! values of a fresh generator.

use std::vec::Vec;

/// The first `n` values of `gen_vector.c`'s stream.
pub fn gen_vector(n: usize) -> Vec<i32> {
    let mut state: u64 = 123_456_789;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            // rng_int(INT_MIN, INT_MAX) = INT_MIN + (int)(state % 2^32), wrapping as in C.
            i32::MIN.wrapping_add(state as u32 as i32)
        })
        .collect()
}
