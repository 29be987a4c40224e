//! Sparse matrix-vector product (GTaP's `spmv` example): a task per range of rows, split in
//! halves down to 16 rows, each row a sequential dot product.
//!
//! Shows data parallelism written as fork-join (ranges split into tasks, results written into
//! disjoint elements of the output) with the operands as the launch's context (`gtap::Context`:
//! every task reads them, none carries them), on a random CSR matrix; checked row by row against a
//! sequential product within a rounding tolerance. The task functions are in
//! `bench/workloads/src/spmv.rs`.
//!
//! ```sh
//! cargo run --release --example spmv [ROWS [AVG_NONZEROS]]     # default: 1,000,000 rows, 16
//! ```

mod common;

use std::process::ExitCode;

use gtap_host::Config;
use gtap_workloads::spmv::{Spmv, spmv_kernel};

fn main() -> ExitCode {
    let rows: usize = common::arg(1, 1_000_000);
    let avg: i32 = common::arg(2, 16);
    // The matrix, x = 1, and the reference with its tolerance per row.
    let case = Spmv::new(rows, avg);
    let m = case.matrix();
    let mut rt = common::runtime(&gtap_workloads::DEVICE_CODE, &Config::new());
    let row_ptr = rt.upload(&m.row_ptr).expect("upload");
    let col = rt.upload(&m.col).expect("upload");
    let val = rt.upload(&m.val).expect("upload");
    let x = rt.upload(&vec![1.0f64; rows]).expect("upload");
    let mut y = rt.alloc_filled(rows, f64::NAN).expect("output");
    let args = (
        row_ptr.slice(),
        col.slice(),
        val.slice(),
        x.slice(),
        y.slice_mut(),
    );
    let got = rt.launch(spmv_kernel, args).expect("spmv launch");
    common::report(&format!("SpMV, {rows} rows"), &got);
    let bad = case.bad_rows(&rt.download(&y).expect("download"));
    common::verdict(bad == 0, "spmv")
}
