//! `LOOP TO Task WHILE flag MAX n;`: the PDL clause of the XML's `<loop to while max>` (a
//! routing edge that goes back to `Task`). The flag's spelling and the limit are checked by
//! validation, as the XML's are.

use super::Parser;
use crate::pdl::ast::LoopAst;
use crate::pdl::lexer::Kind;

const LOOP_EXAMPLE: &str = "LOOP TO Review WHILE again MAX 5;";

impl Parser<'_> {
    /// `TO Task WHILE flag MAX n` after `LOOP`; `None` when a part is missing (reported).
    pub fn loop_clause(&mut self) -> Option<LoopAst> {
        self.loop_word("TO", "the task each pass starts with")?;
        let to = self.reference("a task (the first of each pass)")?;
        self.loop_word("WHILE", "the completion flag that runs it again")?;
        let flag = self.name("the completion flag that runs the loop again")?;
        self.loop_word("MAX", "how many passes may run")?;
        let max_pos = self.here();
        let max = self.whole::<u32>(
            "the most passes of the loop",
            "a whole number from 2 to MAX_LOOP_PASSES (1000)",
        )?;
        Some(LoopAst {
            to,
            flag,
            max: (max, max_pos),
        })
    }

    /// Takes the word `word` of the clause; reports it missing (`what` follows it).
    fn loop_word(&mut self, word: &str, what: &str) -> Option<()> {
        if self.eat_word(word) {
            return Some(());
        }
        let found = self.peek().clone();
        if found.kind != Kind::End {
            self.error(
                found.pos,
                format!(
                    "expected {word} and {what}, e.g. {LOOP_EXAMPLE} found {}",
                    found.shown()
                ),
            );
        }
        None
    }
}
