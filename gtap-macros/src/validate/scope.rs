//! Rules 4 (the local part) and 6: destinations are locals, and a wait follows every spawn
//! while its destination is alive.
//!
//! The runtime writes a child's result through a raw pointer after the spawning poll has
//! returned. That is sound only if the destination stays at the same address in the task's
//! record until the child has written it:
//!
//! * if the destination's root is a parameter or a local of the function's top-level block, it
//!   lives until the task ends (and the runtime waits for all children before a task ends);
//!   a `taskwait!` anywhere later in the body makes rustc keep it in the future's state, where
//!   it never moves;
//! * if it is declared in a nested block, a `taskwait!` must be reached on every path from the
//!   spawn before that block ends, otherwise rustc may reuse its storage for other variables of
//!   later states. The walk checks for a statement that waits on every path, at the spawn's
//!   level or an enclosing one inside the declaring block, and that no `break`/`continue` in
//!   between jumps past it. (`return` and `?` are fine: the task ends and its record stays
//!   until its children are done.)
//!
//! A spawn inside a loop with a non-indexed destination declared outside the loop needs a wait
//! inside the loop too, or every iteration's child writes the same place.

use proc_macro2::Span;
use syn::{Ident, Pat};

use crate::diagnostics::{Diagnostics, with_help};
use crate::validate::facts::{Escape, StmtFacts};
use crate::validate::place::Place;

/// What kind of scope a level is.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum LevelKind {
    /// The function's parameters.
    Params,
    /// A block without special control flow (the body, `if` branches, plain blocks).
    Plain,
    /// A loop body (`loop`, `while`, `for`), with the loop's label.
    Loop(Option<String>),
    /// A labeled block `'a: { .. }`.
    Labeled(String),
    /// A `match` arm (its pattern's bindings; the body may or may not be a block).
    Arm,
    /// A closure's parameters.
    Closure,
}

/// One open scope.
struct Level {
    kind: LevelKind,
    facts: Vec<StmtFacts>,
    index: usize,
    bindings: Vec<Binding>,
}

/// A variable in scope, with an id unique in the body (shadowing creates a new one).
struct Binding {
    name: Ident,
    id: BindingId,
    /// Bound without `mut` (known for parameters, `let`s and `for` patterns): its value cannot
    /// change while it is in scope.
    fixed: bool,
}

/// Identifies one binding of a name, so that a mention can be told apart from a mention of a
/// variable that shadows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BindingId(u32);

#[cfg(test)]
impl BindingId {
    /// An id for unit tests.
    pub(crate) fn for_tests(n: u32) -> Self {
        Self(n)
    }
}

/// A spawn into a top-level local or a parameter, waiting for any later `taskwait!`.
struct Obligation {
    root: Ident,
    span: Span,
}

/// The open scopes at the walk's position, innermost last.
pub(crate) struct Scopes {
    levels: Vec<Level>,
    obligations: Vec<Obligation>,
    next_id: u32,
}

/// Depth of the function body's block (the parameters are depth 0).
const BODY: usize = 1;

impl Scopes {
    /// Scopes holding only the parameters.
    pub(crate) fn new(params: &[Pat]) -> Self {
        let mut scopes = Self {
            levels: vec![Level {
                kind: LevelKind::Params,
                facts: Vec::new(),
                index: 0,
                bindings: Vec::new(),
            }],
            obligations: Vec::new(),
            next_id: 0,
        };
        for p in params {
            scopes.bind(pattern_bindings(p));
            scopes.fix(p);
        }
        scopes
    }

    /// Opens a scope; `facts` describe its statements (empty for arms and closures).
    pub(crate) fn push(&mut self, kind: LevelKind, facts: Vec<StmtFacts>, bindings: Vec<Ident>) {
        self.levels.push(Level {
            kind,
            facts,
            index: 0,
            bindings: Vec::new(),
        });
        self.bind(bindings);
    }

    /// Closes the innermost scope.
    pub(crate) fn pop(&mut self) {
        self.levels.pop();
    }

    /// The walk is at statement `index` of the innermost scope.
    pub(crate) fn at(&mut self, index: usize) {
        if let Some(l) = self.levels.last_mut() {
            l.index = index;
        }
    }

    /// Declares bindings in the innermost scope.
    pub(crate) fn bind(&mut self, names: impl IntoIterator<Item = Ident>) {
        let Some(level) = self.levels.last_mut() else {
            return;
        };
        for name in names {
            level.bindings.push(Binding {
                name,
                id: BindingId(self.next_id),
                fixed: false,
            });
            self.next_id += 1;
        }
    }

    /// Marks the bindings `pat` just made in the innermost scope without `mut` as fixed.
    pub(crate) fn fix(&mut self, pat: &Pat) {
        use syn::visit::Visit;
        struct Immutable(Vec<Ident>);
        impl<'a> Visit<'a> for Immutable {
            fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
                if p.mutability.is_none() && p.by_ref.is_none() {
                    self.0.push(p.ident.clone());
                }
                syn::visit::visit_pat_ident(self, p);
            }
            fn visit_expr(&mut self, _: &'a syn::Expr) {}
        }
        let mut names = Immutable(Vec::new());
        names.visit_pat(pat);
        let Some(level) = self.levels.last_mut() else {
            return;
        };
        for name in names.0 {
            if let Some(b) = level.bindings.iter_mut().rev().find(|b| b.name == name) {
                b.fixed = true;
            }
        }
    }

    /// The binding of `name` if it is a fixed local or parameter (see [`Scopes::fix`]).
    pub(crate) fn fixed(&self, name: &Ident) -> Option<BindingId> {
        self.levels.iter().rev().find_map(|l| {
            l.bindings
                .iter()
                .rev()
                .find(|b| b.name == *name)
                .map(|b| b.fixed.then_some(b.id))
        })?
    }

    /// The binding a mention of `name` here refers to, if it is a local or parameter.
    pub(crate) fn resolve(&self, name: &str) -> Option<BindingId> {
        self.lookup(name).map(|(_, id)| id)
    }

    /// How many scopes are open (1: only the parameters).
    pub(crate) fn depth(&self) -> usize {
        self.levels.len()
    }

    /// Whether the walk is inside a closure.
    pub(crate) fn in_closure(&self) -> bool {
        self.levels.iter().any(|l| l.kind == LevelKind::Closure)
    }

    /// The depth of the scope declaring `name`, and the binding, if it is a local or parameter.
    fn lookup(&self, name: &str) -> Option<(usize, BindingId)> {
        self.levels.iter().enumerate().rev().find_map(|(depth, l)| {
            l.bindings
                .iter()
                .rev()
                .find(|b| b.name == name)
                .map(|b| (depth, b.id))
        })
    }

    /// A `taskwait!` was reached: every pending top-level obligation is met.
    pub(crate) fn waited(&mut self) {
        self.obligations.clear();
    }

    /// Checks a spawn into `place` made at the current position (rules 4 and 6); returns the
    /// destination's root binding if it is a local or parameter.
    pub(crate) fn spawn(
        &mut self,
        function: &str,
        place: &Place,
        dst: &syn::Expr,
        diags: &mut Diagnostics,
    ) -> Option<BindingId> {
        let Some((depth, id)) = self.lookup(&place.root.to_string()) else {
            diags.spanned(
                &place.root,
                with_help(
                    format!(
                        "`{}` is not a local variable or parameter of `{function}`: a child's \
                         result must land in this task's own record",
                        place.root
                    ),
                    "write into a local, and copy it to its final place after \
                     `gtap::taskwait!()`",
                ),
            );
            return None;
        };
        if !place.indexed {
            self.check_loop(depth, dst, diags);
        }
        if depth <= BODY {
            self.obligations.push(Obligation {
                root: place.root.clone(),
                span: span_of(dst),
            });
        } else {
            self.check_nested(depth, place, dst, diags);
        }
        Some(id)
    }

    /// Reports the spawns into top-level locals or parameters that no wait followed.
    pub(crate) fn finish(&mut self, diags: &mut Diagnostics) {
        for o in self.obligations.drain(..) {
            diags.at(o.span, no_wait_message(&o.root, false));
        }
    }

    /// A destination declared at `depth` (≥ 2): a wait on every path inside its block.
    fn check_nested(&self, depth: usize, place: &Place, dst: &syn::Expr, diags: &mut Diagnostics) {
        let mut region: Vec<(usize, &Escape)> = Vec::new();
        for w in (depth..self.levels.len()).rev() {
            let level = &self.levels[w];
            for facts in level.facts.iter().skip(level.index + 1) {
                if facts.waits {
                    region.extend(facts.escapes.iter().map(|e| (w, e)));
                    for (at, escape) in region {
                        if self.target(at, escape) <= w {
                            diags.at(
                                escape.span,
                                with_help(
                                    format!(
                                        "this `{}` leaves the scope of `{}` before the \
                                         `gtap::taskwait!()` that joins the child writing it",
                                        escape.keyword, place.root
                                    ),
                                    format!("wait before the `{}`", escape.keyword),
                                ),
                            );
                        }
                    }
                    return;
                }
                region.extend(facts.escapes.iter().map(|e| (w, e)));
            }
        }
        diags.spanned(dst, no_wait_message(&place.root, true));
    }

    /// The depth of the loop body or labeled block an escape found at depth `at` jumps out of;
    /// 0 when it is outside the function's blocks.
    fn target(&self, at: usize, escape: &Escape) -> usize {
        (0..=at)
            .rev()
            .find(|&d| match (&self.levels[d].kind, &escape.label) {
                (LevelKind::Loop(_), None) => true,
                (LevelKind::Loop(Some(l)) | LevelKind::Labeled(l), Some(want)) => l == want,
                _ => false,
            })
            .unwrap_or(0)
    }

    /// A non-indexed destination declared outside the innermost loop around the spawn needs a
    /// wait inside that loop, after the spawn.
    fn check_loop(&self, depth: usize, dst: &syn::Expr, diags: &mut Diagnostics) {
        let Some(lp) = (depth + 1..self.levels.len())
            .rev()
            .find(|&d| matches!(self.levels[d].kind, LevelKind::Loop(_)))
        else {
            return;
        };
        let waits = (lp..self.levels.len()).any(|d| {
            let level = &self.levels[d];
            level.facts.iter().skip(level.index + 1).any(|f| f.any_wait)
        });
        if !waits {
            diags.spanned(
                dst,
                with_help(
                    format!(
                        "every iteration of this loop spawns a child writing `{}` before a \
                         `gtap::taskwait!()` joins the previous one",
                        crate::names::snippet(dst)
                    ),
                    "give each child its own destination (`results[i]`), or wait inside the loop",
                ),
            );
        }
    }
}

/// Rule 6's message; `nested` when the destination is a local of a nested block.
fn no_wait_message(root: &Ident, nested: bool) -> String {
    let what = if nested {
        format!(
            "this spawn is not followed by a `gtap::taskwait!()` on every path in the scope of `{root}`"
        )
    } else {
        "no `gtap::taskwait!()` follows this spawn".to_string()
    };
    with_help(
        format!(
            "{what}: the child writes its result into `{root}` after this task is suspended, \
             so `{root}` must stay alive until a wait"
        ),
        format!(
            "add `gtap::taskwait!()` after the spawn, in the block that declares `{root}` (on \
             every path that stays in it)"
        ),
    )
}

fn span_of(tokens: &impl quote::ToTokens) -> Span {
    tokens
        .to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}

/// The names a pattern binds.
pub(crate) fn pattern_bindings(pat: &Pat) -> Vec<Ident> {
    use syn::visit::Visit;
    struct Names(Vec<Ident>);
    impl<'a> Visit<'a> for Names {
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            self.0.push(p.ident.clone());
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_pat_or(&mut self, p: &'a syn::PatOr) {
            // Every alternative binds the same names.
            if let Some(first) = p.cases.first() {
                self.visit_pat(first);
            }
        }
        fn visit_expr(&mut self, _: &'a syn::Expr) {}
    }
    let mut names = Names(Vec::new());
    names.visit_pat(pat);
    names.0
}

/// The bindings of the `let`s in an `if`/`while` condition (`if let P = e && let Q = f`).
pub(crate) fn condition_bindings(cond: &syn::Expr) -> Vec<Ident> {
    match cond {
        syn::Expr::Let(l) => pattern_bindings(&l.pat),
        syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
            let mut v = condition_bindings(&b.left);
            v.extend(condition_bindings(&b.right));
            v
        }
        syn::Expr::Paren(p) => condition_bindings(&p.expr),
        _ => Vec::new(),
    }
}
