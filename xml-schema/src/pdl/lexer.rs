//! PDL text → tokens, each with where it starts and ends, made one at a time as the parser asks
//! (so a large text never becomes a large list). Comments (`//` to the end of the line) and
//! white space are skipped; a character that starts no token is reported once per run.

use std::borrow::Cow;

use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::{MAX_PDL_PROBLEMS, MAX_TEXT_BYTES, MAX_WORD_CHARS};
use crate::text::{unwritable, unwritable_name};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A keyword, a name or a value: a letter or `_` first, then letters, digits, `_`, `.`
    /// and `-` (a `-` before `>` ends it: `T1->SUCCEEDED` is three tokens).
    Word,
    /// A number as written: a digit first (or a sign or `.` before one), then what may follow
    /// in a number (`42`, `-1`, `1e-3`, `.5`); whether it fits is the parser's concern.
    Number,
    /// A text in double quotes; [`Token::text`] is its value, escapes resolved.
    Str,
    /// One of `{ } ; : , ( )`.
    Punct(char),
    /// `->` (or `→`, as *Synchronization and Disconnected Operation in WorkToDo* prints it).
    Arrow,
    /// The end of the text.
    End,
}

/// One token of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Token<'a> {
    pub kind: Kind,
    /// The word or number as written, the value of a quoted text, or the punctuation.
    pub text: Cow<'a, str>,
    /// Where it starts.
    pub pos: Pos,
    /// Just after its last character.
    pub end: Pos,
}

impl Token<'_> {
    /// True for the word `word`, exactly.
    pub fn is_word(&self, word: &str) -> bool {
        self.kind == Kind::Word && self.text == word
    }

    /// True for the punctuation `c`.
    pub fn is_punct(&self, c: char) -> bool {
        self.kind == Kind::Punct(c)
    }

    /// How messages show the token: `` `ROLE` ``, `the text "..."`, `the end of the text`.
    pub fn shown(&self) -> String {
        match self.kind {
            Kind::Str => format!("the text \"{}\"", crate::read::abbreviate(&self.text)),
            Kind::End => "the end of the text".to_owned(),
            _ => format!("`{}`", crate::read::abbreviate(&self.text)),
        }
    }
}

/// Makes tokens from a text, one per call of [`Lexer::next_token`]; the problems it meets go
/// to [`Lexer::problems`].
pub(super) struct Lexer<'a> {
    text: &'a str,
    /// Byte offset of the next character.
    at: usize,
    /// Position of the next character.
    pos: Pos,
    /// Problems met since the caller last took them: at most [`MAX_PDL_PROBLEMS`], as the
    /// parser reports no more (one text may hold a bad escape in every other character).
    pub problems: Vec<Diagnostic>,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        Lexer {
            text,
            at: 0,
            pos: Pos::START,
            problems: Vec::new(),
        }
    }

    /// Keeps `problem`, unless [`MAX_PDL_PROBLEMS`] are already waiting to be taken.
    fn problem(&mut self, pos: Pos, message: impl Into<String>) {
        if self.problems.len() < MAX_PDL_PROBLEMS {
            self.problems.push(Diagnostic::new(pos, message));
        }
    }

    fn peek_char(&self) -> Option<char> {
        self.text[self.at..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.text[self.at..].chars().nth(1)
    }

    /// Moves past the next character.
    fn advance(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.at += c.len_utf8();
        crate::work::count(1);
        if c == '\n' {
            self.pos = Pos {
                line: self.pos.line.saturating_add(1),
                column: 1,
            };
        } else {
            self.pos.column = self.pos.column.saturating_add(1);
        }
        Some(c)
    }

    /// The next token; [`Kind::End`] at the end, and again after it.
    pub fn next_token(&mut self) -> Token<'a> {
        loop {
            self.skip_blanks();
            let start = (self.at, self.pos);
            let Some(c) = self.peek_char() else {
                return self.token(Kind::End, start);
            };
            let next = self.peek_second();
            let kind = match c {
                '"' => return self.string(),
                '\'' => return self.single_quoted(),
                '{' | '}' | ';' | ':' | ',' | '(' | ')' => {
                    self.advance();
                    Kind::Punct(c)
                }
                '-' if next == Some('>') => {
                    self.advance();
                    self.advance();
                    Kind::Arrow
                }
                '→' => {
                    self.advance();
                    Kind::Arrow
                }
                c if c.is_alphabetic() || c == '_' => {
                    self.word_chars(false);
                    Kind::Word
                }
                c if starts_number(c, next) => {
                    self.advance();
                    self.word_chars(true);
                    Kind::Number
                }
                _ => {
                    self.stray(start.1);
                    continue;
                }
            };
            let token = self.token(kind, start);
            if matches!(kind, Kind::Word | Kind::Number) {
                self.check_length(&token);
            }
            return token;
        }
    }

    fn token(&self, kind: Kind, (from, pos): (usize, Pos)) -> Token<'a> {
        Token {
            kind,
            text: Cow::Borrowed(&self.text[from..self.at]),
            pos,
            end: self.pos,
        }
    }

    /// Skips white space and `//` comments.
    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek_char() {
            if c.is_whitespace() {
                self.advance();
            } else if c == '/' && self.peek_second() == Some('/') {
                while self.peek_char().is_some_and(|c| c != '\n') {
                    self.advance();
                }
            } else {
                break;
            }
        }
    }

    /// Moves past the rest of a word (or of a number, when `number`), stopping before `->`.
    fn word_chars(&mut self, number: bool) {
        while let Some(c) = self.peek_char() {
            let arrow = c == '-' && self.peek_second() == Some('>');
            let fits = c.is_alphanumeric() || matches!(c, '_' | '.' | '-') || (number && c == '+');
            if !fits || arrow {
                break;
            }
            self.advance();
        }
    }

    fn check_length(&mut self, token: &Token<'_>) {
        let chars = token.text.chars().count();
        if chars > MAX_WORD_CHARS {
            self.problem(
                token.pos,
                format!(
                    "a word of {chars} characters is over the limit of {MAX_WORD_CHARS} \
                     (MAX_WORD_CHARS); write a long name in double quotes"
                ),
            );
        }
    }

    /// Reports the run of characters at `pos` that start no token, and moves past it. A `#`
    /// is taken for a comment of another language: the rest of its line is skipped with it.
    fn stray(&mut self, pos: Pos) {
        let Some(first) = self.advance() else {
            return;
        };
        let hint = match first {
            '#' | '/' => "; a comment starts with //",
            '=' => "; a clause is a keyword and its value, e.g. NUMBER reading 42;",
            _ => "",
        };
        while let Some(c) = self.peek_char() {
            let comment = first == '#' && c != '\n';
            if !comment && (c.is_whitespace() || self.starts_token(c)) {
                break;
            }
            self.advance();
        }
        self.problem(
            pos,
            format!(
                "{first:?} cannot stand here: PDL is made of keywords, names, numbers, \"texts\" \
                 and {{ }} ; : , ( ) ->{hint}"
            ),
        );
    }

    /// True when `c`, the next character, starts a token or a comment.
    fn starts_token(&self, c: char) -> bool {
        let next = self.peek_second();
        c.is_alphabetic()
            || matches!(
                c,
                '_' | '"' | '\'' | '{' | '}' | ';' | ':' | ',' | '(' | ')' | '→'
            )
            || starts_number(c, next)
            || (c == '-' && next == Some('>'))
            || (c == '/' && next == Some('/'))
    }

    /// A text in double quotes, its escapes resolved: `\"`, `\\`, `\n`, `\r`, `\t` and
    /// `\u{41}`. A line break inside is kept as it is.
    fn string(&mut self) -> Token<'a> {
        let (from, pos) = (self.at, self.pos);
        self.advance();
        let mut value = String::new();
        let mut plain = true;
        // The first character the MobiWfMS XML cannot hold, and where it is written.
        let mut unwritable_at: Option<(char, Pos)> = None;
        loop {
            let Some(c) = self.peek_char() else {
                self.problem(
                    pos,
                    "this text in double quotes is never closed; add the closing \" (a \" inside \
                     a text is written \\\")",
                );
                break;
            };
            if c == '"' {
                self.advance();
                break;
            }
            if c == '\\' {
                plain = false;
                let at = self.pos;
                self.advance();
                self.escape(at, &mut value);
                if let Some(c) = value.chars().next_back().filter(|c| unwritable(*c)) {
                    unwritable_at = unwritable_at.or(Some((c, at)));
                }
            } else {
                if unwritable(c) {
                    unwritable_at = unwritable_at.or(Some((c, self.pos)));
                }
                self.advance();
                value.push(c);
            }
        }
        if let Some((c, at)) = unwritable_at {
            self.problem(
                at,
                format!(
                    "{} cannot be in a text: a definition is kept and sent as MobiWfMS XML, \
                     which cannot hold it; remove it (a tab, line break or carriage return is \
                     written \\t, \\n or \\r)",
                    unwritable_name(c)
                ),
            );
        }
        if value.len() > MAX_TEXT_BYTES {
            self.problem(
                pos,
                format!(
                    "a text of {} bytes is over the limit of {MAX_TEXT_BYTES} bytes \
                     (MAX_TEXT_BYTES); shorten it",
                    value.len()
                ),
            );
        }
        let text = if plain {
            let raw = &self.text[from + 1..self.at];
            Cow::Borrowed(raw.strip_suffix('"').unwrap_or(raw))
        } else {
            Cow::Owned(value)
        };
        Token {
            kind: Kind::Str,
            text,
            pos,
            end: self.pos,
        }
    }

    /// A text in single quotes, up to the next one on its line: reported (texts are in double
    /// quotes) and taken as the text it most likely is.
    fn single_quoted(&mut self) -> Token<'a> {
        let pos = self.pos;
        self.advance();
        let from = self.at;
        while self.peek_char().is_some_and(|c| c != '\'' && c != '\n') {
            self.advance();
        }
        let text = &self.text[from..self.at];
        self.advance_if('\'');
        self.problem(
            pos,
            format!(
                "a text is written in double quotes: \"{}\"",
                crate::read::abbreviate(text)
            ),
        );
        Token {
            kind: Kind::Str,
            text: Cow::Borrowed(text),
            pos,
            end: self.pos,
        }
    }

    /// Moves past the next character when it is `c`.
    fn advance_if(&mut self, c: char) {
        if self.peek_char() == Some(c) {
            self.advance();
        }
    }

    /// The escape after a `\` at `at`, pushed onto `value`; an unknown one is reported and
    /// kept as written.
    fn escape(&mut self, at: Pos, value: &mut String) {
        let resolved = match self.peek_char() {
            Some('"') => Some('"'),
            Some('\\') => Some('\\'),
            Some('n') => Some('\n'),
            Some('r') => Some('\r'),
            Some('t') => Some('\t'),
            Some('u') => return self.unicode_escape(at, value),
            _ => None,
        };
        match resolved {
            Some(c) => {
                self.advance();
                value.push(c);
            }
            None => {
                value.push('\\');
                self.problem(at, BAD_ESCAPE);
            }
        }
    }

    /// `\u{...}`: one to six hexadecimal digits naming a character.
    fn unicode_escape(&mut self, at: Pos, value: &mut String) {
        self.advance();
        let rest = &self.text[self.at..];
        // At most six digits and the `}`: the closing brace is looked for no further, so that
        // a text of many unclosed `\u{` costs linear work.
        let digits = rest
            .strip_prefix('{')
            .and_then(|r| {
                r.char_indices()
                    .take(MAX_ESCAPE_DIGITS + 1)
                    .inspect(|_| crate::work::count(1))
                    .find(|&(_, c)| c == '}')
                    .map(|(end, _)| &r[..end])
            })
            .filter(|d| (1..=MAX_ESCAPE_DIGITS).contains(&d.len()));
        let c = digits
            .and_then(|d| u32::from_str_radix(d, 16).ok())
            .and_then(char::from_u32);
        match (digits, c) {
            (Some(d), Some(c)) => {
                for _ in 0..d.len() + 2 {
                    self.advance();
                }
                value.push(c);
            }
            _ => {
                value.push_str("\\u");
                self.problem(at, BAD_ESCAPE);
            }
        }
    }
}

/// Most hexadecimal digits of a `\u{...}` escape: six name every character.
const MAX_ESCAPE_DIGITS: usize = 6;

const BAD_ESCAPE: &str = "unknown escape in a text: write \\\" for \", \\\\ for \\, \\n, \\r or \
                          \\t for a line break, carriage return or tab, or \\u{41} for any \
                          character by its hexadecimal code";

/// True when `c`, followed by `next`, starts a number: a digit, or a sign or `.` before one.
fn starts_number(c: char, next: Option<char>) -> bool {
    c.is_ascii_digit()
        || (matches!(c, '-' | '+' | '.') && next.is_some_and(|n| n.is_ascii_digit() || n == '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(Kind, String)> {
        let mut lexer = Lexer::new(text);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token();
            if t.kind == Kind::End {
                return out;
            }
            out.push((t.kind, t.text.into_owned()));
        }
    }

    #[test]
    fn words_numbers_texts_and_arrows() {
        let got = kinds("T1->SUCCEEDED Semi-automatic -1 1e-3 \"a \\\"b\\\"\\u{e9}\" // no\n→ x.y");
        let want = [
            (Kind::Word, "T1"),
            (Kind::Arrow, "->"),
            (Kind::Word, "SUCCEEDED"),
            (Kind::Word, "Semi-automatic"),
            (Kind::Number, "-1"),
            (Kind::Number, "1e-3"),
            (Kind::Str, "a \"b\"é"),
            (Kind::Arrow, "→"),
            (Kind::Word, "x.y"),
        ];
        let want: Vec<(Kind, String)> = want.iter().map(|(k, t)| (*k, (*t).to_owned())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn positions_count_characters_and_lines() {
        let mut lexer = Lexer::new("é {\n  \"a\nb\" ;");
        let word = lexer.next_token();
        assert_eq!(
            (word.pos, word.end),
            (Pos::START, Pos { line: 1, column: 2 })
        );
        assert_eq!(lexer.next_token().pos, Pos { line: 1, column: 3 });
        let text = lexer.next_token();
        assert_eq!(text.text, "a\nb");
        assert_eq!(text.pos, Pos { line: 2, column: 3 });
        assert_eq!(lexer.next_token().pos, Pos { line: 3, column: 4 });
        assert!(lexer.problems.is_empty());
    }

    #[test]
    fn texts_hold_no_character_the_xml_cannot() {
        for (text, column) in [
            ("x \"a\\u{0}b\"", 5),
            ("x \"a\\u{1b}\"", 5),
            ("x \"\\u{7f}\"", 4),
            ("x \"ab\u{85}\"", 6),
            ("x \"\u{1}\\u{1}\"", 4),
            ("x \"\\u{FFFE}\"", 4),
        ] {
            let mut lexer = Lexer::new(text);
            while lexer.next_token().kind != Kind::End {}
            assert_eq!(lexer.problems.len(), 1, "{text:?}: {:?}", lexer.problems);
            assert_eq!(lexer.problems[0].pos, Pos { line: 1, column }, "{text:?}");
            assert!(lexer.problems[0].message.contains("MobiWfMS XML"));
        }
        let mut lexer = Lexer::new("x \"a\\tb\\r\\n\u{e9}\"");
        while lexer.next_token().kind != Kind::End {}
        assert!(lexer.problems.is_empty(), "{:?}", lexer.problems);
    }

    #[test]
    fn bad_escapes_in_one_text_are_kept_up_to_the_limit() {
        let text = format!("\"{}\"", "\\q".repeat(3 * MAX_PDL_PROBLEMS));
        let mut lexer = Lexer::new(&text);
        assert_eq!(lexer.next_token().kind, Kind::Str);
        assert_eq!(lexer.problems.len(), MAX_PDL_PROBLEMS);
    }

    #[test]
    fn an_escape_s_brace_is_looked_for_within_six_digits() {
        let mut lexer = Lexer::new("\"\\u{1234567}\\u{41}\"");
        let token = lexer.next_token();
        assert_eq!(token.text, "\\u{1234567}A");
        assert_eq!(lexer.problems.len(), 1);
    }

    #[test]
    fn stray_characters_and_open_texts_are_reported_once() {
        let mut lexer = Lexer::new("a @@@ b # c \"d\n \"open");
        while lexer.next_token().kind != Kind::End {}
        let messages: Vec<String> = lexer.problems.iter().map(|d| d.message.clone()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[1].contains("comment starts with //"));
        assert!(messages[2].contains("never closed"));
    }
}
