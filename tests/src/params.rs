//! A struct kernel parameter and `Part`s on the device: a `#[derive(gtap::KernelArg)]` struct
//! of scalars and views must reach the kernel (PTX `.param` bytes) exactly as the host laid it
//! out, and a divide-and-conquer fill over lent parts must write every element once.

use gtap::{Part, Slice, SliceMut};

/// Scalars of every width and alignment, and two views, in one struct.
#[derive(Clone, Copy, Debug, gtap::KernelArg)]
#[repr(C)]
pub struct Mixed {
    /// A byte before an 8-byte field (padding in between).
    pub tag: u8,
    /// A float.
    pub scale: f64,
    /// Values to add up.
    pub values: Slice<u32>,
    /// Filled with `scale * values[i] + offset` as integers.
    pub out: SliceMut<u64>,
    /// A 2-byte signed value.
    pub offset: i16,
    /// A flag.
    pub flag: bool,
}

/// Fills `out[i] = scale * from[i] + offset` over lent halves, handing the part back.
#[gtap::function]
pub fn fill(mut out: Part<u64>, from: Slice<u32>, scale: f64, offset: i16) -> Part<u64> {
    if out.len() <= 4 {
        for (o, f) in out.iter_mut().zip(from.iter()) {
            *o = (scale * *f as f64) as u64 + offset as u64;
        }
        return out;
    }
    let mid = out.len() / 2;
    let (left, right, loan) = out.lend(mid);
    let (from_left, from_right) = from.split_at(mid);
    let (mut l, mut r) = (Part::empty(), Part::empty());
    gtap::task!(l = fill(left, from_left, scale, offset));
    gtap::task!(r = fill(right, from_right, scale, offset));
    gtap::taskwait!();
    loan.join(l, r)
}

/// Fills `m.out` and returns the struct's scalars as the kernel saw them, with the number of
/// values it filled.
#[gtap::function]
pub fn mixed_root(m: Mixed, out: Part<u64>) -> (u8, f64, i16, bool, u64) {
    let mut filled = Part::empty();
    gtap::task!(filled = fill(out, m.values, m.scale, m.offset));
    gtap::taskwait!();
    (m.tag, m.scale, m.offset, m.flag, filled.len() as u64)
}

/// Root of [`mixed_root`]; `m.out` is as long as `m.values`.
#[gtap::kernel]
pub fn mixed_kernel(m: Mixed) -> (u8, f64, i16, bool, u64) {
    // SAFETY: the host passes `m.out` as a buffer of its own, reached only through this part.
    let out = unsafe { m.out.claim() };
    gtap::entry!(mixed_root(m, out))
}
