//! A gtap trace read back from its Chrome trace JSON (`gtap_host::Trace::write_chrome_json`),
//! and the series the charts draw from it.

use serde_json::Value;

/// One span of a worker's time, in microseconds since the trace's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Span {
    /// Start.
    pub start_us: f64,
    /// Duration.
    pub dur_us: f64,
    /// Tasks polled (runs), or 0 (idle spans).
    pub tasks: u32,
}

impl Span {
    /// End.
    pub fn end_us(&self) -> f64 {
        self.start_us + self.dur_us
    }
}

/// One worker's track (a warp's, or in block mode a block's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Track {
    /// The worker's index (the track's `tid`).
    pub worker: u32,
    /// From its entering the scheduler to its leaving it.
    pub scheduler: Option<Span>,
    /// Its scheduling steps' polls.
    pub runs: Vec<Span>,
    /// Its spans of steps that found nothing to run.
    pub idle: Vec<Span>,
    /// When it got stolen tasks in hand.
    pub steals_us: Vec<f64>,
}

/// A whole trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// The kernel traced.
    pub kernel: String,
    /// What a track follows: `"warp"`, or `"block"` for a block-mode kernel.
    pub worker: String,
    /// From the first worker entering the scheduler to the last one leaving it.
    pub span_us: f64,
    /// Events the workers could not record (their buffers were full).
    pub dropped: u64,
    /// One track per worker, in order.
    pub tracks: Vec<Track>,
}

fn number(v: &Value, what: &str) -> Result<f64, String> {
    v.as_f64()
        .ok_or_else(|| format!("the trace's {what} is not a number: {v}"))
}

impl Profile {
    /// Reads the JSON text of a gtap trace.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("not a JSON trace file: {e}"))?;
        let other = &v["otherData"];
        if other["gtap_trace"] != 1 {
            return Err(
                "not a gtap trace (no otherData.gtap_trace): write it with gtap_host::Trace::write_chrome_json"
                    .into(),
            );
        }
        let workers = number(&other["workers"], "worker count")? as usize;
        let mut tracks: Vec<Track> = (0..workers)
            .map(|w| Track {
                worker: w as u32,
                ..Track::default()
            })
            .collect();
        let events = v["traceEvents"]
            .as_array()
            .ok_or("the trace has no traceEvents list")?;
        for e in events {
            let Some(track) = e["tid"].as_u64().and_then(|t| tracks.get_mut(t as usize)) else {
                continue;
            };
            match (e["ph"].as_str(), e["name"].as_str()) {
                (Some("X"), Some(name @ ("run" | "idle" | "scheduler"))) => {
                    let span = Span {
                        start_us: number(&e["ts"], "ts")?,
                        dur_us: number(&e["dur"], "dur")?,
                        tasks: e["args"]["tasks"].as_u64().unwrap_or(0) as u32,
                    };
                    match name {
                        "run" => track.runs.push(span),
                        "idle" => track.idle.push(span),
                        _ => track.scheduler = Some(span),
                    }
                }
                (Some("i"), Some("steal")) => track.steals_us.push(number(&e["ts"], "ts")?),
                _ => {}
            }
        }
        Ok(Profile {
            kernel: other["kernel"].as_str().unwrap_or("kernel").to_string(),
            worker: other["worker"].as_str().unwrap_or("warp").to_string(),
            span_us: number(&other["span_us"], "span")?,
            dropped: other["dropped"].as_u64().unwrap_or(0),
            tracks,
        })
    }

    /// Every run, over all workers.
    pub fn runs(&self) -> impl Iterator<Item = &Span> {
        self.tracks.iter().flat_map(|t| t.runs.iter())
    }

    /// Average number of workers running tasks (and idle) in each of `bins` equal slices of
    /// the span: `(slice midpoint µs, busy workers, idle workers)`.
    pub fn busy_over_time(&self, bins: usize) -> Vec<(f64, f64, f64)> {
        let width = self.span_us.max(1e-9) / bins as f64;
        let mut busy = vec![0.0; bins];
        let mut idle = vec![0.0; bins];
        for t in &self.tracks {
            for (spans, into) in [(&t.runs, &mut busy), (&t.idle, &mut idle)] {
                for s in spans {
                    spread(s.start_us, s.end_us(), width, into);
                }
            }
        }
        (0..bins)
            .map(|i| ((i as f64 + 0.5) * width, busy[i] / width, idle[i] / width))
            .collect()
    }

    /// Each worker's share of the launch's span spent running tasks, 0 to 1 (GTaP's "working
    /// time ratio").
    pub fn utilization(&self) -> Vec<f64> {
        self.tracks
            .iter()
            .map(|t| {
                let busy: f64 = t.runs.iter().map(|s| s.dur_us).sum();
                (busy / self.span_us.max(1e-9)).min(1.0)
            })
            .collect()
    }
}

/// Adds the overlap of `[start, end)` with each slice of `width` to `into`.
pub(crate) fn spread(start: f64, end: f64, width: f64, into: &mut [f64]) {
    let last = into.len().saturating_sub(1);
    let first = ((start / width).floor().max(0.0) as usize).min(last);
    let mut i = first;
    while i <= last {
        let (lo, hi) = (i as f64 * width, (i + 1) as f64 * width);
        if lo >= end {
            break;
        }
        into[i] += (end.min(hi) - start.max(lo)).max(0.0);
        i += 1;
    }
}

/// A histogram of `values` (all positive) over logarithmic bins, `per_decade` bins per power of
/// ten: `(bin start, bin end, count)` from the smallest value's bin to the largest's.
pub fn log_histogram(values: &[f64], per_decade: u32) -> Vec<(f64, f64, u64)> {
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    if positive.is_empty() {
        return Vec::new();
    }
    let step = 1.0 / per_decade as f64;
    let index = |v: f64| (v.log10() / step).floor() as i64;
    let lo = positive.iter().map(|&v| index(v)).min().unwrap_or(0);
    let hi = positive.iter().map(|&v| index(v)).max().unwrap_or(0);
    let mut counts = vec![0u64; (hi - lo + 1) as usize];
    for v in positive {
        counts[(index(v) - lo) as usize] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let k = (lo + i as i64) as f64;
            (10f64.powf(k * step), 10f64.powf((k + 1.0) * step), n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"{"displayTimeUnit":"ns","otherData":{"gtap_trace":1,"kernel":"fib_kernel","worker":"warp","span_us":10.000,"workers":2,"events_per_warp":8,"dropped":3},"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"fib_kernel"}},
{"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"warp 0 (block 0)"}},
{"ph":"X","name":"scheduler","cat":"warp","pid":0,"tid":0,"ts":0.000,"dur":10.000,"args":{"left":true,"dropped":0}},
{"ph":"X","name":"run","cat":"run","pid":0,"tid":0,"ts":0.000,"dur":5.000,"args":{"tasks":32,"queue":0}},
{"ph":"X","name":"idle","cat":"idle","pid":0,"tid":0,"ts":5.000,"dur":5.000,"args":{"steps":3}},
{"ph":"X","name":"run","cat":"run","pid":0,"tid":1,"ts":2.500,"dur":5.000,"args":{"tasks":4,"queue":1}},
{"ph":"i","s":"t","name":"steal","cat":"steal","pid":0,"tid":1,"ts":2.400,"args":{"victim":0,"tasks":4,"took_us":0.100}}
]}
"#;

    #[test]
    fn a_gtap_trace_reads_back_per_warp() {
        let p = Profile::from_json(TRACE).unwrap();
        assert_eq!(
            (p.kernel.as_str(), p.span_us, p.dropped),
            ("fib_kernel", 10.0, 3)
        );
        assert_eq!((p.worker.as_str(), p.tracks.len()), ("warp", 2));
        assert_eq!(p.tracks[0].runs[0].tasks, 32);
        assert_eq!(p.tracks[0].idle.len(), 1);
        assert_eq!(p.tracks[0].scheduler.map(|s| s.end_us()), Some(10.0));
        assert_eq!(p.tracks[1].scheduler, None);
        assert_eq!(p.tracks[1].steals_us, vec![2.4]);
        assert_eq!(p.runs().count(), 2);
        assert!(Profile::from_json(r#"{"traceEvents":[]}"#).is_err());
        assert!(Profile::from_json("[").is_err());
    }

    #[test]
    fn busy_warps_and_utilization_add_up() {
        let p = Profile::from_json(TRACE).unwrap();
        let series = p.busy_over_time(4);
        // Slices of 2.5 µs: warp 0 runs in the first two, warp 1 in the middle two.
        let busy: Vec<f64> = series.iter().map(|s| s.1).collect();
        assert_eq!(busy, vec![1.0, 2.0, 1.0, 0.0]);
        let idle: Vec<f64> = series.iter().map(|s| s.2).collect();
        assert_eq!(idle, vec![0.0, 0.0, 1.0, 1.0]);
        assert_eq!(series[0].0, 1.25);
        assert_eq!(p.utilization(), vec![0.5, 0.5]);
    }

    #[test]
    fn log_bins_cover_every_value_once() {
        let h = log_histogram(&[1.0, 1.5, 9.0, 10.0, 120.0, 0.0], 1);
        assert_eq!(h.len(), 3);
        assert_eq!(
            h.iter().map(|b| b.2).sum::<u64>(),
            5,
            "the zero is left out"
        );
        assert_eq!((h[0].0, h[0].1, h[0].2), (1.0, 10.0, 3));
        assert_eq!(h[2].2, 1);
        assert!(log_histogram(&[], 4).is_empty());
    }
}
