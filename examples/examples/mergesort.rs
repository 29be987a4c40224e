//! Merge sort (GTaP's `mergesort` benchmark): two sorted halves, then a sequential merge into a
//! buffer, a task per half above a cutoff.
//!
//! Shows the simplest divide and conquer over `gtap::Part`s (a sequential merge after the
//! wait, where cilksort merges in parallel: compare the two for the price of a sequential
//! merge near the root). The task functions are in `bench/workloads/src/mergesort.rs`.
//!
//! ```sh
//! cargo run --release --example mergesort [N]     # default: 1,000,000 values
//! ```

mod common;

use std::process::ExitCode;

use gtap_host::Config;
use gtap_workloads::gen_vector::gen_vector;
use gtap_workloads::mergesort::mergesort_kernel;
use gtap_workloads::sort_case::task_memory;

fn main() -> ExitCode {
    let n: usize = common::arg(1, 1_000_000);
    let input = gen_vector(n);
    let mut want = input.clone();
    want.sort_unstable();
    let config = Config::new().max_task_memory_bytes(task_memory(n));
    let mut rt = common::runtime(&gtap_workloads::DEVICE_CODE, &config);
    let mut data = rt.upload(&input).expect("upload");
    let mut buf = rt.alloc_filled(n, 0i32).expect("merge buffer");
    let got = rt
        .launch(mergesort_kernel, (data.slice_mut(), buf.slice_mut()))
        .expect("mergesort launch");
    common::report(&format!("mergesort of {n} values"), &got);
    common::verdict(rt.download(&data).expect("download") == want, "mergesort")
}
