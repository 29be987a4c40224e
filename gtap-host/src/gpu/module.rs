//! The device module, loaded with JIT options, and its kernels.
//!
//! cudarc's module wrapper loads PTX without options; gtap needs the driver's register cap
//! (`CU_JIT_MAX_REGISTERS`): the scheduler is latency-bound, so how many warps fit on a
//! multiprocessor decides its throughput, and that is the register count of the kernels.

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::Arc;

use cudarc::driver::CudaContext;
use cudarc::driver::sys::{self, CUfunction, CUjit_option, CUmodule};

use crate::error::{Error, Result};

/// A loaded module, unloaded on drop.
pub(crate) struct Module {
    raw: CUmodule,
    ctx: Arc<CudaContext>,
    functions: HashMap<String, CUfunction>,
}

impl Module {
    /// JIT-compiles `ptx` for the context's device, with at most `max_registers` registers per
    /// thread when given.
    pub(crate) fn load(
        ctx: &Arc<CudaContext>,
        ptx: &str,
        max_registers: Option<u32>,
    ) -> Result<Self> {
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        let image = CString::new(ptx).map_err(|_| Error::ModuleLoad {
            log: "the PTX contains a NUL byte".into(),
        })?;
        let mut log = vec![0u8; 16 * 1024];
        let mut options = vec![
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: Vec<*mut c_void> =
            vec![log.as_mut_ptr() as *mut c_void, log.len() as *mut c_void];
        if let Some(r) = max_registers {
            options.push(CUjit_option::CU_JIT_MAX_REGISTERS);
            values.push(r as usize as *mut c_void);
        }
        let mut raw: CUmodule = std::ptr::null_mut();
        // SAFETY: `image` is NUL-terminated PTX; each option has its value at the same index, the
        // log buffer outlives the call, and the integer options are passed by value as the
        // driver API specifies.
        let loaded = unsafe {
            sys::cuModuleLoadDataEx(
                &mut raw,
                image.as_ptr() as *const c_void,
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
