//! Cilksort on the host: the [`Workload`] (GPU launch, sequential reference, rayon peer).

use std::boxed::Box;
use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

use super::parts::cilksort_parts_kernel;
use super::{EPAQ_CUTOFF, MERGE_CUTOFF, SORT_CUTOFF, merge, merge_split, quarters, sort_small};
use super::{
    cilksort_epaq_kernel, cilksort_epaq_q1_kernel, cilksort_epaq_q3_kernel, cilksort_kernel,
};
use crate::measure::{Sample, Workload};
use crate::sort_case::{SortCase, fork, size_label, task_memory};

/// Which cilksort: GTaP's comparison build (over views or parts), or the EPAQ build with one or
/// three queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// Cutoffs 64 (sort) and 256 (merge), one queue (`gtap_cilksort.cu`).
    Plain,
    /// [`Variant::Plain`] without `unsafe`, over parts ([`super::parts`]).
    Parts,
    /// Cutoffs [`EPAQ_CUTOFF`], with this many queues (`cilksort_queue_{1,3}.cu`).
    Epaq { queues: u32 },
}

/// Cilksort of `gen_vector`'s first `n` values, checked against a sorted copy.
pub struct Cilksort {
    variant: Variant,
    case: SortCase,
}

impl Cilksort {
    /// GTaP's comparison cilksort (label `cilksort<n>`, e.g. `cilksort1e8`).
    pub fn new(n: usize) -> Self {
        Self {
            variant: Variant::Plain,
            case: SortCase::new(n),
        }
    }

    /// The same sort over parts, without `unsafe` (label `cilksort<n>_parts`; see
    /// [`super::parts`]).
    pub fn parts(n: usize) -> Self {
        Self {
            variant: Variant::Parts,
            case: SortCase::new(n),
        }
    }

    /// The EPAQ cilksort with cutoffs 256 on `queues` queues, 1 or 3 (label
    /// `cilksort<n>_cutoff256_q<queues>`).
    pub fn epaq(n: usize, queues: u32) -> Self {
        Self {
            variant: Variant::Epaq { queues },
            case: SortCase::new(n),
        }
    }
}

impl Cilksort {
    /// Whether this is the EPAQ build (its cutoffs differ).
    fn is_epaq(&self) -> bool {
        matches!(self.variant, Variant::Epaq { .. })
    }
}

impl Workload for Cilksort {
    fn label(&self) -> String {
        match self.variant {
            Variant::Plain => format!("cilksort{}", size_label(self.case.len())),
            Variant::Parts => format!("cilksort{}_parts", size_label(self.case.len())),
            Variant::Epaq { queues } => format!(
                "cilksort{}_cutoff{EPAQ_CUTOFF}_q{queues}",
                size_label(self.case.len())
            ),
        }
    }

    fn config(&self) -> gtap_host::Config {
        let queues = match self.variant {
            Variant::Plain | Variant::Parts => 1,
            Variant::Epaq { queues } => queues,
        };
        gtap_host::Config::new()
            .num_queues(queues)
            .max_task_memory_bytes(task_memory(self.case.len()))
    }

    fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
        let variant = self.variant;
        self.case.time_gpu(rt, |rt, data, tmp| match variant {
            Variant::Plain => rt.launch(cilksort_kernel, (data, tmp)),
            Variant::Parts => rt.launch(cilksort_parts_kernel, (data, tmp)),
            Variant::Epaq { queues: 1 } => rt.launch(cilksort_epaq_q1_kernel, (data, tmp)),
            Variant::Epaq { queues: 3 } => rt.launch(cilksort_epaq_q3_kernel, (data, tmp)),
            Variant::Epaq { .. } => rt.launch(cilksort_epaq_kernel, (data, tmp)),
        })
    }

    fn sequential(&mut self) -> Result<Sample, String> {
        self.case
            .time_host(|d, t| run_host(self.is_epaq(), false, d, t))
    }

    fn rayon(&mut self) -> Result<Sample, String> {
        self.case
            .time_host(|d, t| run_host(self.is_epaq(), true, d, t))
    }
}

/// Sorts `data` with cilksort on the host (`tmp` as scratch, as long as `data`), with the GPU
/// version's cutoffs (`epaq`: the EPAQ cutoffs), on all cores with rayon if `parallel`.
pub fn run_host(epaq: bool, parallel: bool, data: &mut [i32], tmp: &mut [i32]) {
    if epaq {
        sort_rec::<{ EPAQ_CUTOFF as usize }, { EPAQ_CUTOFF as usize }>(parallel, data, tmp)
    } else {
        sort_rec::<{ SORT_CUTOFF as usize }, { MERGE_CUTOFF as usize }>(parallel, data, tmp)
    }
}

/// `cilksort` on host slices.
fn sort_rec<const SORT: usize, const MERGE: usize>(
    parallel: bool,
    arr: &mut [i32],
    tmp: &mut [i32],
) {
    let n = arr.len();
    if n < SORT {
        sort_small::<SORT>(arr);
        return;
    }
    let (len1, len2, len3, _) = quarters(n as u32);
    let (len1, len12, len3) = (len1 as usize, (len1 + len2) as usize, len3 as usize);
    let (a12, a34) = arr.split_at_mut(len12);
    let (t12, t34) = tmp.split_at_mut(len12);
    {
        let (a1, a2) = a12.split_at_mut(len1);
        let (a3, a4) = a34.split_at_mut(len3);
        let (t1, t2) = t12.split_at_mut(len1);
        let (t3, t4) = t34.split_at_mut(len3);
        let sort = |a: &mut [i32], t: &mut [i32]| sort_rec::<SORT, MERGE>(parallel, a, t);
        fork(
            parallel,
            || fork(parallel, || sort(a1, t1), || sort(a2, t2)),
            || fork(parallel, || sort(a3, t3), || sort(a4, t4)),
        );
    }
    let (a12, a34) = (&*a12, &*a34);
    fork(
        parallel,
        || merge_rec::<MERGE>(parallel, a12, (0, len1), (len1, len12 - len1), t12),
        || merge_rec::<MERGE>(parallel, a34, (0, len3), (len3, a34.len() - len3), t34),
    );
    merge_rec::<MERGE>(parallel, tmp, (0, len12), (len12, n - len12), arr);
}

/// `cilkmerge` on host slices: merges the sorted ranges `a` and `b` (start, length) of `src`
/// into `dst`.
fn merge_rec<const MERGE: usize>(
    parallel: bool,
    src: &[i32],
    a: (usize, usize),
    b: (usize, usize),
    dst: &mut [i32],
) {
    let (a, b) = if a.1 < b.1 { (b, a) } else { (a, b) };
    let ((a, a_len), (b, b_len)) = (a, b);
    if b_len == 0 {
        dst[..a_len].copy_from_slice(&src[a..a + a_len]);
        return;
    }
    if a_len + b_len < MERGE {
        merge(&src[a..a + a_len], &src[b..b + b_len], dst);
        return;
    }
    let a_split = a_len.div_ceil(2);
    let b_split = merge_split(&src[a..a + a_len], &src[b..b + b_len]);
    let (left, right) = dst.split_at_mut(a_split + b_split);
    fork(
        parallel,
        || merge_rec::<MERGE>(parallel, src, (a, a_split), (b, b_split), left),
        || {
            let rest = (
                (a + a_split, a_len - a_split),
                (b + b_split, b_len - b_split),
            );
            merge_rec::<MERGE>(parallel, src, rest.0, rest.1, right)
        },
    );
}

/// Cilksort at the paper's sizes: `cilksort1e8` (and `_parts`), `cilksort5e7_cutoff256_q3` and
/// `_q1`.
pub fn paper() -> Vec<Box<dyn Workload>> {
    vec![
        Box::new(Cilksort::new(100_000_000)),
        Box::new(Cilksort::parts(100_000_000)),
        Box::new(Cilksort::epaq(50_000_000, 3)),
        Box::new(Cilksort::epaq(50_000_000, 1)),
    ]
}

/// Cilksort at small sizes, for a quick run on the CPU.
pub fn quick() -> Vec<Box<dyn Workload>> {
    vec![
        Box::new(Cilksort::new(100_000)),
        Box::new(Cilksort::parts(100_000)),
        Box::new(Cilksort::epaq(50_000, 3)),
        Box::new(Cilksort::epaq(50_000, 1)),
    ]
}
