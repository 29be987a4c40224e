//! Every accepted form of `entry!`: expression (also brace-delimited), statement with a
//! destination, `let` initialiser, assignment, bare `entry!` after `use`; kernels without a
//! result, without parameters, with `mut` and tuple parameter patterns.

include!("../support/cpu.rs");

use gtap::entry;

#[gtap::function]
fn double(n: u32) -> u64 {
    2 * n as u64
}

#[gtap::kernel]
fn expression(n: u32) -> u64 {
    gtap::entry! { double(n) }
}

#[gtap::kernel]
fn statement(n: u32) -> u64 {
    let r;
    gtap::entry!(r = double(n));
    r + 1
}

#[gtap::kernel]
fn initialiser(n: u32) -> u64 {
    let r = ::gtap::entry!(double(n));
    r * 10
}

#[gtap::kernel]
fn assignment(n: u32) -> u64 {
    let mut r = 0;
    r += 1;
    r = entry!(double(n + r as u32));
    r
}

#[gtap::kernel]
fn no_result(n: u32) {
    entry!(double(n));
}

#[gtap::kernel]
fn no_params() -> u64 {
    gtap::entry!(double(21))
}

#[gtap::kernel]
fn patterns(mut n: u32, k: u32) -> u64 {
    n += k;
    gtap::entry!(double(n))
}

fn main() {
    assert_eq!(cpu::run(expression, (4,)), 8);
    assert_eq!(cpu::run(statement, (4,)), 9);
    assert_eq!(cpu::run(initialiser, (4,)), 80);
    assert_eq!(cpu::run(assignment, (4,)), 10);
    cpu::run(no_result, (4,));
    assert_eq!(cpu::run(no_params, ()), 42);
    assert_eq!(cpu::run(patterns, (1, 2)), 6);
}
