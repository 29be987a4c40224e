//! The random inputs of GTaP's tree benchmarks, bit for bit: libstdc++'s `std::mt19937_64` and
//! the two distributions GTaP's mains draw from it (`uniform_real_distribution<double>` and
//! `uniform_int_distribution<int>`, as GCC 12's libstdc++ implements them). Host only.

use std::vec::Vec;

/// Seed of every GTaP tree main's generator.
pub const GTAP_TREE_SEED: u64 = 0xC0FFEE;

/// The 64-bit Mersenne Twister, `std::mt19937_64`.
pub struct Mt19937_64 {
    state: [u64; Self::N],
    index: usize,
}

impl Mt19937_64 {
    const N: usize = 312;
    const M: usize = 156;
    const UPPER: u64 = 0xFFFF_FFFF_8000_0000;
    const LOWER: u64 = 0x7FFF_FFFF;

    /// The generator `std::mt19937_64 rng(seed)`.
    pub fn new(seed: u64) -> Self {
        let mut state = [0u64; Self::N];
        state[0] = seed;
        for i in 1..Self::N {
            let prev = state[i - 1];
            state[i] = 6_364_136_223_846_793_005u64
                .wrapping_mul(prev ^ (prev >> 62))
                .wrapping_add(i as u64);
        }
        Self {
            state,
            index: Self::N,
        }
    }

    fn twist(&mut self) {
        for i in 0..Self::N {
            let y = (self.state[i] & Self::UPPER) | (self.state[(i + 1) % Self::N] & Self::LOWER);
            let mag = if y & 1 == 1 { 0xB502_6F5A_A966_19E9 } else { 0 };
            self.state[i] = self.state[(i + Self::M) % Self::N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// The next output, `rng()`.
    pub fn next_u64(&mut self) -> u64 {
        if self.index >= Self::N {
            self.twist();
        }
        let mut z = self.state[self.index];
        self.index += 1;
        z ^= (z >> 29) & 0x5555_5555_5555_5555;
        z ^= (z << 17) & 0x71D6_7FFF_EDA6_0000;
        z ^= (z << 37) & 0xFFF7_EEE0_0000_0000;
        z ^= z >> 43;
        z
    }

    /// `std::uniform_real_distribution<double>(a, b)(rng)`: libstdc++'s
    /// `generate_canonical<double, 53>` takes one 64-bit output and divides it by 2^64 (a
    /// result that rounds up to 1 becomes the largest double below 1), then scales without
    /// fusing the multiply and the add.
    pub fn uniform_real(&mut self, a: f64, b: f64) -> f64 {
        let mut canonical = self.next_u64() as f64 / 18_446_744_073_709_551_616.0;
        if canonical >= 1.0 {
            canonical = 1.0f64.next_down();
        }
        canonical * (b - a) + a
    }

    /// `std::uniform_int_distribution<int>(0, hi)(rng)` for `hi >= 0`: libstdc++'s
    /// nearly-divisionless downscaling of a 64-bit output through a 128-bit product.
    pub fn uniform_int(&mut self, hi: i32) -> i32 {
        let range = hi as u64 + 1;
        let mut product = self.next_u64() as u128 * range as u128;
        if (product as u64) < range {
            let threshold = range.wrapping_neg() % range;
            while (product as u64) < threshold {
                product = self.next_u64() as u128 * range as u128;
            }
        }
        (product >> 64) as i32
    }
}

/// The inputs of GTaP's binary-tree mains: 2^20 doubles uniform in [-1, 1) followed, from the
/// same generator, by 2^20 indices uniform in [0, 2^20).
pub fn tree_inputs() -> (Vec<f64>, Vec<i32>) {
    const N: usize = 1 << 20;
    let mut rng = Mt19937_64::new(GTAP_TREE_SEED);
    let doubles = (0..N).map(|_| rng.uniform_real(-1.0, 1.0)).collect();
    let indices = (0..N).map(|_| rng.uniform_int(N as i32 - 1)).collect();
    (doubles, indices)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C++ standard fixes the 10000th output of a default-seeded `mt19937_64`.
    #[test]
    fn the_standard_s_check_value() {
        let mut rng = Mt19937_64::new(5489);
        let v = (0..10_000).map(|_| rng.next_u64()).last();
        assert_eq!(v, Some(9_981_545_732_273_789_042));
    }

    /// Values printed once by GCC 12's libstdc++ for the GTaP mains' calls: the first and last
    /// doubles and indices, and an FNV-1a hash over all of each.
    #[test]
    fn matches_libstdcxx() {
        let (d, i) = tree_inputs();
        let bits = |k: usize| d[k].to_bits();
        assert_eq!(bits(0), 0x3fd4cca752aa6498);
        assert_eq!(bits(1), 0x3fe3635b46370212);
        assert_eq!(bits(2), 0xbfed87fbb220a28a);
        assert_eq!(bits(d.len() - 1), 0xbfd911daf0c2ade6);
        assert_eq!(&i[..3], &[521_841, 951_003, 28_797]);
        assert_eq!(i[i.len() - 1], 549_046);
        let fnv = |vals: &mut dyn Iterator<Item = u64>| {
            vals.fold(0xcbf29ce484222325u64, |h, v| {
                (h ^ v).wrapping_mul(0x100000001b3)
            })
        };
        assert_eq!(fnv(&mut d.iter().map(|x| x.to_bits())), 0x12f6b5b4df33e765);
        assert_eq!(
            fnv(&mut i.iter().map(|&x| x as u32 as u64)),
            0x05f12afb59bebc81
        );
    }
}
