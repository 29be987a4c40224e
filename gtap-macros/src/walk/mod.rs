//! The body walk: one pass over a task function's or kernel's body, in source order, that
//! checks the body rules and rewrites `task!`, `taskwait!` and `entry!` in place.
//!
//! The walk keeps what the rules need at each point: the open scopes and their bindings
//! ([`Scopes`]), the children spawned since the last wait ([`Order`]), and whether it is inside
//! a closure, an `async` block or a nested item. Each body macro is checked and replaced by its
//! expansion from [`crate::expand::lower`]; a macro with an error is replaced by a neutral
//! expression so that its error is the only one reported.

mod body_macros;
mod mentions;
#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprMacro, Ident, Item, Macro, Pat, Stmt, Token};

use crate::diagnostics::{Diagnostics, with_help};
use crate::expand::lower::Site;
use crate::names::{GtapMacro, is_gtap_attribute};
use crate::parse::FnKind;
use crate::validate::direct::Known;
use crate::validate::facts::StmtFacts;
use crate::validate::order::Order;
use crate::validate::scope::{BindingId, LevelKind, Scopes, condition_bindings, pattern_bindings};

/// What the walk needs to know about the function whose body it walks.
pub(crate) struct Body<'a> {
    /// Task function or kernel.
    pub(crate) kind: FnKind,
    /// The function's name.
    pub(crate) name: &'a Ident,
    /// Its parameter patterns.
    pub(crate) params: &'a [Pat],
    /// Task functions known by name in this body.
    pub(crate) known: &'a Known,
    /// The kernel's `&LaunchParams` variable (unused for task functions).
    pub(crate) launch: &'a Ident,
    /// Block mode: `task!`, `taskwait!` and `entry!` lower to their block-mode forms.
    pub(crate) block_mode: bool,
    /// A kernel's `queues = N` (0 without it), which `entry!` passes to the runtime.
    pub(crate) queues: u32,
    /// A task function's launch-context type (`()` without a `gtap::Context` parameter), which
    /// the children it spawns must run in.
    pub(crate) context: &'a TokenStream,
}

/// Checks `block`, the body of `body`, and lowers its gtap macros in place. Returns whether the
/// body has a `taskwait!`.
pub(crate) fn walk(body: &Body, block: &mut Block, diags: &mut Diagnostics) -> bool {
    let function = syn::ext::IdentExt::unraw(body.name).to_string();
    let mut walker = Walker {
        body,
        function,
        diags,
        scopes: Scopes::new(body.params),
        order: Order::default(),
        asyncs: 0,
        items: 0,
        entries: 0,
        waits: 0,
        macros: Vec::new(),
    };
    walker.block(block, LevelKind::Plain, Vec::new());
    walker.scopes.finish(walker.diags);
    if body.kind == FnKind::Kernel && walker.entries == 0 {
        walker.diags.spanned(
            body.name,
            with_help(
                format!(
                    "kernel `{}` has no `gtap::entry!`: a kernel starts one root task",
                    walker.function
                ),
                "end the body with `gtap::entry!(f(..))`, where `f` is a `#[gtap::function]`",
            ),
        );
    }
    walker.waits > 0
}

/// Where a body macro stands in a kernel.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    /// A statement of the kernel body, its tail expression, a top-level `let`'s initialiser or
    /// the right side of a top-level assignment: every thread reaches it.
    TopLevel,
    /// Anywhere else.
    Nested,
}

struct Walker<'a, 'd> {
    body: &'a Body<'a>,
    function: String,
    diags: &'d mut Diagnostics,
    scopes: Scopes,
    order: Order,
    /// Depth of `async` blocks and async closures.
    asyncs: usize,
    /// Depth of nested items (other functions: the rules of this body do not apply).
    items: usize,
    /// `entry!`s seen (kernels).
    entries: usize,
    /// `taskwait!`s seen.
    waits: usize,
    /// The `macro_rules!` defined in the body so far, with the variables their expansions
    /// name (resolved where each is defined).
    macros: Vec<LocalMacro>,
}

/// A `macro_rules!` defined in a body.
struct LocalMacro {
    name: Ident,
    mentions: Vec<(BindingId, String)>,
}

impl Walker<'_, '_> {
    /// Whether rule 5 applies here.
    fn tracks_reads(&self) -> bool {
        self.body.kind == FnKind::Task && self.items == 0
    }

    fn site(&self, mac: &Macro) -> Site<'_> {
        Site {
            function: &self.function,
            span: mac.bang_token.span,
        }
    }

    /// Walks a block as a new scope of `kind` whose first bindings are `bindings`.
    fn block(&mut self, block: &mut Block, kind: LevelKind, bindings: Vec<Ident>) {
        self.block_binding(block, kind, bindings, None);
    }

    /// [`Walker::block`], the first bindings made by `pattern` when given (a `for` loop's).
    fn block_binding(
        &mut self,
        block: &mut Block,
        kind: LevelKind,
        bindings: Vec<Ident>,
        pattern: Option<&Pat>,
    ) {
        let facts = if self.items == 0 {
            block.stmts.iter().map(StmtFacts::of).collect()
        } else {
            Vec::new()
        };
        let kernel_top =
            self.body.kind == FnKind::Kernel && self.scopes.depth() == 1 && self.items == 0;
        self.scopes.push(kind, facts, bindings);
        if let Some(pattern) = pattern {
            self.scopes.fix(pattern);
        }
        let last = block.stmts.len().saturating_sub(1);
        for (i, stmt) in block.stmts.iter_mut().enumerate() {
            self.scopes.at(i);
            normalize(stmt, i == last);
            if !(kernel_top && self.top_level_entry(stmt)) {
                self.visit_stmt_mut(stmt);
            }
        }
        self.scopes.pop();
    }

    /// Handles a kernel statement that is an `entry!` in a top-level position.
    fn top_level_entry(&mut self, stmt: &mut Stmt) -> bool {
        match stmt {
            Stmt::Expr(e, _) if is_entry(e) => {
                self.body_macro(e, Position::TopLevel);
                true
            }
            Stmt::Expr(Expr::Assign(a), _) if is_entry(&a.right) => {
                self.visit_expr_mut(&mut a.left);
                self.body_macro(&mut a.right, Position::TopLevel);
                true
            }
            Stmt::Local(local) => match &mut local.init {
                Some(init) if init.diverge.is_none() && is_entry(&init.expr) => {
                    self.body_macro(&mut init.expr, Position::TopLevel);
                    self.scopes.bind(pattern_bindings(&local.pat));
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }
}

fn is_entry(expr: &Expr) -> bool {
    matches!(expr, Expr::Macro(m) if GtapMacro::of(&m.mac.path) == Some(GtapMacro::Entry))
}

/// Turns a gtap macro statement into an expression statement, so that every body macro is
/// lowered in [`VisitMut::visit_expr_mut`]. A brace-delimited one without `;` gets one unless
/// it is the block's tail.
fn normalize(stmt: &mut Stmt, last: bool) {
    let Stmt::Macro(m) = stmt else {
        return;
    };
    if GtapMacro::of(&m.mac.path).is_none() {
        return;
    }
    let semi = match m.semi_token {
        Some(s) => Some(s),
        None if last => None,
        None => Some(<Token![;]>::default()),
    };
    let expr = Expr::Macro(ExprMacro {
        attrs: std::mem::take(&mut m.attrs),
        mac: m.mac.clone(),
    });
    *stmt = Stmt::Expr(expr, semi);
}

impl VisitMut for Walker<'_, '_> {
    fn visit_block_mut(&mut self, block: &mut Block) {
        self.block(block, LevelKind::Plain, Vec::new());
    }

    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        match stmt {
            Stmt::Local(local) => {
                if let Some(init) = &mut local.init {
                    self.visit_expr_mut(&mut init.expr);
                    if let Some((_, diverge)) = &mut init.diverge {
                        self.visit_expr_mut(diverge);
                    }
                }
                self.scopes.bind(pattern_bindings(&local.pat));
                self.scopes.fix(&local.pat);
            }
            Stmt::Macro(m) => self.foreign_macro(&m.mac),
            Stmt::Item(item) => self.visit_item_mut(item),
            Stmt::Expr(e, _) => self.visit_expr_mut(e),
        }
    }

    fn visit_item_mut(&mut self, item: &mut Item) {
        if let Item::Fn(f) = item
            && f.attrs.iter().any(is_gtap_attribute)
        {
            // Lowered by its own expansion.
            return;
        }
        if let Item::Macro(m) = item {
            self.define_macro(m);
        }
        self.items += 1;
        visit_mut::visit_item_mut(self, item);
        self.items -= 1;
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        match expr {
            Expr::Macro(m) => {
                if GtapMacro::of(&m.mac.path).is_some() {
                    self.body_macro(expr, Position::Nested);
                } else {
                    self.foreign_macro(&m.mac);
                }
                return;
            }
            Expr::Call(_) if self.items == 0 && self.body.known.call(expr).is_some() => {
                self.direct_call(expr);
                return;
            }
            Expr::Path(p) if self.tracks_reads() && p.qself.is_none() => {
                if let Some(ident) = p.path.get_ident() {
                    self.mention(&ident.to_string(), ident.span());
                }
            }
            Expr::Field(_) | Expr::Index(_) if self.tracks_reads() => {
                if let Ok(place) = crate::validate::place::place(expr) {
                    self.mention_part(place);
                    self.visit_indices(expr);
                    return;
                }
            }
            _ => {}
        }
        visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_expr_closure_mut(&mut self, closure: &mut syn::ExprClosure) {
        let bindings = closure.inputs.iter().flat_map(pattern_bindings).collect();
        let is_async = usize::from(closure.asyncness.is_some());
        self.asyncs += is_async;
        self.scopes.push(LevelKind::Closure, Vec::new(), bindings);
        self.visit_expr_mut(&mut closure.body);
        self.scopes.pop();
        self.asyncs -= is_async;
    }

    fn visit_expr_async_mut(&mut self, block: &mut syn::ExprAsync) {
        self.asyncs += 1;
        self.block(&mut block.block, LevelKind::Plain, Vec::new());
        self.asyncs -= 1;
    }

    fn visit_expr_await_mut(&mut self, expr: &mut syn::ExprAwait) {
        if self.tracks_reads() {
            self.diags.spanned(
                expr.await_token,
                with_help(
                    "`.await` cannot be used in a task function: a task suspends only at \
                     `gtap::taskwait!()`",
                    "spawn the work as a child with `gtap::task!` and join it with \
                     `gtap::taskwait!()`",
                ),
            );
        }
        self.visit_expr_mut(&mut expr.base);
    }

    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut f.expr);
        let label = f.label.as_ref().map(|l| l.name.ident.to_string());
        self.block_binding(
            &mut f.body,
            LevelKind::Loop(label),
            pattern_bindings(&f.pat),
            Some(&f.pat),
        );
    }

    fn visit_expr_while_mut(&mut self, w: &mut syn::ExprWhile) {
        self.visit_expr_mut(&mut w.cond);
        let label = w.label.as_ref().map(|l| l.name.ident.to_string());
        let bindings = condition_bindings(&w.cond);
        self.block(&mut w.body, LevelKind::Loop(label), bindings);
    }

    fn visit_expr_loop_mut(&mut self, l: &mut syn::ExprLoop) {
        let label = l.label.as_ref().map(|l| l.name.ident.to_string());
        self.block(&mut l.body, LevelKind::Loop(label), Vec::new());
    }

    fn visit_expr_if_mut(&mut self, i: &mut syn::ExprIf) {
        self.visit_expr_mut(&mut i.cond);
        let bindings = condition_bindings(&i.cond);
        self.block(&mut i.then_branch, LevelKind::Plain, bindings);
        if let Some((_, e)) = &mut i.else_branch {
            self.visit_expr_mut(e);
        }
    }

    fn visit_expr_match_mut(&mut self, m: &mut syn::ExprMatch) {
        self.visit_expr_mut(&mut m.expr);
        for arm in &mut m.arms {
            self.scopes
                .push(LevelKind::Arm, Vec::new(), pattern_bindings(&arm.pat));
            if let Some((_, guard)) = &mut arm.guard {
                self.visit_expr_mut(guard);
            }
            self.visit_expr_mut(&mut arm.body);
            self.scopes.pop();
        }
    }

    fn visit_expr_block_mut(&mut self, b: &mut syn::ExprBlock) {
        let kind = match &b.label {
            Some(l) => LevelKind::Labeled(l.name.ident.to_string()),
            None => LevelKind::Plain,
        };
        self.block(&mut b.block, kind, Vec::new());
    }
}
