//! What each warp is doing, published for the host's watchdog.
//!
//! Every warp owns one [`WarpStatus`] word in the runtime's region ([`Layout::status`]): its
//! progress (scheduling steps that ran tasks) and its [`WarpState`]. The leader lane writes it
//! where the scheduler already reads the stop word (every `STOP_CHECK_STEPS` steps), after a
//! steal, when the warp finds nothing to run, and when it leaves the scheduler, so a busy warp
//! pays one relaxed store per `STOP_CHECK_STEPS` steps and nothing else. The host reads the
//! words while the kernel runs (the CPU executor directly, the GPU backend by a copy on a
//! second stream); when no word changes for the configured time, it writes
//! [`STOPPED_BY_WATCHDOG`] into the stop word ([`Layout::stop_word`]) and reports every warp's
//! last word. A warp stuck inside a task keeps the word it published before: `Working`, with a
//! progress that no longer moves.
//!
//! [`Layout::status`]: super::Layout::status
//! [`Layout::stop_word`]: super::Layout::stop_word

use core::sync::atomic::Ordering;

use crate::arch::AtomicU64;

/// The stop word's value when the host's watchdog stopped the launch
/// ([`Layout::stop_word`](super::Layout::stop_word)). Only the host writes it (the GPU backend
/// by a copy into the region while the kernel runs); workers treat it as an abort.
pub const STOPPED_BY_WATCHDOG: u32 = 3;

/// What a warp was doing when it last published its [`WarpStatus`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WarpState {
    /// Has not reached its first stop check (the zeroed word).
    Starting = 0,
    /// Holds a batch and is running it: polling its tasks, folding, joining.
    Working = 1,
    /// Had no batch: looking in its own queues and stealing from other warps.
    Searching = 2,
    /// Left the scheduler (the launch finished or was stopped).
    Stopped = 3,
}

impl WarpState {
    /// Decodes a published state; `None` for a value no version of the runtime writes.
    pub fn from_raw(raw: u32) -> Option<Self> {
        Some(match raw {
            0 => Self::Starting,
            1 => Self::Working,
            2 => Self::Searching,
            3 => Self::Stopped,
            _ => return None,
        })
    }
}

/// One warp's published status: progress in the low half, [`WarpState`] in the high half, one
/// 64-bit word so that a reader sees both from the same moment.
#[repr(C)]
pub struct WarpStatus(AtomicU64);

impl WarpStatus {
    /// Packs a state and a progress count into the word the host reads.
    pub const fn word(state: WarpState, progress: u32) -> u64 {
        ((state as u64) << 32) | progress as u64
    }

    /// Unpacks a word read by the host: the raw state (see [`WarpState::from_raw`]) and the
    /// progress.
    pub const fn unpack(word: u64) -> (u32, u32) {
        ((word >> 32) as u32, word as u32)
    }

    /// Reads the word (host side of the CPU executor, which shares the region).
    pub fn load(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Publishes the warp's state and progress (steps that ran tasks, wrapping). Relaxed: the
    /// host only compares successive values, and nothing else is read through this word. Not
    /// modelled under loom: no one reads the word there, and every store would multiply the
    /// interleavings the models explore without changing an outcome.
    #[inline(always)]
    pub(crate) fn publish(&self, state: WarpState, progress: u32) {
        #[cfg(not(loom))]
        self.0.store(Self::word(state, progress), Ordering::Relaxed);
        #[cfg(loom)]
        let _ = (state, progress);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const STATES: [WarpState; 4] = [
        WarpState::Starting,
        WarpState::Working,
        WarpState::Searching,
        WarpState::Stopped,
    ];

    #[test]
    fn a_word_unpacks_to_its_state_and_progress() {
        for state in STATES {
            for progress in [0, 1, 0x8000_0000, u32::MAX] {
                let (raw, got) = WarpStatus::unpack(WarpStatus::word(state, progress));
                assert_eq!(WarpState::from_raw(raw), Some(state));
                assert_eq!(got, progress, "{state:?}");
            }
        }
        assert_eq!(WarpState::from_raw(4), None);
    }

    #[test]
    fn a_zeroed_word_reads_as_starting() {
        // The region is zeroed before a launch: a warp that never published is `Starting`.
        // SAFETY: an atomic integer, for which all-zero bytes are valid.
        let zeroed: WarpStatus = unsafe { core::mem::zeroed() };
        assert_eq!(zeroed.load(), WarpStatus::word(WarpState::Starting, 0));
        assert_eq!(core::mem::size_of::<WarpStatus>(), 8);
    }

    #[test]
    fn a_published_status_is_what_the_host_loads() {
        // SAFETY: as above.
        let status: WarpStatus = unsafe { core::mem::zeroed() };
        status.publish(WarpState::Searching, 77);
        assert_eq!(
            WarpStatus::unpack(status.load()),
            (WarpState::Searching as u32, 77)
        );
    }
}
