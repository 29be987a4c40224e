//! Fork-join task parallelism on NVIDIA GPUs.
//!
//! Mark device functions with [`macro@function`], spawn children with [`task!`], join them with
//! [`taskwait!`], and start the root from a [`macro@kernel`] with [`entry!`]. The host runs the
//! kernel with `gtap-host`, on the GPU or on the CPU executor. Data that every task of a launch
//! reads (a graph, a matrix) goes to `entry!(context(..), ..)` once and reaches the tasks as a
//! [`Context`] parameter, instead of being copied into every task's record.

#![no_std]

pub use gtap_device::{
    AtomicElement, Block, Context, Loan, Part, SharedMem, SharedWord, Slice, SliceMut, StrideIndex,
    math, thread,
};
pub use gtap_macros::{KernelArg, entry, function, kernel, task, taskwait};

#[doc(hidden)]
pub use gtap_device::__private;

pub use gtap_device::{Cubin, DeviceCode, KernelModule};

/// The host's view of a `#[gtap::kernel]`: its PTX entry name, its parameters as a tuple
/// (`Args`) and its result (`Output`).
///
/// `#[gtap::kernel]` implements it on a unit struct named like the kernel function, so the
/// kernel's name is a value that `gtap_host::Runtime::launch` takes. Write generic launch code
/// against it; do not implement it by hand:
///
/// ```ignore
/// fn timed<K: gtap::Kernel + Copy>(
///     rt: &mut gtap_host::Runtime,
///     kernel: K,
///     args: K::Args,
/// ) -> gtap_host::Result<(K::Output, f64)> {
///     let launch = rt.launch(kernel, args)?;
///     Ok((launch.result, launch.stats.kernel_ms))
/// }
/// ```
#[doc(inline)]
pub use gtap_device::Kernel;

/// A type that can be a kernel parameter: integers, floats, `bool`, [`Slice`], [`SliceMut`],
/// and `#[repr(C)]` structs of those with `#[derive(gtap::KernelArg)]` (plain data laid out
/// alike on the host and the GPU).
#[doc(inline)]
pub use gtap_device::KernelArg;

/// A tuple of [`KernelArg`]s: a kernel's [`Kernel::Args`], e.g. `(u32,)` or `(Slice<f32>, u64)`.
#[doc(inline)]
pub use gtap_device::KernelArgs;

/// The device code that `gtap-builder` built for this crate, as a [`DeviceCode`] value: one
/// module per kernel (PTX, and SASS when the build had `ptxas`), or [`DeviceCode::Missing`]
/// with the reason (no device toolchain).
///
/// The crate's `build.rs` must run the builder
/// (`gtap_builder::Builder::new().build_or_exit()`), which writes
/// `$OUT_DIR/gtap_device_code.rs`; this macro includes that file. Use it in host code only:
///
/// ```ignore
/// #[cfg(not(target_arch = "nvptx64"))]
/// pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();
/// ```
#[macro_export]
macro_rules! device_code {
    () => {
        include!(concat!(env!("OUT_DIR"), "/gtap_device_code.rs"))
    };
}
