//! Summary statistics of repeated runs, as GTaP's scripts compute them.

/// Median, extremes and count of a set of timings (ms).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The median: the middle value, or the mean of the two middle values for an even count.
    pub median_ms: f64,
    /// The fastest run.
    pub min_ms: f64,
    /// The slowest run.
    pub max_ms: f64,
    /// How many runs.
    pub runs: usize,
}

/// The summary of `times`, or `None` for no runs.
pub fn summarize(times: &[f64]) -> Option<Summary> {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    let n = t.len();
    let median_ms = match n {
        0 => return None,
        _ if n % 2 == 1 => t[n / 2],
        _ => (t[n / 2 - 1] + t[n / 2]) / 2.0,
    };
    Some(Summary {
        median_ms,
        min_ms: t[0],
        max_ms: t[n - 1],
        runs: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(summarize(&[]), None);
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (s.median_ms, s.min_ms, s.max_ms, s.runs),
            (2.0, 1.0, 3.0, 3)
        );
        assert_eq!(summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap().median_ms, 2.5);
    }
}
