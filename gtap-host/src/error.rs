//! Everything that can go wrong on the host side of a launch.

use cudarc::driver::DriverError;

use crate::config::ConfigError;
use crate::device_error::DeviceError;

/// A failed runtime operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No usable GPU (no driver, no device, or the driver refused).
    #[error("no GPU available: {reason}")]
    NoGpu {
        /// Why.
        reason: String,
    },
    /// The program was built without device code.
    #[error("this binary has no device code, so it cannot launch on the GPU: {reason}")]
    NoDeviceCode {
        /// Why the build produced none.
        reason: String,
    },
    /// The configuration is unusable.
    #[error("invalid configuration: {0}")]
    Config(#[from] ConfigError),
    /// A CUDA driver call failed.
    #[error("CUDA driver call failed while {during}: {source}")]
    Driver {
        /// What the runtime was doing.
        during: &'static str,
        /// The driver's error.
        source: DriverError,
    },
    /// The driver rejected the PTX.
    #[error(
        "the GPU driver could not load the device code: {log}; rebuild for an older architecture (GTAP_ARCH=sm_70) or update the driver"
    )]
    ModuleLoad {
        /// The driver's error and its JIT log.
        log: String,
    },
    /// The kernel is not in the device code.
    #[error(
        "kernel `{name}` is not in the device code; it must be a #[gtap::kernel] in the crate whose DEVICE_CODE is passed to the runtime"
    )]
    KernelNotFound {
        /// The kernel's name.
        name: &'static str,
    },
    /// A device failure stopped the launch (queue overflow, pool exhausted, bad queue index,
    /// panic in user code, ...).
    #[error("{0}")]
    Device(Box<DeviceError>),
    /// The kernel itself faulted (illegal address, trap, ...); the CUDA context is unusable.
    #[error("the kernel faulted ({source}); the CUDA context can no longer be used, create a new Runtime{}", .record.as_ref().map(|r| format!(" (recorded: {r})")).unwrap_or_default())]
    KernelFault {
        /// The driver's error.
        source: DriverError,
        /// A device error recorded before the fault, if any.
        record: Option<Box<DeviceError>>,
    },
    /// An earlier kernel fault left the context unusable.
    #[error(
        "an earlier kernel fault left this runtime's CUDA context unusable; create a new Runtime"
    )]
    ContextLost,
    /// The kernel returns a type too large to copy back.
    #[error(
        "kernel `{name}` returns {bytes} bytes, more than the {max} the runtime copies back; return a smaller value"
    )]
    OutputTooLarge {
        /// The kernel.
        name: &'static str,
        /// Size of its output.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// The kernel body itself (outside any task) panicked on the CPU executor.
    #[error("the kernel body panicked on the CPU executor: {message}")]
    HostPanic {
        /// The panic message.
        message: String,
    },
    /// The built-in probe kernel gave a wrong answer: the device, driver or toolchain is broken.
    #[error("the GPU self-test failed: {detail}; check the driver and rebuild the device code")]
    SelfTest {
        /// What was wrong.
        detail: String,
    },
    /// A buffer belongs to another runtime or backend.
    #[error("this buffer belongs to another runtime")]
    ForeignBuffer,
}

impl Error {
    pub(crate) fn driver(during: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| Error::Driver { during, source }
    }
}

/// Result of a runtime operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;
