//! Host side of gtap: configure a runtime, launch `#[gtap::kernel]`s on an NVIDIA GPU (through
//! cudarc, loaded at run time, so the same binary runs on machines without a GPU) or on the
//! CPU executor, and read back results, statistics and device errors.
//!
//! ```no_run
//! use gtap_host::{Config, Runtime};
//! # fn run<K: gtap_host::Kernel<Args = (u32,), Output = u64> + Copy>(code: &gtap_host::DeviceCode, fib_kernel: K) -> gtap_host::Result<()> {
//! let (mut rt, fallback) = Runtime::gpu_or_cpu(code, &Config::new())?;
//! if let Some(why) = fallback {
//!     eprintln!("running on the CPU executor: {why}");
//! }
//! let launch = rt.launch(fib_kernel, (30,))?;
//! println!("fib(30) = {} in {:.2} ms", launch.result, launch.stats.kernel_ms);
//! # Ok(()) }
//! ```
//!
//! The crate is host-only. Compiled for the GPU (`nvptx64`, as in the device build of a crate
//! that depends on it) it is empty, so a device crate can list it as an ordinary dependency.

// On the GPU target there is no `std`, and nothing here is needed there.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg(not(target_arch = "nvptx64"))]

mod buffer;
mod config;
mod cpu;
mod device_error;
mod error;
mod gpu;
mod records;
mod runtime;
mod schedules;
mod stall;
mod stats;
mod timing;
mod trace;
mod watchdog;

pub use buffer::Buffer;
pub use config::{Config, ConfigError};
pub use cpu::CpuMode;
pub use device_error::{DeviceError, DeviceErrorKind, PoolGrowth};
pub use error::{Error, Result};
/// What a warp was doing, as a [`StallReport`] lists it.
pub use gtap_device::abi::WarpState;
/// The kernel and layout types this crate's API uses, so that host code needs no other gtap
/// crate to name them (`gtap::Kernel` is the same trait).
pub use gtap_device::abi::{Geometry, Layout};
pub use gtap_device::{Cubin, DeviceCode, KernelModule};
pub use gtap_device::{Kernel, KernelArg, KernelArgs};
pub use runtime::{BackendKind, Launch, Runtime};
pub use schedules::{Schedule, ScheduleError, check_schedules, check_schedules_with};
pub use stall::{StallDetector, StallReport, WarpActivity};
pub use stats::{ModuleLoad, ModuleSource, Stats};
pub use trace::{BlockPollEnd, Event, EventKind, Trace, WorkerKind, WorkerTrace};
