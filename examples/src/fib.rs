//! Fibonacci: the classic fork-join benchmark (GTaP's `fib`), with and without a sequential
//! cutoff. The cutoff version sorts tasks by kind into divergence-aware queues.

/// fib(n) by binary recursion, every call a task.
#[gtap::function]
pub fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (mut a, mut b) = (0, 0);
    gtap::task!(a = fib(n - 1));
    gtap::task!(b = fib(n - 2));
    gtap::taskwait!();
    a + b
}

/// fib(n) with tasks down to `cutoff`, sequential below it.
///
/// Divergence-aware queues: children that will spawn go to queue 0, children that will run
/// sequentially to queue 1, and continuations (the additions after a wait) to queue 2, so a
/// warp runs tasks of one kind together. With fewer queues the kinds share them.
#[gtap::function]
pub fn fib_cutoff(n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_seq(n);
    }
    let queues = gtap::thread::num_queues();
    let kind = |m: u32| if m <= cutoff { 1 } else { 0 };
    let (mut a, mut b) = (0, 0);
    gtap::task!(queue(kind(n - 1) % queues), a = fib_cutoff(n - 1, cutoff));
    gtap::task!(queue(kind(n - 2) % queues), b = fib_cutoff(n - 2, cutoff));
    gtap::taskwait!(queue(2 % queues));
    a + b
}

/// Sequential reference.
pub fn fib_seq(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// Number of tasks `fib(n)` creates.
pub fn fib_tasks(n: u32) -> u64 {
    2 * fib_seq(n + 1) - 1
}

/// Root kernel of [`fib`].
#[gtap::kernel]
pub fn fib_kernel(n: u32) -> u64 {
    gtap::entry!(fib(n))
}

/// Root kernel of [`fib_cutoff`].
#[gtap::kernel]
pub fn fib_cutoff_kernel(n: u32, cutoff: u32) -> u64 {
    let result;
    gtap::entry!(result = fib_cutoff(n, cutoff));
    result
}
