//! Where LLVM unrolls device loops whose trip count is known only at run time.
//!
//! NVPTX asks LLVM for runtime unrolling of small loops, and the device code meets LLVM's
//! optimizer twice: in rustc, crate by crate, and again in the per-kernel `opt` of the link
//! ([`crate::split`]), after the crates are linked. Two settings, measured on the H200
//! (`bench/NOTES.md`, entries 39 and 41):
//!
//! * **In rustc, loops with bounds checks too** ([`UNROLL_CHECKED_LOOPS`]). By default the
//!   runtime unroller leaves alone a loop with an exit besides its latch, and every
//!   bounds-checked index in a loop is such an exit (the panic). Unrolled, a gather like
//!   `sum += v * x[c]` over a row's zipped values and columns issues the loads of four
//!   iterations before it waits for the first: the thread-mode SpMV 20 % faster.
//! * **In the link, none** ([`NO_RUNTIME_UNROLL`]). NVPTX's unrolling preferences do not
//!   exclude loops that call functions, and the link's second pass unrolled the loop LLVM
//!   makes of a recursive leaf (`fib_sequential`: one call an iteration) eight times, with a
//!   remainder loop first: lanes with different trip counts diverge over both, and the
//!   frame each call saves grew from 40 to 56 bytes. Without it the EPAQ Fibonacci ran 18-21 %
//!   faster; the SpMV keeps the unrolling rustc did, and no other benchmark changed.

/// `-C llvm-args` of every device crate: runtime unrolling of loops with several exits.
pub(crate) const UNROLL_CHECKED_LOOPS: &str = "-Cllvm-args=-unroll-runtime-multi-exit";

/// Option of the link's per-kernel `opt`: no runtime unrolling there.
pub(crate) const NO_RUNTIME_UNROLL: &str = "-unroll-runtime=false";
