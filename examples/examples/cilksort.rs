//! Cilksort (GTaP's `cilksort` benchmark): a parallel merge sort whose merges are parallel too,
//! sorting pseudo-random integers.
//!
//! Shows divide and conquer over device buffers without `unsafe`: each task receives
//! `gtap::Part`s, exclusive views that `split_at` hands to children and that come back joined
//! after the wait; four sorts of quarters, then merges that split by binary search. The task
//! functions are in `bench/workloads/src/cilksort/parts.rs`; the benchmark beside GTaP runs the
//! same sort over views with `unsafe` claims (`bench/workloads/src/cilksort.rs`), whose records
//! are smaller.
//!
//! ```sh
//! cargo run --release --example cilksort [N]     # default: 10,000,000 values
//! ```

mod common;

use std::process::ExitCode;

use gtap_host::Config;
use gtap_workloads::cilksort::parts::cilksort_parts_kernel;
use gtap_workloads::gen_vector::gen_vector;
use gtap_workloads::sort_case::task_memory;

fn main() -> ExitCode {
    let n: usize = common::arg(1, 10_000_000);
    let input = gen_vector(n);
    let mut want = input.clone();
    want.sort_unstable();
    let config = Config::new().max_task_memory_bytes(task_memory(n));
    let mut rt = common::runtime(&gtap_workloads::DEVICE_CODE, &config);
    let mut data = rt.upload(&input).expect("upload");
    let mut tmp = rt.alloc_filled(n, 0i32).expect("scratch buffer");
    let got = rt
        .launch(cilksort_parts_kernel, (data.slice_mut(), tmp.slice_mut()))
        .expect("cilksort launch");
    common::report(&format!("cilksort of {n} values"), &got);
    common::verdict(rt.download(&data).expect("download") == want, "cilksort")
}
