//! The watchdog: waits for a launch while watching every warp's published status, and stops a
//! launch in which nothing moves for the configured time. The same loop serves both backends;
//! each supplies a [`Watched`] (the GPU reads the status words by a copy on a second stream,
//! the CPU executor directly).

use std::time::{Duration, Instant};

/// What the watchdog needs from a backend while a launch runs.
pub(crate) trait Watched {
    /// Why the backend cannot go on watching (the kernel faulted, say).
    type Error;
    /// Waits up to `pause` for the launch to end; whether it has.
    fn wait(&mut self, pause: Duration) -> Result<bool, Self::Error>;
    /// Reads every warp's status word into `words`.
    fn read(&mut self, words: &mut [u64]) -> Result<(), Self::Error>;
    /// Asks every worker to stop at its next check.
    fn stop(&mut self) -> Result<(), Self::Error>;
}

/// How a watched launch ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It ended by itself.
    Ended,
    /// Nothing moved for `quiet`; it was stopped. `words`: the status words then; `stopped`:
    /// whether it ended within the grace period after the stop.
    Stalled {
        quiet: Duration,
        words: Vec<u64>,
        stopped: bool,
    },
}

/// Reads of the status words per watchdog period: a stall is noticed within an eighth of the
/// period after it passes.
const READS_PER_PERIOD: u32 = 8;

/// Waits for the launch, stopping it when no warp's status word changes for `period`.
pub(crate) fn watch<W: Watched>(
    w: &mut W,
    warps: usize,
    period: Duration,
) -> Result<Outcome, W::Error> {
    let every =
        (period / READS_PER_PERIOD).clamp(Duration::from_millis(1), Duration::from_millis(250));
    let mut last = vec![0u64; warps];
    let mut now = vec![0u64; warps];
    let mut moved = Instant::now();
    loop {
        if w.wait(every)? {
            return Ok(Outcome::Ended);
        }
        w.read(&mut now)?;
        if now != last {
            std::mem::swap(&mut now, &mut last);
            moved = Instant::now();
        } else if moved.elapsed() >= period {
            let quiet = moved.elapsed();
            w.stop()?;
            let stopped = w.wait(grace(period))?;
            return Ok(Outcome::Stalled {
                quiet,
                words: now,
                stopped,
            });
        }
    }
}

/// How long a stopped launch may take to end: every warp sees the stop within a few scheduling
/// steps, and a task that checks `stop_requested` within its loop.
fn grace(period: Duration) -> Duration {
    period.max(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch simulated by a script of status words, one per read.
    struct Script {
        words: Vec<Vec<u64>>,
        reads: usize,
        stopped_at: Option<usize>,
        ends_after_stop: bool,
        ends_at: Option<usize>,
    }

    impl Watched for Script {
        type Error = std::convert::Infallible;
        fn wait(&mut self, pause: Duration) -> Result<bool, Self::Error> {
            if self.ends_at.is_some_and(|n| self.reads >= n)
                || (self.stopped_at.is_some() && self.ends_after_stop)
            {
                return Ok(true);
            }
            std::thread::sleep(pause.min(Duration::from_millis(2)));
            Ok(false)
        }
        fn read(&mut self, words: &mut [u64]) -> Result<(), Self::Error> {
            let i = self.reads.min(self.words.len() - 1);
            words.copy_from_slice(&self.words[i]);
            self.reads += 1;
            Ok(())
        }
        fn stop(&mut self) -> Result<(), Self::Error> {
            self.stopped_at = Some(self.reads);
            Ok(())
        }
    }

    #[test]
    fn a_launch_that_keeps_moving_is_never_stopped() {
        let mut s = Script {
            words: (0..200).map(|i| vec![i, 5]).collect(),
            reads: 0,
            stopped_at: None,
            ends_after_stop: true,
            ends_at: Some(200),
        };
        let out = watch(&mut s, 2, Duration::from_millis(8)).unwrap();
        assert!(matches!(out, Outcome::Ended), "{out:?}");
        assert_eq!(s.stopped_at, None);
    }

    #[test]
    fn a_launch_where_nothing_moves_is_stopped_with_the_last_words() {
        let mut s = Script {
            words: vec![vec![1, 2], vec![3, 2]],
            reads: 0,
            stopped_at: None,
            ends_after_stop: true,
            ends_at: None,
        };
        let period = Duration::from_millis(20);
        match watch(&mut s, 2, period).unwrap() {
            Outcome::Stalled {
                quiet,
                words,
                stopped,
            } => {
                assert!(quiet >= period);
                assert_eq!(words, vec![3, 2]);
                assert!(stopped);
            }
            other => panic!("expected a stall, got {other:?}"),
        }
        assert!(s.stopped_at.is_some());
    }

    #[test]
    fn a_stop_that_does_not_take_is_reported() {
        let mut s = Script {
            words: vec![vec![9]],
            reads: 0,
            stopped_at: None,
            ends_after_stop: false,
            ends_at: None,
        };
        let out = watch(&mut s, 1, Duration::from_millis(10)).unwrap();
        assert!(
            matches!(out, Outcome::Stalled { stopped: false, .. }),
            "{out:?}"
        );
    }
}
