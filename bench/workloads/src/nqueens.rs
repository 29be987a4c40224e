//! N-Queens by bitmask search, GTaP's form (`evaluation/2-comparison/nq/gtap_nq.cu`): a task
//! per placement while `row <= cutoff`, GTaP's `serial_search` below, every solution counted
//! with an atomic add on one global counter and no taskwait. The EPAQ variant
//! (`evaluation/3-epaq/nq/nq_queue_2.cu`) sends children that will search serially to queue 1
//! when the runtime has 2 queues. [`nq_join`] is gtap's own form (counts returned to the
//! parent through a wait), a separate workload that no GTaP figure is compared with.

use core::mem::MaybeUninit;

use gtap::SliceMut;

/// Largest board: the masks are `u32` and [`nq_join`] keeps one count per column.
pub const MAX_N: i32 = 16;

/// Solutions of N-Queens for N = 1..=16 (OEIS A000170).
pub const SOLUTIONS: [u32; 16] = [
    1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365_596, 2_279_184, 14_772_512,
];

/// The board mask of GTaP's sources: `n` low bits.
fn board_mask(n: i32) -> u32 {
    if n < 32 { (1u32 << n) - 1 } else { u32::MAX }
}

/// GTaP's `serial_search`: completes the board from `row` on, adding 1 to `answer[0]` per
/// solution. GTaP also carries a `down` mask, unused, through the recursion; it changes
/// nothing and is dropped here.
///
/// # Panics
/// For boards of more than [`MAX_N`] rows (a device error on the GPU).
pub fn serial_search(n: i32, row: i32, column: u32, left: u32, right: u32, answer: SliceMut<u32>) {
    search(n, row, column, left, right, |r, _| {
        if r == n {
            answer.atomic_add(0, 1);
        }
    });
}

/// One row of the explicit stack of [`search`]: the masks of the squares the queens above
/// attack, and the columns of this row not tried yet. Aligned so that a push is one 16-byte
/// store.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Row {
    column: u32,
    left: u32,
    right: u32,
    untried: u32,
}

impl Row {
    fn new(n: i32, column: u32, left: u32, right: u32) -> Self {
        Row {
            column,
            left,
            right,
            untried: board_mask(n) & !(column | left | right),
        }
    }
}

/// GTaP's `serial_search` recursion as a loop over an explicit stack: it visits the same
/// nodes in the same order (depth first, the lowest free column first), calling
/// `visit(row, [column, left, right])` for each, the starting node included; a node of row
/// `n` is a solution. Boards up to [`MAX_N`] rows (the stack index panics beyond).
///
/// Why a loop: the recursion compiles to a call per node (callee-saved registers spilled
/// and a convergence barrier saved on each), and lanes of a warp at different depths run one
/// after another. In the loop every lane takes one step per iteration, whatever its depth.
#[inline(always)]
fn search(
    n: i32,
    row: i32,
    column: u32,
    left: u32,
    right: u32,
    mut visit: impl FnMut(i32, [u32; 3]),
) {
    visit(row, [column, left, right]);
    if row >= n {
        return;
    }
    // `current` is row `row + depth`; `stack[..depth]` the rows above it, from `row` down.
    // Uninitialised: zeroing it would cost a leaf 64 stores before its first step.
    let mut stack = [MaybeUninit::<Row>::uninit(); MAX_N as usize];
    let mut depth = 0;
    let mut current = Row::new(n, column, left, right);
    loop {
        if current.untried == 0 {
            if depth == 0 {
                return;
            }
            depth -= 1;
            // SAFETY: every row below `depth` was pushed (written) before `depth` grew past it.
            current = unsafe { stack[depth].assume_init() };
            continue;
        }
        let p = current.untried & current.untried.wrapping_neg();
        current.untried -= p;
        let child_row = row + depth as i32 + 1;
        let masks = [
            current.column | p,
            (current.left | p) << 1,
            (current.right | p) >> 1,
        ];
        visit(child_row, masks);
        if child_row < n {
            let child = Row::new(n, masks[0], masks[1], masks[2]);
            // A child without a free square has been visited and has no children: nothing
            // to push.
            if child.untried != 0 {
                stack[depth].write(current);
                depth += 1;
                current = child;
            }
        }
    }
}

/// The spawn clause of `nq_queue_2.cu`, `queue(new_row > cutoff_depth ? 1 : 0)`, when the
/// runtime has 2 queues; queue 0 otherwise (`gtap_nq.cu`, `nq_queue_1.cu`).
fn spawn_queue(new_row: i32, cutoff: i32) -> u32 {
    if gtap::thread::num_queues() >= 2 && new_row > cutoff {
        1
    } else {
        0
    }
}

/// GTaP's `nq`: a task per free square while `row <= cutoff`, [`serial_search`] below.
#[gtap::function]
pub fn nq(
    n: i32,
    cutoff: i32,
    row: i32,
    column: u32,
    left: u32,
    down: u32,
    right: u32,
    answer: SliceMut<u32>,
) {
    if row > cutoff {
        serial_search(n, row, column, left, right, answer);
        return;
    }
    let mut avail = board_mask(n) & !(column | left | right);
    while avail != 0 {
        let p = avail & avail.wrapping_neg();
        avail -= p;
        let new_row = row + 1;
        gtap::task!(
            queue(spawn_queue(new_row, cutoff)),
            nq(
                n,
                cutoff,
                new_row,
                column | p,
                (left | p) << 1,
                down | p,
                (right | p) >> 1,
                answer
            )
        );
    }
}

/// Root kernel of [`nq`]; the solutions accumulate in `answer[0]`, which must start at 0. No
/// task waits: `no_taskwait`, as GTaP builds it (`-DGTAP_ASSUME_NO_TASKWAIT`).
#[gtap::kernel(no_taskwait)]
pub fn nq_kernel(n: i32, cutoff: i32, answer: SliceMut<u32>) {
    gtap::entry!(nq(n, cutoff, 0, 0, 0, 0, 0, answer));
}

/// Solutions completing the board from `row` on, sequentially (the search of
/// [`serial_search`]), returned instead of counted in a global.
pub fn count_serial(n: i32, row: i32, column: u32, left: u32, right: u32) -> u32 {
    let mut count = 0;
    search(n, row, column, left, right, |r, _| {
        count += u32::from(r == n)
    });
    count
}

/// gtap's join form: the same search and cutoff rule as [`nq`], each task returning its count
/// to the parent, which sums them after a wait.
#[gtap::function]
pub fn nq_join(n: i32, cutoff: i32, row: i32, column: u32, left: u32, right: u32) -> u32 {
    if row > cutoff {
        return count_serial(n, row, column, left, right);
    }
    let mut avail = board_mask(n) & !(column | left | right);
    let mut counts = [0u32; MAX_N as usize];
    let mut k = 0;
    while avail != 0 {
        let p = avail & avail.wrapping_neg();
        avail -= p;
        gtap::task!(
            counts[k] = nq_join(
                n,
                cutoff,
                row + 1,
                column | p,
                (left | p) << 1,
                (right | p) >> 1
            )
        );
        k += 1;
    }
    gtap::taskwait!();
    counts.iter().sum()
}

/// Root kernel of [`nq_join`]; `n` at most [`MAX_N`].
#[gtap::kernel(queues = 1)]
pub fn nq_join_kernel(n: i32, cutoff: i32) -> u32 {
    gtap::entry!(nq_join(n, cutoff, 0, 0, 0, 0))
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{NQueens, NQueensJoin};

#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use std::format;
    use std::string::{String, ToString};
    use std::vec::Vec;

    use rayon::prelude::*;

    use super::*;
    use crate::measure::{Sample, Workload, check, cpu_sample, gpu_sample};

    /// The expected count, or why the board is not supported.
    fn expected(n: i32) -> u32 {
        assert!(
            (1..=MAX_N).contains(&n),
            "N-Queens workloads support boards of 1 to {MAX_N}"
        );
        SOLUTIONS[n as usize - 1]
    }

    /// The rayon peer: a parallel iteration over the placements while `row <= cutoff`,
    /// sequential below, as [`nq`] spawns.
    fn count_rayon(n: i32, cutoff: i32, row: i32, column: u32, left: u32, right: u32) -> u32 {
        if row > cutoff {
            return count_serial(n, row, column, left, right);
        }
        let mut avail = board_mask(n) & !(column | left | right);
        let mut moves = Vec::new();
        while avail != 0 {
            let p = avail & avail.wrapping_neg();
            avail -= p;
            moves.push(p);
        }
        moves
            .into_par_iter()
            .map(|p| {
                count_rayon(
                    n,
                    cutoff,
                    row + 1,
                    column | p,
                    (left | p) << 1,
                    (right | p) >> 1,
                )
            })
            .sum()
    }

    /// N-Queens in GTaP's form, 1 or 2 queues: label `nqueens<n>` (the comparison section's
    /// binary, 1 queue) or `nqueens<n>_cutoff<c>_q<queues>` (the EPAQ section's).
    pub struct NQueens {
        n: i32,
        cutoff: i32,
        queues: u32,
        epaq_label: bool,
        answer: Option<gtap_host::Buffer<u32>>,
    }

    impl NQueens {
        /// GTaP's `gtap_nq` (label `nqueens<n>`); GTaP runs n = 16, cutoff 7. Panics unless
        /// 1 <= n <= 16 (a harness constant, not user input).
        pub fn new(n: i32, cutoff: i32) -> Self {
            expected(n);
            Self {
                n,
                cutoff,
                queues: 1,
                epaq_label: false,
                answer: None,
            }
        }

        /// GTaP's `nq_queue_<queues>` (queues 1 or 2), label `nqueens<n>_cutoff<c>_q<queues>`.
        pub fn epaq(n: i32, cutoff: i32, queues: u32) -> Self {
            Self {
                queues,
                epaq_label: true,
                ..Self::new(n, cutoff)
            }
        }
    }

    impl Workload for NQueens {
        fn label(&self) -> String {
            if self.epaq_label {
                format!("nqueens{}_cutoff{}_q{}", self.n, self.cutoff, self.queues)
            } else {
                format!("nqueens{}", self.n)
            }
        }
        fn config(&self) -> gtap_host::Config {
            gtap_host::Config::new().num_queues(self.queues)
        }
        fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
            // A fresh zeroed counter per launch, outside the timed kernel.
            let answer = self
                .answer
                .insert(rt.upload(&[0u32]).map_err(|e| e.to_string())?);
            let launch = rt
                .launch(nq_kernel, (self.n, self.cutoff, answer.slice_mut()))
                .map_err(|e| e.to_string())?;
            let got = rt.download(answer).map_err(|e| e.to_string())?[0];
            gpu_sample(&launch, check(got, expected(self.n)))
        }
        fn sequential(&mut self) -> Result<Sample, String> {
            let n = self.n;
            cpu_sample(
                || count_serial(std::hint::black_box(n), 0, 0, 0, 0),
                |v| check(v, expected(n)),
            )
        }
        fn rayon(&mut self) -> Result<Sample, String> {
            let (n, cutoff) = (self.n, self.cutoff);
            cpu_sample(
                || count_rayon(std::hint::black_box(n), cutoff, 0, 0, 0, 0),
                |v| check(v, expected(n)),
            )
        }
    }

    /// gtap's join form of N-Queens: label `nqueens<n>_join` (no GTaP counterpart).
    pub struct NQueensJoin {
        n: i32,
        cutoff: i32,
    }

    impl NQueensJoin {
        /// [`nq_join`] on an n x n board, tasks while row <= `cutoff`. Panics unless
        /// 1 <= n <= 16.
        pub fn new(n: i32, cutoff: i32) -> Self {
            expected(n);
            Self { n, cutoff }
        }
    }

    impl Workload for NQueensJoin {
        fn label(&self) -> String {
            format!("nqueens{}_join", self.n)
        }
        fn config(&self) -> gtap_host::Config {
            gtap_host::Config::new()
        }
        fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
            let launch = rt
                .launch(nq_join_kernel, (self.n, self.cutoff))
                .map_err(|e| e.to_string())?;
            gpu_sample(&launch, check(launch.result, expected(self.n)))
        }
        fn sequential(&mut self) -> Result<Sample, String> {
            let n = self.n;
            cpu_sample(
                || count_serial(std::hint::black_box(n), 0, 0, 0, 0),
                |v| check(v, expected(n)),
            )
        }
        fn rayon(&mut self) -> Result<Sample, String> {
            let (n, cutoff) = (self.n, self.cutoff);
            cpu_sample(
                || count_rayon(std::hint::black_box(n), cutoff, 0, 0, 0, 0),
                |v| check(v, expected(n)),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    use super::*;

    type Node = (i32, [u32; 3]);

    /// GTaP's recursion, recording every node it visits.
    fn visits_recursive(n: i32, row: i32, column: u32, left: u32, right: u32, out: &mut Vec<Node>) {
        out.push((row, [column, left, right]));
        if row == n {
            return;
        }
        let mut avail = board_mask(n) & !(column | left | right);
        while avail != 0 {
            let p = avail & avail.wrapping_neg();
            avail -= p;
            visits_recursive(
                n,
                row + 1,
                column | p,
                (left | p) << 1,
                (right | p) >> 1,
                out,
            );
        }
    }

    #[test]
    fn the_loop_visits_the_recursions_nodes_in_its_order() {
        for n in 1..=10 {
            // From the empty board and from a node below a placement in row 0.
            for (row, column, left, right) in [
                (0, 0, 0, 0),
                (1, 1 << (n / 2), 1 << (n / 2 + 1), 1 << (n / 2) >> 1),
            ] {
                let mut expected = Vec::new();
                visits_recursive(n, row, column, left, right, &mut expected);
                let mut got = Vec::new();
                search(n, row, column, left, right, |r, masks| got.push((r, masks)));
                assert_eq!(got, expected, "n = {n}, from row {row}");
            }
        }
    }

    #[test]
    fn the_search_counts_every_board_size() {
        for n in 1..=12 {
            assert_eq!(
                count_serial(n, 0, 0, 0, 0),
                SOLUTIONS[n as usize - 1],
                "n = {n}"
            );
        }
    }
}
