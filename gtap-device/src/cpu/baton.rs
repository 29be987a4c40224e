//! The baton: the simulated GPU threads of block-mode launches run one at a time, handing a
//! baton on at every barrier.
//!
//! Each simulated thread is an OS thread (a block-mode task body is ordinary code that may call
//! `Block::sync` anywhere, so it needs a stack of its own). The state a block's threads share
//! (`LocalU32` cells, as on the GPU's shared memory) is plain memory on the CPU, so they must
//! not run at once: a thread runs only while it holds the baton, and hands it on when it
//! reaches a barrier or ends. The handoff goes through a mutex, so everything a thread wrote
//! happens before whatever the next holder does. In parallel mode each block has a baton of
//! its own (blocks run in parallel, as GPU blocks do, and meet only in device memory); in the
//! deterministic mode one baton serves every thread of the launch and a seeded generator picks
//! the next holder, so the whole interleaving is reproducible per seed.
//!
//! As on the GPU, a block has two barriers, the scheduler's ([`SCHEDULER`], `barrier.sync 0`)
//! and the helpers' ([`HELPERS`], `Block::sync`, `barrier.sync 1`), and a barrier waits only
//! for the members that are still there: one that ended (a GPU thread that exited) is not
//! waited for, and one retired from polls after a panic in its task (thread 0, which keeps
//! scheduling for the block, as the rest of its warp does on the GPU) is not waited for at the
//! helpers' barrier.

use std::sync::{Mutex, MutexGuard};
use std::thread::Thread;
use std::vec::Vec;

use crate::math::XorShift64;

/// No thread holds the baton (before the start).
const NOBODY: usize = usize::MAX;

/// The scheduler's barrier.
pub(crate) const SCHEDULER: usize = 0;
/// The block helpers' barrier.
pub(crate) const HELPERS: usize = 1;

struct State {
    /// The member that may run.
    holder: usize,
    /// Per member: the barrier it waits at.
    waiting: Vec<Option<usize>>,
    /// Per member: ended.
    done: Vec<bool>,
    /// Per member: retired from polls (see the module docs).
    retired: Vec<bool>,
    /// Per block and barrier: members arrived.
    arrived: Vec<[u32; 2]>,
    /// The members' OS threads, to wake the next holder.
    threads: Vec<Option<Thread>>,
    /// Picks the next holder at random (deterministic mode); `None`: round robin.
    rng: Option<XorShift64>,
}

/// A baton shared by `blocks × threads_per_block` members; member `m` is thread
/// `m % threads_per_block` of block `m / threads_per_block`.
pub(crate) struct Baton {
    state: Mutex<State>,
    threads_per_block: usize,
}

impl Baton {
    /// A baton for `blocks` blocks of `threads_per_block` threads; `seed` picks holders at
    /// random, otherwise in turn.
    pub(crate) fn new(blocks: usize, threads_per_block: usize, seed: Option<u64>) -> Self {
        let n = blocks * threads_per_block;
        Self {
            state: Mutex::new(State {
                holder: NOBODY,
                waiting: std::vec![None; n],
                done: std::vec![false; n],
                retired: std::vec![false; n],
                arrived: std::vec![[0; 2]; blocks],
                threads: std::vec![None; n],
                rng: seed.map(XorShift64::new),
            }),
            threads_per_block,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A member that panicked while holding the lock is a runtime bug; the state is still
        // consistent enough to let the others finish.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers the calling OS thread as member `m`.
    pub(crate) fn register(&self, m: usize) {
        self.lock().threads[m] = Some(std::thread::current());
    }

    /// Gives the baton to member 0 once every member registered (called by the launching
    /// thread, after starting them).
    pub(crate) fn start(&self) {
        loop {
            let mut st = self.lock();
            if st.threads.iter().all(Option::is_some) {
                st.holder = 0;
                wake(&st, 0);
                return;
            }
            drop(st);
            std::thread::yield_now();
        }
    }

    /// Waits until member `m` holds the baton.
    pub(crate) fn wait_turn(&self, m: usize) {
        while self.lock().holder != m {
            std::thread::park();
        }
    }

    /// Member `m` arrives at its block's barrier `id` ([`SCHEDULER`] or [`HELPERS`]): hands the
    /// baton on and waits until every member of its block that the barrier waits for has
    /// arrived and the baton is back.
    pub(crate) fn barrier(&self, m: usize, id: usize) {
        let mut st = self.lock();
        let block = m / self.threads_per_block;
        st.waiting[m] = Some(id);
        st.arrived[block][id] += 1;
        self.release(&mut st, block, id);
        self.pass(&mut st, m);
        drop(st);
        self.wait_turn(m);
    }

    /// Member `m` ends: hands the baton on for good. Its block's barriers stop waiting for it.
    pub(crate) fn finish(&self, m: usize) {
        let mut st = self.lock();
        st.done[m] = true;
        let block = m / self.threads_per_block;
        self.release(&mut st, block, SCHEDULER);
        self.release(&mut st, block, HELPERS);
        self.pass(&mut st, m);
    }

    /// Member `m` (which holds the baton) takes no part in polls any more: its block's helpers'
    /// barrier stops waiting for it.
    pub(crate) fn retire(&self, m: usize) {
        let mut st = self.lock();
        st.retired[m] = true;
        self.release(&mut st, m / self.threads_per_block, HELPERS);
    }

    /// Releases the members of `block` waiting at barrier `id` once every member it waits for
    /// has arrived.
    fn release(&self, st: &mut State, block: usize, id: usize) {
        let members = block * self.threads_per_block..(block + 1) * self.threads_per_block;
        let waited_for = |i: usize| !st.done[i] && (id == SCHEDULER || !st.retired[i]);
        let expected = members.clone().filter(|&i| waited_for(i)).count() as u32;
        if st.arrived[block][id] == 0 || st.arrived[block][id] < expected {
            return;
        }
        st.arrived[block][id] = 0;
        for i in members {
            if st.waiting[i] == Some(id) {
                st.waiting[i] = None;
            }
        }
    }

    /// Gives the baton to the next runnable member after `m` (or a random one).
    fn pass(&self, st: &mut State, m: usize) {
        let n = st.done.len();
        let runnable: Vec<usize> = (1..=n)
            .map(|k| (m + k) % n)
            .filter(|&i| !st.done[i] && st.waiting[i].is_none())
            .collect();
        let Some(&first) = runnable.first() else {
            st.holder = NOBODY;
            return;
        };
        let next = match &mut st.rng {
            Some(rng) => runnable[rng.below(runnable.len() as u64) as usize],
            None => first,
        };
        st.holder = next;
        wake(st, next);
    }
}

fn wake(st: &State, m: usize) {
    if let Some(t) = &st.threads[m] {
        t.unpark();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::vec::Vec;

    use super::*;

    /// Runs `blocks × threads` members, each doing `rounds` of (work, barrier); `work` gets
    /// (member, round). Returns when all have finished.
    fn run(
        blocks: usize,
        threads: usize,
        seed: Option<u64>,
        rounds: u32,
        work: &(dyn Fn(usize, u32) + Sync),
    ) {
        let baton = Baton::new(blocks, threads, seed);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..blocks * threads)
                .map(|m| {
                    let baton = &baton;
                    s.spawn(move || {
                        baton.register(m);
                        baton.wait_turn(m);
                        for r in 0..rounds {
                            work(m, r);
                            baton.barrier(m, SCHEDULER);
                        }
                        baton.finish(m);
                    })
                })
                .collect();
            baton.start();
            for h in handles {
                h.join().expect("member thread");
            }
        });
    }

    #[test]
    fn one_member_runs_at_a_time_and_a_barrier_waits_for_the_whole_block() {
        for seed in [None, Some(3)] {
            let running = AtomicU32::new(0);
            // Per block: members that finished each round's work.
            let done: Vec<AtomicU32> = (0..2).map(|_| AtomicU32::new(0)).collect();
            let threads = 5;
            run(2, threads, seed, 4, &|m, r| {
                assert_eq!(
                    running.fetch_add(1, Ordering::Relaxed),
                    0,
                    "two members ran at once"
                );
                let block = m / threads;
                // Past a barrier, every member of the block finished the rounds before.
                let before = done[block].load(Ordering::Relaxed);
                assert!(
                    before >= r * threads as u32,
                    "member {m} in round {r} saw {before}"
                );
                done[block].fetch_add(1, Ordering::Relaxed);
                running.fetch_sub(1, Ordering::Relaxed);
            });
            for d in &done {
                assert_eq!(d.load(Ordering::Relaxed), 4 * threads as u32);
            }
        }
    }

    #[test]
    fn barriers_stop_waiting_for_members_that_end_or_retire() {
        for seed in [None, Some(5)] {
            let baton = Baton::new(1, 3, seed);
            let passed = AtomicU32::new(0);
            std::thread::scope(|s| {
                let (baton, passed) = (&baton, &passed);
                let handles: Vec<_> = (0..3)
                    .map(|m| {
                        s.spawn(move || {
                            baton.register(m);
                            baton.wait_turn(m);
                            match m {
                                // Retires from the helpers' barrier, stays for the scheduler's.
                                0 => {
                                    baton.retire(m);
                                    baton.barrier(m, SCHEDULER);
                                }
                                // Helpers' barrier, then the scheduler's, with member 0.
                                1 => {
                                    baton.barrier(m, HELPERS);
                                    baton.barrier(m, SCHEDULER);
                                }
                                // Ends at once: no barrier waits for it.
                                _ => {}
                            }
                            passed.fetch_add(1, Ordering::Relaxed);
                            baton.finish(m);
                        })
                    })
                    .collect();
                baton.start();
                for h in handles {
                    h.join().expect("member thread");
                }
            });
            assert_eq!(passed.load(Ordering::Relaxed), 3);
        }
    }

    #[test]
    fn a_seeded_baton_hands_on_in_a_reproducible_order() {
        let order = |seed| {
            let log = std::sync::Mutex::new(Vec::new());
            run(2, 3, Some(seed), 3, &|m, _| log.lock().unwrap().push(m));
            log.into_inner().unwrap()
        };
        assert_eq!(order(7), order(7));
        assert!(
            (8..16).any(|s| order(s) != order(7)),
            "every seed gave one order"
        );
    }
}
