//! The gtap macros met by the walk: checking each in its context and replacing it by its
//! expansion, or by a neutral expression once its error is reported.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, ExprCall, ExprMacro, Macro};

use super::{Position, Walker};
use crate::diagnostics::with_help;
use crate::expand::lower;
use crate::names::GtapMacro;
use crate::parse::{EntryInput, FnKind, TaskInput, WaitInput};
use crate::validate::call;
use crate::validate::direct::direct_call_error;
use crate::validate::place;

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

impl Walker<'_, '_> {
    /// Checks and lowers the gtap macro `expr`.
    pub(super) fn body_macro(&mut self, expr: &mut Expr, position: Position) {
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
                (FnKind::Task, GtapMacro::Entry)
                | (FnKind::Kernel, GtapMacro::Task | GtapMacro::Wait) => {
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
            Some(dst) => {
                let mut place = place::place(dst).map_err(|e| self.diags.push(e)).ok()?;
                place.resolve(|n| self.scopes.fixed(n));
                Some(place)
            }
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
        if let (Some(place), Some(dst)) = (place, &spawn.dst)
            && let Some(root) = self.scopes.spawn(&self.function, &place, dst, self.diags)
        {
            self.order.spawn(root, place, dst, self.diags);
        }
        Some(lower::spawn(
            &self.site(mac),
            &spawn,
            self.body.context,
            self.body.block_mode,
        ))
    }

    /// Visits the index expressions of a destination place (the root is written, not read).
    pub(super) fn visit_indices(&mut self, dst: &mut Expr) {
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
        self.waits += 1;
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
        Some(lower::wait(
            &self.site(mac),
            queue.as_ref(),
            self.body.block_mode,
        ))
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
        if let Some(context) = &mut entry.context {
            self.visit_expr_mut(context);
        }
        if let Some(dst) = &mut entry.dst {
            self.visit_expr_mut(dst);
        }
        for arg in &mut entry.call.args {
            self.visit_expr_mut(arg);
        }
        Some(lower::entry(
            &self.site(mac),
            self.body.launch,
            &entry,
            self.body.block_mode,
            self.body.queues,
        ))
    }

    /// Another macro's arguments: only the variables it mentions matter (rule 5).
    pub(super) fn foreign_macro(&mut self, mac: &Macro) {
        if !self.tracks_reads() {
            return;
        }
        for (name, span) in super::mentions::variables(mac.tokens.clone()) {
            self.mention(&name, span);
        }
        // A `macro_rules!` of this body: its expansion names variables of the definition site.
        if let Some(ident) = mac.path.get_ident()
            && let Some(local) = self.macros.iter().rev().find(|m| m.name == *ident)
        {
            let span = mac.path.segments[0].ident.span();
            for (binding, name) in local.mentions.clone() {
                self.order.mention(binding, &name, None, span, self.diags);
            }
        }
    }

    /// A `macro_rules!` definition in the body: remembers the variables its transcribers name,
    /// as bound here.
    pub(super) fn define_macro(&mut self, item: &syn::ItemMacro) {
        let Some(name) = &item.ident else {
            return;
        };
        if !item.mac.path.is_ident("macro_rules") || !self.tracks_reads() {
            return;
        }
        let mentions = super::mentions::transcribed(item.mac.tokens.clone())
            .into_iter()
            .filter_map(|(var, _)| self.scopes.resolve(&var).map(|b| (b, var)))
            .collect();
        self.macros.push(super::LocalMacro {
            name: name.clone(),
            mentions,
        });
    }

    /// A variable may be read here (rule 5).
    pub(super) fn mention(&mut self, name: &str, span: proc_macro2::Span) {
        if let Some(binding) = self.scopes.resolve(name) {
            self.order.mention(binding, name, None, span, self.diags);
        }
    }

    /// A part of a variable (`pair.1`, `arr[0]`) may be read here (rule 5).
    pub(super) fn mention_part(&mut self, mut place: place::Place) {
        let name = place.root.to_string();
        if let Some(binding) = self.scopes.resolve(&name) {
            place.resolve(|n| self.scopes.fixed(n));
            let span = place.root.span();
            self.order
                .mention(binding, &name, Some(&place), span, self.diags);
        }
    }

    /// Rule 2: a direct call of a known task function. Reported, then replaced by a diverging
    /// expression of the call's type so that the direct-call trap does not report it again.
    pub(super) fn direct_call(&mut self, expr: &mut Expr) {
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
