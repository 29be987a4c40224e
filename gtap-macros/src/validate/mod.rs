//! Validation: every rule the macros enforce at compile time, one module per concept.
//!
//! | rule | module |
//! |---|---|
//! | 1. `task!`/`taskwait!` only in task functions, `entry!` only in kernels | [`crate::walk`], standalone macros in the crate root |
//! | 2. no direct calls of task functions | [`direct`] (and the direct-call trap) |
//! | 3. `task!`/`entry!` take a direct call by path | [`call`] |
//! | 4. destinations are places rooted at a local | [`place`], [`scope`] |
//! | 5. no use of a destination before its wait | [`order`] |
//! | 6. a wait follows every spawn in the destination's scope | [`scope`], [`facts`] |
//! | 7. queue indices are integers | [`call::check_queue`] |
//! | 8. no waits in closures, async blocks or nested items; no `.await` | [`crate::walk`] |
//! | 9. signatures | [`signature`] |
//! | 10. one top-level `entry!` per kernel | [`crate::walk`] |

pub(crate) mod call;
pub(crate) mod direct;
pub(crate) mod facts;
pub(crate) mod order;
pub(crate) mod place;
pub(crate) mod scope;
pub(crate) mod signature;
