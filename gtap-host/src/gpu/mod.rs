//! The GPU backend on cudarc: one device allocation laid out by `gtap_device::abi`, an error
//! record in pinned host memory mapped into the device, and persistent-kernel launches.
//!
//! Every operation is enqueued on the runtime's one stream (its own, or the application's
//! from `Runtime::gpu_on_stream`): allocation, clearing, uploads, launches, copies back and
//! frees, through cudarc's stream-ordered safe layer. Two things go below it: modules are
//! loaded with JIT options (`module.rs` says why), so their kernels are raw driver functions
//! launched through `result::launch_kernel`; and the error record is device-mapped host
//! memory (`memory.rs`).
//!
//! A kernel fault poisons the process's GPU for good (`poison.rs`): everything here lives in
//! an `UntilPoisoned`, and no runtime is made on the GPU afterwards.

mod memory;
mod module;
mod poison;
mod watch;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaContext, CudaEvent, CudaSlice, CudaStream, DriverError, result};
use gtap_device::abi::{
    LaunchParams, Layout, OPT_NO_SCRATCH, ROOT_RESULT_BYTES, TraceEvent, WarpStats, WarpTraceMeta,
    block_mode_shared_bytes, each_entry_param, shared_bytes, shared_bytes_without_scratch,
};
use gtap_device::{DeviceCode, Kernel};

use crate::config::{Config, ConfigError, Limits};
use crate::device_error::DeviceError;
use crate::error::{Error, Result};
use crate::records;
use crate::runtime::Launch;
use crate::stall::{StallDetector, StallReport, WarpActivity};
use crate::stats::Stats;
use crate::trace::{Trace, WorkerKind};
use crate::watchdog::{self, Outcome};

use memory::PinnedRecord;
pub(crate) use memory::{Raw, address, download, upload};
use module::{Module, ModuleCache};
pub(crate) use poison::{GPU, UntilPoisoned, describe};
use watch::GpuWatch;

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

/// What a runtime holds on its CUDA context. It lives in an [`UntilPoisoned`]: a kernel fault
/// makes all of it unusable at once.
struct Live {
    stream: Arc<CudaStream>,
    modules: ModuleCache,
    region: CudaSlice<u8>,
    out: CudaSlice<u8>,
    error: PinnedRecord,
    start: CudaEvent,
    stop: CudaEvent,
    /// The watchdog's stream and buffers, made before the first watched launch.
    watch: Option<GpuWatch>,
}

/// The GPU backend of a runtime.
pub(crate) struct Gpu {
    /// `None` once a fault in this runtime killed the GPU.
    live: Option<UntilPoisoned<Live>>,
    /// Device addresses of the region and the result cell, read once: every launch is
    /// enqueued on the stream they were made on, so stream order alone orders their use.
    region_ptr: CUdeviceptr,
    out_ptr: CUdeviceptr,
    /// Per-thread stack bytes the driver set (it may round the request up).
    stack_bytes: u32,
    layout: Layout,
    block: u32,
    shared: u32,
    /// Bytes of shared memory each block lends block-mode tasks ([`Config::block_shared_bytes`]).
    block_shared_bytes: u32,
    /// The launch options the configuration sets ([`OPT_NO_SCRATCH`] without
    /// [`Config::thread_scratch`]); a kernel adds its own on the device.
    options: u32,
    /// Per kernel: the blocks a launch uses and the registers the kernel got.
    kernel_shapes: HashMap<&'static str, KernelShape>,
    /// The device's multiprocessors (a kernel's `MAX_BLOCKS_PER_SM` caps its grid at this many
    /// times the cap).
    sms: u32,
    launches: u32,
    /// The watchdog's period (`None`: off, and launches are waited for by a plain synchronize).
    watchdog: Option<Duration>,
    /// A task of a launch the watchdog stopped never returned: its kernel still runs.
    stuck: bool,
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
    /// The stride of its task slots: the slot size of the records its module holds (the
    /// region's slots are sized for the crate's largest record; a smaller stride uses the
    /// front of each warp's slot area).
    slot_bytes: u32,
}

impl Gpu {
    /// Initialises on a new stream of device 0's primary context.
    pub(crate) fn new(code: &DeviceCode, config: &Config) -> Result<Self> {
        GPU.check()?;
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
        let ctx = CudaContext::new(0).map_err(|e| match poison::sticky_meaning(&e) {
            // A fault outside gtap (the application's own kernel) poisoned the process.
            Some(_) => GPU.driver_error("opening GPU 0", e),
            None => Error::NoGpu {
                reason: format!("cannot open GPU 0: {e}"),
            },
        })?;
        // SAFETY: cudarc's per-slice events order a slice's uses across streams. Everything
        // of this context object is made and used on the one stream created next (kernels get
        // addresses read once, not cudarc views), so stream order already orders it all and
        // the events would only add driver calls to every launch.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(Error::driver("creating a stream"))?;
        Self::init(code, config, stream)
    }

    /// Initialises on a caller's stream (and its context).
    pub(crate) fn with_stream(
        code: &DeviceCode,
        config: &Config,
        stream: Arc<CudaStream>,
    ) -> Result<Self> {
        GPU.check()?;
        has_device_code(code)?;
        Self::init(code, config, stream)
    }

    fn init(code: &DeviceCode, config: &Config, stream: Arc<CudaStream>) -> Result<Self> {
        config.check_gpu_settings()?;
        let ctx = stream.context().clone();
        ctx.bind_to_thread()
            .map_err(Error::driver("binding the context"))?;
        let stack_bytes = set_stack(&ctx, config)?;
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
        // A block-mode runtime gives every kernel the block-mode shared memory (the thread-mode
        // areas and, after them, the block's state, exchange cells and lent memory).
        let shared_for = |block: u32| {
            if config.block_mode {
                block_mode_shared_bytes(block, config.block_shared_bytes)
            } else if config.thread_scratch {
                shared_bytes(block)
            } else {
                shared_bytes_without_scratch(block)
            }
        };
        let per_sm =
            |k: sys::CUfunction, block: u32| Module::blocks_per_sm(k, block, shared_for(block));
        // A persistent grid must be resident as a whole. Kernels differ (registers), so the
        // region is laid out for the kernel that fits the most blocks (or the grid asked for),
        // and each launch uses as many of them as its own kernel keeps resident: a block that
        // is not resident would start only after the others had finished the launch.
        let resident = |block: u32| {
            let most = kernels.iter().map(|&k| per_sm(k, block)).max();
            sms * most.unwrap_or(1).max(1)
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
            default_tasks_per_warp: Some(Config::DEFAULT_TASKS_PER_WARP),
        };
        let (layout, block) = config.resolve(&limits, records::device(code))?;
        let watchdog = config.watchdog_period()?;
        let mut kernel_shapes = HashMap::new();
        for (&name, &k) in names.iter().zip(&kernels) {
            // Beyond 48 KiB of dynamic shared memory (block mode's larger blocks) a kernel must
            // opt in before it launches.
            if shared_for(block) > 48 * 1024 && !Module::allow_shared(k, shared_for(block)) {
                return Err(Error::driver("allowing the kernels their shared memory")(
                    cudarc::driver::DriverError(sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE),
                ));
            }
            let fit = per_sm(k, block);
            if fit == 0 {
                let largest = (32..block)
                    .step_by(32)
                    .rev()
                    .find(|&b| per_sm(k, b) > 0)
                    .unwrap_or(0);
                return Err(ConfigError::KernelDoesNotFit {
                    kernel: name,
                    block,
                    registers: Module::registers(k),
                    shared: shared_for(block),
                    largest,
                }
                .into());
            }
            let shape = KernelShape {
                blocks: (sms * fit).min(layout.geometry.blocks),
                registers: Module::registers(k),
                slot_bytes: match code.module_of(name) {
                    Some(m) => config
                        .slot_bytes(block, m.records.iter().copied())?
                        .min(layout.geometry.slot_bytes),
                    None => layout.geometry.slot_bytes,
                },
            };
            kernel_shapes.insert(name, shape);
        }
        let region = memory::zeroed(&stream, layout.bytes as usize)?;
        let out = memory::zeroed(&stream, ROOT_RESULT_BYTES)?;
        let error = PinnedRecord::new(&ctx)?;
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = ctx
            .new_event(timing)
            .map_err(Error::driver("creating events"))?;
        let stop = ctx
            .new_event(timing)
            .map_err(Error::driver("creating events"))?;
        let region_ptr = memory::address(&region, &stream);
        let out_ptr = memory::address(&out, &stream);
        let live = Live {
            stream,
            modules,
            region,
            out,
            error,
            start,
            stop,
            watch: None,
        };
        // The region and the error record start cleared, as `reset` leaves them.
        Ok(Self {
            live: Some(UntilPoisoned::new(live)),
            region_ptr,
            out_ptr,
            stack_bytes,
            layout,
            block,
            shared: shared_for(block) as u32,
            block_shared_bytes: config.block_shared_bytes,
            options: if config.thread_scratch {
                0
            } else {
                OPT_NO_SCRATCH
            },
            kernel_shapes,
            sms,
            launches: 0,
            watchdog,
            stuck: false,
            device_name,
        })
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    pub(crate) fn block_size(&self) -> u32 {
        self.block
    }

    /// The runtime's stream, unless a fault killed its context.
    pub(crate) fn stream(&self) -> Result<&Arc<CudaStream>> {
        Ok(&self.live()?.stream)
    }

    fn live(&self) -> Result<&Live> {
        if self.stuck {
            return Err(Error::KernelStillRunning);
        }
        self.live.as_ref().ok_or(Error::ContextLost)?.get()
    }

    fn live_mut(&mut self) -> Result<&mut Live> {
        if self.stuck {
            return Err(Error::KernelStillRunning);
        }
        self.live.as_mut().ok_or(Error::ContextLost)?.get_mut()
    }

    /// Clears all runtime state: every region, and the error record.
    pub(crate) fn reset(&mut self) -> Result<()> {
        let live = self.live_mut()?;
        live.stream
            .memset_zeros(&mut live.region)
            .and_then(|()| live.stream.synchronize())
            .map_err(Error::driver("clearing runtime state"))?;
        live.error.clear();
        Ok(())
    }

    /// How each kernel module was loaded so far.
    pub(crate) fn module_loads(&self) -> Vec<crate::stats::ModuleLoad> {
        self.live().map(|l| l.modules.loads()).unwrap_or_default()
    }

    /// Launches kernel `K` with `args` and waits for it.
    pub(crate) fn launch<K: Kernel>(&mut self, args: K::Args) -> Result<Launch<K::Output>> {
        let wall = Instant::now();
        let out_bytes = std::mem::size_of::<K::Output>();
        if out_bytes > ROOT_RESULT_BYTES {
            return Err(Error::OutputTooLarge {
                name: K::NAME,
                bytes: out_bytes,
                max: ROOT_RESULT_BYTES,
            });
        }
        let shape = self
            .kernel_shapes
            .get(K::NAME)
            .copied()
            .ok_or(Error::KernelNotFound { name: K::NAME })?;
        self.launches += 1;
        // The region's layout with this launch's grid (warps past it simply do not exist) and
        // its kernel's slot stride (no larger than the region's slots).
        let mut layout = self.layout;
        // A kernel that runs best on fewer blocks than it keeps resident says so
        // (`#[gtap::kernel(max_blocks_per_sm = N)]`): its grid is at most N blocks for each
        // multiprocessor.
        layout.geometry.blocks = match K::MAX_BLOCKS_PER_SM {
            0 => shape.blocks,
            cap => shape.blocks.min(self.sms.saturating_mul(cap)),
        };
        layout.geometry.slot_bytes = shape.slot_bytes;
        let (block, shared, block_shared_bytes, options) = (
            self.block,
            self.shared,
            self.block_shared_bytes,
            self.options,
        );
        let (region_ptr, out_ptr) = (self.region_ptr, self.out_ptr);
        let (stats_offset, stack_bytes) = (self.layout.stats as usize, self.stack_bytes);
        let seed = self.launches.wrapping_mul(0x9e37_79b9);
        let (watchdog, region_warps) = (self.watchdog, self.layout.geometry.warps() as usize);
        let live = self.live_mut()?;
        if watchdog.is_some() && live.watch.is_none() {
            // Before the launch: allocating pinned memory while a kernel runs may wait for it.
            let watch = GpuWatch::new(live.stream.context(), region_warps)
                .map_err(Error::driver("preparing the watchdog"))?;
            live.watch = Some(watch);
        }
        let f = live.modules.function(K::NAME)?;
        // The stack limit belongs to the context, which other runtimes may share and set.
        keep_stack(live.stream.context(), stack_bytes)?;
        for range in [layout.reset_range(), layout.cells_range()] {
            let mut cleared = live
                .region
                .slice_mut(range.start as usize..range.end as usize);
            live.stream
                .memset_zeros(&mut cleared)
                .map_err(Error::driver("clearing runtime state"))?;
        }
        live.error.clear();
        let params = LaunchParams {
            base: region_ptr,
            error: live.error.device,
            layout,
            options,
            seed,
            host: 0,
            stack_bytes,
            block_shared_bytes,
        };
        let mut raw: Vec<*mut c_void> = Vec::new();
        each_entry_param(&params, &out_ptr, &args, &mut |p| {
            raw.push(p as *mut c_void)
        });
        let g = &layout.geometry;
        live.start
            .record(&live.stream)
            .map_err(Error::driver("recording an event"))?;
        // SAFETY: `f` is a kernel of this module, generated by `#[gtap::kernel]` with the
        // parameters `each_entry_param` lists; every pointer in `raw` stays alive until the
        // launch call returns (the driver copies the values). The launch goes through the
        // result layer because `f` is a raw function (see `module.rs`).
        let launched = unsafe {
            result::launch_kernel(
                f,
                (g.blocks, 1, 1),
                (block, 1, 1),
                shared,
                live.stream.cu_stream(),
                &mut raw,
            )
        };
        launched.map_err(Error::driver("launching the kernel"))?;
        live.stop
            .record(&live.stream)
            .map_err(Error::driver("recording an event"))?;
        let waited = match (watchdog, &mut live.watch) {
            (Some(period), Some(watch)) => watch
                .launch(&live.start, &live.stop, region_ptr, &layout)
                .and_then(|mut launched| {
                    watchdog::watch(&mut launched, layout.geometry.warps() as usize, period)
                }),
            _ => live.stream.synchronize().map(|()| Outcome::Ended),
        };
        match waited {
            Ok(Outcome::Ended) => {}
            Ok(Outcome::Stalled {
                quiet,
                words,
                stopped,
            }) => {
                let device_error = DeviceError::from_report(&live.error.read());
                self.stuck = !stopped;
                return Err(Error::Stalled(Box::new(StallReport {
                    kernel: K::NAME,
                    detector: StallDetector::Watchdog { quiet },
                    warps: WarpActivity::decode(&words),
                    stopped,
                    device_error,
                })));
            }
            Err(source) => {
                let record = DeviceError::from_report(&live.error.read()).map(Box::new);
                return Err(self.fault(K::NAME, source, record));
            }
        }
        if let Some(e) = DeviceError::from_report(&live.error.read()) {
            return Err(Error::Device(Box::new(e)));
        }
        let kernel_ms = live
            .start
            .elapsed_ms(&live.stop)
            .map_err(Error::driver("reading events"))? as f64;
        let result: K::Output =
            memory::read_values(&live.stream, &live.out, 0, 1, "copying the result back")?[0];
        let warps: Vec<WarpStats> = memory::read_values(
            &live.stream,
            &live.region,
            stats_offset,
            layout.geometry.warps() as usize,
            "copying statistics back",
        )?;
        let mut stats = Stats::collect(
            &layout,
            block,
            shape.registers,
            &warps,
            kernel_ms,
            wall.elapsed().as_secs_f64() * 1e3,
        );
        stats.module_load = live.modules.first_report(K::NAME);
        stats.stack_bytes = stack_bytes;
        let trace = match layout.trace_events_per_warp {
            0 => None,
            per_warp => {
                let warps = layout.geometry.warps() as usize;
                let metas: Vec<WarpTraceMeta> = memory::read_values(
                    &live.stream,
                    &live.region,
                    layout.trace_meta as usize,
                    warps,
                    "copying the trace back",
                )?;
                let events: Vec<TraceEvent> = memory::read_values(
                    &live.stream,
                    &live.region,
                    layout.trace as usize,
                    warps * per_warp as usize,
                    "copying the trace back",
                )?;
                Some(Trace::decode(
                    K::NAME,
                    &layout,
                    WorkerKind::of::<K>(),
                    &metas,
                    &events,
                ))
            }
        };
        Ok(Launch {
            result,
            stats,
            trace,
        })
    }

    /// The error for kernel `kernel` failing with `source`. A sticky code poisons the GPU for
    /// the rest of the process (`poison.rs`), and this runtime lets go of everything it holds
    /// on it without a driver call.
    fn fault(
        &mut self,
        kernel: &'static str,
        source: DriverError,
        record: Option<Box<DeviceError>>,
    ) -> Error {
        if poison::sticky_meaning(&source).is_none() {
            return Error::Driver {
                during: "waiting for the kernel",
                source,
            };
        }
        GPU.mark(format!(
            "kernel `{kernel}` faulted ({}) with {} bytes of stack per thread",
            describe(&source),
            self.stack_bytes
        ));
        self.live = None;
        Error::KernelFault {
            kernel,
            source,
            record,
            stack_bytes: self.stack_bytes,
        }
    }

    /// Runs the built-in probe kernel over `threads` threads and returns the per-thread values and
    /// the atomic count (first light on a new machine).
    pub(crate) fn probe(&mut self, blocks: u32, block: u32) -> Result<(Vec<u32>, u32)> {
        let live = self.live_mut()?;
        let f = live.modules.function("gtap_probe")?;
        let n = blocks * block;
        let stream = live.stream.clone();
        // Every thread overwrites its cell; one it misses keeps the marker and fails the check.
        let out = stream
            .clone_htod(&vec![u32::MAX; n as usize])
            .map_err(Error::driver("clearing probe output"))?;
        let counter = stream
            .alloc_zeros::<u32>(1)
            .map_err(Error::driver("clearing probe counter"))?;
        let out_ptr = memory::address(&out, &stream);
        let counter_ptr = memory::address(&counter, &stream);
        let mut raw: Vec<*mut c_void> = vec![
            &out_ptr as *const CUdeviceptr as *mut c_void,
            &counter_ptr as *const CUdeviceptr as *mut c_void,
            &n as *const u32 as *mut c_void,
        ];
        // SAFETY: `gtap_probe(out: *mut u32, counter: *mut u32, n: u32)`; the pointers are live
        // and the launch is enqueued on the stream that made and filled them.
        unsafe {
            result::launch_kernel(
                f,
                (blocks, 1, 1),
                (block, 1, 1),
                0,
                stream.cu_stream(),
                &mut raw,
            )
        }
        .map_err(Error::driver("launching the probe"))?;
        let values = stream
            .clone_dtoh(&out)
            .map_err(Error::driver("copying probe output"))?;
        let count = stream
            .clone_dtoh(&counter)
            .map_err(Error::driver("copying probe counter"))?;
        Ok((values, count[0]))
    }
}

/// Sets the context's per-thread stack back to `bytes` if another runtime on the same
/// context changed it.
fn keep_stack(ctx: &CudaContext, bytes: u32) -> Result<()> {
    let stack = sys::CUlimit::CU_LIMIT_STACK_SIZE;
    let set = ctx
        .get_limit(stack)
        .map_err(Error::driver("reading the per-thread stack size"))?;
    if set != bytes as usize {
        ctx.set_limit(stack, bytes as usize)
            .map_err(Error::driver("setting the per-thread stack size"))?;
    }
    Ok(())
}

/// Sets the per-thread stack the configuration asks for and returns what the driver set.
fn set_stack(ctx: &CudaContext, config: &Config) -> Result<u32> {
    let stack = sys::CUlimit::CU_LIMIT_STACK_SIZE;
    let bytes = config.stack_bytes.unwrap_or(Config::DEFAULT_STACK_BYTES);
    ctx.set_limit(stack, bytes as usize)
        .map_err(|e| ConfigError::StackBytes {
            bytes,
            reason: e.to_string(),
        })?;
    let set = ctx
        .get_limit(stack)
        .map_err(Error::driver("reading the per-thread stack size"))?;
    Ok(u32::try_from(set).unwrap_or(u32::MAX))
}
