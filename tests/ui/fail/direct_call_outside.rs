//! Rule 2, everywhere else: the trap in the value namespace reports a direct call whatever its
//! context (the result typed, discarded, or used in an expression).

#[gtap::function]
fn fib(n: u32) -> u64 {
    n as u64
}

fn typed() -> u64 {
    let x: u64 = fib(3);
    x
}

fn discarded() {
    fib(3);
}

fn in_expression() -> u64 {
    fib(3) + 1
}

#[gtap::function]
fn other(n: u32) -> u64 {
    // `fib` is not spawned in this body, so only the trap knows it is a task function.
    fib(n) * 2
}

fn main() {}
