//! The side-by-side table: per workload gtap's median, GTaP's median, the speed ratio, and the
//! CPU peers, all from the records of one run.

use std::fmt::Write as _;

use crate::record::{Record, runner};

fn find<'a>(records: &'a [Record], label: &str, who: &str) -> Option<&'a Record> {
    records
        .iter()
        .find(|r| r.workload == label && r.runner == who)
}

fn cell(r: Option<&Record>) -> String {
    match r {
        Some(Record {
            verified: true,
            median_ms: Some(ms),
            ..
        }) => format!("{ms:.3}"),
        Some(_) => "FAILED".into(),
        None => "-".into(),
    }
}

/// The table as Markdown, one row per label of `order`; `missing` gives remarks by label: why
/// gtap does not run it, or why it has no GTaP counterpart. The ratio is GTaP's median over gtap's (above 1: gtap is faster).
pub fn render(records: &[Record], order: &[String], missing: &[(String, String)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| workload | gtap ms | GTaP ms | gtap speed / GTaP | rayon ms | sequential ms | notes |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---|");
    for label in order {
        let gtap = find(records, label, runner::GTAP);
        let base = find(records, label, runner::GTAP_BASELINE);
        let median = |r: Option<&Record>| r.filter(|r| r.verified).and_then(|r| r.median_ms);
        let ratio = match (median(gtap), median(base)) {
            (Some(g), Some(b)) if g > 0.0 => format!("{:.2}x", b / g),
            _ => "-".into(),
        };
        let why = missing
            .iter()
            .find(|(l, _)| l == label)
            .map(|(_, why)| why.clone());
        let mut notes = Vec::new();
        notes.extend(why.clone());
        for r in [gtap, base].into_iter().flatten() {
            if !r.verified {
                notes.push(format!("{} failed: {}", r.runner, r.note));
            }
        }
        if base.is_none() && gtap.is_some() && why.is_none() {
            notes.push("no GTaP figure in this run".into());
        }
        let _ = writeln!(
            out,
            "| {label} | {} | {} | {ratio} | {} | {} | {} |",
            cell(gtap),
            cell(base),
            cell(find(records, label, runner::RAYON)),
            cell(find(records, label, runner::SEQUENTIAL)),
            notes.join("; ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(workload: &str, who: &str, ms: f64, verified: bool) -> Record {
        Record {
            workload: workload.into(),
            runner: who.into(),
            median_ms: Some(ms),
            min_ms: Some(ms),
            max_ms: Some(ms),
            runs: 10,
            verified,
            device: "gpu".into(),
            commit: "c".into(),
            driver: None,
            note: String::new(),
        }
    }

    #[test]
    fn pairs_by_label_and_reports_gaps() {
        let records = [
            rec("fib40", runner::GTAP, 200.0, true),
            rec("fib40", runner::GTAP_BASELINE, 100.0, true),
            rec("fib40", runner::RAYON, 300.0, true),
            rec("tree22_block", runner::GTAP_BASELINE, 70.0, true),
            rec("nqueens16", runner::GTAP, 1.0, false),
        ];
        let order = ["fib40", "tree22_block", "nqueens16"].map(String::from);
        let missing = [(
            "tree22_block".to_string(),
            "block mode not implemented".to_string(),
        )];
        let t = render(&records, &order, &missing);
        assert!(
            t.contains("| fib40 | 200.000 | 100.000 | 0.50x | 300.000 | - |"),
            "{t}"
        );
        assert!(t.contains("| tree22_block | - | 70.000 | - |"), "{t}");
        assert!(t.contains("block mode not implemented"), "{t}");
        assert!(t.contains("| nqueens16 | FAILED |"), "{t}");
    }
}
