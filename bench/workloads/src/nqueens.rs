//! N-Queens by bitmask search, GTaP's form (`evaluation/2-comparison/nq/gtap_nq.cu`): a task
//! per placement while `row <= cutoff`, GTaP's `serial_search` below, every solution counted
//! with an atomic add on one global counter and no taskwait. The EPAQ variant
//! (`evaluation/3-epaq/nq/nq_queue_2.cu`) sends children that will search serially to queue 1
//! when the runtime has 2 queues. [`nq_join`] is gtap's own form (counts returned to the
//! parent through a wait), a separate workload that no GTaP figure is compared with.

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
/// solution. `down` (GTaP's column mask twin) is carried along unused, as in GTaP.
#[allow(clippy::only_used_in_recursion)]
pub fn serial_search(
    n: i32,
    row: i32,
    column: u32,
    left: u32,
    down: u32,
    right: u32,
    answer: SliceMut<u32>,
) {
    if row == n {
        answer.atomic_add(0, 1);
        return;
    }
    let mut avail = board_mask(n) & !(column | left | right);
    while avail != 0 {
        let p = avail & avail.wrapping_neg();
        avail -= p;
        serial_search(
            n,
            row + 1,
            column | p,
            (left | p) << 1,
            down | p,
            (right | p) >> 1,
            answer,
        );
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
        serial_search(n, row, column, left, down, right, answer);
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

/// Root kernel of [`nq`]; the solutions accumulate in `answer[0]`, which must start at 0.
#[gtap::kernel]
pub fn nq_kernel(n: i32, cutoff: i32, answer: SliceMut<u32>) {
    gtap::entry!(nq(n, cutoff, 0, 0, 0, 0, 0, answer));
}

/// Solutions completing the board from `row` on, sequentially, returned instead of counted
/// in a global.
pub fn count_serial(n: i32, row: i32, column: u32, left: u32, right: u32) -> u32 {
    if row == n {
        return 1;
    }
    let mut avail = board_mask(n) & !(column | left | right);
    let mut count = 0;
    while avail != 0 {
        let p = avail & avail.wrapping_neg();
        avail -= p;
        count += count_serial(n, row + 1, column | p, (left | p) << 1, (right | p) >> 1);
    }
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
#[gtap::kernel]
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
