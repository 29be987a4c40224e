//! Arithmetic whose result is the same on the GPU and in the CPU executor, so a kernel's output
//! can be compared bit for bit with a host reference: floating-point operations, and the
//! runtime's random-number generator.
//!
//! `core` has no fused multiply-add on stable Rust; on the GPU these are single PTX
//! instructions (`fma.rn`), on the host the correctly rounded `std` functions.

/// `a * b + c` with a single rounding (IEEE 754 fusedMultiplyAdd).
///
/// ```
/// assert_eq!(gtap_device::math::fma(2.0, 3.0, 1.0), 7.0);
/// ```
#[inline(always)]
pub fn fma(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f64;
        // SAFETY: a register-only arithmetic instruction.
        unsafe {
            core::arch::asm!("fma.rn.f64 {r}, {a}, {b}, {c};", r = out(reg64) r, a = in(reg64) a, b = in(reg64) b, c = in(reg64) c, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.mul_add(b, c)
    }
}

/// `a * b + c` with a single rounding, in `f32`.
///
/// ```
/// assert_eq!(gtap_device::math::fmaf(2.0, 3.0, 1.0), 7.0);
/// ```
#[inline(always)]
pub fn fmaf(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f32;
        // SAFETY: a register-only arithmetic instruction.
        unsafe {
            core::arch::asm!("fma.rn.f32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.mul_add(b, c)
    }
}

/// Square root, correctly rounded.
///
/// ```
/// assert_eq!(gtap_device::math::sqrt(9.0), 3.0);
/// ```
#[inline(always)]
pub fn sqrt(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f64;
        // SAFETY: a register-only arithmetic instruction.
        unsafe {
            core::arch::asm!("sqrt.rn.f64 {r}, {x};", r = out(reg64) r, x = in(reg64) x, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// A xorshift64 generator (Marsaglia's shifts 13, 7, 17): cheap, with the same sequence on the
/// GPU and the CPU. The runtime draws its victims and queue choices from it, the deterministic
/// CPU executor its schedules; device code and tests may use it where a statistically weak
/// generator will do.
///
/// ```
/// let mut rng = gtap_device::math::XorShift64::new(7);
/// let first = rng.next_u64();
/// assert_eq!(gtap_device::math::XorShift64::new(7).next_u64(), first);
/// assert!(rng.below(10) < 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// A generator seeded with `seed`. Any seed will do: the low bit is set, since the all-zero
    /// state would only ever give zeros.
    pub const fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    /// The next number.
    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// The next number reduced below `n` (by remainder, so slightly biased unless `n` is a
    /// power of two). `n` must not be zero.
    #[inline(always)]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fma_rounds_once() {
        // (1 + 2^-27)^2 = 1 + 2^-26 + 2^-54: the product alone rounds the 2^-54 away, so the
        // two-step mul-add gives 0 where the fused one keeps it.
        let a = 1.0 + f64::powi(2.0, -27);
        let c = -(1.0 + f64::powi(2.0, -26));
        let two_step = core::hint::black_box(a * a) + c;
        assert_eq!(two_step, 0.0);
        assert_eq!(fma(a, a, c), f64::powi(2.0, -54));
    }

    #[test]
    fn fmaf_rounds_once() {
        // The same in f32: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24, and 2^-24 is half an ulp at 1.
        let a = 1.0 + f32::powi(2.0, -12);
        let c = -(1.0 + f32::powi(2.0, -11));
        let two_step = core::hint::black_box(a * a) + c;
        assert_eq!(two_step, 0.0);
        assert_eq!(fmaf(a, a, c), f32::powi(2.0, -24));
    }

    #[test]
    fn sqrt_is_correctly_rounded() {
        assert_eq!(sqrt(0.0), 0.0);
        assert_eq!(sqrt(144.0), 12.0);
        assert_eq!(sqrt(2.0), core::f64::consts::SQRT_2);
        assert!(sqrt(-1.0).is_nan());
        assert_eq!(sqrt(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn xorshift_follows_marsaglias_shifts() {
        // From state 1: 1 ^ 1 << 13 = 8193; ^ 8193 >> 7 = 8257; ^ 8257 << 17 = 8257 * 131073.
        let mut rng = XorShift64::new(1);
        assert_eq!(rng.next_u64(), 8257 * 131_073);
        // The same seed gives the same sequence; seeds differing only in the low bit coincide
        // (the bit is forced), others do not.
        let take = |seed| {
            let mut r = XorShift64::new(seed);
            core::array::from_fn::<u64, 16, _>(|_| r.next_u64())
        };
        assert_eq!(take(42), take(42));
        assert_eq!(take(42), take(43));
        assert_ne!(take(42), take(44));
    }

    #[test]
    fn xorshift_never_yields_zero_even_from_seed_zero() {
        let mut rng = XorShift64::new(0);
        for i in 0..100_000 {
            assert_ne!(rng.next_u64(), 0, "draw {i}");
        }
    }

    #[test]
    fn below_stays_below_and_reaches_every_value() {
        let mut rng = XorShift64::new(9);
        let mut seen = [false; 7];
        for _ in 0..1_000 {
            let v = rng.below(7);
            assert!(v < 7);
            seen[v as usize] = true;
        }
        assert!(
            seen.iter().all(|&s| s),
            "every value below 7 drawn: {seen:?}"
        );
    }
}
