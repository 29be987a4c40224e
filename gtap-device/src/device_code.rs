//! The device code a host binary carries: the PTX built for its kernels, or why there is none.

/// The device code embedded in a crate by `gtap-builder` (its `build.rs` writes the value, and
/// `gtap::device_code!()` includes it):
///
/// ```ignore
/// #[cfg(not(target_arch = "nvptx64"))]
/// pub static DEVICE_CODE: gtap::DeviceCode = gtap::device_code!();
/// ```
///
/// A binary built where the device toolchain is missing still builds and runs on the CPU
/// executor; it carries [`DeviceCode::Missing`] with the reason, which the host reports when
/// asked to run on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceCode {
    /// PTX text for the crate's kernels (and gtap's probe kernel).
    Ptx {
        /// The PTX module.
        ptx: &'static str,
        /// The architecture it was built for (`sm_70`, ...); the driver JIT-compiles it for
        /// this and every newer GPU.
        arch: &'static str,
    },
    /// No device code was built.
    Missing {
        /// Why, with what to install (the builder's message).
        reason: &'static str,
    },
}

impl DeviceCode {
    /// The PTX, if there is device code.
    pub const fn ptx(&self) -> Option<&'static str> {
        match self {
            DeviceCode::Ptx { ptx, .. } => Some(ptx),
            DeviceCode::Missing { .. } => None,
        }
    }

    /// The architecture the PTX was built for, if there is device code.
    pub const fn arch(&self) -> Option<&'static str> {
        match self {
            DeviceCode::Ptx { arch, .. } => Some(arch),
            DeviceCode::Missing { .. } => None,
        }
    }

    /// Why there is no device code, if there is none.
    pub const fn missing_reason(&self) -> Option<&'static str> {
        match self {
            DeviceCode::Ptx { .. } => None,
            DeviceCode::Missing { reason } => Some(reason),
        }
    }
}
