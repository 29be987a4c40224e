//! Rule 5: a child's destination is not used before the `taskwait!` that joins it.
//!
//! GTaP: "Do not use the assigned result before the corresponding taskwait completes." The walk
//! reports, in source order, every mention of a pending destination's root variable between
//! its spawn and the next `taskwait!` (identifiers inside other macros' arguments and in
//! format strings count). Mentions are resolved through the scopes: a `let`, closure parameter
//! or pattern that shadows the name refers to another variable, so the tracking ends there
//! (for as long as the shadowing binding is in scope). A mention of a part of a variable
//! (`pair.1`, `arr[0]`) conflicts only with destinations it may overlap, so reading `pair.1`
//! while a child writes `pair.0` is fine. Two spawns writing the same (or an overlapping)
//! place before a wait are reported too, where the macro can tell: the same fields, the same
//! literal indices (`r[0]` twice), the same variable index bound without `mut` (`r[k]` twice).
//! A `macro_rules!` defined in the body counts as mentioning, at each of its invocations, the
//! variables its expansion names.

use crate::diagnostics::{Diagnostics, with_help};
use crate::names::snippet;
use crate::validate::place::{Overlap, Place};
use crate::validate::scope::BindingId;
use proc_macro2::Span;

/// A spawned child whose destination has not been joined yet.
struct Pending {
    root: BindingId,
    place: Place,
    text: String,
    reported: bool,
}

/// The children spawned since the last wait, in source order.
#[derive(Default)]
pub(crate) struct Order {
    pending: Vec<Pending>,
}

impl Order {
    /// The variable `name`, bound as `binding`, is mentioned at `span`: as a whole, or only
    /// the part `place` of it (`pair.1`), which conflicts only with destinations it may
    /// overlap.
    pub(crate) fn mention(
        &mut self,
        binding: BindingId,
        name: &str,
        place: Option<&Place>,
        span: Span,
        diags: &mut Diagnostics,
    ) {
        if let Some(p) = self.pending.iter_mut().find(|p| {
            !p.reported
                && p.root == binding
                && place.is_none_or(|m| p.place.overlap(m) != Overlap::Disjoint)
        }) {
            p.reported = true;
            diags.at(
                span,
                with_help(
                    format!(
                        "`{name}` is used before the `gtap::taskwait!()` that joins the child \
                         writing `{}`",
                        p.text
                    ),
                    "move this use after `gtap::taskwait!()`: until then the child may still be \
                     writing it",
                ),
            );
        }
    }

    /// A child writing `place` (spelled `dst`, rooted at `root`) is spawned.
    pub(crate) fn spawn(
        &mut self,
        root: BindingId,
        place: Place,
        dst: &syn::Expr,
        diags: &mut Diagnostics,
    ) {
        if let Some(earlier) = self
            .pending
            .iter()
            .find(|p| p.root == root && p.place.overlap(&place) == Overlap::Overlapping)
        {
            let text = snippet(dst);
            let message = if text == earlier.text {
                format!(
                    "`{text}` is already the destination of a child spawned since the last \
                     wait: both children would write it"
                )
            } else {
                format!(
                    "`{text}` overlaps `{}`, the destination of a child spawned since the last \
                     wait: both children would write it",
                    earlier.text
                )
            };
            diags.spanned(
                dst,
                with_help(
                    message,
                    "give each child its own destination (`a`, `b` or `results[i]`), or put a \
                     `gtap::taskwait!()` in between",
                ),
            );
        }
        self.pending.push(Pending {
            root,
            place,
            text: snippet(dst),
            reported: false,
        });
    }

    /// A `taskwait!`: every pending child is joined.
    pub(crate) fn wait(&mut self) {
        self.pending.clear();
    }
}
