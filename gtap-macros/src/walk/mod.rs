//! The body walk: one pass over a task function's or kernel's body, in source order, that
//! checks the body rules and rewrites `task!`, `taskwait!` and `entry!` in place.
//!
//! The walk keeps what the rules need at each point: the open scopes and their bindings
//! ([`Scopes`]), the children spawned since the last wait ([`Order`]), and whether it is inside
//! a closure, an `async` block or a nested item. Each body macro is checked and replaced by its
//! expansion from [`crate::expand::lower`]; a macro with an error is replaced by a neutral
//! expression so that its error is the only one reported.

mod mentions;

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprCall, ExprMacro, Ident, Item, Macro, Pat, Stmt, Token};

use crate::diagnostics::{Diagnostics, with_help};
use crate::expand::lower::{self, Site};
use crate::names::{GtapMacro, is_gtap_attribute};
use crate::parse::{EntryInput, FnKind, TaskInput, WaitInput};
use crate::validate::call;
use crate::validate::direct::{Known, direct_call_error};
use crate::validate::facts::StmtFacts;
use crate::validate::order::Order;
use crate::validate::place;
use crate::validate::scope::{LevelKind, Scopes, condition_bindings, pattern_bindings};

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
}

/// Checks `block`, the body of `body`, and lowers its gtap macros in place.
pub(crate) fn walk(body: &Body, block: &mut Block, diags: &mut Diagnostics) {
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
}

/// A construct inside a body that a wait cannot suspend.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A closure.
    Closure,
    /// An `async` block or async closure.
    Async,
    /// A nested item (another function).
    Item,
}

impl Context {
    /// "a closure", "the closure" (for messages).
    fn phrases(self) -> (&'static str, &'static str) {
        match self {
            Self::Closure => ("a closure", "the closure"),
            Self::Async => ("an `async` block", "the `async` block"),
            Self::Item => ("a nested item", "the nested item"),
        }
    }
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
        let facts = if self.items == 0 {
            block.stmts.iter().map(StmtFacts::of).collect()
        } else {
            Vec::new()
        };
        let kernel_top =
            self.body.kind == FnKind::Kernel && self.scopes.depth() == 1 && self.items == 0;
        self.scopes.push(kind, facts, bindings);
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

    /// Checks and lowers the gtap macro `expr`.
    fn body_macro(&mut self, expr: &mut Expr, position: Position) {
        let Expr::Macro(ExprMacro { mac, .. }) = expr else {
            return;
        };
        let Some(which) = GtapMacro::of(&mac.path) else {
            return;
        };
        let lowered = if self.items > 0 {
            self.misplaced(mac, which, Context::Item);
            None
        } else {
            match (self.body.kind, which) {
                (FnKind::Task, GtapMacro::Entry) => {
                    self.wrong_function(mac, which);
                    None
                }
                (FnKind::Kernel, GtapMacro::Task | GtapMacro::Wait) => {
                    self.wrong_function(mac, which);
                    None
                }
                (FnKind::Task, _) => match self.suspend_context() {
                    Some(context) => {
                        self.misplaced(mac, which, context);
                        if which == GtapMacro::Wait {
                            self.joined();
                        }
                        None
                    }
                    None if which == GtapMacro::Task => self.spawn(mac),
                    None => self.wait(mac),
                },
                (FnKind::Kernel, GtapMacro::Entry) => self.entry(mac, position),
            }
        };
        let tokens = lowered.unwrap_or_else(|| lower::neutral(which == GtapMacro::Entry));
        *expr = Expr::Verbatim(lower::through_import(&mac.path, tokens));
    }

    /// The construct around the walk's position that cannot be suspended, if any.
    fn suspend_context(&self) -> Option<Context> {
        if self.scopes.in_closure() {
            Some(Context::Closure)
        } else if self.asyncs > 0 {
            Some(Context::Async)
        } else {
            None
        }
    }

    /// Rule 8 (and rule 10 for `entry!`): a body macro where it cannot work.
    fn misplaced(&mut self, mac: &Macro, which: GtapMacro, context: Context) {
        let name = which.display();
        let (a, the) = context.phrases();
        let (message, help) = match which {
            GtapMacro::Entry => (
                format!("`{name}` cannot be used inside {a}"),
                "write it at the top level of the kernel body".to_string(),
            ),
            _ if context == Context::Item => (
                format!(
                    "`{name}` cannot be used inside a nested item: it belongs to the task \
                     function `{}`, not to the item",
                    self.function
                ),
                "mark the nested function `#[gtap::function]` and spawn it, or move this code \
                 into the task function's body"
                    .to_string(),
            ),
            _ => (
                format!(
                    "`{name}` cannot be used inside {a}: only the task function's own body can \
                     be suspended at a wait, and children are joined there"
                ),
                format!(
                    "move it out of {the}, into the body of `{}` (loops, `if` and `match` are \
                     fine)",
                    self.function
                ),
            ),
        };
        self.diags.spanned(mac, with_help(message, help));
    }

    /// Rule 1 inside an attribute: the macro belongs to the other kind of function.
    fn wrong_function(&mut self, mac: &Macro, which: GtapMacro) {
        let name = which.display();
        let (message, help) = match which {
            GtapMacro::Entry => (
                format!("`{name}` can only be used in a `#[gtap::kernel]`"),
                "inside a task function, spawn children with `gtap::task!(x = f(..))`",
            ),
            _ => (
                format!("`{name}` can only be used in a `#[gtap::function]`"),
                "a kernel starts one root task with `gtap::entry!(f(..))`; spawn and wait for \
                 children inside task functions",
            ),
        };
        self.diags.spanned(mac, with_help(message, help));
    }

    /// `task!`: checks and lowers a spawn.
    fn spawn(&mut self, mac: &Macro) -> Option<TokenStream> {
        let input = mac
            .parse_body::<TaskInput>()
            .map_err(|e| self.diags.push(e))
            .ok()?;
        let mut spawn = call::spawn(input, self.body.known, self.diags)?;
        let place = match &spawn.dst {
            Some(dst) => Some(place::place(dst).map_err(|e| self.diags.push(e)).ok()?),
            None => None,
        };
        // The spawn evaluates these before the child exists.
        if let Some(q) = &mut spawn.queue {
            self.visit_expr_mut(q);
        }
        if let Some(dst) = &mut spawn.dst {
            self.visit_indices(dst);
        }
        for arg in &mut spawn.call.args {
            self.visit_expr_mut(arg);
        }
        if let (Some(place), Some(dst)) = (place, &spawn.dst) {
            self.scopes.spawn(&self.function, &place, dst, self.diags);
            self.order.spawn(place, dst, self.diags);
        }
        Some(lower::spawn(&self.site(mac), &spawn))
    }

    /// Visits the index expressions of a destination place (the root is written, not read).
    fn visit_indices(&mut self, dst: &mut Expr) {
        match dst {
            Expr::Index(i) => {
                self.visit_indices(&mut i.expr);
                self.visit_expr_mut(&mut i.index);
            }
            Expr::Field(f) => self.visit_indices(&mut f.base),
            Expr::Paren(p) => self.visit_indices(&mut p.expr),
            _ => {}
        }
    }

    /// `taskwait!`: checks and lowers a wait.
    fn wait(&mut self, mac: &Macro) -> Option<TokenStream> {
        self.joined();
        let input = mac
            .parse_body::<WaitInput>()
            .map_err(|e| self.diags.push(e))
            .ok()?;
        let mut queue = input.queue.map(|q| q.index);
        if let Some(q) = &mut queue {
            if !call::check_queue(q, self.diags) {
                return None;
            }
            self.visit_expr_mut(q);
        }
        Some(lower::wait(&self.site(mac), queue.as_ref()))
    }

    /// A wait was written: the children spawned so far are joined.
    fn joined(&mut self) {
        self.order.wait();
        self.scopes.waited();
    }

    /// `entry!` in a kernel: checks and lowers the root spawn.
    fn entry(&mut self, mac: &Macro, position: Position) -> Option<TokenStream> {
        self.entries += 1;
        if self.entries > 1 {
            self.diags.spanned(
                mac,
                with_help(
                    "a kernel has exactly one `gtap::entry!`: this is a second one",
                    "start one root task, and spawn the rest from it with `gtap::task!`",
                ),
            );
        }
        if position == Position::Nested {
            self.diags.spanned(
                mac,
                with_help(
                    "`gtap::entry!` must be at the top level of the kernel body: every thread \
                     of the grid must reach it",
                    "move it out of the `if`, loop, closure or block: write \
                     `gtap::entry!(f(..))` as the body's last expression, `let r = \
                     gtap::entry!(f(..));` or `gtap::entry!(r = f(..));`",
                ),
            );
        }
        let input = mac
            .parse_body::<EntryInput>()
            .map_err(|e| self.diags.push(e))
            .ok()?;
        let mut entry = call::entry(input, self.body.known, self.diags)?;
        if let Some(dst) = &mut entry.dst {
            self.visit_expr_mut(dst);
        }
        for arg in &mut entry.call.args {
            self.visit_expr_mut(arg);
        }
        Some(lower::entry(&self.site(mac), self.body.launch, &entry))
    }

    /// Another macro's arguments: only the variables it mentions matter (rule 5).
    fn foreign_macro(&mut self, mac: &Macro) {
        if self.tracks_reads() {
            for (name, span) in mentions::variables(mac.tokens.clone()) {
                self.order.mention(&name, span, self.diags);
            }
        }
    }

    /// Rule 2: a direct call of a known task function. Reported, then replaced by a diverging
    /// expression of the call's type so that the direct-call trap does not report it again.
    fn direct_call(&mut self, expr: &mut Expr) {
        let Expr::Call(call) = expr else {
            return;
        };
        self.diags.push(direct_call_error(self.body.kind, call));
        for arg in &mut call.args {
            self.visit_expr_mut(arg);
        }
        *expr = Expr::Verbatim(neutral_call(call));
    }
}

/// `{ let _ = (ARGS,); let r: <PATH as TaskFunction>::Output = loop {}; r }`.
fn neutral_call(call: &ExprCall) -> TokenStream {
    let func = &call.func;
    let args = call.args.iter();
    quote_spanned! {call.span()=>
        {
            let _ = (#(#args,)*);
            let __gtap_result: <#func as ::gtap::__private::TaskFunction>::Output = loop {};
            __gtap_result
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
                let names = pattern_bindings(&local.pat);
                for name in &names {
                    self.order.rebind(name);
                }
                self.scopes.bind(names);
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
                    self.order
                        .mention(&ident.to_string(), ident.span(), self.diags);
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
        self.block(
            &mut f.body,
            LevelKind::Loop(label),
            pattern_bindings(&f.pat),
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

#[cfg(test)]
mod tests {
    use super::*;
    use quote::{ToTokens, quote};

    fn lowered(body: TokenStream) -> (String, Option<String>) {
        let mut block: Block = syn::parse2(quote!({ #body })).unwrap();
        let name: Ident = syn::parse_quote!(f);
        let params: Vec<Pat> = vec![syn::parse_quote!(n)];
        let known = Known::collect(FnKind::Task, &name, &block);
        let launch: Ident = syn::parse_quote!(__gtap_launch);
        let body = Body {
            kind: FnKind::Task,
            name: &name,
            params: &params,
            known: &known,
            launch: &launch,
        };
        let mut diags = Diagnostics::new();
        walk(&body, &mut block, &mut diags);
        let errors = diags.into_error().map(|e| {
            e.into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n---\n")
        });
        (block.to_token_stream().to_string(), errors)
    }

    #[test]
    fn accepts_fib() {
        let (_, errors) = lowered(quote! {
            if n < 2 { return n as u64; }
            let (mut a, mut b) = (0, 0);
            gtap::task!(a = f(n - 1));
            gtap::task!(queue(1), b = f(n - 2));
            gtap::taskwait!();
            a + b
        });
        assert_eq!(errors, None);
    }

    #[test]
    fn read_before_wait() {
        let (_, errors) = lowered(quote! {
            let mut a = 0;
            gtap::task!(a = f(n - 1));
            let c = a + 1;
            gtap::taskwait!();
            c
        });
        assert!(errors.unwrap().contains("`a` is used before"));
    }

    #[test]
    fn nested_scope_needs_a_definite_wait() {
        let (_, errors) = lowered(quote! {
            let mut s = 0;
            for i in 0..n {
                let mut a = 0;
                gtap::task!(a = f(i));
                if i > 2 { break; }
                gtap::taskwait!();
                s += a;
            }
            s
        });
        assert!(
            errors
                .unwrap()
                .contains("this `break` leaves the scope of `a`")
        );
        let (_, errors) = lowered(quote! {
            let mut s = 0;
            for i in 0..n {
                let mut a = 0;
                gtap::task!(a = f(i));
                gtap::taskwait!();
                if i > 2 { break; }
                s += a;
            }
            s
        });
        assert_eq!(errors, None);
    }

    #[test]
    fn no_false_positives_on_accepted_shapes() {
        let cases = [
            // A wait on both branches of an `if` inside the declaring block.
            quote! {
                let mut acc = 0;
                for i in 0..n {
                    let mut x = 0;
                    gtap::task!(x = f(i));
                    if i % 2 == 0 { gtap::taskwait!(); } else { gtap::taskwait!(queue(1)); }
                    acc += x;
                }
                acc
            },
            // A `break` of an inner loop stays in the destination's scope.
            quote! {
                for i in 0..n {
                    let mut x = 0;
                    gtap::task!(x = f(i));
                    for j in 0..3 { if j == 1 { break; } }
                    gtap::taskwait!();
                    let _ = x;
                }
            },
            // A `loop` whose body waits first.
            quote! {
                {
                    let mut x = 0;
                    gtap::task!(x = f(1));
                    loop { gtap::taskwait!(); break; }
                    let _ = x;
                }
            },
            // `continue` and `break` out of a loop around indexed spawns, with the wait after.
            quote! {
                let done = {
                    let mut parts = [0; 4];
                    for i in 0..4 {
                        gtap::task!(parts[i] = f(i));
                        if i == 1 { continue; }
                        if i == 2 { break; }
                    }
                    gtap::taskwait!();
                    parts
                };
                done[0]
            },
            // A `let` rebinding ends the tracking; a parameter as destination.
            quote! {
                let mut a = 0;
                gtap::task!(a = f(1));
                let a = 5;
                gtap::task!(n = f(a));
                gtap::taskwait!();
                a + n
            },
            // Early returns between the spawn and the wait.
            quote! {
                let mut a = 0;
                {
                    let mut b = 0;
                    gtap::task!(b = f(1));
                    if n == 0 { return 0; }
                    gtap::taskwait!();
                    a += b;
                }
                gtap::task!(a = f(2));
                gtap::taskwait!();
                a
            },
        ];
        for case in cases {
            let text = case.to_string();
            let (_, errors) = lowered(case);
            assert_eq!(errors, None, "{text}");
        }
    }

    #[test]
    fn labeled_break_past_the_wait() {
        let (_, errors) = lowered(quote! {
            'outer: for i in 0..n {
                let mut x = 0;
                gtap::task!(x = f(i));
                for _ in 0..2 { if i > 1 { break 'outer; } }
                gtap::taskwait!();
                let _ = x;
            }
        });
        assert!(
            errors
                .unwrap()
                .contains("this `break` leaves the scope of `x`")
        );
    }

    #[test]
    fn mentions_in_closures_and_macros() {
        let (_, errors) = lowered(quote! {
            let mut a = 0;
            gtap::task!(a = f(1));
            let g = || a + 1;
            gtap::taskwait!();
            g()
        });
        assert!(errors.unwrap().contains("`a` is used before"));
        let (_, errors) = lowered(quote! {
            let mut a = 0;
            gtap::task!(a = f(1));
            gtap::taskwait!();
            let g = || a + 1;
            assert_eq!(g(), a + 1, "{a}");
            a
        });
        assert_eq!(errors, None);
    }

    #[test]
    fn top_level_destination_needs_some_later_wait() {
        let (_, errors) = lowered(quote! {
            let mut a = 0;
            gtap::task!(a = f(n));
        });
        assert!(errors.unwrap().contains("no `gtap::taskwait!()` follows"));
    }
}
