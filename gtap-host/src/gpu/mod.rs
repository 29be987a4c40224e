//! The GPU backend on cudarc: one device allocation laid out by `gtap_device::layout`, an error
//! record in pinned host memory mapped into the device, and persistent-kernel launches.

mod memory;
mod module;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaContext, CudaEvent, CudaStream, result};
use gtap_device::kernel::each_entry_param;
use gtap_device::layout::{LaunchParams, Layout, ROOT_RESULT_BYTES};
use gtap_device::scheduler::shared_bytes;
use gtap_device::stats::WarpStats;
use gtap_device::{DeviceCode, Kernel};

use crate::config::{Config, Limits};
use crate::device_error::DeviceError;
use crate::error::{Error, Result};
use crate::records;
use crate::runtime::Launch;
use crate::stats::Stats;

pub(crate) use memory::DeviceMemory;
use memory::PinnedRecord;
use module::{Module, ModuleCache};

/// Default cap on the pool budget on the GPU.
const DEFAULT_BUDGET_CAP: u64 = 8 << 30;

/// Whether a CUDA driver can be loaded on this machine.
pub(crate) fn driver_present() -> bool {
    // SAFETY: only probes whether the shared library loads.
    unsafe { sys::is_culib_present() }
}

/// Fails with [`Error::NoDeviceCode`] if the program was built without device code.
fn has_device_code(code: &DeviceCode) -> Result<()> {
    match code.missing_reason() {
        Some(reason) => Err(Error::NoDeviceCode {
            reason: reason.to_string(),
        }),
        None => Ok(()),
    }
}

/// The GPU backend of a runtime.
pub(crate) struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    modules: ModuleCache,
    region: DeviceMemory,
    out: DeviceMemory,
    error: PinnedRecord,
    start: CudaEvent,
    stop: CudaEvent,
    layout: Layout,
    block: u32,
    shared: u32,
    /// Per kernel: the blocks a launch uses and the registers the kernel got.
    kernel_shapes: HashMap<&'static str, KernelShape>,
    launches: u32,
    lost: bool,
    pub(crate) device_name: String,
}

/// Threads per block when the configuration sets none.
const DEFAULT_BLOCK: u32 = 128;

/// How one kernel is launched.
#[derive(Clone, Copy)]
struct KernelShape {
    /// Blocks of the persistent grid: the configured grid size, else as many of the region's
    /// blocks as this kernel keeps resident.
    blocks: u32,
    /// Registers per thread the kernel got.
    registers: u32,
}

impl Gpu {
    /// Initialises on a new stream of device 0's primary context.
    pub(crate) fn new(code: &DeviceCode, config: &Config) -> Result<Self> {
        has_device_code(code)?;
        if !driver_present() {
            return Err(Error::NoGpu {
                reason: "no CUDA driver library (libcuda) on this machine".into(),
            });
        }
        let count = CudaContext::device_count().map_err(|e| Error::NoGpu {
            reason: format!("the CUDA driver failed: {e}"),
        })?;
        if count < 1 {
            return Err(Error::NoGpu {
                reason: "the CUDA driver sees no GPU".into(),
            });
        }
        let ctx = CudaContext::new(0).map_err(|e| Error::NoGpu {
            reason: format!("cannot open GPU 0: {e}"),
        })?;
        let stream = ctx
            .new_stream()
            .map_err(Error::driver("creating a stream"))?;
        Self::with_stream(code, config, stream)
    }

    /// Initialises on a caller's stream (and its context).
    pub(crate) fn with_stream(
        code: &DeviceCode,
        config: &Config,
        stream: Arc<CudaStream>,
    ) -> Result<Self> {
        has_device_code(code)?;
        let ctx = stream.context().clone();
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        let stack = config.stack_bytes.unwrap_or(Config::DEFAULT_STACK_BYTES);
        ctx.set_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE, stack as usize)
            .map_err(Error::driver(
                "setting the per-thread stack size (stack_bytes)",
            ))?;
        let mut modules = ModuleCache::new(*code, &ctx, config.max_registers)?;
        let device_name = ctx.name().unwrap_or_else(|_| "GPU".into());
        let attr = |a| {
            ctx.attribute(a)
                .map_err(Error::driver("reading device attributes"))
        };
        let sms = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let max_block =
            attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32;
        let (free, _) = ctx
            .mem_get_info()
            .map_err(Error::driver("reading free memory"))?;
        // The persistent grid must be resident as a whole for every kernel, so sizing it needs
        // each kernel's occupancy: every kernel module is loaded here (a cubin loads in
        // milliseconds; PTX is compiled by the driver, one kernel's module at a time).
        let names: Vec<&'static str> = modules.kernels().collect();
        let kernels: Vec<sys::CUfunction> = names
            .iter()
            .copied()
            .map(|name| modules.function(name))
            .collect::<Result<_>>()?;
        // A persistent grid must be resident as a whole. Kernels differ (registers), so the
        // region is laid out for the kernel that fits the most blocks, and each launch of a
        // default-sized grid uses as many of them as its own kernel keeps resident.
        let resident = |block: u32| {
            let per_sm = kernels
                .iter()
                .map(|&k| Module::blocks_per_sm(k, block, shared_bytes(block)))
                .max();
            sms * per_sm.unwrap_or(1).max(1)
        };
        let limits = Limits {
            max_block,
            // Registers are allocated per warp and blocks are resident whole: with the 96-128
            // registers a kernel typically gets, blocks of 128 threads keep 16-20 warps on a
            // multiprocessor where blocks of 256 keep 16.
            default_block: DEFAULT_BLOCK,
            resident_blocks: &resident,
            free_memory: free as u64,
            default_budget_cap: DEFAULT_BUDGET_CAP,
        };
        let (layout, block) = config.resolve(&limits, records::device(code))?;
        let kernel_shapes = names
            .iter()
            .zip(&kernels)
            .map(|(&name, &k)| {
                let blocks = sms * Module::blocks_per_sm(k, block, shared_bytes(block)).max(1);
                let shape = KernelShape {
                    blocks: match config.grid_size {
                        Some(grid) => grid,
                        None => blocks.min(layout.geometry.blocks),
                    },
                    registers: Module::registers(k),
                };
                (name, shape)
            })
            .collect();
        let region = DeviceMemory::alloc(&ctx, layout.bytes as usize)?;
        let out = DeviceMemory::alloc(&ctx, ROOT_RESULT_BYTES)?;
        let error = PinnedRecord::new(&ctx)?;
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = ctx
            .new_event(timing)
            .map_err(Error::driver("creating events"))?;
        let stop = ctx
            .new_event(timing)
            .map_err(Error::driver("creating events"))?;
        let mut gpu = Self {
            ctx,
            stream,
            modules,
            region,
            out,
            error,
            start,
            stop,
            layout,
            block,
            shared: shared_bytes(block) as u32,
            kernel_shapes,
            launches: 0,
            lost: false,
            device_name,
        };
        gpu.reset()?;
        Ok(gpu)
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    pub(crate) fn block_size(&self) -> u32 {
        self.block
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    fn check_live(&self) -> Result<()> {
        if self.lost {
            Err(Error::ContextLost)
        } else {
            Ok(())
        }
    }

    fn memset(&self, offset: u64, bytes: u64) -> Result<()> {
        // SAFETY: the range lies inside the runtime's allocation.
        unsafe {
            result::memset_d8_async(
                self.region.ptr + offset,
                0,
                bytes as usize,
                self.stream.cu_stream(),
            )
        }
        .map_err(Error::driver("clearing runtime state"))
    }

    /// Clears all runtime state: every region, and the error record.
    pub(crate) fn reset(&mut self) -> Result<()> {
        self.check_live()?;
        self.ctx
            .bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        self.memset(0, self.layout.bytes)?;
        self.stream
            .synchronize()
            .map_err(Error::driver("clearing runtime state"))?;
        self.error.clear();
        Ok(())
    }

    fn function(&mut self, name: &'static str) -> Result<sys::CUfunction> {
        self.modules.function(name)
    }

    /// How each kernel module was loaded so far.
    pub(crate) fn module_loads(&self) -> Vec<crate::stats::ModuleLoad> {
        self.modules.loads()
    }

    /// Launches kernel `K` with `args` and waits for it.
    pub(crate) fn launch<K: Kernel>(&mut self, args: K::Args) -> Result<Launch<K::Output>> {
        self.check_live()?;
        let wall = Instant::now();
        let out_bytes = std::mem::size_of::<K::Output>();
        if out_bytes > ROOT_RESULT_BYTES {
            return Err(Error::OutputTooLarge {
                name: K::NAME,
                bytes: out_bytes,
                max: ROOT_RESULT_BYTES,
            });
        }
        let f = self.function(K::NAME)?;
        self.ctx
            .bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        for range in [self.layout.reset_range(), self.layout.cells_range()] {
            self.memset(range.start, range.end - range.start)?;
        }
        self.error.clear();
        self.launches += 1;
        let shape = self
            .kernel_shapes
            .get(K::NAME)
            .copied()
            .ok_or(Error::KernelNotFound { name: K::NAME })?;
        // The region's layout with this launch's grid: warps past it simply do not exist.
        let mut layout = self.layout;
        layout.geometry.blocks = shape.blocks;
        let params = LaunchParams {
            base: self.region.ptr,
            error: self.error.device,
            layout,
            options: 0,
            seed: self.launches.wrapping_mul(0x9e37_79b9),
            host: 0,
        };
        let out_ptr: CUdeviceptr = self.out.ptr;
        let mut raw: Vec<*mut c_void> = Vec::new();
        each_entry_param(&params, &out_ptr, &args, &mut |p| {
            raw.push(p as *mut c_void)
        });
        let g = &layout.geometry;
        self.start
            .record(&self.stream)
            .map_err(Error::driver("recording an event"))?;
        // SAFETY: `f` is a kernel of this module, generated by `#[gtap::kernel]` with the
        // parameters `each_entry_param` lists; every pointer in `raw` stays alive until the
        // launch call returns (the driver copies the values).
        let launched = unsafe {
            result::launch_kernel(
                f,
                (g.blocks, 1, 1),
                (self.block, 1, 1),
                self.shared,
                self.stream.cu_stream(),
                &mut raw,
            )
        };
        launched.map_err(Error::driver("launching the kernel"))?;
        self.stop
            .record(&self.stream)
            .map_err(Error::driver("recording an event"))?;
        if let Err(source) = self.stream.synchronize() {
            self.lost = true;
            return Err(Error::KernelFault {
                source,
                record: DeviceError::from_record(&self.error.read()).map(Box::new),
            });
        }
        if let Some(e) = DeviceError::from_record(&self.error.read()) {
            return Err(Error::Device(Box::new(e)));
        }
        let kernel_ms = self
            .start
            .elapsed_ms(&self.stop)
            .map_err(Error::driver("reading events"))? as f64;
        let mut out = vec![0u8; out_bytes.max(1)];
        let mut warps = vec![WarpStats::default(); layout.geometry.warps() as usize];
        // SAFETY: both device ranges are inside live allocations of at least these sizes.
        unsafe {
            result::memcpy_dtoh_sync(&mut out[..], self.out.ptr)
                .map_err(Error::driver("copying the result back"))?;
            result::memcpy_dtoh_sync(&mut warps[..], self.region.ptr + self.layout.stats)
                .map_err(Error::driver("copying statistics back"))?;
        }
        // SAFETY: thread 0 wrote a `K::Output` there (the launch finished without error).
        let result = unsafe { (out.as_ptr() as *const K::Output).read_unaligned() };
        let mut stats = Stats::collect(
            &layout,
            self.block,
            shape.registers,
            &warps,
            kernel_ms,
            wall.elapsed().as_secs_f64() * 1e3,
        );
        stats.module_load = self.modules.first_report(K::NAME);
        Ok(Launch { result, stats })
    }

    /// Runs the built-in probe kernel over `threads` threads and returns the per-thread values and
    /// the atomic count (first light on a new machine).
    pub(crate) fn probe(&mut self, blocks: u32, block: u32) -> Result<(Vec<u32>, u32)> {
        self.check_live()?;
        let f = self.function("gtap_probe")?;
        let n = blocks * block;
        let out = DeviceMemory::alloc(&self.ctx, n as usize * 4)?;
        let counter = DeviceMemory::alloc(&self.ctx, 4)?;
        // SAFETY: writes inside the fresh allocations.
        unsafe {
            result::memset_d8_async(out.ptr, 0xff, out.bytes, self.stream.cu_stream())
                .map_err(Error::driver("clearing probe output"))?;
            result::memset_d8_async(counter.ptr, 0, 4, self.stream.cu_stream())
                .map_err(Error::driver("clearing probe counter"))?;
        }
        let mut raw: Vec<*mut c_void> = vec![
            &out.ptr as *const CUdeviceptr as *mut c_void,
            &counter.ptr as *const CUdeviceptr as *mut c_void,
            &n as *const u32 as *mut c_void,
        ];
        // SAFETY: `gtap_probe(out: *mut u32, counter: *mut u32, n: u32)`; the pointers are live.
        unsafe {
            result::launch_kernel(
                f,
                (blocks, 1, 1),
                (block, 1, 1),
                0,
                self.stream.cu_stream(),
                &mut raw,
            )
        }
        .map_err(Error::driver("launching the probe"))?;
        self.stream
            .synchronize()
            .map_err(Error::driver("running the probe"))?;
        let mut values = vec![0u32; n as usize];
        let mut count = [0u32];
        // SAFETY: copies out of the live allocations.
        unsafe {
            result::memcpy_dtoh_sync(&mut values[..], out.ptr)
                .map_err(Error::driver("copying probe output"))?;
            result::memcpy_dtoh_sync(&mut count[..], counter.ptr)
                .map_err(Error::driver("copying probe counter"))?;
        }
        Ok((values, count[0]))
    }
}
