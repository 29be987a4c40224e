//! SpMV input: the matrix GTaP's SpMV example generates without arguments,
//! `gen_random_csr(1000000, 300, std::mt19937(42))`, reproduced bit for bit: libstdc++'s
//! `mt19937`, `uniform_int_distribution<int>` (Lemire's method for a 32-bit generator) and
//! `uniform_real_distribution<double>` (`generate_canonical<double, 53>`: two draws).

use std::vec;
use std::vec::Vec;

/// The 32-bit Mersenne Twister, `std::mt19937`.
pub struct Mt19937 {
    state: [u32; 624],
    index: usize,
}

impl Mt19937 {
    /// Seeded as `std::mt19937(seed)`.
    pub fn new(seed: u32) -> Self {
        let mut state = [0u32; 624];
        state[0] = seed;
        for i in 1..624 {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Self { state, index: 624 }
    }

    fn twist(&mut self) {
        for i in 0..624 {
            let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % 624] & 0x7fff_ffff);
            let mut next = self.state[(i + 397) % 624] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= 0x9908_b0df;
            }
            self.state[i] = next;
        }
        self.index = 0;
    }

    /// The next output.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `std::uniform_int_distribution<int>(lo, hi)(*this)` (`lo <= hi`, range below 2^32).
    #[inline]
    pub fn uniform_int(&mut self, lo: i32, hi: i32) -> i32 {
        let range = (hi as i64 - lo as i64 + 1) as u32;
        let mut product = self.next_u32() as u64 * range as u64;
        let mut low = product as u32;
        if low < range {
            let threshold = range.wrapping_neg() % range;
            while low < threshold {
                product = self.next_u32() as u64 * range as u64;
                low = product as u32;
            }
        }
        lo + (product >> 32) as i32
    }

    /// `std::uniform_real_distribution<double>(lo, hi)(*this)`.
    #[inline]
    pub fn uniform_real(&mut self, lo: f64, hi: f64) -> f64 {
        let first = self.next_u32() as f64;
        let sum = first + self.next_u32() as f64 * 4_294_967_296.0;
        let mut canonical = sum / 18_446_744_073_709_551_616.0;
        if canonical >= 1.0 {
            canonical = 1.0 - f64::EPSILON / 2.0;
        }
        canonical * (hi - lo) + lo
    }
}

/// A square sparse matrix in CSR form: row `i`'s nonzeros are `col[k], val[k]` for `k` in
/// `row_ptr[i]..row_ptr[i + 1]`, columns ascending.
pub struct Csr {
    /// Row offsets, one per row plus one.
    pub row_ptr: Vec<i32>,
    /// Column of each nonzero.
    pub col: Vec<i32>,
    /// Value of each nonzero.
    pub val: Vec<f64>,
}

impl Csr {
    /// Number of rows (and columns).
    pub fn rows(&self) -> usize {
        self.row_ptr.len() - 1
    }
}

/// GTaP's `gen_random_csr(n, avg_nnz, rng)`: row `i` draws a count in `1..=2 * avg_nnz - 1`,
/// that many columns in `0..n`, keeps the distinct ones in ascending order, and draws one value
/// in `[-1, 1)` for each. At most `i32::MAX` nonzeros.
///
/// The stream is consumed exactly as the C++ does, but the columns are sorted afterwards in
/// parallel: a row's draws only need its count of distinct columns, found with a bitmap.
pub fn gen_random_csr(n: usize, avg_nnz: i32, rng: &mut Mt19937) -> Csr {
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut raw_ptr = Vec::with_capacity(n + 1);
    let (mut raw, mut val) = (Vec::new(), Vec::new());
    let mut seen = vec![0u64; n.div_ceil(64)];
    row_ptr.push(0i32);
    raw_ptr.push(0usize);
    for _ in 0..n {
        let cnt = rng.uniform_int(1, avg_nnz * 2 - 1) as usize;
        let start = raw.len();
        let mut distinct = 0;
        for _ in 0..cnt {
            let c = rng.uniform_int(0, n as i32 - 1);
            raw.push(c);
            let (word, bit) = (c as usize / 64, 1u64 << (c % 64));
            distinct += usize::from(seen[word] & bit == 0);
            seen[word] |= bit;
        }
        for &c in &raw[start..] {
            seen[c as usize / 64] = 0;
        }
        for _ in 0..distinct {
            val.push(rng.uniform_real(-1.0, 1.0));
        }
        row_ptr.push((row_ptr[row_ptr.len() - 1] as usize + distinct) as i32);
        raw_ptr.push(raw.len());
    }
    let mut col = vec![0i32; val.len()];
    sort_rows(&mut raw, &raw_ptr, &mut col, &row_ptr);
    Csr { row_ptr, col, val }
}

/// Sorts and de-duplicates each row's drawn columns (`raw[raw_ptr[i]..raw_ptr[i + 1]]`) into
/// `col[row_ptr[i]..row_ptr[i + 1]]`, rows in parallel.
fn sort_rows(raw: &mut [i32], raw_ptr: &[usize], col: &mut [i32], row_ptr: &[i32]) {
    let rows = raw_ptr.len() - 1;
    if rows <= 256 {
        for i in 0..rows {
            let drawn = &mut raw[raw_ptr[i] - raw_ptr[0]..raw_ptr[i + 1] - raw_ptr[0]];
            drawn.sort_unstable();
            let out = &mut col[(row_ptr[i] - row_ptr[0]) as usize..];
            let mut len = 0;
            for (k, &c) in drawn.iter().enumerate() {
                if k == 0 || c != drawn[k - 1] {
                    out[len] = c;
                    len += 1;
                }
            }
        }
        return;
    }
    let mid = rows / 2;
    let (raw_a, raw_b) = raw.split_at_mut(raw_ptr[mid] - raw_ptr[0]);
    let (col_a, col_b) = col.split_at_mut((row_ptr[mid] - row_ptr[0]) as usize);
    rayon::join(
        || sort_rows(raw_a, &raw_ptr[..=mid], col_a, &row_ptr[..=mid]),
        || sort_rows(raw_b, &raw_ptr[mid..], col_b, &row_ptr[mid..]),
    );
}
