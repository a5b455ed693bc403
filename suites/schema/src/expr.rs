//! Size expressions of a `cuda-kernels` manifest (`cdiv(n, 256)`, `3 * n * 4`): launch shapes,
//! element counts, bytes and flops written in terms of the size parameter `n`, parsed once
//! when the configuration is read and evaluated for every size of the sweep. Unsigned integer
//! arithmetic, checked: an overflow, a negative intermediate or a division by zero is an error,
//! never a wrapped value. An expression is at most [`MAX_EXPR_BYTES`] long and nests at most
//! [`MAX_EXPR_DEPTH`] deep, and a flat chain of `+ - * / %` is a list, not a nested tree, so no
//! expression overflows the stack when it is parsed, evaluated or dropped.

use std::fmt;

/// The longest expression accepted, in bytes.
pub const MAX_EXPR_BYTES: usize = 4096;
/// The deepest nesting of parentheses and function calls accepted.
pub const MAX_EXPR_DEPTH: usize = 64;

/// How much of an expression's text an error quotes.
const QUOTED_CHARS: usize = 60;

/// Why an expression cannot be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    #[error("cannot parse `{text}` at column {column}: {message}")]
    Parse {
        text: String,
        column: usize,
        message: String,
    },
    #[error("is {bytes} bytes long; an expression may be at most {MAX_EXPR_BYTES} bytes")]
    TooLong { bytes: usize },
    #[error("`{text}` nests parentheses and function calls more than {MAX_EXPR_DEPTH} deep")]
    TooDeep { text: String },
    #[error("`{text}` at n = {n}: {message}")]
    Eval {
        text: String,
        n: u64,
        message: &'static str,
    },
}

/// A function an expression may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    /// Ceiling division, `cdiv(a, b)` = ⌈a / b⌉: the blocks that cover `a` items.
    Cdiv,
    Min,
    Max,
}

impl Func {
    const ALL: [(&'static str, Func); 3] =
        [("cdiv", Func::Cdiv), ("min", Func::Min), ("max", Func::Max)];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// A parsed expression. `a + b - c` is one `Chain` (evaluated left to right), not a tree of
/// binary nodes, so a long flat sum neither recurses nor drops recursively.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    Num(u64),
    N,
    Chain(Box<Node>, Vec<(Op, Node)>),
    Call(Func, Box<Node>, Box<Node>),
}

/// At most [`QUOTED_CHARS`] characters of `text`, with `…` when cut.
fn quote(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// A parsed expression of `n`; it serialises as the text it was written as.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Expr {
    text: String,
    node: Node,
}

impl Expr {
    /// Parses `text`: unsigned integers (`_` allowed between digits), `n`, `+ - * / %`
    /// (`/` rounds down), parentheses, and the functions `cdiv(a, b)`, `min(a, b)`,
    /// `max(a, b)`.
    /// At most [`MAX_EXPR_BYTES`] long, nested at most [`MAX_EXPR_DEPTH`] deep.
    pub fn parse(text: &str) -> Result<Expr, ExprError> {
        if text.len() > MAX_EXPR_BYTES {
            return Err(ExprError::TooLong { bytes: text.len() });
        }
        let mut p = Parser {
            text,
            chars: text.char_indices().collect(),
            pos: 0,
            depth: 0,
        };
        let node = p.expr()?;
        p.skip_space();
        if p.pos < p.chars.len() {
            return Err(p.error("expected an operator or the end"));
        }
        Ok(Expr {
            text: text.trim().to_string(),
            node,
        })
    }

    /// A constant.
    pub fn constant(value: u64) -> Expr {
        Expr {
            text: value.to_string(),
            node: Node::Num(value),
        }
    }

    /// The text as written (trimmed).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The value at size `n`.
    pub fn eval(&self, n: u64) -> Result<u64, ExprError> {
        eval(&self.node, n).map_err(|message| ExprError::Eval {
            text: self.text.clone(),
            n,
            message,
        })
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<Expr> for String {
    fn from(e: Expr) -> String {
        e.text
    }
}

impl TryFrom<String> for Expr {
    type Error = ExprError;
    fn try_from(s: String) -> Result<Expr, ExprError> {
        Expr::parse(&s)
    }
}

fn eval(node: &Node, n: u64) -> Result<u64, &'static str> {
    const OVERFLOW: &str = "overflows a 64-bit unsigned integer";
    const ZERO: &str = "division by zero";
    Ok(match node {
        Node::Num(v) => *v,
        Node::N => n,
        Node::Chain(first, rest) => {
            let mut acc = eval(first, n)?;
            for (op, b) in rest {
                let b = eval(b, n)?;
                acc = match op {
                    Op::Add => acc.checked_add(b).ok_or(OVERFLOW)?,
                    Op::Sub => acc.checked_sub(b).ok_or("is negative")?,
                    Op::Mul => acc.checked_mul(b).ok_or(OVERFLOW)?,
                    Op::Div => acc.checked_div(b).ok_or(ZERO)?,
                    Op::Rem => acc.checked_rem(b).ok_or(ZERO)?,
                };
            }
            acc
        }
        Node::Call(f, a, b) => {
            let (a, b) = (eval(a, n)?, eval(b, n)?);
            match f {
                Func::Cdiv => {
                    if b == 0 {
                        return Err(ZERO);
                    }
                    a.div_ceil(b)
                }
                Func::Min => a.min(b),
                Func::Max => a.max(b),
            }
        }
    })
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<(usize, char)>,
    pos: usize,
    /// Parentheses and function calls open at `pos`.
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ExprError {
        ExprError::Parse {
            text: quote(self.text),
            column: self.pos + 1,
            message: message.to_string(),
        }
    }

    fn skip_space(&mut self) {
        while self.pos < self.chars.len() && self.chars[self.pos].1.is_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.get(self.pos).map(|c| c.1)
    }

    fn expect(&mut self, c: char) -> Result<(), ExprError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{c}`")))
        }
    }

    /// One level deeper (a parenthesis or a call opens); refused past [`MAX_EXPR_DEPTH`].
    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err(ExprError::TooDeep {
                text: quote(self.text),
            });
        }
        Ok(())
    }

    /// `term (('+' | '-') term)*`, one chain however long.
    fn expr(&mut self) -> Result<Node, ExprError> {
        let first = self.term()?;
        let mut rest = Vec::new();
        while let Some(op) = match self.peek() {
            Some('+') => Some(Op::Add),
            Some('-') => Some(Op::Sub),
            _ => None,
        } {
            self.pos += 1;
            rest.push((op, self.term()?));
        }
        Ok(chain(first, rest))
    }

    /// `factor (('*' | '/' | '%') factor)*`, one chain however long.
    fn term(&mut self) -> Result<Node, ExprError> {
        let first = self.factor()?;
        let mut rest = Vec::new();
        while let Some(op) = match self.peek() {
            Some('*') => Some(Op::Mul),
            Some('/') => Some(Op::Div),
            Some('%') => Some(Op::Rem),
            _ => None,
        } {
            self.pos += 1;
            rest.push((op, self.factor()?));
        }
        Ok(chain(first, rest))
    }

    fn factor(&mut self) -> Result<Node, ExprError> {
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.enter()?;
                let inner = self.expr()?;
                self.expect(')')?;
                self.depth -= 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.pos;
                let mut value: u64 = 0;
                while let Some(&(_, c)) = self.chars.get(self.pos) {
                    if let Some(d) = c.to_digit(10) {
                        value = value
                            .checked_mul(10)
                            .and_then(|v| v.checked_add(u64::from(d)))
                            .ok_or_else(|| ExprError::Parse {
                                text: quote(self.text),
                                column: start + 1,
                                message: "number too large".into(),
                            })?;
                    } else if c != '_' {
                        break;
                    }
                    self.pos += 1;
                }
                Ok(Node::Num(value))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.pos;
                while self
                    .chars
                    .get(self.pos)
                    .is_some_and(|&(_, c)| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().map(|c| c.1).collect();
                if word == "n" {
                    return Ok(Node::N);
                }
                let Some(&(_, func)) = Func::ALL.iter().find(|(name, _)| *name == word) else {
                    self.pos = start;
                    return Err(self.error(&format!(
                        "unknown name `{word}` (the size is `n`; functions: cdiv, min, max)"
                    )));
                };
                self.expect('(')?;
                self.enter()?;
                let a = self.expr()?;
                self.expect(',')?;
                let b = self.expr()?;
                self.expect(')')?;
                self.depth -= 1;
                Ok(Node::Call(func, Box::new(a), Box::new(b)))
            }
            _ => Err(self.error("expected a number, `n`, a function or `(`")),
        }
    }
}

/// `first` alone, or the chain of `first` and `rest`.
fn chain(first: Node, rest: Vec<(Op, Node)>) -> Node {
    if rest.is_empty() {
        first
    } else {
        Node::Chain(Box::new(first), rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, n: u64) -> u64 {
        Expr::parse(text).unwrap().eval(n).unwrap()
    }

    #[test]
    fn expressions_follow_precedence_and_integer_division() {
        assert_eq!(at("n", 7), 7);
        assert_eq!(at("n / 256", 1000), 3);
        assert_eq!(at("cdiv(n, 256)", 1000), 4);
        assert_eq!(at("cdiv(n, 256)", 1024), 4);
        assert_eq!(at("(n + 255) / 256", 1000), 4);
        assert_eq!(at("2 + 3 * n", 4), 14);
        assert_eq!(at("(2 + 3) * n", 4), 20);
        assert_eq!(at("3 * n * 4", 1_000), 12_000);
        assert_eq!(at("n % 7 + min(n, 2) + max(n, 9)", 10), 3 + 2 + 10);
        assert_eq!(at("1_048_576", 0), 1 << 20);
        assert_eq!(at("  n-1 ", 5), 4);
    }

    #[test]
    fn bad_expressions_name_the_column() {
        let e = Expr::parse("n/").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cannot parse `n/` at column 3: expected a number, `n`, a function or `(`"
        );
        let e = Expr::parse("m * 2").unwrap_err();
        assert!(e.to_string().contains("column 1: unknown name `m`"), "{e}");
        let e = Expr::parse("cdiv(n 256)").unwrap_err();
        assert!(e.to_string().contains("expected `,`"), "{e}");
        let e = Expr::parse("n n").unwrap_err();
        assert!(
            e.to_string().contains("column 3: expected an operator"),
            "{e}"
        );
        assert!(Expr::parse("99999999999999999999").is_err());
        assert!(Expr::parse("").is_err());
    }

    #[test]
    fn evaluation_errors_are_not_wrapped_values() {
        let e = Expr::parse("n - 1").unwrap().eval(0).unwrap_err();
        assert_eq!(e.to_string(), "`n - 1` at n = 0: is negative");
        let e = Expr::parse("n / (n - 4)").unwrap().eval(4).unwrap_err();
        assert!(e.to_string().ends_with("division by zero"), "{e}");
        assert!(Expr::parse("cdiv(n, 0)").unwrap().eval(1).is_err());
        let e = Expr::parse("n * n").unwrap().eval(u64::MAX).unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
    }

    #[test]
    fn an_expression_serialises_as_its_text() {
        let e = Expr::parse("cdiv(n, 256)").unwrap();
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, "\"cdiv(n, 256)\"");
        let back: Expr = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
        assert!(serde_json::from_str::<Expr>("\"n +\"").is_err());
        assert_eq!(Expr::constant(3).eval(100).unwrap(), 3);
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let nested = |open: &str, close: &str, depth: usize| {
            format!("{}n{}", open.repeat(depth), close.repeat(depth))
        };
        // As deep as allowed parses and evaluates.
        assert_eq!(at(&nested("(", ")", MAX_EXPR_DEPTH), 5), 5);
        assert_eq!(at(&nested("min(", ", 9)", MAX_EXPR_DEPTH), 5), 5);
        let e = Expr::parse(&nested("(", ")", MAX_EXPR_DEPTH + 1)).unwrap_err();
        assert!(matches!(e, ExprError::TooDeep { .. }), "{e}");
        assert!(e.to_string().contains("more than 64 deep"), "{e}");
        assert!(e.to_string().len() < 200, "the text is quoted short: {e}");
        // The inputs of the report: 20,000 parentheses, 50,000 `min(`: within the length
        // limit they are refused for depth; past it for length, before anything is parsed.
        let e = Expr::parse(&nested("(", ")", 2000)).unwrap_err();
        assert!(matches!(e, ExprError::TooDeep { .. }), "{e}");
        let e = Expr::parse(&nested("(", ")", 20_000)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "is 40001 bytes long; an expression may be at most 4096 bytes"
        );
        let e = Expr::parse(&"min(".repeat(50_000)).unwrap_err();
        assert!(matches!(e, ExprError::TooLong { .. }), "{e}");
        let e = Expr::parse(&"min(".repeat(1000)).unwrap_err();
        assert!(matches!(e, ExprError::TooDeep { .. }), "{e}");
        let e = Expr::parse(&format!("n{}", " + n".repeat(250_000))).unwrap_err();
        assert!(matches!(e, ExprError::TooLong { bytes: 1_000_001 }), "{e}");
    }

    #[test]
    fn a_long_flat_sum_neither_recurses_nor_drops_recursively() {
        // 2,047 terms within 4096 bytes: parsed, evaluated and dropped on a 32 KiB stack,
        // which a tree of 2,047 nested nodes would overflow.
        let text = format!("1{}", "+1".repeat((MAX_EXPR_BYTES - 1) / 2));
        assert!(text.len() <= MAX_EXPR_BYTES);
        let value = std::thread::Builder::new()
            .stack_size(32 * 1024)
            .spawn(move || {
                let e = Expr::parse(&text).unwrap();
                let v = e.eval(0).unwrap();
                let product = Expr::parse(&format!("1{}", "*1".repeat(2000))).unwrap();
                assert_eq!(product.eval(0).unwrap(), 1);
                drop((e, product));
                v
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(value, 2048);
        // Left to right: 10 - 3 - 2 is 5, 100 / 10 / 5 is 2.
        assert_eq!(at("10 - 3 - 2", 0), 5);
        assert_eq!(at("100 / 10 / 5", 0), 2);
        assert_eq!(at("2 * 3 + 4 * 5 - 6 / 2", 0), 23);
    }
}
