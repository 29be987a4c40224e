//! Rule 1: `entry!` only in a `#[gtap::kernel]`, neither in a plain function nor in a task
//! function.

#[gtap::function]
fn leaf(n: u32) -> u64 {
    n as u64
}

#[gtap::function]
fn parent(n: u32) -> u64 {
    gtap::entry!(leaf(n))
}

fn host(n: u32) -> u64 {
    gtap::entry!(leaf(n))
}

fn main() {}
