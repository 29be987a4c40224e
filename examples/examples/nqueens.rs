//! N-Queens: counts the placements of N queens, a task per partial board down to a cutoff row
//! and a sequential search below it (GTaP's `nq` benchmark).
//!
//! Shows a loop that spawns a variable number of children into an array of results, and a
//! sequential leaf that is an ordinary loop (no recursion on the GPU thread's stack). The task
//! function is in `examples/src/nqueens.rs`.
//!
//! ```sh
//! cargo run --release --example nqueens [N [CUTOFF]]     # default: 13, cutoff 5
//! ```

mod common;

use std::process::ExitCode;

use gtap_examples::{DEVICE_CODE, nqueens};
use gtap_host::Config;

fn main() -> ExitCode {
    let n: u32 = common::arg(1, 13);
    let cutoff: u32 = common::arg(2, 5);
    assert!(n <= nqueens::MAX_N, "N is at most {}", nqueens::MAX_N);
    let mut rt = common::runtime(&DEVICE_CODE, &Config::new());
    let want = nqueens::nqueens_seq(n, 0, 0, 0, 0);
    let got = rt
        .launch(nqueens::nqueens_kernel, (n, cutoff))
        .expect("nqueens launch");
    common::report(&format!("{n}-queens, tasks down to row {cutoff}"), &got);
    println!("{n}-queens has {} solutions", got.result);
    common::verdict(got.result == want, "nqueens")
}
