//! Adaptive numerical integration: a task per interval that is not yet accurate enough, so the
//! task tree follows the integrand's shape (deep around its peak, shallow elsewhere).
//!
//! Shows irregular recursion with floating-point results joined by `gtap::taskwait!`; the
//! result is bit-identical to the sequential recursion, because every task adds its children
//! in the same order. The task function is in `examples/src/integrate.rs`.
//!
//! ```sh
//! cargo run --release --example integrate [EPS]     # default: 1e-12
//! ```

mod common;

use std::process::ExitCode;

use gtap_examples::{DEVICE_CODE, integrate};
use gtap_host::Config;

fn main() -> ExitCode {
    let eps: f64 = common::arg(1, 1e-12);
    let mut rt = common::runtime(&DEVICE_CODE, &Config::new());
    let want = integrate::integrate_seq(-1.0, 1.0, eps);
    let got = rt
        .launch(integrate::integrate_kernel, (-1.0, 1.0, eps))
        .expect("integrate launch");
    common::report(&format!("integral over [-1, 1], eps {eps:e}"), &got);
    println!("integral = {:.15}", got.result);
    common::verdict(got.result.to_bits() == want.to_bits(), "integrate")
}
