//! The arguments of `task!`, `taskwait!` and `entry!`, as written.
//!
//! Parsing only splits the tokens; whether the call is a direct task-function call, the
//! destination a local place and the queue an integer is decided in [`crate::validate`].

use syn::parse::discouraged::Speculative;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Token, parenthesized};

use crate::diagnostics::with_help;

/// A `queue(EXPR)` clause: the divergence-aware queue a spawned child (or a resumed
/// continuation) is placed on.
pub(crate) struct QueueClause {
    /// The `queue` keyword, for spans.
    pub(crate) keyword: Ident,
    /// The index expression.
    pub(crate) index: Expr,
}

impl QueueClause {
    /// Parses `queue(EXPR)` if the input starts with it and it is followed by `,` (or by the
    /// end, if `may_end`: in `task!(queue(3))`, `queue` is a task function).
    fn parse_opt(input: ParseStream, may_end: bool) -> syn::Result<Option<Self>> {
        let clause = clause(input, "queue", may_end, "queue index", "queue(1)")?;
        Ok(clause.map(|(keyword, index)| Self { keyword, index }))
    }
}

/// Parses the clause `NAME(EXPR)` if the input starts with it and it is followed by `,` (or by
/// the end, if `may_end`), leaving the comma. Followed by anything else (`NAME(..) + 1`,
/// `NAME(..).x = ..`) it is an expression, since a task function may be called `NAME`. `what`
/// and `example` describe the clause for the error when its parentheses hold more than one
/// expression.
fn clause(
    input: ParseStream,
    name: &str,
    may_end: bool,
    what: &str,
    example: &str,
) -> syn::Result<Option<(Ident, Expr)>> {
    let fork = input.fork();
    let keyword = match fork.parse::<Ident>() {
        Ok(ident) if ident == name && fork.peek(syn::token::Paren) => ident,
        _ => return Ok(None),
    };
    let content;
    parenthesized!(content in fork);
    if !((may_end && fork.is_empty()) || fork.peek(Token![,])) {
        return Ok(None);
    }
    let value = content.parse::<Expr>()?;
    if !content.is_empty() {
        return Err(content.error(format!("expected a single {what}, as in `{example}`")));
    }
    input.advance_to(&fork);
    Ok(Some((keyword, value)))
}

/// `task!([queue(Q),] [DST =] CALL)`.
pub(crate) struct TaskInput {
    /// The optional queue clause.
    pub(crate) queue: Option<QueueClause>,
    /// Everything after it: a call, or an assignment from one (checked later).
    pub(crate) spawn: Expr,
}

impl Parse for TaskInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let queue = QueueClause::parse_opt(input, false)?;
        if queue.is_some() {
            input.parse::<Token![,]>()?;
        }
        if input.is_empty() {
            return Err(input.error(with_help(
                "`gtap::task!` needs a task-function call",
                "write `gtap::task!(x = fib(n - 1))`, or `gtap::task!(fib(n - 1))` to discard \
                 the result",
            )));
        }
        if input.peek(Token![let]) {
            return Err(input.error(with_help(
                "a child's result cannot initialise a new binding",
                "declare the destination first: `let mut x = 0; gtap::task!(x = fib(n - 1));`",
            )));
        }
        let spawn = input.parse::<Expr>()?;
        finish(input, "`gtap::task!` spawns exactly one call")?;
        Ok(Self { queue, spawn })
    }
}

/// `taskwait!([queue(Q)])`.
pub(crate) struct WaitInput {
    /// The optional queue clause for the resumed continuation.
    pub(crate) queue: Option<QueueClause>,
}

impl Parse for WaitInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let queue = QueueClause::parse_opt(input, true)?;
        if queue.is_none() && !input.is_empty() {
            return Err(input.error(with_help(
                "`gtap::taskwait!` takes no arguments except a queue clause",
                "write `gtap::taskwait!()` or `gtap::taskwait!(queue(1))`",
            )));
        }
        finish(input, "`gtap::taskwait!` takes at most a queue clause")?;
        Ok(Self { queue })
    }
}

/// `entry!([context(EXPR),] [DST =] CALL)`.
pub(crate) struct EntryInput {
    /// The launch context's value (`crate::expand::lower::entry` passes `()` without one).
    pub(crate) context: Option<Expr>,
    /// A call, or an assignment from one (checked later).
    pub(crate) call: Expr,
}

impl Parse for EntryInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if let Some(clause) = QueueClause::parse_opt(input, false)? {
            return Err(syn::Error::new_spanned(
                clause.keyword,
                with_help(
                    "`gtap::entry!` takes no queue clause: the root task always starts on queue 0",
                    "write `gtap::entry!(fib(n))`",
                ),
            ));
        }
        // `context(..)` alone is the root call itself (a task function may be called
        // `context`).
        let context = clause(
            input,
            "context",
            false,
            "value",
            "context(Graph { row, col })",
        )?;
        if context.is_some() {
            input.parse::<Token![,]>()?;
        }
        let context = context.map(|(_, value)| value);
        if input.is_empty() {
            return Err(input.error(with_help(
                "`gtap::entry!` needs a task-function call",
                "write `gtap::entry!(fib(n))`, `gtap::entry!(r = fib(n))` or \
                 `gtap::entry!(context(value), fib(n))`",
            )));
        }
        let call = input.parse::<Expr>()?;
        finish(input, "`gtap::entry!` starts exactly one call")?;
        Ok(Self { context, call })
    }
}

/// Accepts one trailing comma, then requires the end of the input.
fn finish(input: ParseStream, what: &str) -> syn::Result<()> {
    if input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
    }
    if input.is_empty() {
        Ok(())
    } else {
        Err(input.error(format!("unexpected tokens: {what}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_clause_is_optional() {
        let t: TaskInput = syn::parse_str("queue(1), b = fib(n - 2)").unwrap();
        assert!(t.queue.is_some());
        assert!(matches!(t.spawn, Expr::Assign(_)));
        let t: TaskInput = syn::parse_str("a = fib(n - 1)").unwrap();
        assert!(t.queue.is_none());
    }

    #[test]
    fn a_task_function_named_queue_is_a_call() {
        let t: TaskInput = syn::parse_str("queue(3)").unwrap();
        assert!(t.queue.is_none());
        assert!(matches!(t.spawn, Expr::Call(_)));
    }

    #[test]
    fn wait_forms() {
        assert!(syn::parse_str::<WaitInput>("").unwrap().queue.is_none());
        assert!(
            syn::parse_str::<WaitInput>("queue(k)")
                .unwrap()
                .queue
                .is_some()
        );
        assert!(
            syn::parse_str::<WaitInput>("queue(k),")
                .unwrap()
                .queue
                .is_some()
        );
        assert!(syn::parse_str::<WaitInput>("k").is_err());
    }

    #[test]
    fn entry_takes_a_context_clause_before_the_call() {
        let e: EntryInput = syn::parse_str("context(Graph { row, col }), r = bfs(0)").unwrap();
        assert!(e.context.is_some());
        assert!(matches!(e.call, Expr::Assign(_)));
        let e: EntryInput = syn::parse_str("context(3)").unwrap();
        assert!(e.context.is_none(), "a root function named `context`");
        assert!(syn::parse_str::<EntryInput>("context(a, b), f(0)").is_err());
    }

    #[test]
    fn entry_rejects_queue() {
        assert!(syn::parse_str::<EntryInput>("queue(1), fib(3)").is_err());
        assert!(syn::parse_str::<EntryInput>("r = fib(3)").is_ok());
    }
}
