//! A launch's event trace, read back from the device ([`gtap_device::abi::TraceEvent`]), and
//! its export as Chrome trace JSON (which Perfetto and `chrome://tracing` open).

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use gtap_device::Kernel;
pub use gtap_device::abi::BlockPollEnd;
use gtap_device::abi::{Layout, TraceEvent, TraceKind, WarpTraceMeta};

/// What each worker did during a traced launch ([`Config::trace_events_per_warp`]), in time
/// order per worker. A worker is what runs tasks: a warp in thread mode, a thread block in
/// block mode ([`WorkerKind`]). Times are nanoseconds since the first worker entered the
/// scheduler.
///
/// [`Config::trace_events_per_warp`]: crate::Config::trace_events_per_warp
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The kernel launched.
    pub kernel: &'static str,
    /// What a worker is in this launch: a warp, or (a block-mode kernel) a block.
    pub worker: WorkerKind,
    /// From the first worker entering the scheduler to the last one leaving it, in ns.
    pub span_ns: u64,
    /// The most events each worker could record
    /// ([`Config::trace_events_per_warp`](crate::Config::trace_events_per_warp)).
    pub events_per_warp: u32,
    /// One entry per worker of the launch (every warp, or every block), in order.
    pub workers: Vec<WorkerTrace>,
}

/// What one track of a [`Trace`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkerKind {
    /// A warp, running up to 32 tasks per step, one per lane (thread mode).
    Warp,
    /// A thread block, running one task per step on all its threads (block mode); its thread
    /// 0 records for it.
    Block,
}

impl WorkerKind {
    /// The workers of kernel `K`: blocks for a block-mode kernel, warps otherwise.
    pub(crate) fn of<K: Kernel>() -> Self {
        if K::BLOCK_SIZE == 0 {
            WorkerKind::Warp
        } else {
            WorkerKind::Block
        }
    }

    /// `"warp"` or `"block"`.
    pub fn name(self) -> &'static str {
        match self {
            WorkerKind::Warp => "warp",
            WorkerKind::Block => "block",
        }
    }
}

/// One worker's part of a [`Trace`].
#[derive(Clone, Debug, PartialEq)]
pub struct WorkerTrace {
    /// The worker's index: the warp's global index, or the block's index in block mode.
    pub worker: u32,
    /// Its thread block (in block mode, the worker itself).
    pub block: u32,
    /// The warp whose leader lane recorded it: the warp itself, or the block's first warp.
    pub warp: u32,
    /// When it entered the scheduler (ns since the trace's start).
    pub begin_ns: u64,
    /// When it left the scheduler; `None` if it never did (a task that never returned).
    pub end_ns: Option<u64>,
    /// What it recorded, in time order.
    pub events: Vec<Event>,
    /// Events that did not fit its buffer (the last ones): raise
    /// [`Config::trace_events_per_warp`](crate::Config::trace_events_per_warp) to keep them.
    pub dropped: u32,
}

/// One span of a worker's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// When it began (ns since the trace's start).
    pub start_ns: u64,
    /// How long it lasted, in ns.
    pub duration_ns: u64,
    /// What the worker was doing.
    pub kind: EventKind,
}

impl Event {
    /// When it ended (ns since the trace's start).
    pub fn end_ns(&self) -> u64 {
        self.start_ns + self.duration_ns
    }
}

/// What a worker was doing during an [`Event`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A scheduling step's polls of its batch (on the parallel CPU executor with the children
    /// it polled at once inside them, which `Stats::tasks_run_at_once` counts); in block mode
    /// the poll of the block's one task by all its threads.
    Run {
        /// Tasks polled (1 to 32; 1 in block mode).
        tasks: u32,
        /// The queue the batch came from.
        queue: u32,
        /// Block mode: how the task's poll ended (done, suspended at a wait, ...). `None` in
        /// thread mode, where a step's tasks each end their own way.
        ended: Option<BlockPollEnd>,
    },
    /// A successful steal, from the claim until the lanes held the stolen ids.
    Steal {
        /// The worker stolen from (a warp, or in block mode a block).
        victim: u32,
        /// Tasks stolen.
        tasks: u32,
    },
    /// Steps in a row that found nothing to run.
    Idle {
        /// How many.
        steps: u32,
    },
}

impl Trace {
    /// Decodes what the device wrote: `metas` holds one summary per warp of the launch,
    /// `events` each warp's whole buffer, [`Layout::trace_events_per_warp`] events per warp.
    /// With `worker` [`WorkerKind::Block`], each block's track is its first warp's buffer (the
    /// other warps of a block record nothing).
    pub(crate) fn decode(
        kernel: &'static str,
        layout: &Layout,
        worker: WorkerKind,
        metas: &[WarpTraceMeta],
        events: &[TraceEvent],
    ) -> Self {
        let cap = layout.trace_events_per_warp;
        let per_block = layout.geometry.warps_per_block.max(1);
        // Every how many warps a worker's recorder sits, and the worker of warp `w`.
        let stride = match worker {
            WorkerKind::Warp => 1,
            WorkerKind::Block => per_block,
        };
        let recorders = || metas.iter().enumerate().step_by(stride as usize);
        let origin = recorders()
            .map(|(_, m)| m.begin_ns)
            .filter(|&t| t != 0)
            .min()
            .unwrap_or(0);
        let since = |t: u64| t.saturating_sub(origin);
        let workers: Vec<WorkerTrace> = recorders()
            .map(|(w, meta)| {
                let recorded = meta.events.min(cap) as usize;
                let buffer = events
                    .get(w * cap as usize..)
                    .map_or(&[][..], |b| &b[..recorded.min(b.len())]);
                let mut events: Vec<Event> = buffer
                    .iter()
                    .filter_map(|e| {
                        let kind = match TraceKind::from_raw(e.kind)? {
                            TraceKind::Run => EventKind::Run {
                                tasks: e.a,
                                queue: e.b,
                                ended: None,
                            },
                            TraceKind::BlockRun => EventKind::Run {
                                tasks: 1,
                                queue: e.b,
                                ended: Some(BlockPollEnd::from_raw(e.a)?),
                            },
                            TraceKind::Steal => EventKind::Steal {
                                victim: e.a / stride,
                                tasks: e.b,
                            },
                            TraceKind::Idle => EventKind::Idle { steps: e.a },
                        };
                        Some(Event {
                            start_ns: since(e.start_ns),
                            duration_ns: e.duration_ns.into(),
                            kind,
                        })
                    })
                    .collect();
                events.sort_by_key(|e| e.start_ns);
                WorkerTrace {
                    worker: w as u32 / stride,
                    block: w as u32 / per_block,
                    warp: w as u32,
                    begin_ns: since(meta.begin_ns),
                    end_ns: (meta.end_ns != 0).then(|| since(meta.end_ns)),
                    events,
                    dropped: meta.events.saturating_sub(cap),
                }
            })
            .collect();
        let span_ns = workers
            .iter()
            .flat_map(|w| {
                w.end_ns
                    .into_iter()
                    .chain(w.events.last().map(Event::end_ns))
            })
            .max()
            .unwrap_or(0);
        Trace {
            kernel,
            worker,
            span_ns,
            events_per_warp: cap,
            workers,
        }
    }

    /// Events dropped over all workers (buffers too small for the launch).
    pub fn dropped(&self) -> u64 {
        self.workers.iter().map(|w| u64::from(w.dropped)).sum()
    }

    /// Writes the trace as Chrome trace JSON (the format Perfetto's UI and `chrome://tracing`
    /// open): one track per worker, named `warp W (block B)` (in block mode `block B`), its
    /// `tid` the worker's index, holding a complete (`X`) event named `scheduler` from the
    /// worker's entering the scheduler to its leaving it (to the trace's end if it never
    /// left), and inside it the task runs and idle spans as complete events named `run` and
    /// `idle`, with `ts`/`dur` in microseconds and the event's details in `args` (a block's
    /// run says how its task's poll `ended`); steals are thread-scoped instant (`i`) events
    /// named `steal` at the moment the stolen tasks were in hand. `otherData` holds the
    /// kernel, what a `worker` is (`"warp"` or `"block"`), the number of `workers`, the span,
    /// the capacity and the dropped count. Written as it goes, so a large trace needs no large
    /// buffer; wrap a file in a `BufWriter`.
    pub fn write_chrome_json(&self, mut out: impl Write) -> io::Result<()> {
        let kernel = serde_json::to_string(self.kernel).map_err(io::Error::other)?;
        let worker = self.worker.name();
        writeln!(
            out,
            "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"gtap_trace\":1,\"kernel\":{kernel},\
             \"worker\":\"{worker}\",\"span_us\":{},\"workers\":{},\"events_per_warp\":{},\
             \"dropped\":{}}},\"traceEvents\":[",
            Micros(self.span_ns),
            self.workers.len(),
            self.events_per_warp,
            self.dropped()
        )?;
        write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{{\"name\":{kernel}}}}}"
        )?;
        for w in &self.workers {
            let tid = w.worker;
            let name = match self.worker {
                WorkerKind::Warp => format!("warp {tid} (block {})", w.block),
                WorkerKind::Block => format!("block {tid}"),
            };
            write!(
                out,
                ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":{tid},\
                 \"args\":{{\"name\":\"{name}\"}}}}"
            )?;
            write!(
                out,
                ",\n{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":0,\"tid\":{tid},\
                 \"args\":{{\"sort_index\":{tid}}}}}"
            )?;
            let end = w.end_ns.unwrap_or(self.span_ns);
            write!(
                out,
                ",\n{{\"ph\":\"X\",\"name\":\"scheduler\",\"cat\":\"{worker}\",\"pid\":0,\"tid\":{tid},\
                 \"ts\":{},\"dur\":{},\"args\":{{\"left\":{},\"dropped\":{}}}}}",
                Micros(w.begin_ns),
                Micros(end.saturating_sub(w.begin_ns)),
                w.end_ns.is_some(),
                w.dropped
            )?;
            for e in &w.events {
                let (ts, dur) = (Micros(e.start_ns), Micros(e.duration_ns));
                match e.kind {
                    EventKind::Run {
                        tasks,
                        queue,
                        ended,
                    } => {
                        write!(
                            out,
                            ",\n{{\"ph\":\"X\",\"name\":\"run\",\"cat\":\"run\",\"pid\":0,\
                             \"tid\":{tid},\"ts\":{ts},\"dur\":{dur},\"args\":{{\"tasks\":{tasks},\
                             \"queue\":{queue}"
                        )?;
                        if let Some(ended) = ended {
                            write!(out, ",\"ended\":\"{}\"", ended_name(ended))?;
                        }
                        write!(out, "}}}}")?;
                    }
                    EventKind::Idle { steps } => write!(
                        out,
                        ",\n{{\"ph\":\"X\",\"name\":\"idle\",\"cat\":\"idle\",\"pid\":0,\"tid\":{tid},\
                         \"ts\":{ts},\"dur\":{dur},\"args\":{{\"steps\":{steps}}}}}"
                    )?,
                    EventKind::Steal { victim, tasks } => write!(
                        out,
                        ",\n{{\"ph\":\"i\",\"s\":\"t\",\"name\":\"steal\",\"cat\":\"steal\",\"pid\":0,\
                         \"tid\":{tid},\"ts\":{},\"args\":{{\"victim\":{victim},\"tasks\":{tasks},\
                         \"took_us\":{dur}}}}}",
                        Micros(e.end_ns())
                    )?,
                }
            }
        }
        writeln!(out, "\n]}}")
    }
}

/// Traced launches of this process, to name the files [`save_if_asked`] writes.
static SAVED: AtomicU64 = AtomicU64::new(0);

/// With `GTAP_TRACE_DIR` set, writes `trace` to `<dir>/<kernel>-<n>.trace.json` (`n` counts
/// the process's traced launches from 1) and says so on stderr; a file that cannot be written
/// is reported there too, without failing the launch whose result is already in hand.
pub(crate) fn save_if_asked(trace: &Trace) {
    let Some(dir) = std::env::var_os("GTAP_TRACE_DIR") else {
        return;
    };
    let n = SAVED.fetch_add(1, Ordering::Relaxed) + 1;
    let path = PathBuf::from(dir).join(format!("{}-{n}.trace.json", trace.kernel));
    let written = std::fs::create_dir_all(path.parent().unwrap_or(&path))
        .and_then(|()| std::fs::File::create(&path))
        .and_then(|f| trace.write_chrome_json(io::BufWriter::new(f)));
    match written {
        Ok(()) => eprintln!(
            "GTAP_TRACE_DIR: wrote {} ({} events dropped)",
            path.display(),
            trace.dropped()
        ),
        Err(e) => eprintln!("GTAP_TRACE_DIR: cannot write {}: {e}", path.display()),
    }
}

/// How a block's run is labelled in the Chrome JSON's `args.ended`.
fn ended_name(ended: BlockPollEnd) -> &'static str {
    match ended {
        BlockPollEnd::Finished => "finished",
        BlockPollEnd::ChildrenLeft => "children_left",
        BlockPollEnd::Suspended => "suspended",
        BlockPollEnd::PollAgain => "poll_again",
        BlockPollEnd::Dropped => "dropped",
    }
}

/// Nanoseconds written as microseconds with three decimals, exactly.
struct Micros(u64);

impl std::fmt::Display for Micros {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

#[cfg(test)]
mod tests {
    use gtap_device::abi::Geometry;

    use super::*;

    fn layout(cap: u32) -> Layout {
        layout_of(1, cap)
    }

    fn layout_of(blocks: u32, cap: u32) -> Layout {
        let g = Geometry {
            blocks,
            warps_per_block: 2,
            slots_per_warp: 64,
            num_queues: 1,
            slot_bytes: 64,
        };
        Layout::with_trace(g, cap).unwrap()
    }

    fn event(kind: TraceKind, start: u64, end: u64, a: u32, b: u32) -> TraceEvent {
        TraceEvent::span(kind, start, end, a, b)
    }

    /// Warp 0 ran, went idle and stole; warp 1 never left the scheduler and meant to record 4
    /// events into its buffer of 3.
    fn sample() -> Trace {
        let metas = [
            WarpTraceMeta {
                begin_ns: 1_000,
                end_ns: 9_000,
                events: 3,
                _pad: 0,
            },
            WarpTraceMeta {
                begin_ns: 1_500,
                end_ns: 0,
                events: 4,
                _pad: 0,
            },
        ];
        let events = [
            event(TraceKind::Run, 1_200, 2_200, 32, 0),
            event(TraceKind::Idle, 2_500, 4_000, 7, 0),
            event(TraceKind::Steal, 3_000, 3_400, 1, 5),
            event(TraceKind::Run, 1_600, 2_000, 3, 1),
            event(TraceKind::Run, 2_100, 5_000, 1, 0),
            event(TraceKind::Run, 5_100, 5_200, 2, 0),
        ];
        Trace::decode("k", &layout(3), WorkerKind::Warp, &metas, &events)
    }

    #[test]
    fn decoding_makes_times_relative_and_counts_what_was_dropped() {
        let t = sample();
        assert_eq!(t.workers.len(), 2);
        let w0 = &t.workers[0];
        assert_eq!((w0.begin_ns, w0.end_ns, w0.dropped), (0, Some(8_000), 0));
        assert_eq!(
            w0.events[0],
            Event {
                start_ns: 200,
                duration_ns: 1_000,
                kind: EventKind::Run {
                    tasks: 32,
                    queue: 0,
                    ended: None
                }
            }
        );
        assert!(matches!(
            w0.events[2].kind,
            EventKind::Steal {
                victim: 1,
                tasks: 5
            }
        ));
        let w1 = &t.workers[1];
        assert_eq!((w1.block, w1.end_ns, w1.dropped), (0, None, 1));
        assert_eq!(w1.events.len(), 3, "what its buffer holds");
        assert_eq!(t.span_ns, 8_000);
        assert_eq!(t.dropped(), 1);
        let full = WarpTraceMeta {
            events: 10,
            ..WarpTraceMeta::default()
        };
        let t = Trace::decode(
            "k",
            &layout(3),
            WorkerKind::Warp,
            &[full],
            &[TraceEvent::default(); 3],
        );
        // Zeroed entries are no events.
        assert_eq!((t.dropped(), t.workers[0].events.len()), (7, 0));
    }

    #[test]
    fn chrome_json_parses_and_has_one_track_per_warp() {
        let mut bytes = Vec::new();
        sample().write_chrome_json(&mut bytes).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["otherData"]["span_us"], 8.0);
        let events = v["traceEvents"].as_array().unwrap();
        let named = |name: &'static str| events.iter().filter(move |e| e["name"] == name);
        assert_eq!(named("thread_name").count(), 2);
        assert_eq!(named("run").count(), 4);
        let run = named("run").next().unwrap();
        assert_eq!(
            (run["ph"].clone(), run["ts"].clone()),
            ("X".into(), 0.2.into())
        );
        assert_eq!(run["dur"], 1.0);
        let steal = named("steal").next().unwrap();
        assert_eq!(
            (steal["ph"].clone(), steal["ts"].clone()),
            ("i".into(), 2.4.into())
        );
        assert_eq!(named("idle").next().unwrap()["args"]["steps"], 7);
        // Each warp's time in the scheduler; warp 1 never left, so it lasts to the end.
        let spans: Vec<_> = named("scheduler")
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect();
        assert_eq!(spans, [(0.0, 8.0), (0.5, 7.5)]);
        assert_eq!(named("scheduler").nth(1).unwrap()["args"]["dropped"], 1);
    }

    /// Two blocks of two warps: each block recorded into its first warp's buffer (warps 0
    /// and 2); warps 1 and 3 recorded nothing.
    fn block_sample() -> Trace {
        let meta = |begin_ns, end_ns, events| WarpTraceMeta {
            begin_ns,
            end_ns,
            events,
            _pad: 0,
        };
        let metas = [
            meta(1_000, 9_000, 2),
            WarpTraceMeta::default(),
            meta(1_100, 8_000, 2),
            WarpTraceMeta::default(),
        ];
        let none = TraceEvent::default();
        let suspended = BlockPollEnd::Suspended as u32;
        let finished = BlockPollEnd::Finished as u32;
        let events = [
            event(TraceKind::BlockRun, 1_200, 2_200, suspended, 1),
            event(TraceKind::BlockRun, 3_000, 3_500, finished, 0),
            none,
            none,
            event(TraceKind::Steal, 1_300, 1_400, 0, 1),
            event(TraceKind::BlockRun, 1_400, 2_000, finished, 0),
            none,
            none,
        ];
        Trace::decode("k", &layout_of(2, 2), WorkerKind::Block, &metas, &events)
    }

    #[test]
    fn block_mode_decodes_one_track_per_block_from_its_first_warp() {
        let t = block_sample();
        assert_eq!(t.worker, WorkerKind::Block);
        let ids: Vec<_> = t
            .workers
            .iter()
            .map(|w| (w.worker, w.block, w.warp))
            .collect();
        assert_eq!(ids, [(0, 0, 0), (1, 1, 2)]);
        assert_eq!(
            t.workers[0].events[0].kind,
            EventKind::Run {
                tasks: 1,
                queue: 1,
                ended: Some(BlockPollEnd::Suspended)
            }
        );
        // The victim is a block, not the warp that recorded for it.
        assert_eq!(
            t.workers[1].events[0].kind,
            EventKind::Steal {
                victim: 0,
                tasks: 1
            }
        );
        assert_eq!((t.span_ns, t.dropped()), (8_000, 0));

        let mut bytes = Vec::new();
        t.write_chrome_json(&mut bytes).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            (
                v["otherData"]["worker"].clone(),
                v["otherData"]["workers"].clone()
            ),
            ("block".into(), 2.into())
        );
        let events = v["traceEvents"].as_array().unwrap();
        let named = |name: &'static str| events.iter().filter(move |e| e["name"] == name);
        let tracks: Vec<_> = named("thread_name")
            .map(|e| (e["tid"].clone(), e["args"]["name"].clone()))
            .collect();
        assert_eq!(
            tracks,
            [(0.into(), "block 0".into()), (1.into(), "block 1".into())]
        );
        let ended: Vec<_> = named("run")
            .map(|e| e["args"]["ended"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ended, ["suspended", "finished", "finished"]);
    }
}
