//! Adaptive numerical integration in block mode: a task per interval, each running on a whole
//! thread block, whose threads share the interval's trapezoids and sum them together.
//!
//! Shows block mode beside the thread-mode `integrate` example: `#[gtap::function(block)]`
//! with the block as its first parameter, the block-cooperative helpers (`for_each`, `sum`),
//! thread 0 spawning the halves, a `taskwait!` every thread reaches, and a runtime configured
//! for block mode with the kernel's block size. The result is bit-identical to the sequential
//! recursion (`integrate_block_seq` replays the block's reduction tree). The task function is in
//! `examples/src/integrate_block.rs`.
//!
//! ```sh
//! cargo run --release --example integrate_block [EPS]     # default: 1e-10
//! ```

mod common;

use std::process::ExitCode;

use gtap_examples::DEVICE_CODE;
use gtap_examples::integrate_block::{BLOCK, integrate_block_kernel, integrate_block_seq};
use gtap_host::Config;

fn main() -> ExitCode {
    let eps: f64 = common::arg(1, 1e-10);
    // A block-mode kernel runs on a runtime configured for block mode, with its block size.
    let config = Config::new().block_mode().block_size(BLOCK);
    let mut rt = common::runtime(&DEVICE_CODE, &config);
    let want = integrate_block_seq(-1.0, 1.0, eps, BLOCK);
    let got = rt
        .launch(integrate_block_kernel, (-1.0, 1.0, eps))
        .expect("integrate_block launch");
    common::report(
        &format!("integral over [-1, 1] in block mode ({BLOCK} threads a task), eps {eps:e}"),
        &got,
    );
    println!("integral = {:.15}", got.result);
    common::verdict(got.result.to_bits() == want.to_bits(), "integrate_block")
}
