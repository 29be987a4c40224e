//! The device modules, one per kernel, loaded on demand and cached.
//!
//! A module is loaded from its cubin when the build assembled one this GPU can run (no
//! compilation at load), else from its PTX, which the driver JIT-compiles. cudarc's module
//! wrapper loads without options; gtap needs the driver's register cap
//! (`CU_JIT_MAX_REGISTERS`): the scheduler is latency-bound, so how many warps fit on a
//! multiprocessor decides its throughput, and that is the register count of the kernels. A
//! cubin's register count is fixed, so with a cap the PTX is compiled instead.
//!
//! So modules are loaded through the driver API, and since cudarc's `CudaModule` and
//! `CudaFunction` cannot wrap a module loaded that way, the kernels are raw `CUfunction`s:
//! their occupancy and register queries here, and their launches, use the driver API as well.

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::CudaContext;
use cudarc::driver::sys::{self, CUfunction, CUjit_option, CUmodule};
use gtap_device::{DeviceCode, KernelModule};

use crate::error::{Error, Result};
use crate::stats::{ModuleLoad, ModuleSource};

/// What a module is loaded from.
pub(crate) enum Image<'a> {
    /// PTX text, JIT-compiled by the driver.
    Ptx(&'a str),
    /// A cubin (ELF) image.
    Cubin(&'a [u8]),
}

/// The kernel modules of some device code, each loaded at the first request for one of its
/// kernels.
pub(crate) struct ModuleCache {
    code: DeviceCode,
    ctx: Arc<CudaContext>,
    /// (major, minor) compute capability of the device.
    capability: (u32, u32),
    max_registers: Option<u32>,
    /// Per module of `code`, in order: the loaded module and how it was loaded.
    loaded: Vec<Option<(Module, ModuleLoad)>>,
    /// Per module: whether its load was already reported in a launch's statistics.
    reported: Vec<bool>,
}

impl ModuleCache {
    /// A cache for `code` on `ctx`'s device; nothing is loaded yet.
    pub(crate) fn new(
        code: DeviceCode,
        ctx: &Arc<CudaContext>,
        max_registers: Option<u32>,
    ) -> Result<Self> {
        let attr = |a| {
            ctx.attribute(a)
                .map_err(Error::driver("reading device attributes"))
        };
        let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let n = code.modules().len();
        Ok(Self {
            code,
            ctx: ctx.clone(),
            capability: (major.max(0) as u32, minor.max(0) as u32),
            max_registers,
            loaded: (0..n).map(|_| None).collect(),
            reported: vec![false; n],
        })
    }

    /// The kernels of the device code (gtap's probe kernel excluded).
    pub(crate) fn kernels(&self) -> impl Iterator<Item = &'static str> {
        self.code
            .modules()
            .iter()
            .flat_map(|m| m.kernels.iter().copied())
            .filter(|k| *k != "gtap_probe")
    }

    /// Kernel `name`, loading its module first if needed.
    pub(crate) fn function(&mut self, name: &'static str) -> Result<CUfunction> {
        let index = self
            .code
            .modules()
            .iter()
            .position(|m| m.kernels.contains(&name))
            .ok_or(Error::KernelNotFound { name })?;
        if self.loaded[index].is_none() {
            let module = &self.code.modules()[index];
            self.loaded[index] = Some(self.load(module)?);
        }
        let Some((module, _)) = &mut self.loaded[index] else {
            return Err(Error::KernelNotFound { name });
        };
        module.function(name).ok_or(Error::KernelNotFound { name })
    }

    /// How the module of kernel `name` was loaded, the first time this is asked for that
    /// module (for the statistics of the first launch that used it); `None` afterwards.
    pub(crate) fn first_report(&mut self, name: &str) -> Option<ModuleLoad> {
        let index = self
            .code
            .modules()
            .iter()
            .position(|m| m.kernels.contains(&name))?;
        let (_, load) = self.loaded[index].as_ref()?;
        if std::mem::replace(&mut self.reported[index], true) {
            return None;
        }
        Some(*load)
    }

    /// Every module loaded so far, in the order of the device code.
    pub(crate) fn loads(&self) -> Vec<ModuleLoad> {
        self.loaded.iter().flatten().map(|(_, l)| *l).collect()
    }

    fn load(&self, module: &KernelModule) -> Result<(Module, ModuleLoad)> {
        let (major, minor) = self.capability;
        let cubin = module
            .cubin_for(major, minor)
            .filter(|_| self.max_registers.is_none());
        let (image, source) = match cubin {
            Some(c) => (Image::Cubin(c.image), ModuleSource::Sass { arch: c.arch }),
            None => (Image::Ptx(module.ptx), ModuleSource::Jit),
        };
        let start = Instant::now();
        let loaded = Module::load(&self.ctx, image, self.max_registers)?;
        let load = ModuleLoad {
            kernels: module.kernels,
            source,
            load_ms: start.elapsed().as_secs_f64() * 1e3,
        };
        Ok((loaded, load))
    }
}

/// A loaded module, unloaded on drop.
pub(crate) struct Module {
    raw: CUmodule,
    ctx: Arc<CudaContext>,
    functions: HashMap<String, CUfunction>,
}

/// The register ceiling for PTX compiled by the driver when the configuration sets none: the
/// one `gtap-builder` gives `ptxas` for the SASS it embeds.
const DEFAULT_MAX_REGISTERS: u32 = gtap_device::abi::MAX_REGISTERS;

impl Module {
    /// Loads `image` on the context's device; PTX is JIT-compiled with at most
    /// `max_registers` registers per thread (default [`DEFAULT_MAX_REGISTERS`]).
    pub(crate) fn load(
        ctx: &Arc<CudaContext>,
        image: Image<'_>,
        max_registers: Option<u32>,
    ) -> Result<Self> {
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        // The driver reads PTX as a NUL-terminated string, and a cubin as an ELF image, which
        // is copied here to 8-byte-aligned memory (`include_bytes!` data has no alignment).
        let (bytes, is_ptx): (Vec<u64>, bool) = match image {
            Image::Ptx(ptx) => {
                let text = CString::new(ptx).map_err(|_| Error::ModuleLoad {
                    log: "the PTX contains a NUL byte".into(),
                })?;
                (aligned(text.as_bytes_with_nul()), true)
            }
            Image::Cubin(cubin) => (aligned(cubin), false),
        };
        let mut log = vec![0u8; 16 * 1024];
        let mut options = vec![
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: Vec<*mut c_void> =
            vec![log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        if let Some(r) = max_registers
            .or(Some(DEFAULT_MAX_REGISTERS))
            .filter(|_| is_ptx)
        {
            options.push(CUjit_option::CU_JIT_MAX_REGISTERS);
            values.push(r as usize as *mut c_void);
        }
        let mut raw: CUmodule = std::ptr::null_mut();
        // SAFETY: `bytes` holds NUL-terminated PTX or a whole cubin and outlives the call; each
        // option has its value at the same index, the log buffer outlives the call, and the
        // integer options are passed by value as the driver API specifies.
        let loaded = unsafe {
            sys::cuModuleLoadDataEx(
                &mut raw,
                bytes.as_ptr() as *const c_void,
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if let Err(e) = loaded.result() {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]).trim().to_string();
            return Err(Error::ModuleLoad {
                log: if text.is_empty() {
                    e.to_string()
                } else {
                    format!("{e}: {text}")
                },
            });
        }
        Ok(Self {
            raw,
            ctx: ctx.clone(),
            functions: HashMap::new(),
        })
    }

    /// The kernel `name`, or `None` if the module has none of that name.
    pub(crate) fn function(&mut self, name: &str) -> Option<CUfunction> {
        if let Some(f) = self.functions.get(name) {
            return Some(*f);
        }
        let c_name = CString::new(name).ok()?;
        let mut f: CUfunction = std::ptr::null_mut();
        // SAFETY: the module is loaded and `c_name` is NUL-terminated.
        unsafe { sys::cuModuleGetFunction(&mut f, self.raw, c_name.as_ptr()) }
            .result()
            .ok()?;
        self.functions.insert(name.to_string(), f);
        Some(f)
    }

    /// Blocks of `block` threads with `shared` bytes of dynamic shared memory that fit on one
    /// multiprocessor at once for kernel `f`.
    pub(crate) fn blocks_per_sm(f: CUfunction, block: u32, shared: usize) -> u32 {
        let mut n = 0i32;
        // SAFETY: `f` is a function of a loaded module; `n` is written by the call.
        let ok = unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, block as i32, shared)
        };
        if ok.result().is_ok() {
            n.max(0) as u32
        } else {
            0
        }
    }

    /// Lets kernel `f` launch with `shared` bytes of dynamic shared memory: beyond 48 KiB the
    /// driver asks for this opt-in. Whether the driver accepted.
    pub(crate) fn allow_shared(f: CUfunction, shared: usize) -> bool {
        // SAFETY: `f` is a function of a loaded module; the attribute takes a byte count.
        let ok = unsafe {
            sys::cuFuncSetAttribute(
                f,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )
        };
        ok.result().is_ok()
    }

    /// Registers per thread the driver gave kernel `f`.
    pub(crate) fn registers(f: CUfunction) -> u32 {
        let mut n = 0i32;
        // SAFETY: `f` is a function of a loaded module; `n` is written by the call.
        let ok = unsafe {
            sys::cuFuncGetAttribute(
                &mut n,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS,
                f,
            )
        };
        if ok.result().is_ok() {
            n.max(0) as u32
        } else {
            0
        }
    }
}

/// `bytes` in 8-byte-aligned memory (zero-padded to whole words).
fn aligned(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut word = [0u8; 8];
            word[..c.len()].copy_from_slice(c);
            u64::from_ne_bytes(word)
        })
        .collect()
}

impl Drop for Module {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the module was loaded by `load` and is unloaded once.
            let _ = unsafe { sys::cuModuleUnload(self.raw) };
        }
    }
}

// SAFETY: a module handle may be used from any thread once its context is bound there, which
// every caller does first.
unsafe impl Send for Module {}
