//! SpMV on the host: the [`Workload`] (GPU launch, sequential and rayon versions of the range
//! recursion) and the per-row check.

use std::boxed::Box;
use std::format;
use std::string::{String, ToString};
use std::vec;
use std::vec::Vec;

use gtap_host::Buffer;
use rayon::prelude::*;

use super::matrix::{Csr, Mt19937, gen_random_csr};
use super::{RANGE_CUTOFF, SPMV_BLOCK, spmv_block_kernel, spmv_kernel};
use crate::measure::{Sample, Workload, cpu_sample, gpu_sample};
use crate::resident::Resident;

/// `y = A x` for GTaP's generated matrix and `x` = ones, every row checked against a host SpMV
/// within `1e-9 * sum_k |a_ik x_k|` (a bound any summation order meets).
pub struct Spmv {
    label: String,
    /// Block mode ([`super::range_spmv_block`]) rather than thread mode.
    block: bool,
    matrix: Csr,
    x: Vec<f64>,
    reference: Vec<f64>,
    tolerance: Vec<f64>,
    /// The matrix and `x` on the runtime last used.
    resident: Resident<Inputs>,
}

/// The read-only device inputs: row offsets, columns, values, `x`.
type Inputs = (Buffer<i32>, Buffer<i32>, Buffer<f64>, Buffer<f64>);

impl Spmv {
    /// The matrix of `gen_random_csr(rows, avg_nnz, std::mt19937(42))`; label
    /// `spmv<rows>_thread` (`spmv1m_thread` for a million rows, GTaP's default).
    pub fn new(rows: usize, avg_nnz: i32) -> Self {
        let matrix = gen_random_csr(rows, avg_nnz, &mut Mt19937::new(42));
        let x = vec![1.0; rows];
        let (reference, tolerance) = (0..rows)
            .into_par_iter()
            .map(|i| {
                let (lo, hi) = (matrix.row_ptr[i] as usize, matrix.row_ptr[i + 1] as usize);
                let products = (lo..hi).map(|k| matrix.val[k] * x[matrix.col[k] as usize]);
                let (sum, abs) = products.fold((0.0, 0.0), |(s, a), p: f64| (s + p, a + p.abs()));
                (sum, 1e-9 * abs)
            })
            .unzip();
        let label = if rows == 1_000_000 {
            "spmv1m_thread".to_string()
        } else {
            format!("spmv{rows}_thread")
        };
        Self {
            label,
            block: false,
            matrix,
            x,
            reference,
            tolerance,
            resident: Resident::default(),
        }
    }

    /// [`Spmv::new`] in block mode; label `spmv<rows>_block`.
    pub fn block(rows: usize, avg_nnz: i32) -> Self {
        let mut s = Self::new(rows, avg_nnz);
        s.label = s.label.replace("_thread", "_block");
        s.block = true;
        s
    }

    /// The matrix.
    pub fn matrix(&self) -> &Csr {
        &self.matrix
    }

    /// Rows of `y` outside the tolerance (NaN counts as outside); all rows if `y` has the wrong
    /// length.
    pub fn bad_rows(&self, y: &[f64]) -> usize {
        if y.len() != self.reference.len() {
            return self.reference.len();
        }
        y.iter()
            .zip(self.reference.iter().zip(&self.tolerance))
            .filter(|(got, (want, tol))| {
                // A NaN (an unwritten row) is never within the tolerance.
                let err = (*got - *want).abs();
                err.is_nan() || err > **tol
            })
            .count()
    }

    /// Whether every row of `y` is within its tolerance of the reference.
    fn verdict(&self, y: &[f64]) -> Result<(), String> {
        match self.bad_rows(y) {
            0 => Ok(()),
            bad => Err(format!(
                "{bad} of {} rows outside the tolerance",
                self.reference.len()
            )),
        }
    }

    fn time_host(&self, parallel: bool) -> Result<Sample, String> {
        let mut y = vec![f64::NAN; self.matrix.rows()];
        cpu_sample(
            move || {
                run_host(&self.matrix, &self.x, &mut y, parallel);
                y
            },
            |y| self.verdict(&y),
        )
    }
}

impl Workload for Spmv {
    fn label(&self) -> String {
        self.label.clone()
    }

    fn config(&self) -> gtap_host::Config {
        // No task waits, so a record lives until its subtree is done (gtap joins implicitly):
        // up to one record per row and range may be live. Room for 4 KiB per row, between
        // 256 MiB and 4 GiB.
        let bytes = (self.matrix.rows() as u64 * 4096).clamp(256 << 20, 4 << 30);
        if self.block {
            // A block-mode record holds a frame per thread: room for 64 KiB per row, up to
            // 32 GiB.
            let bytes = (self.matrix.rows() as u64 * 65536).clamp(256 << 20, 32 << 30);
            // The row task borrows no shared memory (as GTaP's declares none): lending none
            // lets more blocks share a multiprocessor.
            return gtap_host::Config::new()
                .block_mode()
                .block_size(SPMV_BLOCK)
                .block_shared_bytes(0)
                .max_task_memory_bytes(bytes);
        }
        gtap_host::Config::new().max_task_memory_bytes(bytes)
    }

    fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
        let err = |e: gtap_host::Error| e.to_string();
        let (m, x) = (&self.matrix, &self.x);
        let (row_ptr, col, val, x) = self
            .resident
            .on(rt, |rt| {
                Ok((
                    rt.upload(&m.row_ptr)?,
                    rt.upload(&m.col)?,
                    rt.upload(&m.val)?,
                    rt.upload(x)?,
                ))
            })
            .map_err(err)?;
        let inputs = (row_ptr.slice(), col.slice(), val.slice(), x.slice());
        // All-ones bytes: a NaN, so an unwritten row fails the check.
        let mut y = rt
            .alloc_filled(m.rows(), f64::from_bits(u64::MAX))
            .map_err(err)?;
        let args = (inputs.0, inputs.1, inputs.2, inputs.3, y.slice_mut());
        let run = if self.block {
            rt.launch(spmv_block_kernel, args)
        } else {
            rt.launch(spmv_kernel, args)
        }
        .map_err(err)?;
        let out = rt.download(&y).map_err(err)?;
        gpu_sample(&run, self.verdict(&out))
    }

    fn sequential(&mut self) -> Result<Sample, String> {
        self.time_host(false)
    }

    fn rayon(&mut self) -> Result<Sample, String> {
        self.time_host(true)
    }
}

/// `y = A x` by the GPU's range recursion: halves down to [`RANGE_CUTOFF`] rows (in parallel
/// with `rayon::join` if `parallel`), then the rows one by one (a task per row on the GPU).
pub fn run_host(a: &Csr, x: &[f64], y: &mut [f64], parallel: bool) {
    fn range(a: &Csr, x: &[f64], y: &mut [f64], begin: usize, parallel: bool) {
        let end = begin + y.len();
        if end - begin <= RANGE_CUTOFF as usize {
            for (i, out) in (begin..end).zip(y.iter_mut()) {
                let (lo, hi) = (a.row_ptr[i] as usize, a.row_ptr[i + 1] as usize);
                *out = (lo..hi).fold(0.0, |s, k| s + a.val[k] * x[a.col[k] as usize]);
            }
            return;
        }
        let mid = (begin + end) >> 1;
        let (left, right) = y.split_at_mut(mid - begin);
        if parallel {
            rayon::join(
                || range(a, x, left, begin, true),
                || range(a, x, right, mid, true),
            );
        } else {
            range(a, x, left, begin, false);
            range(a, x, right, mid, false);
        }
    }
    range(a, x, y, 0, parallel);
}

/// SpMV at GTaP's size: `spmv1m_thread` (10^6 rows, about 3 * 10^8 nonzeros, 3.4 GiB), and
/// `spmv1m_block`.
pub fn paper() -> Vec<Box<dyn Workload>> {
    vec![
        Box::new(Spmv::new(1_000_000, 300)),
        Box::new(Spmv::block(1_000_000, 300)),
    ]
}

/// SpMV at a small size, for a quick run on the CPU.
pub fn quick() -> Vec<Box<dyn Workload>> {
    vec![
        Box::new(Spmv::new(20_000, 30)),
        Box::new(Spmv::block(2_000, 30)),
    ]
}
