//! Every accepted spelling and form of `task!` and `taskwait!`: `gtap::`, `::gtap::` and bare
//! after `use`; parentheses or braces; no destination (the result is discarded); queue clauses
//! on both macros, literal or computed.

include!("../support/cpu.rs");

use std::sync::atomic::{AtomicU64, Ordering};

use gtap::{task, taskwait};

static LEAVES: AtomicU64 = AtomicU64::new(0);

#[gtap::function]
fn count(n: u32) {
    if n < 2 {
        LEAVES.fetch_add(1, Ordering::Relaxed);
        return;
    }
    gtap::task!(count(n - 1));
    ::gtap::task!(queue(n % 2), count(n - 2));
}

#[gtap::function]
fn fib(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (mut a, mut b) = (0, 0);
    let lane = n as usize % 2;
    task!(queue(lane), a = fib(n - 1));
    gtap::task! { queue(1u8), b = fib(n - 2) }
    taskwait!(queue(0));
    let mut c = 0;
    ::gtap::task!(c = fib(n - 2));
    gtap::taskwait! {}
    a + b - c + c
}

#[gtap::kernel]
fn count_kernel(n: u32) {
    gtap::entry!(count(n));
}

#[gtap::kernel]
fn fib_kernel(n: u32) -> u64 {
    gtap::entry!(fib(n))
}

fn main() {
    cpu::run(count_kernel, (15,));
    // Five runs (see `cpu::run`), each reaching fib(16) leaves.
    assert_eq!(LEAVES.load(Ordering::Relaxed), 5 * 987);
    assert_eq!(cpu::run(fib_kernel, (15,)), 610);
}
