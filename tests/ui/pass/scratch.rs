//! Scratch memory used inside its closure, with spawns and the wait outside it.

include!("../support/cpu.rs");

#[gtap::function]
fn digits(n: u32) -> u32 {
    let last = gtap::thread::scratch(|s| {
        s[0] = n % 10;
        s[1] = s[0] * 2;
        s[1] / 2
    });
    let mut rest = 0;
    if n >= 10 {
        gtap::task!(rest = digits(n / 10));
    }
    gtap::taskwait!();
    rest + last
}

#[gtap::kernel]
fn digits_kernel(n: u32) -> u32 {
    gtap::entry!(digits(n))
}

fn main() {
    assert_eq!(cpu::run(digits_kernel, (987_654_321,)), 45);
}
