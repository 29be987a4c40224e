//! Fibonacci, GTaP's scheduler-overhead benchmark, in `int` arithmetic as GTaP's sources:
//!
//! * [`fib`] (`fib40`): every call a task (`evaluation/2-comparison/fib/gtap_fib.cu`);
//! * [`fib_cutoff`] (`fib40_cutoff14_q3`, `_q1`, and the cutoff sweep): tasks down to a cutoff,
//!   the recursive [`fib_sequential`] below it, with GTaP's EPAQ queue clauses
//!   (`evaluation/3-epaq/fib/fib_queue_3.cu`) when the runtime has 3 queues and none (queue 0)
//!   with 1 (`fib_queue_1.cu`).

/// fib(n) by binary recursion, every call a task (GTaP's `gtap_fib.cu`).
#[gtap::function]
pub fn fib(n: i32) -> i32 {
    if n < 2 {
        return n;
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = fib(n - 1));
    gtap::task!(b = fib(n - 2));
    gtap::taskwait!();
    a.wrapping_add(b)
}

/// Root kernel of [`fib`]. At most 4 blocks a multiprocessor: 10.9 % faster on an H100 than on
/// the 5 its registers allow (`bench/NOTES.md` entries 101 and 103).
#[gtap::kernel(queues = 1, max_blocks_per_sm = 4)]
pub fn fib_kernel(n: i32) -> i32 {
    gtap::entry!(fib(n))
}

/// GTaP's `fib_sequential`: the same binary recursion as a plain function (not a loop), so the
/// leaves of [`fib_cutoff`] do the work GTaP's do.
pub fn fib_sequential(n: i32) -> i32 {
    if n < 2 {
        return n;
    }
    fib_sequential(n - 1).wrapping_add(fib_sequential(n - 2))
}

/// Whether the running configuration is `fib_queue_3`'s (3 queues): then children below the
/// cutoff go to queue 1, the others to queue 0, and continuations wait on queue 2. With fewer
/// queues, as `fib_queue_1`, every clause is queue 0.
fn epaq_queues() -> bool {
    gtap::thread::num_queues() >= 3
}

/// The spawn clause of `fib_queue_3.cu`: `queue((n - 1) < d_cutoff ? 1 : 0)`.
fn spawn_queue(m: i32, cutoff: i32) -> u32 {
    if epaq_queues() && m < cutoff { 1 } else { 0 }
}

/// The taskwait clause of `fib_queue_3.cu`: `queue(2)`.
fn wait_queue() -> u32 {
    if epaq_queues() { 2 } else { 0 }
}

/// fib(n) with tasks while `n >= cutoff` and [`fib_sequential`] below (GTaP's EPAQ fib).
#[gtap::function]
pub fn fib_cutoff(n: i32, cutoff: i32) -> i32 {
    if n < cutoff {
        return fib_sequential(n);
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(
        queue(spawn_queue(n - 1, cutoff)),
        a = fib_cutoff(n - 1, cutoff)
    );
    gtap::task!(
        queue(spawn_queue(n - 2, cutoff)),
        b = fib_cutoff(n - 2, cutoff)
    );
    gtap::taskwait!(queue(wait_queue()));
    a.wrapping_add(b)
}

/// Root kernel of [`fib_cutoff`] for any queue count. At most 96 registers a thread: 20 warps
/// a multiprocessor instead of 16 (see `bench/NOTES.md`).
#[gtap::kernel(max_registers = 96)]
pub fn fib_cutoff_kernel(n: i32, cutoff: i32) -> i32 {
    gtap::entry!(fib_cutoff(n, cutoff))
}

/// [`fib_cutoff_kernel`] compiled for 1 queue, as GTaP builds `fib_queue_1` (`fib40_cutoff14_q1`).
#[gtap::kernel(max_registers = 96, queues = 1)]
pub fn fib_cutoff_q1_kernel(n: i32, cutoff: i32) -> i32 {
    gtap::entry!(fib_cutoff(n, cutoff))
}

/// [`fib_cutoff_kernel`] compiled for 3 queues, as GTaP builds `fib_queue_3` (`fib40_cutoff14_q3`).
#[gtap::kernel(max_registers = 96, queues = 3)]
pub fn fib_cutoff_q3_kernel(n: i32, cutoff: i32) -> i32 {
    gtap::entry!(fib_cutoff(n, cutoff))
}

/// fib(n) by iteration: the reference every runner is checked against.
pub fn fib_reference(n: i32) -> i32 {
    let (mut a, mut b) = (0i32, 1i32);
    for _ in 0..n {
        (a, b) = (b, a.wrapping_add(b));
    }
    a
}

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{Fib, FibCutoff};

#[cfg(not(target_arch = "nvptx64"))]
mod host {
    use std::format;
    use std::string::{String, ToString};

    use super::*;
    use crate::measure::{Sample, Workload, check, cpu_sample, gpu_sample};

    /// fib(n) with every call a task: label `fib<n>`.
    pub struct Fib {
        n: i32,
        expected: i32,
    }

    impl Fib {
        /// fib(`n`); GTaP's evaluation runs n = 40.
        pub fn new(n: i32) -> Self {
            Self {
                n,
                expected: fib_reference(n),
            }
        }
    }

    /// The CPU peer of [`fib`]: `rayon::join` at every call, as the task version spawns.
    fn fib_rayon(n: i32) -> i32 {
        if n < 2 {
            return n;
        }
        let (a, b) = rayon::join(|| fib_rayon(n - 1), || fib_rayon(n - 2));
        a.wrapping_add(b)
    }

    impl Workload for Fib {
        fn label(&self) -> String {
            format!("fib{}", self.n)
        }
        fn config(&self) -> gtap_host::Config {
            gtap_host::Config::new()
        }
        fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
            let launch = rt
                .launch(fib_kernel, (self.n,))
                .map_err(|e| e.to_string())?;
            gpu_sample(&launch, check(launch.result, self.expected))
        }
        fn sequential(&mut self) -> Result<Sample, String> {
            let n = self.n;
            cpu_sample(
                || fib_sequential(std::hint::black_box(n)),
                |v| check(v, self.expected),
            )
        }
        fn rayon(&mut self) -> Result<Sample, String> {
            let n = self.n;
            cpu_sample(
                || fib_rayon(std::hint::black_box(n)),
                |v| check(v, self.expected),
            )
        }
    }

    /// fib(n) with a sequential cutoff, 1 or 3 queues: label `fib<n>_cutoff<k>_q<queues>`.
    pub struct FibCutoff {
        n: i32,
        cutoff: i32,
        queues: u32,
        expected: i32,
    }

    impl FibCutoff {
        /// fib(`n`) with tasks while n >= `cutoff`, on a runtime with `queues` queues (3: GTaP's
        /// `fib_queue_3`, 1: `fib_queue_1`).
        pub fn new(n: i32, cutoff: i32, queues: u32) -> Self {
            Self {
                n,
                cutoff,
                queues,
                expected: fib_reference(n),
            }
        }
    }

    /// The CPU peer of [`fib_cutoff`]: `rayon::join` while n >= cutoff.
    fn fib_cutoff_rayon(n: i32, cutoff: i32) -> i32 {
        if n < cutoff {
            return fib_sequential(n);
        }
        let (a, b) = rayon::join(
            || fib_cutoff_rayon(n - 1, cutoff),
            || fib_cutoff_rayon(n - 2, cutoff),
        );
        a.wrapping_add(b)
    }

    impl Workload for FibCutoff {
        fn label(&self) -> String {
            format!("fib{}_cutoff{}_q{}", self.n, self.cutoff, self.queues)
        }
        fn config(&self) -> gtap_host::Config {
            gtap_host::Config::new().num_queues(self.queues)
        }
        fn gpu(&mut self, rt: &mut gtap_host::Runtime) -> Result<Sample, String> {
            let args = (self.n, self.cutoff);
            let launch = match self.queues {
                1 => rt.launch(fib_cutoff_q1_kernel, args),
                3 => rt.launch(fib_cutoff_q3_kernel, args),
                _ => rt.launch(fib_cutoff_kernel, args),
            }
            .map_err(|e| e.to_string())?;
            gpu_sample(&launch, check(launch.result, self.expected))
        }
        fn sequential(&mut self) -> Result<Sample, String> {
            // The sequential algorithm is the same for every cutoff: the plain recursion.
            let n = self.n;
            cpu_sample(
                || fib_sequential(std::hint::black_box(n)),
                |v| check(v, self.expected),
            )
        }
        fn rayon(&mut self) -> Result<Sample, String> {
            let (n, cutoff) = (self.n, self.cutoff);
            cpu_sample(
                || fib_cutoff_rayon(std::hint::black_box(n), cutoff),
                |v| check(v, self.expected),
            )
        }
    }
}
