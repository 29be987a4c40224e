//! Where LLVM unrolls device loops whose trip count is known only at run time.
//!
//! NVPTX asks LLVM for runtime unrolling of every small loop, loops that call functions
//! included, and the device code meets LLVM's optimizer twice: in rustc, crate by crate, and
//! again in the per-kernel `opt` of the link ([`crate::split`]), after the crates are linked.
//! The settings, measured on the H200 (`bench/NOTES.md`, entries 39, 41 and 70):
//!
//! * **In rustc, none** ([`NO_RUNTIME_UNROLL_IN_RUSTC`]): every device crate is compiled
//!   without it, so that the link alone decides, seeing the whole call graph.
//! * **In the link, loops with bounds checks too** ([`UNROLL_CHECKED_LOOPS`]). By default the
//!   runtime unroller leaves alone a loop with an exit besides its latch, and every
//!   bounds-checked index in a loop is such an exit (the panic). Unrolled, a gather like
//!   `sum += v * x[c]` over a row's zipped values and columns issues the loads of four
//!   iterations before it waits for the first: the thread-mode SpMV 20-34 % faster.
//! * **Never in a function that calls itself** ([`keep_rolled`]). LLVM turns a recursive leaf
//!   such as `fib_sequential` (two calls) into a loop around one of its calls; unrolled eight
//!   times behind a remainder loop, each call saves 40 bytes of registers instead of 24 (GTaP's
//!   nvcc leaf saves 24: clang and nvcc mark device functions `convergent`, which keeps such
//!   loops rolled). The link finds the functions that call themselves in the linked module
//!   and has `opt` optimize them for size, which turns runtime unrolling off in them alone:
//!   the EPAQ Fibonacci's leaves ran 30 % faster.

/// rustc's `-C llvm-args` for every device crate: no runtime unrolling before the link.
pub(crate) const NO_RUNTIME_UNROLL_IN_RUSTC: &str = "-Cllvm-args=-unroll-runtime=false";

/// Option of the link's per-kernel `opt`: runtime unrolling of loops with several exits.
pub(crate) const UNROLL_CHECKED_LOOPS: &str = "-unroll-runtime-multi-exit";

/// Option of the link's per-kernel `opt` that keeps the loops of `function` (a function that
/// calls itself) rolled: `optsize`, under which LLVM's unroller does no runtime unrolling.
pub(crate) fn keep_rolled(function: &str) -> String {
    format!("-force-attribute={function}:optsize")
}
