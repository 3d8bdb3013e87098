//! Problems found in a document: what is wrong, where (line and column), and what to do.
//!
//! Readers and validators never stop at the first problem they can recover from; they collect
//! [`Diagnostic`]s into [`Diagnostics`], which renders as `file:line:col: error: message`.

use std::fmt;

/// A place in a document: 1-based line and column (columns count characters, not bytes).
///
/// `Pos::UNKNOWN` (0:0) marks problems in a model built in code rather than read from text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// 1-based line number; 0 when unknown.
    pub line: u32,
    /// 1-based column, in characters; 0 when unknown.
    pub column: u32,
}

impl Pos {
    /// The position of a problem that has no place in a text (a model built in code).
    pub const UNKNOWN: Pos = Pos { line: 0, column: 0 };
    /// The start of a document.
    pub const START: Pos = Pos { line: 1, column: 1 };

    /// Whether this position points into a text.
    pub fn is_known(self) -> bool {
        self.line > 0
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// One problem in a document. The message says what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where the problem is.
    pub pos: Pos,
    /// What is wrong and what to do, as one sentence a person can act on.
    pub message: String,
}

impl Diagnostic {
    /// A problem at `pos`.
    pub fn new(pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            pos,
            message: message.into(),
        }
    }
}

/// Every problem found in one document, in document order once rendered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// Whether no problem was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many problems were found.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The problems, in the order they were found.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    /// One line per problem, sorted by position: `file:line:col: error: message`
    /// (`file: error: message` for problems without a position).
    pub fn render(&self, file: &str) -> String {
        let mut sorted: Vec<&Diagnostic> = self.0.iter().collect();
        sorted.sort_by_key(|d| d.pos);
        let mut out = String::new();
        for d in sorted {
            if d.pos.is_known() {
                out.push_str(&format!("{file}:{}: error: {}\n", d.pos, d.message));
            } else {
                out.push_str(&format!("{file}: error: {}\n", d.message));
            }
        }
        out
    }
}

impl From<Vec<Diagnostic>> for Diagnostics {
    fn from(v: Vec<Diagnostic>) -> Self {
        Diagnostics(v)
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.render("<document>").trim_end())
    }
}

impl std::error::Error for Diagnostics {}
