//! Mergesort on the host: the [`Workload`] (GPU launch, sequential reference, rayon peer).

use std::boxed::Box;
use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

use super::{CUTOFF, half, merge, mergesort_kernel, mergesort_seq};
use crate::measure::{Sample, Workload};
use crate::sort_case::{SortCase, fork, size_label, task_memory};

/// Mergesort of `gen_vector`'s first `n` values (label `mergesort<n>`, e.g. `mergesort1e7`),
/// checked against a sorted copy.
pub struct Mergesort {
    case: SortCase,
}

impl Mergesort {
    /// Mergesort of `n` values (at most `i32::MAX`).
    pub fn new(n: usize) -> Self {
        Self {
            case: SortCase::new(n),
        }
    }
}

impl Workload for Mergesort {
    fn label(&self) -> String {
        format!("mergesort{}", size_label(self.case.len()))
    }

    fn config(&self) -> gtap_host::Config {
        gtap_host::Config::new().max_task_memory_bytes(task_memory(self.case.len()))
    }

    fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
        self.case
            .time_gpu(rt, |rt, data, buf| rt.launch(mergesort_kernel, (data, buf)))
    }

    fn sequential(&mut self) -> Result<Sample, String> {
        self.case.time_host(|d, b| run_host(false, d, b))
    }

    fn rayon(&mut self) -> Result<Sample, String> {
        self.case.time_host(|d, b| run_host(true, d, b))
    }
}

/// Sorts `data` with the GPU version's algorithm and cutoff on the host (`buf` as scratch, as
/// long as `data`), on all cores with rayon if `parallel`.
pub fn run_host(parallel: bool, data: &mut [i32], buf: &mut [i32]) {
    let n = data.len();
    if n < 2 {
        return;
    }
    if n > CUTOFF as usize {
        let half = half(n);
        let (d1, d2) = data.split_at_mut(half);
        let (b1, b2) = buf.split_at_mut(half);
        fork(
            parallel,
            || run_host(parallel, d1, b1),
            || run_host(parallel, d2, b2),
        );
        merge(data, buf, 0, half - 1, n - 1);
    } else {
        mergesort_seq(data, buf, 0, n - 1);
    }
}

/// Mergesort at the paper's size: `mergesort1e7`.
pub fn paper() -> Vec<Box<dyn Workload>> {
    vec![Box::new(Mergesort::new(10_000_000))]
}

/// Mergesort at a small size, for a quick run on the CPU.
pub fn quick() -> Vec<Box<dyn Workload>> {
    vec![Box::new(Mergesort::new(100_000))]
}
