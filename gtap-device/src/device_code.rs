//! The device code a host binary carries: one module per kernel (PTX, and SASS where the build
//! had `ptxas`), or why there is none.

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
    /// One module per kernel (gtap's probe kernel included), each holding only the code its
    /// kernel reaches.
    Modules {
        /// The architecture the PTX was built for (`sm_70`, ...); the driver JIT-compiles it
        /// for this and every newer GPU.
        arch: &'static str,
        /// The modules.
        modules: &'static [KernelModule],
        /// Record sizes (symbol, bytes) of every task function of the crate, as the compiler
        /// laid the records out.
        records: &'static [(&'static str, u32)],
    },
    /// No device code was built.
    Missing {
        /// Why, with what to install (the builder's message).
        reason: &'static str,
    },
}

/// The module of one kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelModule {
    /// The kernels it defines.
    pub kernels: &'static [&'static str],
    /// Its PTX.
    pub ptx: &'static str,
    /// Its SASS, assembled at build time, for each architecture built (none when the build
    /// had no `ptxas`).
    pub cubins: &'static [Cubin],
    /// Record sizes (symbol, bytes) of the task functions whose code the module holds.
    pub records: &'static [(&'static str, u32)],
}

/// A module assembled to SASS for one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cubin {
    /// The architecture (`sm_90`, `sm_90a`, ...).
    pub arch: &'static str,
    /// The cubin (ELF) image.
    pub image: &'static [u8],
}

impl DeviceCode {
    /// The architecture the PTX was built for, if there is device code.
    pub const fn arch(&self) -> Option<&'static str> {
        match self {
            DeviceCode::Modules { arch, .. } => Some(arch),
            DeviceCode::Missing { .. } => None,
        }
    }

    /// The modules (none without device code).
    pub const fn modules(&self) -> &'static [KernelModule] {
        match self {
            DeviceCode::Modules { modules, .. } => modules,
            DeviceCode::Missing { .. } => &[],
        }
    }

    /// Record sizes of every task function of the crate (none without device code).
    pub const fn records(&self) -> &'static [(&'static str, u32)] {
        match self {
            DeviceCode::Modules { records, .. } => records,
            DeviceCode::Missing { .. } => &[],
        }
    }

    /// The module that defines kernel `name`.
    pub fn module_of(&self, name: &str) -> Option<&'static KernelModule> {
        self.modules().iter().find(|m| m.kernels.contains(&name))
    }

    /// Why there is no device code, if there is none.
    pub const fn missing_reason(&self) -> Option<&'static str> {
        match self {
            DeviceCode::Modules { .. } => None,
            DeviceCode::Missing { reason } => Some(reason),
        }
    }
}

impl KernelModule {
    /// A cubin a GPU of compute capability `major.minor` can run: one of the same major
    /// version and a minor version no higher (an architecture-specific `sm_XYa` cubin only on
    /// exactly `X.Y`); the newest such.
    pub fn cubin_for(&self, major: u32, minor: u32) -> Option<&'static Cubin> {
        self.cubins
            .iter()
            .filter_map(|c| Some((c, capability(c.arch)?)))
            .filter(|(_, (ma, mi, specific))| {
                *ma == major
                    && if *specific {
                        *mi == minor
                    } else {
                        *mi <= minor
                    }
            })
            .max_by_key(|(_, (_, mi, _))| *mi)
            .map(|(c, _)| c)
    }
}

/// (major, minor, architecture-specific) of `sm_XY[a|f]`: `sm_90` is (9, 0, false), `sm_100a`
/// (10, 0, true). A family-specific `f` cubin runs on later minors of its major version.
fn capability(arch: &str) -> Option<(u32, u32, bool)> {
    let rest = arch.strip_prefix("sm_")?;
    let digits = rest.trim_end_matches(['a', 'f']);
    let number: u32 = digits.parse().ok()?;
    Some((number / 10, number % 10, rest.ends_with('a')))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SM80: Cubin = Cubin {
        arch: "sm_80",
        image: b"80",
    };
    const SM86: Cubin = Cubin {
        arch: "sm_86",
        image: b"86",
    };
    const SM90A: Cubin = Cubin {
        arch: "sm_90a",
        image: b"90a",
    };

    fn module(cubins: &'static [Cubin]) -> KernelModule {
        KernelModule {
            kernels: &["k"],
            ptx: "",
            cubins,
            records: &[],
        }
    }

    #[test]
    fn picks_a_cubin_the_gpu_can_run() {
        let m = module(&[SM80, SM86, SM90A]);
        assert_eq!(m.cubin_for(8, 0).map(|c| c.arch), Some("sm_80"));
        assert_eq!(m.cubin_for(8, 9).map(|c| c.arch), Some("sm_86"));
        assert_eq!(m.cubin_for(9, 0).map(|c| c.arch), Some("sm_90a"));
        assert_eq!(m.cubin_for(7, 5), None);
        assert_eq!(module(&[SM90A]).cubin_for(9, 1), None);
        assert_eq!(module(&[]).cubin_for(9, 0), None);
    }

    #[test]
    fn finds_the_module_of_a_kernel() {
        static MODULES: [KernelModule; 1] = [KernelModule {
            kernels: &["fib_kernel"],
            ptx: "",
            cubins: &[],
            records: &[("__gtap_record_ex$fib$1", 56)],
        }];
        let code = DeviceCode::Modules {
            arch: "sm_90",
            modules: &MODULES,
            records: &[("__gtap_record_ex$fib$1", 56)],
        };
        assert!(code.module_of("fib_kernel").is_some());
        assert!(code.module_of("other").is_none());
        assert_eq!(code.records().len(), 1);
        let missing = DeviceCode::Missing { reason: "none" };
        assert!(missing.modules().is_empty());
        assert_eq!(missing.missing_reason(), Some("none"));
    }
}
