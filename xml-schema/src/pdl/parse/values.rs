//! The values clauses take: names, references, texts, whole numbers, durations, truth values
//! and words from a fixed list. Each reader takes the tokens of its value and reports what is
//! wrong with them, with what to write instead; `None` when the value cannot be read (the rest
//! of the clause is then the caller's to end).

use super::Parser;
use crate::diagnostic::Pos;
use crate::pdl::ast::{Named, Ref, Target};
use crate::pdl::lexer::Kind;
use crate::read::abbreviate;

impl Parser<'_> {
    /// `TASK_CLASS name`: the task's class, checked as the XML's `<class>` is.
    pub fn class(&mut self, owner: &str) -> Option<crate::model::ClassName> {
        let named = self.name(&format!("the task class of {owner}"))?;
        let text = named.text.trim();
        match crate::model::class_name_problem(text) {
            None => Some(crate::model::ClassName::new(text)),
            Some(problem) => {
                self.error(named.pos, format!("TASK_CLASS of {owner}: {problem}"));
                None
            }
        }
    }

    /// `APPLICATION name` in a task or a task model: the application it starts, checked as the
    /// XML's `<application>` is (whether the definition has it is `validate`'s to say).
    pub fn application_name(&mut self, owner: &str) -> Option<crate::model::ApplicationId> {
        let named = self.name(&format!("the application of {owner}"))?;
        let text = named.text.trim();
        match crate::model::application_id_problem(text) {
            None => Some(crate::model::ApplicationId::new(text)),
            Some(problem) => {
                self.error(named.pos, format!("APPLICATION of {owner}: {problem}"));
                None
            }
        }
    }

    /// A name: a word, or any text in double quotes. `what` says whose name it is, e.g.
    /// `the name of a task`.
    pub fn name(&mut self, what: &str) -> Option<Named> {
        let token = self.peek().clone();
        match token.kind {
            Kind::Word | Kind::Str => {
                self.bump();
                Some(Named {
                    text: token.text.into_owned(),
                    pos: token.pos,
                })
            }
            Kind::Number => {
                self.bump();
                self.error(
                    token.pos,
                    format!(
                        "expected {what}, but found the number {}; a name begins with a letter \
                         or _, or is written in double quotes: \"{}\"",
                        abbreviate(&token.text),
                        abbreviate(&token.text)
                    ),
                );
                None
            }
            _ => {
                self.error(
                    token.pos,
                    format!(
                        "expected {what} (a word, or a text in double quotes), but found {}",
                        token.shown()
                    ),
                );
                None
            }
        }
    }

    /// A reference to `what` (`a task`): its name (a word or a quoted text), or its id (a
    /// whole number).
    pub fn reference(&mut self, what: &str) -> Option<Ref> {
        let token = self.peek().clone();
        match token.kind {
            Kind::Word | Kind::Str => {
                self.bump();
                Some(Ref {
                    to: Target::Name(token.text.into_owned()),
                    pos: token.pos,
                })
            }
            Kind::Number => {
                let id =
                    self.whole::<u64>(&format!("the id of {what}"), "a whole number, 0 or more")?;
                Some(Ref {
                    to: Target::Id(id),
                    pos: token.pos,
                })
            }
            _ => {
                self.error(
                    token.pos,
                    format!(
                        "expected {what}: its name, or its id as a number; found {}",
                        token.shown()
                    ),
                );
                None
            }
        }
    }

    /// References separated by commas, up to the `;` (none at all is an empty list).
    pub fn references(&mut self, what: &str) -> Vec<Ref> {
        self.list(|p| p.reference(what))
    }

    /// Names separated by commas, up to the `;`.
    pub fn names(&mut self, what: &str) -> Vec<Named> {
        self.list(|p| p.name(what))
    }

    /// Items read by `item`, separated by commas, up to a `;` or `}` (not taken). An item that
    /// cannot be read is left out.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Vec<T> {
        let mut out = Vec::new();
        if self.peek().is_punct(';') || self.peek().is_punct('}') {
            return out;
        }
        loop {
            let before = self.peek().pos;
            if let Some(value) = item(self) {
                out.push(value);
            } else if self.peek().pos == before {
                // Nothing was taken: leave the rest to the end of the clause.
                return out;
            }
            if !self.eat(',') {
                return out;
            }
        }
    }

    /// A text in double quotes, `what` in messages (`the DESCRIPTION`).
    pub fn text(&mut self, what: &str) -> Option<String> {
        let token = self.peek().clone();
        if token.kind == Kind::Str {
            self.bump();
            return Some(token.text.into_owned());
        }
        let hint = if matches!(token.kind, Kind::Word | Kind::Number) {
            self.bump();
            format!(": write \"{}\"", abbreviate(&token.text))
        } else {
            String::new()
        };
        self.error(
            token.pos,
            format!(
                "{what} is a text in double quotes, but {} is written{hint}",
                token.shown()
            ),
        );
        None
    }

    /// A whole number of type `T`: `what` names it, `expected` says what fits.
    pub fn whole<T: TryFrom<i128>>(&mut self, what: &str, expected: &str) -> Option<T> {
        let token = self.peek().clone();
        if token.kind != Kind::Number {
            self.error(
                token.pos,
                format!("expected {what}, {expected}, but found {}", token.shown()),
            );
            if token.kind == Kind::Word {
                self.bump();
            }
            return None;
        }
        self.bump();
        let value = token
            .text
            .parse::<i128>()
            .ok()
            .and_then(|n| T::try_from(n).ok());
        if value.is_none() {
            self.error(
                token.pos,
                format!("{what} is {}; expected {expected}", abbreviate(&token.text)),
            );
        }
        value
    }

    /// A number of seconds, 0 or more, then optionally the word `SECONDS`.
    pub fn seconds(&mut self, what: &str) -> Option<u32> {
        let secs = self.whole::<u32>(what, "a whole number of seconds, 0 or more (0 means none)");
        self.unit("SECONDS", what, secs.map(u64::from));
        secs
    }

    /// Takes the optional unit after a number (`SECONDS`, `HOURS`); another unit is reported
    /// with the number converted, for `what` (whose number is `value`).
    pub fn unit(&mut self, unit: &str, what: &str, value: Option<u64>) {
        if self.eat_word(unit) {
            return;
        }
        let token = self.peek().clone();
        let factor: Option<u64> = match token.text.to_ascii_uppercase().as_str() {
            "SECOND" | "SECONDS" | "SEC" | "S" => Some(1),
            "MINUTE" | "MINUTES" | "MIN" => Some(60),
            "HOUR" | "HOURS" | "H" => Some(3600),
            "DAY" | "DAYS" => Some(86_400),
            _ => None,
        };
        let Some(factor) = factor.filter(|_| token.kind == Kind::Word) else {
            return;
        };
        self.bump();
        let base = if unit == "HOURS" { 3600 } else { 1 };
        let converted = value
            .and_then(|v| v.checked_mul(factor))
            .map(|v| format!(": write {} {unit}", v / base))
            .filter(|_| factor % base == 0)
            .unwrap_or_default();
        self.error(
            token.pos,
            format!("{what} counts {}{converted}", unit.to_ascii_lowercase()),
        );
    }

    /// `true` or `false` (in any case); `expected` says what each means.
    pub fn truth(&mut self, what: &str, expected: &str) -> Option<bool> {
        let token = self.peek().clone();
        let value = match token.text.to_ascii_lowercase().as_str() {
            "true" if token.kind == Kind::Word => Some(true),
            "false" if token.kind == Kind::Word => Some(false),
            _ => None,
        };
        if token.kind == Kind::Word || token.kind == Kind::Number {
            self.bump();
        }
        if value.is_none() {
            self.error(
                token.pos,
                format!("{what} is {}; expected {expected}", token.shown()),
            );
        }
        value
    }

    /// One of `choices`, a word compared in any case (and, when `loose`, without its `-` and
    /// `_`); its index. `expected` lists them for a person.
    pub fn choice(
        &mut self,
        what: &str,
        choices: &[&str],
        expected: &str,
        loose: bool,
    ) -> Option<usize> {
        let token = self.peek().clone();
        let fold = |s: &str| {
            let lower = s.to_ascii_lowercase();
            if loose {
                lower.replace(['-', '_'], "")
            } else {
                lower
            }
        };
        let index = (token.kind == Kind::Word)
            .then(|| choices.iter().position(|c| fold(c) == fold(&token.text)))
            .flatten();
        if matches!(token.kind, Kind::Word | Kind::Number | Kind::Str) {
            self.bump();
        }
        if index.is_none() {
            let hint = super::near(&token.text, choices)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default();
            self.error(
                token.pos,
                format!("{what} is {}; expected {expected}{hint}", token.shown()),
            );
        }
        index
    }

    /// Where the next token starts: where a clause's value is.
    pub fn here(&mut self) -> Pos {
        self.peek().pos
    }
}

/// `APPLICATION Name { COMMAND text; SIZE n; OS word; }` at the top, its keyword taken: an
/// application, as the XML's `<application id>` holds it. `None` when its name or command is
/// missing or wrong (the problems are reported).
pub(super) fn application(p: &mut Parser<'_>) -> Option<crate::model::Application> {
    use crate::model::{ApplicationId, MAX_APPLICATION_KIB, application_id_problem, os_problem};
    let Some(name) = p.name("the name of an application") else {
        p.skip_clause();
        return None;
    };
    let text = name.text.trim().to_owned();
    let owner = format!("application {}", abbreviate(&text));
    let id = match application_id_problem(&text) {
        None => Some(ApplicationId::new(text)),
        Some(problem) => {
            p.error(name.pos, format!("the name of an application: {problem}"));
            None
        }
    };
    let (mut command, mut size_kib, mut os) = (None, 0, None);
    p.block(crate::pdl::grammar::Block::Application, &owner, |p, kw| {
        let at = p.here();
        match kw.text.as_ref() {
            "COMMAND" => match p.text("the COMMAND") {
                Some(text) if text.trim().is_empty() => p.error(
                    at,
                    format!("the COMMAND of {owner} is empty; write the command line its device runs with sh -c"),
                ),
                given => command = given,
            },
            "SIZE" => {
                let expected = format!("a size in KiB from 0 to {MAX_APPLICATION_KIB} (MAX_APPLICATION_KIB)");
                match p.whole::<u64>("the SIZE", &expected) {
                    Some(n) if n > MAX_APPLICATION_KIB => {
                        p.error(at, format!("the SIZE of {owner} is {n}; expected {expected}"));
                    }
                    Some(n) => size_kib = n,
                    None => {}
                }
            }
            _ => {
                if let Some(word) = p.name(&format!("the OS of {owner}")) {
                    match os_problem(word.text.trim()) {
                        None => os = Some(word.text.trim().to_owned()),
                        Some(problem) => p.error(word.pos, format!("the OS of {owner}: {problem}")),
                    }
                }
            }
        }
        p.end_clause(&kw.text);
    });
    if command.is_none() {
        p.error(
            name.pos,
            format!(
                "{owner} has no COMMAND; add the command line its device runs with sh -c, e.g. \
                 COMMAND \"editor \\\"$MOBIWF_DATA_DIR\\\"\";"
            ),
        );
    }
    Some(crate::model::Application {
        id: id?,
        command: command?,
        size_kib,
        os,
    })
}
