//! Fibonacci numbers, one task per call: the smallest fork-join program.
//!
//! Shows `#[gtap::function]`, two `gtap::task!` spawns, a `gtap::taskwait!` that joins both,
//! a queue hint (`queue(1)`), and a kernel whose `gtap::entry!` starts the root task; then the
//! same with a sequential cutoff, which is how real programs keep tasks coarse enough. The task
//! functions are in `examples/src/fib.rs`.
//!
//! ```sh
//! cargo run --release --example fib [N [CUTOFF]]     # default: fib(32), cutoff 14
//! ```

mod common;

use std::process::ExitCode;

use gtap_examples::{DEVICE_CODE, fib};
use gtap_host::Config;

fn main() -> ExitCode {
    let n: u32 = common::arg(1, 32);
    let cutoff: u32 = common::arg(2, 14);
    let mut rt = common::runtime(&DEVICE_CODE, &Config::new().num_queues(2));
    let want = fib::fib_seq(n);
    let every = rt.launch(fib::fib_kernel, (n,)).expect("fib launch");
    common::report(&format!("fib({n}), a task per call"), &every);
    let cut = rt
        .launch(fib::fib_cutoff_kernel, (n, cutoff))
        .expect("fib launch");
    common::report(&format!("fib({n}), sequential below {cutoff}"), &cut);
    println!("fib({n}) = {}", every.result);
    common::verdict(every.result == want && cut.result == want, "fib")
}
