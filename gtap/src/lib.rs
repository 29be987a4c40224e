//! Fork-join task parallelism on NVIDIA GPUs.
//!
//! Mark device functions with [`macro@function`], spawn children with [`task!`], join them with
//! [`taskwait!`], and start the root from a [`macro@kernel`] with [`entry!`]. The host runs the
//! kernel with `gtap-host`, on the GPU or on the CPU executor.

#![no_std]

pub use gtap_device::{Slice, SliceMut, thread};
pub use gtap_macros::{entry, function, kernel, task, taskwait};

#[doc(hidden)]
pub use gtap_device::__private;
