//! Rule 10: exactly one `entry!` per kernel.

#[gtap::function]
fn leaf(n: u32) -> u64 {
    n as u64
}

#[gtap::kernel]
fn none(n: u32) -> u64 {
    n as u64
}

#[gtap::kernel]
fn two(n: u32) -> u64 {
    let a = gtap::entry!(leaf(n));
    let b = gtap::entry!(leaf(n + 1));
    a + b
}

fn main() {}
