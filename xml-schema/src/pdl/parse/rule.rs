//! `DEPENDS rule`: a dependency rule as *Synchronization and Disconnected Operation in
//! WorkToDo* (§2.2) writes it, `and(T1 -> SUCCEEDED, or(T2 -> FAILED, T3 -> RUNNING))`. A term
//! that cannot be read is reported and left out, its siblings still read; rules nest at most
//! [`MAX_RULE_DEPTH`] deep.

use super::Parser;
use crate::limits::MAX_RULE_DEPTH;
use crate::model::TaskState;
use crate::pdl::ast::RuleAst;
use crate::pdl::lexer::Kind;

const EXAMPLE: &str = "e.g. DEPENDS and(Check -> SUCCEEDED, or(Pay -> FAILED, Ship -> RUNNING));";

impl Parser<'_> {
    /// The rule after `DEPENDS` of `owner`; `None` when nothing of it could be read.
    pub(super) fn rule(&mut self, owner: &str) -> Option<RuleAst> {
        self.rule_at(owner, 0)
    }

    /// A rule nested inside `depth` `and`s and `or`s.
    fn rule_at(&mut self, owner: &str, depth: usize) -> Option<RuleAst> {
        let token = self.peek().clone();
        let operator = token.kind == Kind::Word
            && (token.text.eq_ignore_ascii_case("and") || token.text.eq_ignore_ascii_case("or"))
            && self.peek_second().is_punct('(');
        if !operator {
            return self.term(owner);
        }
        self.bump();
        self.bump();
        if depth >= MAX_RULE_DEPTH {
            self.error(
                token.pos,
                format!(
                    "the DEPENDS rule of {owner} nests and(...) and or(...) more than \
                     {MAX_RULE_DEPTH} deep (MAX_RULE_DEPTH); write it flatter"
                ),
            );
            self.skip_parenthesis();
            return None;
        }
        let (rules, written) = self.operands(owner, depth + 1);
        if rules.is_empty() && written > 0 {
            // Every rule inside was reported; leave this one out too, so that it is not
            // reported again as empty.
            return None;
        }
        Some(if token.text.eq_ignore_ascii_case("and") {
            RuleAst::And(token.pos, rules)
        } else {
            RuleAst::Or(token.pos, rules)
        })
    }

    /// The rules inside `and(` or `or(` (taken), up to its `)` (taken), and how many were
    /// written (read or not); none is an empty list.
    fn operands(&mut self, owner: &str, depth: usize) -> (Vec<RuleAst>, usize) {
        let mut rules = Vec::new();
        let mut written = 0;
        if self.eat(')') {
            return (rules, written);
        }
        loop {
            written += 1;
            let rule = self.rule_at(owner, depth);
            let read = rule.is_some();
            rules.extend(rule);
            if self.eat(',') {
                continue;
            }
            if self.eat(')') {
                return (rules, written);
            }
            if read {
                let found = self.peek().clone();
                self.error(
                    found.pos,
                    format!(
                        "expected , or ) in the DEPENDS rule of {owner}, but found {}; {EXAMPLE}",
                        found.shown()
                    ),
                );
            }
            self.skip_parenthesis();
            return (rules, written);
        }
    }

    /// Skips to the `)` that closes the parenthesis open here (taken), stopping at the end of
    /// the clause.
    fn skip_parenthesis(&mut self) {
        let mut depth = 1usize;
        loop {
            match self.peek().kind {
                Kind::End | Kind::Punct(';' | '}') => return,
                Kind::Punct('(') => depth += 1,
                Kind::Punct(')') => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// `Task -> STATE`.
    fn term(&mut self, owner: &str) -> Option<RuleAst> {
        let pos = self.here();
        let task = self.reference("a task (a term of the rule: Task -> STATE)")?;
        let arrow = self.peek().clone();
        if arrow.kind != Kind::Arrow {
            self.error(
                arrow.pos,
                format!(
                    "expected -> and the state the task must have entered, but found {}; {EXAMPLE}",
                    arrow.shown()
                ),
            );
            return None;
        }
        self.bump();
        let state = self.state(owner)?;
        Some(RuleAst::Term { pos, task, state })
    }

    /// A task state, in any case (`SUCCEDED` too).
    fn state(&mut self, owner: &str) -> Option<TaskState> {
        let token = self.peek().clone();
        if matches!(token.kind, Kind::Word | Kind::Number | Kind::Str) {
            self.bump();
        }
        let state = (token.kind == Kind::Word)
            .then(|| TaskState::parse(&token.text))
            .flatten();
        if state.is_none() {
            let names: Vec<&str> = TaskState::ALL.iter().map(|s| s.published()).collect();
            let hint = super::near(&token.text, &names)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_default();
            self.error(
                token.pos,
                format!(
                    "{} in the DEPENDS rule of {owner} is not a task state; expected {}{hint}",
                    token.shown(),
                    state_names(&names)
                ),
            );
        }
        state
    }
}

/// `NOT_READY, ..., CANCELLED or SKIPPED`.
fn state_names(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, init)) => format!("{} or {last}", init.join(", ")),
        None => String::new(),
    }
}
