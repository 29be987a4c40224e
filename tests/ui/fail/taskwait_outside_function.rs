//! Rule 1: a wait outside a task function, including in a closure that is not part of one.

fn main() {
    let f = || gtap::taskwait!(queue(0));
    f();
}
