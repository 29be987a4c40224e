//! What the sort workloads share on the host: the input and its sorted reference, timing of a
//! host sort, and one verified GPU launch of a sort kernel.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use gtap::SliceMut;
use gtap_host::{Launch, Runtime};
use rayon::slice::ParallelSliceMut;

use crate::gen_vector::gen_vector;
use crate::measure::{Sample, cpu_sample, gpu_sample};

/// Task memory for sorting `n` values: GTaP's runtimes for these sorts reserve 5-30 GiB; the
/// pools here scale with the input (160 bytes per value), between 256 MiB and 16 GiB.
pub fn task_memory(n: usize) -> u64 {
    (n as u64 * 160).clamp(256 << 20, 16 << 30)
}

/// A sort's input (`gen_vector`'s first `n` values) and the same values sorted by the standard
/// library, on all cores (the reference every run is compared with).
pub struct SortCase {
    /// The unsorted input.
    pub input: Vec<i32>,
    /// The input, sorted.
    pub sorted: Vec<i32>,
}

impl SortCase {
    /// Generates the input of size `n` and sorts the reference.
    pub fn new(n: usize) -> Self {
        let input = gen_vector(n);
        let mut sorted = input.clone();
        sorted.par_sort_unstable();
        Self { input, sorted }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.input.len()
    }

    /// Whether the input is empty.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty()
    }

    /// Compares a whole output with the reference; the error names the mismatches.
    pub fn verdict(&self, out: &[i32]) -> Result<(), String> {
        if out.len() != self.sorted.len() {
            return Err(format!(
                "output has {} values, expected {}",
                out.len(),
                self.sorted.len()
            ));
        }
        match out.iter().zip(&self.sorted).filter(|(a, b)| a != b).count() {
            0 => Ok(()),
            bad => Err(format!("{bad} values differ from the sorted reference")),
        }
    }

    /// Runs `sort(data, tmp)` on a fresh copy of the input (copied outside the timing) and
    /// checks the result.
    pub fn time_host(&self, sort: impl FnOnce(&mut [i32], &mut [i32])) -> Result<Sample, String> {
        let mut data = self.input.clone();
        let mut tmp = std::vec![0; data.len()];
        cpu_sample(
            move || {
                sort(&mut data, &mut tmp);
                data
            },
            |data| self.verdict(&data),
        )
    }

    /// Uploads the input and a scratch buffer of the same length (outside the kernel's timing),
    /// runs `launch(rt, data, tmp)`, and checks the downloaded data.
    pub fn time_gpu(
        &self,
        rt: &mut Runtime,
        launch: impl FnOnce(&mut Runtime, SliceMut<i32>, SliceMut<i32>) -> gtap_host::Result<Launch<()>>,
    ) -> Result<Sample, String> {
        let err = |e: gtap_host::Error| e.to_string();
        let mut data = rt.upload(&self.input).map_err(err)?;
        let mut tmp = rt.alloc_filled(self.len(), 0i32).map_err(err)?;
        let run = launch(rt, data.slice_mut(), tmp.slice_mut()).map_err(err)?;
        let out = rt.download(&data).map_err(err)?;
        gpu_sample(&run, self.verdict(&out))
    }
}

/// Runs `a` and `b`, in parallel with `rayon::join` if `parallel`, else one after the other:
/// lets one recursive host function be both the sequential reference and the rayon peer.
pub fn fork<RA: Send, RB: Send>(
    parallel: bool,
    a: impl FnOnce() -> RA + Send,
    b: impl FnOnce() -> RB + Send,
) -> (RA, RB) {
    if parallel {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

/// `n` as GTaP's labels write sizes: `1e8`, `5e7` (a digit and a power of ten of at least 2),
/// else the plain number.
pub fn size_label(n: usize) -> String {
    let (mut mantissa, mut exponent) = (n, 0);
    while mantissa != 0 && mantissa % 10 == 0 {
        mantissa /= 10;
        exponent += 1;
    }
    if exponent >= 2 && mantissa < 10 {
        format!("{mantissa}e{exponent}")
    } else {
        format!("{n}")
    }
}
