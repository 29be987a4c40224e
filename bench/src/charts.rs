//! PNG charts of a run's records (plotters' bitmap backend, text in a TrueType font):
//!
//! * `<stem>-compare.png`: per workload, gtap, GTaP, rayon and sequential medians (log scale);
//! * `<stem>-fib-cutoff.png`: the EPAQ fib cutoff sweep, 1 vs 3 queues, gtap and GTaP;
//! * `<stem>-scaling.png`: fib(35) over grid sizes (gtap).

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use gtap_profile::charts::{FONT, register_font};

use crate::record::{Record, runner};

pub use gtap_profile::charts::DEFAULT_FONT;

type Failure = String;

fn fail<E: std::fmt::Debug>(what: &'static str) -> impl Fn(E) -> Failure {
    move |e| format!("drawing the {what} chart: {e:?}")
}

/// The runners in chart order, with their colours.
const RUNNERS: [(&str, RGBColor); 4] = [
    (runner::GTAP, RGBColor(0x1f, 0x77, 0xb4)),
    (runner::GTAP_BASELINE, RGBColor(0xd6, 0x27, 0x28)),
    (runner::RAYON, RGBColor(0x2c, 0xa0, 0x2c)),
    (runner::SEQUENTIAL, RGBColor(0x7f, 0x7f, 0x7f)),
];

fn median(r: &Record) -> Option<f64> {
    r.median_ms.filter(|&m| r.verified && m > 0.0)
}

/// `fib<n>_cutoff<k>_q<q>` -> (k, q).
fn fib_cutoff_point(label: &str) -> Option<(i32, u32)> {
    let rest = label.strip_prefix("fib")?;
    let (_, rest) = rest.split_once("_cutoff")?;
    let (k, q) = rest.split_once("_q")?;
    Some((k.parse().ok()?, q.parse().ok()?))
}

/// `fib<n>_grid<g>` -> g.
fn grid_point(label: &str) -> Option<u32> {
    label
        .strip_prefix("fib")?
        .split_once("_grid")?
        .1
        .parse()
        .ok()
}

/// Sweep points other than the main cutoff (14) stay out of the comparison chart.
fn is_sweep_point(label: &str) -> bool {
    grid_point(label).is_some() || fib_cutoff_point(label).is_some_and(|(k, _)| k != 14)
}

fn range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    (lo <= hi).then_some((lo / 2.0, hi * 2.0))
}

/// Draws every chart the records have data for; returns the files written.
pub fn draw_all(
    records: &[Record],
    dir: &Path,
    stem: &str,
    font: &Path,
) -> Result<Vec<PathBuf>, String> {
    register_font(font)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let path = dir.join(format!("{stem}-compare.png"));
    if compare(records, &path)? {
        written.push(path);
    }
    let path = dir.join(format!("{stem}-fib-cutoff.png"));
    if fib_cutoff(records, &path)? {
        written.push(path);
    }
    let path = dir.join(format!("{stem}-scaling.png"));
    if scaling(records, &path)? {
        written.push(path);
    }
    Ok(written)
}

/// Horizontal bars, one group per workload, log-scale time axis.
fn compare(records: &[Record], path: &Path) -> Result<bool, String> {
    let mut labels: Vec<&str> = Vec::new();
    for r in records {
        if !is_sweep_point(&r.workload)
            && median(r).is_some()
            && !labels.contains(&r.workload.as_str())
        {
            labels.push(&r.workload);
        }
    }
    let Some((lo, hi)) = range(
        records
            .iter()
            .filter(|r| labels.contains(&r.workload.as_str()))
            .filter_map(median),
    ) else {
        return Ok(false);
    };
    let err = fail("comparison");
    let rows = labels.len() as f64;
    let height = 140 + 22 * 4 * labels.len() as u32;
    let root = BitMapBackend::new(path, (1100, height)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "median time per workload (log scale; lower is faster)",
            (FONT, 22),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(230)
        .build_cartesian_2d((lo..hi).log_scale(), -0.5..rows - 0.5)
        .map_err(&err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("ms")
        .label_style((FONT, 14))
        .draw()
        .map_err(&err)?;
    let bar = 0.8 / RUNNERS.len() as f64;
    // The first workload at the top.
    let row = |i: usize| rows - 1.0 - i as f64;
    for (k, (who, color)) in RUNNERS.iter().enumerate() {
        let bars: Vec<_> = labels
            .iter()
            .enumerate()
            .filter_map(|(i, label)| {
                let r = records
                    .iter()
                    .find(|r| r.workload == *label && r.runner == *who)?;
                let top = row(i) - 0.4 + k as f64 * bar;
                Some(Rectangle::new(
                    [(lo, top), (median(r)?, top + bar * 0.9)],
                    color.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(&err)?
            .label(*who)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(&err)?;
    let style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    for (i, label) in labels.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(lo, row(i)));
        root.draw(&Text::new(label.to_string(), (x - 8, y), style.clone()))
            .map_err(&err)?;
    }
    root.present().map_err(&err)?;
    Ok(true)
}

/// Lines over the cutoff: gtap and GTaP, 3 and 1 queues.
fn fib_cutoff(records: &[Record], path: &Path) -> Result<bool, String> {
    let mut series = Vec::new();
    for (who, color) in &RUNNERS[..2] {
        for (queues, dashed) in [(3u32, false), (1, true)] {
            let mut points: Vec<(i32, f64)> = records
                .iter()
                .filter(|r| r.runner == *who)
                .filter_map(|r| {
                    let (k, q) = fib_cutoff_point(&r.workload)?;
                    (q == queues).then_some((k, median(r)?))
                })
                .collect();
            points.sort_by_key(|p| p.0);
            if points.len() > 1 {
                series.push((format!("{who}, {queues} queue(s)"), *color, dashed, points));
            }
        }
    }
    let all = series.iter().flat_map(|s| s.3.iter());
    let Some((lo, hi)) = range(all.clone().map(|p| p.1)) else {
        return Ok(false);
    };
    let (k0, k1) = all.fold((i32::MAX, i32::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
    let err = fail("fib cutoff");
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("EPAQ fib: time over the sequential cutoff", (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(k0..k1, (lo..hi).log_scale())
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("cutoff (tasks while n >= cutoff)")
        .y_desc("ms (log)")
        .label_style((FONT, 14))
        .draw()
        .map_err(&err)?;
    for (name, color, dashed, points) in series {
        let style = ShapeStyle::from(&color).stroke_width(if dashed { 1 } else { 3 });
        chart
            .draw_series(LineSeries::new(points.clone(), style))
            .map_err(&err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(&err)?;
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()
        .map_err(&err)?;
    root.present().map_err(&err)?;
    Ok(true)
}

/// gtap's fib(35) time over the grid size, log-log.
fn scaling(records: &[Record], path: &Path) -> Result<bool, String> {
    let mut points: Vec<(f64, f64)> = records
        .iter()
        .filter(|r| r.runner == runner::GTAP)
        .filter_map(|r| Some((grid_point(&r.workload)? as f64, median(r)?)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    if points.len() < 2 {
        return Ok(false);
    }
    let (lo, hi) = range(points.iter().map(|p| p.1)).expect("two points");
    let (g0, g1) = (points[0].0 / 1.5, points[points.len() - 1].0 * 1.5);
    let err = fail("scaling");
    let root = BitMapBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(&err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("gtap fib(35): time over the grid size", (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((g0..g1).log_scale(), (lo..hi).log_scale())
        .map_err(&err)?;
    chart
        .configure_mesh()
        .x_desc("thread blocks in the persistent grid (log)")
        .y_desc("ms (log)")
        .x_labels(8)
        .y_labels(8)
        .x_label_formatter(&|g| format!("{g:.0}"))
        .y_label_formatter(&|ms| format!("{ms:.0}"))
        .light_line_style(WHITE)
        .label_style((FONT, 14))
        .draw()
        .map_err(&err)?;
    let color = RUNNERS[0].1;
    chart
        .draw_series(LineSeries::new(points.clone(), color.stroke_width(3)))
        .map_err(&err)?;
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))
        .map_err(&err)?;
    root.present().map_err(&err)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_labels_are_recognised() {
        assert_eq!(fib_cutoff_point("fib40_cutoff14_q3"), Some((14, 3)));
        assert_eq!(fib_cutoff_point("fib40"), None);
        assert_eq!(grid_point("fib35_grid132"), Some(132));
        assert!(is_sweep_point("fib40_cutoff2_q1"));
        assert!(!is_sweep_point("fib40_cutoff14_q1"));
        assert!(!is_sweep_point("tree22_thread"));
    }
}
