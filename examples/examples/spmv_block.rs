//! Sparse matrix-vector product in block mode (GTaP's block SpMV): thread 0 of a block halves
//! ranges of rows into tasks, then spawns a task per row, whose block's threads share the row's
//! nonzeros and sum their products together.
//!
//! Shows data parallelism inside a task (`Block::for_each` over a row's nonzeros, then
//! `Block::sum`) beside the thread-mode `spmv` example, where a row is one thread's loop;
//! checked row by row against a sequential product within a rounding tolerance. The task
//! functions are in `bench/workloads/src/spmv.rs`.
//!
//! ```sh
//! cargo run --release --example spmv_block [ROWS [AVG_NONZEROS]]     # default: 10,000 rows, 16
//! ```

mod common;

use std::process::ExitCode;

use gtap_host::Config;
use gtap_workloads::spmv::{SPMV_BLOCK, Spmv, spmv_block_kernel};

fn main() -> ExitCode {
    let rows: usize = common::arg(1, 10_000);
    let avg: i32 = common::arg(2, 16);
    // The matrix, x = 1, and the reference with its tolerance per row.
    let case = Spmv::new(rows, avg);
    let m = case.matrix();
    // The default task budget: on the GPU sized from the kernel's records (a frame per thread
    // in block mode) and the grid; a budget set here would have to know both.
    let config = Config::new().block_mode().block_size(SPMV_BLOCK);
    let mut rt = common::runtime(&gtap_workloads::DEVICE_CODE, &config);
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
    let got = rt
        .launch(spmv_block_kernel, args)
        .expect("spmv_block launch");
    common::report(&format!("block-mode SpMV, {rows} rows"), &got);
    let bad = case.bad_rows(&rt.download(&y).expect("download"));
    common::verdict(bad == 0, "spmv_block")
}
