//! The PNG charts of a [`Profile`] (plotters' bitmap backend, text in a TrueType font):
//!
//! Each chart is drawn per *worker*: a warp, or for a block-mode kernel a thread block (the
//! labels say which).
//!
//! * `timeline.png`: workers × time. Each pixel column of a worker's row is blue for the share
//!   of its time the worker spent polling tasks, grey for the share it spent finding nothing to
//!   run, orange for the rest of its time in the scheduler (folds, joins, pops, steals), white
//!   before it entered the scheduler and after it left; red ticks mark steals.
//! * `utilization.png`: above, how many workers run tasks (and how many are idle) over time;
//!   below, how many workers spent which share of the launch running tasks (GTaP's histogram).
//! * `durations.png`: how long a step's polls took (and idle spans lasted), log-scale bins.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::profile::{Profile, Track, log_histogram, spread};

/// Debian's `fonts-dejavu-core` sans-serif font.
pub const DEFAULT_FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// The family name the charts' text uses: [`register_font`] registers the font under it.
pub const FONT: &str = "sans-serif";
const RUN: RGBColor = RGBColor(0x1f, 0x77, 0xb4);
const IDLE: RGBColor = RGBColor(0xbb, 0xbb, 0xbb);
const STEAL: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const SCHEDULING: RGBColor = RGBColor(0xff, 0xc8, 0x8a);

fn fail<E: std::fmt::Debug>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("drawing the {what} chart: {e:?}")
}

/// Makes `font` (a TrueType file) the charts' font; once per process.
pub fn register_font(font: &Path) -> Result<(), String> {
    let bytes = std::fs::read(font).map_err(|e| {
        format!(
            "cannot read the font {} ({e}); install fonts-dejavu-core or pass --font",
            font.display()
        )
    })?;
    // plotters keeps registered fonts for the whole program.
    plotters::style::register_font(FONT, FontStyle::Normal, Box::leak(bytes.into_boxed_slice()))
        .map_err(|_| format!("{} is not a usable TrueType font", font.display()))
}

/// Draws the three charts of `profile` into `dir` (after [`register_font`]), the timeline with
/// at most `max_warps` rows (workers spread evenly over the grid); returns the files written.
pub fn draw_all(profile: &Profile, dir: &Path, max_warps: usize) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let files = [
        dir.join("timeline.png"),
        dir.join("utilization.png"),
        dir.join("durations.png"),
    ];
    timeline(profile, &files[0], max_warps)?;
    utilization(profile, &files[1])?;
    durations(profile, &files[2])?;
    Ok(files.to_vec())
}

/// Up to `max` tracks, evenly spread over all of them.
fn sample(tracks: &[Track], max: usize) -> Vec<&Track> {
    let step = tracks.len().div_ceil(max.max(1)).max(1);
    tracks.iter().step_by(step).collect()
}

/// White, with each colour in its share (shares of a pixel column's time, which add up to at
/// most 1: a warp is never idle while it polls, and both happen inside the scheduler).
fn mix(shares: [(RGBColor, f64); 3]) -> RGBColor {
    let channel = |pick: fn(&RGBColor) -> u8| {
        let white = 255.0;
        let v = shares.iter().fold(white, |v, (color, share)| {
            v - share.clamp(0.0, 1.0) * (white - f64::from(pick(color)))
        });
        v.clamp(0.0, white) as u8
    };
    RGBColor(channel(|c| c.0), channel(|c| c.1), channel(|c| c.2))
}

fn timeline(p: &Profile, path: &Path, max_warps: usize) -> Result<(), String> {
    let rows = sample(&p.tracks, max_warps);
    let n = rows.len().max(1) as f64;
    let err = fail("timeline");
    let row_px = (900 / rows.len().max(1)).clamp(4, 40) as u32;
    let (width, height) = (1400u32, (130 + row_px * rows.len() as u32).max(400));
    let image = BitMapBackend::new(path, (width, height + LEGEND_PX)).into_drawing_area();
    image.fill(&WHITE).map_err(&err)?;
    let (root, key) = image.split_vertically(height);
    let polls: u64 = p.runs().map(|r| u64::from(r.tasks)).sum();
    let steps = p.runs().count().max(1);
    let caption = format!(
        "{}: {w}s over time ({} of {} {w}s; {:.1} tasks per step on average)",
        p.kernel,
        rows.len(),
        p.tracks.len(),
        polls as f64 / steps as f64,
        w = p.worker
    );
    let span = p.span_us.max(1e-3);
    // Row i is centred on y = n - 1 - i; only whole values get a label.
    let worker_of = |y: &f64| {
        let row = n - 1.0 - y;
        if (row - row.round()).abs() > 1e-6 || row < -0.5 {
            return String::new();
        }
        rows.get(row.round() as usize)
            .map_or(String::new(), |t| t.worker.to_string())
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, (FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..span, -0.5..n - 0.5)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(format!("µs since the first {} started", p.worker))
        .y_desc(p.worker.as_str())
        .y_labels(rows.len().min(16))
        .y_label_formatter(&worker_of)
        .label_style((FONT, 13))
        .draw()
        .map_err(&err)?;
    let columns = (width - 100) as usize;
    let w = span / columns as f64;
    for (i, track) in rows.iter().enumerate() {
        let y = n - 1.0 - i as f64;
        let (lo, hi) = (y - 0.4, y + 0.4);
        let mut run = vec![0.0; columns];
        let mut idle = vec![0.0; columns];
        let mut inside = vec![0.0; columns];
        for s in &track.runs {
            spread(s.start_us, s.end_us(), w, &mut run);
        }
        for s in &track.idle {
            spread(s.start_us, s.end_us(), w, &mut idle);
        }
        if let Some(s) = track.scheduler {
            spread(s.start_us, s.end_us(), w, &mut inside);
        }
        let cells = (0..columns).filter_map(|c| {
            let (r, g) = (run[c] / w, idle[c] / w);
            let rest = (inside[c] / w - r - g).max(0.0);
            if r + g + rest < 0.02 {
                return None;
            }
            let x = c as f64 * w;
            let color = mix([(RUN, r), (IDLE, g), (SCHEDULING, rest)]);
            Some(Rectangle::new([(x, lo), (x + w, hi)], color.filled()))
        });
        chart.draw_series(cells).map_err(&err)?;
        let ticks = track
            .steals_us
            .iter()
            .map(|&t| Rectangle::new([(t, hi - 0.25), (t + w, hi)], STEAL.filled()));
        chart.draw_series(ticks).map_err(&err)?;
    }
    // The key goes below the chart, where it hides no warp.
    let mut x = 80;
    for (label, color) in [
        ("polling tasks", RUN),
        ("finding nothing to run", IDLE),
        ("scheduling (folds, joins, pops, steals)", SCHEDULING),
        ("steal", STEAL),
        ("outside the scheduler", WHITE),
    ] {
        key.draw(&Rectangle::new([(x, 8), (x + 14, 22)], color.filled()))
            .map_err(&err)?;
        key.draw(&Rectangle::new(
            [(x, 8), (x + 14, 22)],
            BLACK.stroke_width(1),
        ))
        .map_err(&err)?;
        key.draw(&Text::new(label, (x + 20, 8), (FONT, 14)))
            .map_err(&err)?;
        x += 30 + 8 * label.len() as i32;
    }
    image.present().map_err(&err)
}

/// Height of the timeline's key below the chart.
const LEGEND_PX: u32 = 32;

fn utilization(p: &Profile, path: &Path) -> Result<(), String> {
    let err = fail("utilization");
    let root = BitMapBackend::new(path, (1100, 900)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let (top, bottom) = root.split_vertically(500);
    let series = p.busy_over_time(400);
    let workers = p.tracks.len().max(1) as f64;
    let span = p.span_us.max(1e-3);
    let mut chart = ChartBuilder::on(&top)
        .caption(
            format!("{}: {}s running tasks over time", p.kernel, p.worker),
            (FONT, 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..span, 0.0..workers * 1.05)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc(format!("µs since the first {} started", p.worker))
        .y_desc(format!("{}s", p.worker))
        .label_style((FONT, 13))
        .draw()
        .map_err(&err)?;
    let slice = span / series.len().max(1) as f64;
    chart
        .draw_series(series.iter().map(|s| {
            let x = s.0 - slice / 2.0;
            Rectangle::new([(x, 0.0), (x + slice, s.1)], RUN.mix(0.35).filled())
        }))
        .map_err(&err)?;
    chart
        .draw_series(LineSeries::new(
            series.iter().map(|s| (s.0, s.1)),
            RUN.stroke_width(2),
        ))
        .map_err(&err)?
        .label("running tasks")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RUN.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            series.iter().map(|s| (s.0, s.2)),
            IDLE.stroke_width(2),
        ))
        .map_err(&err)?
        .label("finding nothing to run")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], IDLE.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            [(0.0, workers), (span, workers)],
            BLACK.stroke_width(1),
        ))
        .map_err(&err)?
        .label(format!("{} {}s", p.tracks.len(), p.worker))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(1)));
    chart
        .configure_series_labels()
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(&err)?;

    let shares = p.utilization();
    let mut bins = [0u32; 20];
    for s in &shares {
        bins[((s * 20.0) as usize).min(19)] += 1;
    }
    let most = bins.iter().copied().max().unwrap_or(0).max(1);
    let mean = 100.0 * shares.iter().sum::<f64>() / shares.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&bottom)
        .caption(
            format!(
                "share of the launch each {} spent running tasks (mean {mean:.1}%)",
                p.worker
            ),
            (FONT, 18),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..100.0, 0.0..f64::from(most) * 1.1)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("% of the launch spent running tasks")
        .y_desc(format!("{}s", p.worker))
        .label_style((FONT, 13))
        .draw()
        .map_err(&err)?;
    chart
        .draw_series(bins.iter().enumerate().map(|(i, &count)| {
            let x = i as f64 * 5.0;
            Rectangle::new(
                [(x, 0.0), (x + 5.0, f64::from(count))],
                RUN.mix(0.6).filled(),
            )
        }))
        .map_err(&err)?;
    root.present().map_err(&err)
}

fn durations(p: &Profile, path: &Path) -> Result<(), String> {
    let err = fail("durations");
    let runs: Vec<f64> = p.runs().map(|s| s.dur_us).collect();
    let idle: Vec<f64> = p
        .tracks
        .iter()
        .flat_map(|t| t.idle.iter().map(|s| s.dur_us))
        .collect();
    let run_bins = log_histogram(&runs, 5);
    let idle_bins = log_histogram(&idle, 5);
    let all = run_bins.iter().chain(&idle_bins);
    let lo = all.clone().map(|b| b.0).fold(f64::MAX, f64::min);
    let hi = all.clone().map(|b| b.1).fold(f64::MIN, f64::max);
    let (lo, hi) = if lo < hi { (lo, hi) } else { (0.01, 10.0) };
    let most = all.map(|b| b.2).max().unwrap_or(0).max(1) as f64;
    let root = BitMapBackend::new(path, (1100, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let mut sorted = runs.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "{}: how long a step's polls took ({} steps, median {median:.2} µs)",
                p.kernel,
                runs.len()
            ),
            (FONT, 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d((lo..hi).log_scale(), 0.0..most * 1.1)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("µs (log scale)")
        .y_desc("count")
        .x_label_formatter(&|v| format!("{v}"))
        .label_style((FONT, 13))
        .draw()
        .map_err(&err)?;
    chart
        .draw_series(
            run_bins
                .iter()
                .map(|&(a, b, n)| Rectangle::new([(a, 0.0), (b, n as f64)], RUN.mix(0.7).filled())),
        )
        .map_err(&err)?
        .label("step polls (task runs)")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], RUN.mix(0.7).filled()));
    chart
        .draw_series(
            idle_bins
                .iter()
                .map(|&(a, b, n)| Rectangle::new([(a, 0.0), (b, n as f64)], IDLE.stroke_width(2))),
        )
        .map_err(&err)?
        .label("idle spans")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], IDLE.stroke_width(2)));
    chart
        .configure_series_labels()
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(&err)?;
    root.present().map_err(&err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_samples_warps_across_the_whole_grid() {
        let tracks: Vec<Track> = (0..2112)
            .map(|worker| Track {
                worker,
                ..Track::default()
            })
            .collect();
        let rows: Vec<u32> = sample(&tracks, 64).iter().map(|t| t.worker).collect();
        assert!(rows.len() <= 64 && rows.len() >= 60, "{}", rows.len());
        assert_eq!(rows[0], 0);
        assert!(
            *rows.last().unwrap() >= 2112 - 34,
            "reaches the last blocks"
        );
        assert_eq!(sample(&tracks[..5], 64).len(), 5, "few warps: all of them");
    }

    #[test]
    fn colours_mix_by_share_of_time() {
        assert_eq!(mix([(RUN, 0.0), (IDLE, 0.0), (SCHEDULING, 0.0)]), WHITE);
        assert_eq!(mix([(RUN, 1.0), (IDLE, 0.0), (SCHEDULING, 0.0)]), RUN);
        let half = mix([(RUN, 0.5), (IDLE, 0.5), (SCHEDULING, 0.0)]);
        assert!(half.0 < 255 && half.0 > RUN.0);
    }
}
