//! N-Queens: count the placements of n queens with a task per partial board down to a cutoff
//! row, sequential below it (GTaP's `nq` benchmark, with counts returned to the parent instead
//! of added to a global).

/// Largest board the task version supports: one result slot per column, and every count fits
/// a `u32` (N-Queens(16) has 14,772,512 solutions), which keeps the task record small.
pub const MAX_N: u32 = 16;

/// Placements that complete a board from `row` on, sequentially.
pub fn nqueens_seq(n: u32, row: u32, cols: u32, left: u32, right: u32) -> u64 {
    if row == n {
        return 1;
    }
    let mask = if n >= 32 { u32::MAX } else { (1 << n) - 1 };
    let mut avail = mask & !(cols | left | right);
    let mut count = 0;
    while avail != 0 {
        let p = avail & avail.wrapping_neg();
        avail &= avail - 1;
        count += nqueens_seq(n, row + 1, cols | p, (left | p) << 1, (right | p) >> 1);
    }
    count
}

/// Placements that complete a board from `row` on: a task per free square above `cutoff`.
#[gtap::function]
pub fn nqueens(n: u32, row: u32, cols: u32, left: u32, right: u32, cutoff: u32) -> u32 {
    if row >= cutoff || row == n {
        return nqueens_seq(n, row, cols, left, right) as u32;
    }
    let mask = (1u32 << n) - 1;
    let mut avail = mask & !(cols | left | right);
    let mut counts = [0u32; MAX_N as usize];
    let mut k = 0;
    while avail != 0 {
        let p = avail & avail.wrapping_neg();
        avail &= avail - 1;
        gtap::task!(
            counts[k] = nqueens(
                n,
                row + 1,
                cols | p,
                (left | p) << 1,
                (right | p) >> 1,
                cutoff
            )
        );
        k += 1;
    }
    gtap::taskwait!();
    counts.iter().sum()
}

/// Root kernel of [`nqueens`]; `n` at most [`MAX_N`].
#[gtap::kernel]
pub fn nqueens_kernel(n: u32, cutoff: u32) -> u64 {
    assert!(n <= MAX_N, "nqueens_kernel supports boards up to 16x16");
    let count = gtap::entry!(nqueens(n, 0, 0, 0, 0, cutoff));
    count as u64
}
