//! Tokens → [`Ast`]: the parser's cursor, its blocks of clauses, and how it goes on after a
//! problem (to the end of the clause, or of its `{ }`), so that one reading reports every
//! problem, up to [`MAX_PDL_PROBLEMS`].
//!
//! Here: the cursor and the recovery; one module per part of the text (`items`: the top, the
//! workflow and its declarations; `task`: a task's clauses; `rule`: `DEPENDS`; `values`: the
//! values clauses take).

mod items;
mod loops;
mod orderings;
mod people;
mod rule;
mod task;
mod values;

pub(super) use task::KINDS;

use std::borrow::Cow;
use std::collections::VecDeque;

use super::ast::Ast;
use super::grammar::{Block, home_of, refused};
use super::lexer::{Kind, Lexer, Token};
use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::{MAX_PDL_PROBLEMS, MAX_WORD_CHARS};

/// Reads `text` into its [`Ast`], with the problems of form; `None` for the tree when reading
/// stopped at [`MAX_PDL_PROBLEMS`] (what was not read would only give more, misleading ones).
pub(super) fn parse(text: &str) -> (Option<Ast>, Vec<Diagnostic>) {
    let mut p = Parser::new(text);
    let ast = items::file(&mut p);
    let ast = (!p.stopped).then_some(ast);
    (ast, p.diags)
}

/// Reads `text`, an ordering text, into its orderings and where their parts are, with the
/// problems of form; `None` when reading stopped at [`MAX_PDL_PROBLEMS`].
pub(super) fn parse_orderings(
    text: &str,
) -> (
    Option<(crate::Orderings, crate::SourceMap)>,
    Vec<Diagnostic>,
) {
    let mut p = Parser::new(text);
    let mut map = crate::SourceMap::default();
    let doc = orderings::orderings(&mut p, &mut map);
    let doc = (!p.stopped).then_some((doc, map));
    (doc, p.diags)
}

/// The cursor over the tokens of one text, and the problems found so far.
pub(super) struct Parser<'a> {
    lexer: Lexer<'a>,
    /// Tokens looked at but not taken yet (at most two).
    ahead: VecDeque<Token<'a>>,
    /// Where the last token taken ends: where a missing `;` belongs.
    last_end: Pos,
    /// The block whose clauses are being read.
    block: Block,
    pub diags: Vec<Diagnostic>,
    /// True once [`MAX_PDL_PROBLEMS`] were reported: the rest of the text reads as its end.
    stopped: bool,
    /// How many problems were reported before the clause being read: when it has one of its
    /// own, a missing `;` after it is not one more.
    clause_start: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        Parser {
            lexer: Lexer::new(text),
            ahead: VecDeque::new(),
            last_end: Pos::START,
            block: Block::Top,
            diags: Vec::new(),
            stopped: false,
            clause_start: 0,
        }
    }

    /// Reports a problem at `pos`; past [`MAX_PDL_PROBLEMS`], says so once and stops reading.
    pub fn error(&mut self, pos: Pos, message: impl Into<String>) {
        if self.stopped {
            return;
        }
        self.diags.push(Diagnostic::new(pos, message));
        if self.diags.len() >= MAX_PDL_PROBLEMS {
            self.stopped = true;
            self.ahead.clear();
            self.diags.push(Diagnostic::new(
                pos,
                format!(
                    "{MAX_PDL_PROBLEMS} problems found (MAX_PDL_PROBLEMS); the rest of the \
                     text is not read: fix these first"
                ),
            ));
        }
    }

    /// Makes sure `n` tokens are looked at.
    fn fill(&mut self, n: usize) {
        while self.ahead.len() < n {
            let token = if self.stopped {
                Token {
                    kind: Kind::End,
                    text: Cow::Borrowed(""),
                    pos: self.last_end,
                    end: self.last_end,
                }
            } else {
                self.lexer.next_token()
            };
            for problem in std::mem::take(&mut self.lexer.problems) {
                self.error(problem.pos, problem.message);
            }
            if self.stopped && token.kind != Kind::End {
                continue;
            }
            self.ahead.push_back(token);
        }
    }

    /// The next token, not taken.
    pub fn peek(&mut self) -> &Token<'a> {
        self.fill(1);
        &self.ahead[0]
    }

    /// The token after the next, not taken.
    pub fn peek_second(&mut self) -> &Token<'a> {
        self.fill(2);
        &self.ahead[1]
    }

    /// Takes the next token.
    pub fn bump(&mut self) -> Token<'a> {
        self.fill(1);
        let token = self.ahead.pop_front().unwrap_or(Token {
            kind: Kind::End,
            text: Cow::Borrowed(""),
            pos: self.last_end,
            end: self.last_end,
        });
        if token.kind != Kind::End {
            self.last_end = token.end;
        }
        token
    }

    /// Takes the next token when it is the punctuation `c`.
    pub fn eat(&mut self, c: char) -> bool {
        let found = self.peek().is_punct(c);
        if found {
            self.bump();
        }
        found
    }

    /// Takes the next token when it is the word `word`.
    pub fn eat_word(&mut self, word: &str) -> bool {
        let found = self.peek().is_word(word);
        if found {
            self.bump();
        }
        found
    }

    /// Skips the rest of a clause: to its `;` (taken), or to the end of a `{ }` it opens, or
    /// to the `}` that ends the block (not taken).
    pub fn skip_clause(&mut self) {
        loop {
            let token = self.peek();
            match token.kind {
                Kind::End | Kind::Punct('}') => return,
                Kind::Punct(';') => {
                    self.bump();
                    return;
                }
                Kind::Punct('{') => {
                    self.bump();
                    self.skip_block_rest();
                    self.eat(';');
                    return;
                }
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Skips to the `}` that closes a `{` just taken (taken too).
    pub fn skip_block_rest(&mut self) {
        let mut depth = 1usize;
        loop {
            let token = self.bump();
            match token.kind {
                Kind::End => return,
                Kind::Punct('{') => depth += 1,
                Kind::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// Ends the clause that started with `keyword`: its `;` must come next. When it does not,
    /// says so where it belongs; the rest is skipped, unless what comes is the next clause or
    /// the end of the block (the `;` was only forgotten).
    pub fn end_clause(&mut self, keyword: &str) {
        if self.eat(';') {
            return;
        }
        let block = self.block;
        let next = self.peek().clone();
        let forgotten = next.is_punct('}')
            || next.kind == Kind::End
            || (next.kind == Kind::Word
                && (block.keywords().contains(&next.text.as_ref())
                    || refused(&next.text).is_some()));
        if self.diags.len() == self.clause_start {
            let at = self.last_end;
            self.error(
                at,
                format!(
                    "the {keyword} clause ends here, but {} follows; end it with ;",
                    next.shown()
                ),
            );
        }
        if !forgotten {
            self.skip_clause();
        }
    }

    /// Reads a `{ ... }` of `block` (its opening `{` next), called `owner` in messages: each
    /// clause starts with one of the block's keywords, taken before `clause` reads the rest.
    /// A clause written twice that may not be is reported; an unknown one is skipped.
    pub fn block(
        &mut self,
        block: Block,
        owner: &str,
        mut clause: impl FnMut(&mut Parser<'a>, &Token<'a>),
    ) {
        let open = self.peek().clone();
        if !self.eat('{') {
            self.error(
                open.pos,
                format!("expected {{ to open {owner}, but found {}", open.shown()),
            );
            self.skip_clause();
            return;
        }
        let outer = std::mem::replace(&mut self.block, block);
        let mut seen: Vec<(Cow<'a, str>, Pos)> = Vec::new();
        loop {
            let token = self.peek().clone();
            match token.kind {
                Kind::Punct('}') => {
                    self.bump();
                    break;
                }
                Kind::End => {
                    self.error(
                        open.pos,
                        format!("the {{ of {owner} is never closed; add }} after its last clause"),
                    );
                    break;
                }
                Kind::Punct(';') => {
                    self.bump();
                }
                Kind::Word if refused(&token.text).is_some() => {
                    self.bump();
                    self.refuse(&token);
                }
                Kind::Word if block.keywords().contains(&token.text.as_ref()) => {
                    self.bump();
                    self.once(block, owner, &token, &mut seen);
                    self.clause_start = self.diags.len();
                    clause(self, &token);
                }
                _ => {
                    self.unknown_clause(block, owner, &token);
                    self.skip_clause();
                }
            }
        }
        self.block = outer;
    }

    /// Reports `keyword` written again in `owner`, a `block` where it may be written once.
    fn once(
        &mut self,
        block: Block,
        owner: &str,
        keyword: &Token<'a>,
        seen: &mut Vec<(Cow<'a, str>, Pos)>,
    ) {
        if block.repeats(&keyword.text) {
            return;
        }
        match seen.iter().find(|(k, _)| *k == keyword.text) {
            Some((_, first)) => {
                let first = *first;
                self.error(
                    keyword.pos,
                    format!(
                        "{owner} has a second {} clause (the first is at {first}); keep one",
                        keyword.text
                    ),
                );
            }
            None => seen.push((keyword.text.clone(), keyword.pos)),
        }
    }

    /// Reports `token`, which starts no clause of `owner`, a `block`.
    pub fn unknown_clause(&mut self, block: Block, owner: &str, token: &Token<'_>) {
        let found = token.shown();
        let message = if token.kind != Kind::Word {
            format!(
                "expected a clause of {owner} (a keyword such as {}), but found {found}",
                block.keywords()[0]
            )
        } else if let Some(home) = home_of(&token.text, block) {
            format!(
                "{found} is not a clause of {owner}: it belongs in {}",
                home.shown()
            )
        } else if let Some(near) = near(&token.text, block.keywords()) {
            format!(
                "{found} is not a clause of {owner}; did you mean {near}? (keywords are upper case)"
            )
        } else {
            format!(
                "{found} is not a clause of {owner}; expected one of: {}",
                block.keywords().join(", ")
            )
        };
        self.error(token.pos, message);
    }

    /// Reports `keyword` (taken), which WorkToDo has and mobiwf does not hold yet, with why
    /// and what to do, and skips its clause.
    pub fn refuse(&mut self, keyword: &Token<'_>) {
        let why = refused(&keyword.text).unwrap_or("remove it");
        self.refuse_because(keyword, why);
    }

    /// Reports `keyword` (taken), which mobiwf does not hold yet: `why` says why and what to
    /// do; skips its clause.
    pub fn refuse_because(&mut self, keyword: &Token<'_>, why: &str) {
        self.error(
            keyword.pos,
            format!("{} is not supported yet: {why}", keyword.text),
        );
        self.skip_clause();
    }
}

/// The known word closest to `word`, if it is a likely misspelling of one; none for a word
/// longer than [`MAX_WORD_CHARS`], whose comparison would cost more than it could tell.
pub(super) fn near<'k>(word: &str, known: &[&'k str]) -> Option<&'k str> {
    if word.len() > MAX_WORD_CHARS {
        return None;
    }
    crate::read::suggest(word, known)
}
