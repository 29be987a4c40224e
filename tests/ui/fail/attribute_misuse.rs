//! Rule 9: the attributes take no arguments, apply to functions, and accept a known set of
//! attributes on the function.

#[gtap::function(fast)]
fn a(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
struct NotAFunction;

#[gtap::function]
#[track_caller]
fn b(n: u32) -> u64 {
    n as u64
}

#[gtap::kernel(grid = 4)]
fn k(n: u32) -> u64 {
    gtap::entry!(a(n))
}

#[gtap::kernel(no_taskwait = true)]
fn k2(n: u32) -> u64 {
    gtap::entry!(a(n))
}

#[gtap::function(no_taskwait)]
fn c(n: u32) -> u64 {
    n as u64
}

fn main() {}
