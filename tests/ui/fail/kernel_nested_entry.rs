//! Rule 10: `entry!` at the top level of the kernel body, where every thread reaches it.

#[gtap::function]
fn leaf(n: u32) -> u64 {
    n as u64
}

#[gtap::kernel]
fn in_if(n: u32) -> u64 {
    if n > 2 { gtap::entry!(leaf(n)) } else { 0 }
}

#[gtap::kernel]
fn in_loop(n: u32) -> u64 {
    let mut r = 0;
    for _ in 0..1 {
        gtap::entry!(r = leaf(n));
    }
    r
}

#[gtap::kernel]
fn in_closure(n: u32) -> u64 {
    let f = || gtap::entry!(leaf(n));
    f()
}

fn main() {}
