//! Adaptive numerical integration (the thread-mode program of GTaP's execution-modes chapter):
//! each task integrates an interval and splits it in two until the trapezoid estimate
//! converges.

/// The integrand: a sharp peak at 0, so intervals near it are split far more often.
#[inline]
pub fn peak(x: f64) -> f64 {
    1.0 / (x * x + 1e-4)
}

#[inline]
fn trap(a: f64, b: f64) -> f64 {
    (peak(a) + peak(b)) * (b - a) * 0.5
}

#[inline]
fn abs(x: f64) -> f64 {
    if x < 0.0 { -x } else { x }
}

/// One step of the method: `Ok(value)` when `[a, b]` has converged, `Err(midpoint)` to split.
#[inline]
fn estimate(a: f64, b: f64, eps: f64) -> Result<f64, f64> {
    let m = 0.5 * (a + b);
    let coarse = trap(a, b);
    let fine = trap(a, m) + trap(m, b);
    if abs(fine - coarse) < eps {
        Ok((4.0 * fine - coarse) / 3.0)
    } else {
        Err(m)
    }
}

/// ∫ₐᵇ peak, to tolerance `eps` per interval.
#[gtap::function]
pub fn integrate(a: f64, b: f64, eps: f64) -> f64 {
    let m = match estimate(a, b, eps) {
        Ok(v) => return v,
        Err(m) => m,
    };
    let (mut left, mut right) = (0.0, 0.0);
    gtap::task!(left = integrate(a, m, eps));
    gtap::task!(right = integrate(m, b, eps));
    gtap::taskwait!();
    left + right
}

/// Sequential reference: the same splits and the same additions, so the result is identical.
pub fn integrate_seq(a: f64, b: f64, eps: f64) -> f64 {
    match estimate(a, b, eps) {
        Ok(v) => v,
        Err(m) => integrate_seq(a, m, eps) + integrate_seq(m, b, eps),
    }
}

/// Root kernel of [`integrate`].
#[gtap::kernel]
pub fn integrate_kernel(a: f64, b: f64, eps: f64) -> f64 {
    gtap::entry!(integrate(a, b, eps))
}
