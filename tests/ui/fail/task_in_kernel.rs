//! Rule 1: a kernel starts the root with `entry!`; `task!`/`taskwait!` belong to task
//! functions.

#[gtap::function]
fn leaf(n: u32) -> u64 {
    n as u64
}

#[gtap::kernel]
fn k(n: u32) -> u64 {
    let mut x = 0;
    gtap::task!(x = leaf(n));
    gtap::taskwait!();
    let r = gtap::entry!(leaf(n));
    x + r
}

fn main() {}
