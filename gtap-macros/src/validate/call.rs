//! Rules 3 and 7: what may follow `task!` and `entry!`, and what a queue clause may hold.
//!
//! As in GTaP, the macro must be followed by a direct call of a task function by its path,
//! optionally as the right-hand side of an assignment. A call hidden inside a larger expression
//! or nested as an argument is rejected with a message saying how to split it.

use syn::punctuated::Punctuated;
use syn::{BinOp, Expr, ExprCall, Lit, Path, Token, UnOp};

use crate::diagnostics::{Diagnostics, with_help};
use crate::names::{GtapMacro, snippet};
use crate::parse::{EntryInput, TaskInput};
use crate::validate::direct::Known;

/// A direct call of a task function: `PATH(ARGS)`.
pub(crate) struct Call {
    /// The task function's path (used as a type path in the expansion).
    pub(crate) target: Path,
    /// The arguments.
    pub(crate) args: Punctuated<Expr, Token![,]>,
    /// The call's parentheses, for spans.
    pub(crate) paren: syn::token::Paren,
}

/// A checked `task!`.
pub(crate) struct Spawn {
    /// The queue clause's expression.
    pub(crate) queue: Option<Expr>,
    /// Where the result goes (its place shape is checked separately).
    pub(crate) dst: Option<Expr>,
    /// The call.
    pub(crate) call: Call,
}

/// A checked `entry!`.
pub(crate) struct Entry {
    /// The launch context's value, if the kernel gives one.
    pub(crate) context: Option<Expr>,
    /// Where the root's result goes, for the statement form.
    pub(crate) dst: Option<Expr>,
    /// The call.
    pub(crate) call: Call,
}

/// Checks a parsed `task!`; `None` after reporting its errors.
pub(crate) fn spawn(input: TaskInput, known: &Known, diags: &mut Diagnostics) -> Option<Spawn> {
    let queue = input.queue.map(|q| q.index);
    let queue_ok = queue.as_ref().is_none_or(|q| check_queue(q, diags));
    let (dst, call) = split(GtapMacro::Task, input.spawn, known, diags)?;
    queue_ok.then_some(Spawn { queue, dst, call })
}

/// Checks a parsed `entry!`; `None` after reporting its errors.
pub(crate) fn entry(input: EntryInput, known: &Known, diags: &mut Diagnostics) -> Option<Entry> {
    let (dst, call) = split(GtapMacro::Entry, input.call, known, diags)?;
    Some(Entry {
        context: input.context,
        dst,
        call,
    })
}

/// Splits `[DST =] CALL` and checks the call.
fn split(
    which: GtapMacro,
    expr: Expr,
    known: &Known,
    diags: &mut Diagnostics,
) -> Option<(Option<Expr>, Call)> {
    let (dst, rhs) = match expr {
        Expr::Assign(a) => (Some(*a.left), *a.right),
        Expr::Binary(b) if is_compound_assignment(&b.op) => {
            diags.spanned(
                b.op,
                with_help(
                    format!("`{}` stores the child's result with `=`", which.display()),
                    format!(
                        "spawn into a separate variable and combine after the wait: `{}(t = \
                         {}); gtap::taskwait!(); {} {} t;`",
                        which.display(),
                        snippet(&b.right),
                        snippet(&b.left),
                        snippet(&b.op),
                    ),
                ),
            );
            return None;
        }
        other => (None, other),
    };
    match direct_call(which, rhs, known) {
        Ok(call) => Some((dst, call)),
        Err(e) => {
            diags.push(e);
            None
        }
    }
}

fn is_compound_assignment(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// `expr` must be `PATH(ARGS)` with no task-function call among the arguments.
fn direct_call(which: GtapMacro, expr: Expr, known: &Known) -> syn::Result<Call> {
    let name = which.display();
    let example = match which {
        GtapMacro::Entry => "gtap::entry!(r = fib(n))",
        _ => "gtap::task!(x = fib(n - 1))",
    };
    let call = match expr {
        Expr::Call(call) => call,
        Expr::MethodCall(m) => {
            return Err(syn::Error::new_spanned(
                &m,
                with_help(
                    format!(
                        "`{name}` cannot spawn a method call: task functions are free functions"
                    ),
                    format!("write `{example}`"),
                ),
            ));
        }
        Expr::Path(p) => {
            return Err(syn::Error::new_spanned(
                &p,
                with_help(
                    format!("`{name}` must be followed by a call, not a path"),
                    format!("write `{}(..)`", snippet(&p)),
                ),
            ));
        }
        Expr::Paren(p) => return direct_call(which, *p.expr, known),
        other => return Err(hidden(which, &other, known)),
    };
    let ExprCall {
        func,
        args,
        paren_token,
        ..
    } = call;
    let path = match *func {
        Expr::Path(p) if p.qself.is_none() => p.path,
        other => {
            return Err(syn::Error::new_spanned(
                &other,
                with_help(
                    format!("`{name}` must call a task function by its path, not through a value"),
                    format!("write `{example}`"),
                ),
            ));
        }
    };
    if let Some(generic) = path.segments.iter().find(|s| !s.arguments.is_none()) {
        return Err(syn::Error::new_spanned(
            &generic.arguments,
            with_help(
                "task functions are not generic",
                "remove the generic arguments",
            ),
        ));
    }
    for arg in &args {
        if let Some(nested) = known.find_call(arg) {
            return Err(syn::Error::new_spanned(
                nested,
                with_help(
                    format!(
                        "nested task-function call: `{}` would run as an argument of the spawn",
                        snippet(nested)
                    ),
                    format!(
                        "spawn it on its own and wait for it first: `gtap::task!(t = {}); \
                         gtap::taskwait!();`, then pass `t`",
                        snippet(nested)
                    ),
                ),
            ));
        }
    }
    Ok(Call {
        target: path,
        args,
        paren: paren_token,
    })
}

/// The error for a call hidden in a larger expression (`fib(3) + 1`, a block, ..).
fn hidden(which: GtapMacro, expr: &Expr, known: &Known) -> syn::Error {
    let name = which.display();
    let any_call = known.find_call(expr).or_else(|| first_call(expr));
    let message = format!(
        "`{name}` must be followed by a direct task-function call, optionally assigned: the \
         call cannot be hidden inside another expression"
    );
    let help = match (which, any_call) {
        (GtapMacro::Entry, Some(call)) => format!(
            "start the call alone, `gtap::entry!(r = {})`, and compute with `r` afterwards",
            snippet(call)
        ),
        (_, Some(call)) => format!(
            "spawn the call alone, `gtap::task!(x = {})`, and compute with `x` after \
             `gtap::taskwait!()`",
            snippet(call)
        ),
        (GtapMacro::Entry, None) => "write `gtap::entry!(r = fib(n))`".to_string(),
        (_, None) => "write `gtap::task!(x = fib(n - 1))`".to_string(),
    };
    syn::Error::new_spanned(expr, with_help(message, help))
}

/// The first call by path inside `expr`.
fn first_call(expr: &Expr) -> Option<&ExprCall> {
    use syn::visit::{self, Visit};
    struct Find<'e>(Option<&'e ExprCall>);
    impl<'e> Visit<'e> for Find<'e> {
        fn visit_expr_call(&mut self, c: &'e ExprCall) {
            if self.0.is_none() && matches!(&*c.func, Expr::Path(_)) {
                self.0 = Some(c);
            }
            visit::visit_expr_call(self, c);
        }
    }
    let mut f = Find(None);
    f.visit_expr(expr);
    f.0
}

/// Rule 7: a literal queue index must be a non-negative integer. Other non-integers are caught
/// by the `QueueIndex` bound of the expansion. Returns whether the clause is acceptable.
pub(crate) fn check_queue(index: &Expr, diags: &mut Diagnostics) -> bool {
    let (lit, negative) = match index {
        Expr::Lit(l) => (&l.lit, false),
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => match &*u.expr {
            Expr::Lit(l) => (&l.lit, true),
            _ => return true,
        },
        _ => return true,
    };
    let found = match lit {
        Lit::Int(_) if negative => {
            diags.spanned(
                index,
                with_help(
                    "queue indices start at 0",
                    "queues are numbered `0..num_queues`: write e.g. `queue(1)`",
                ),
            );
            return false;
        }
        Lit::Int(_) => return true,
        Lit::Float(_) => "a float",
        Lit::Str(_) | Lit::CStr(_) | Lit::ByteStr(_) => "a string",
        Lit::Bool(_) => "a bool",
        Lit::Char(_) | Lit::Byte(_) => "a character",
        _ => "a literal that is not an integer",
    };
    diags.spanned(
        index,
        with_help(
            format!("the queue index must be an integer, found {found}"),
            "queues are numbered `0..num_queues`: write e.g. `queue(1)` or `queue(kind as u32)`",
        ),
    );
    false
}
