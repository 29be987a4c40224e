//! Doc comments and the supported attributes; bodies using closures, helper functions, other
//! macros and a nested task function; locals of inferred types kept across waits; the site of
//! a `task!` reported by the runtime; task functions and kernels without parameters.

#![deny(warnings)]

include!("../support/cpu.rs");

/// Adds one.
#[gtap::function]
#[inline]
#[cfg(all())]
#[allow(clippy::identity_op)]
pub fn inc(n: u64) -> u64 {
    n + 1 * 1
}

#[gtap::function]
fn bodies(n: u32) -> u64 {
    fn helper(x: u64) -> u64 {
        x * 3
    }
    #[gtap::function]
    fn nested(x: u64) -> u64 {
        x + 100
    }
    let scale = |x: u64| x * 2;
    let labels = ["a", "b"];
    let pair = (n, Some(n as u64));
    let mut a = 0;
    gtap::task!(a = inc(n as u64));
    let mut b = 0;
    gtap::task!(b = nested(1));
    gtap::taskwait!();
    assert_eq!(labels[0], "a", "labels survive the wait");
    let text = format!("{a}");
    debug_assert!(!text.is_empty());
    scale(a) + helper(pair.1.unwrap_or(0)) + b
}

#[gtap::function]
fn bad_queue(n: u32) -> u64 {
    let mut a = 0;
    gtap::task!(queue(n), a = inc(1)); // line 44, checked below
    gtap::taskwait!();
    a
}

#[gtap::kernel]
fn bodies_kernel(n: u32) -> u64 {
    gtap::entry!(bodies(n))
}

// Compiled for the two queues of `cpu::run`'s runtimes: `queue(9)` is still refused.
#[gtap::kernel(queues = 2)]
fn bad_queue_kernel(n: u32) -> u64 {
    gtap::entry!(bad_queue(n))
}

fn main() {
    assert_eq!(cpu::run(bodies_kernel, (4,)), 2 * 5 + 12 + 101);
    assert_eq!(cpu::run(answer_kernel, ()), 43);
    let error = cpu::run_error(bad_queue_kernel, (9,));
    assert_eq!(error.kind, gtap_host::DeviceErrorKind::InvalidQueue);
    assert_eq!(error.line, 44);
    assert_eq!(error.task, "bad_queue");
    assert!(error.file.ends_with("attributes_and_bodies.rs"));
}

#[gtap::function]
fn answer() -> u64 {
    42
}

#[gtap::function]
fn answer_plus_one() -> u64 {
    let mut a = 0;
    gtap::task!(a = answer());
    gtap::taskwait!();
    a + 1
}

#[gtap::kernel]
fn answer_kernel() -> u64 {
    gtap::entry!(answer_plus_one())
}
