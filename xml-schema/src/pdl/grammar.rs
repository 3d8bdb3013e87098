//! The keywords of PDL, block by block: what the parser accepts where (and suggests for a
//! misspelt one), and what the writer must quote when a name is spelt like one.

/// A part of a PDL text that holds clauses, each starting with one of its keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Block {
    /// The text itself: the workflow, task models, and what is refused.
    Top,
    /// `WORKFLOW Name { ... }`.
    Workflow,
    /// `TASK Name { ... }` outside the workflow: a task model.
    Model,
    /// `TASK Name : Model { ... }` inside the workflow.
    Task,
    /// `PARTNER Name { ... }`.
    Partner,
    /// `PARTITION Name { ... }`.
    Partition,
    /// `FILE Name { ... }`: WorkToDo's file attributes, not held yet.
    File,
    /// An ordering text: `WORKFLOW_DEFINITIONS P1 : P2;` and its `RELATIVE_ORDER { ... }`,
    /// never inside a definition's text.
    Orderings,
    /// `APPLICATION Name { ... }` at the top: an application semi-automatic tasks start.
    Application,
}

impl Block {
    /// Every block, for finding where a keyword belongs.
    pub const ALL: [Block; 9] = [
        Block::Top,
        Block::Workflow,
        Block::Model,
        Block::Task,
        Block::Partner,
        Block::Partition,
        Block::File,
        Block::Orderings,
        Block::Application,
    ];

    /// The keywords that start a clause of the block.
    pub fn keywords(self) -> &'static [&'static str] {
        match self {
            Block::Top => &["WORKFLOW", "TASK", "APPLICATION"],
            Block::Workflow => &[
                "ID",
                "DESCRIPTION",
                "CREATOR_ROLE",
                "STRING",
                "NUMBER",
                "FILE",
                "TASK",
                "PARTNER",
                "PARTITION",
            ],
            Block::Model => &[
                "ID",
                "DESCRIPTION",
                "TYPE",
                "PRIORITY",
                "DEADLINE",
                "DISCONNECTED_OPERATION",
                "TASK_CLASS",
                "APPLICATION",
            ],
            Block::Task => TASK,
            Block::Partner => &["ID", "DESCRIPTION", "ADDRESS", "SKILLS"],
            Block::Partition => &["ID", "PARTNER", "TIMEOUT", "TASKS"],
            Block::File => &["NAME", "SIZE"],
            Block::Orderings => &["WORKFLOW_DEFINITIONS", "RELATIVE_ORDER"],
            Block::Application => &["COMMAND", "SIZE", "OS"],
        }
    }

    /// The clauses of the block that may be written more than once.
    pub fn repeats(self, keyword: &str) -> bool {
        match self {
            // A second WORKFLOW is the workflow reader's to report, with where the first is.
            Block::Top | Block::Orderings => true,
            Block::Workflow => matches!(
                keyword,
                "STRING" | "NUMBER" | "FILE" | "TASK" | "PARTNER" | "PARTITION"
            ),
            Block::Task => keyword == "ROUTE",
            Block::Model | Block::Partner | Block::Partition | Block::File | Block::Application => {
                false
            }
        }
    }

    /// How messages name the block: `a task`, `a PARTNER { }`.
    pub fn shown(self) -> &'static str {
        match self {
            Block::Top => "the top of the text (outside every { })",
            Block::Workflow => "WORKFLOW { }",
            Block::Model => "a task model (TASK Name { } outside WORKFLOW)",
            Block::Task => "a TASK inside WORKFLOW { }",
            Block::Partner => "a PARTNER { }",
            Block::Partition => "a PARTITION { }",
            Block::File => "a FILE { }",
            Block::Orderings => {
                "an ordering text of its own, which is applied with `mobiwf-controller \
                 orderings apply FILE`, not deployed with a definition"
            }
            Block::Application => "an APPLICATION { }",
        }
    }
}

/// The clauses of a task.
const TASK: &[&str] = &[
    "ID",
    "DESCRIPTION",
    "TYPE",
    "STATUS",
    "PRECONDITIONS",
    "DEPENDS",
    "MERGE",
    "ROUTE",
    "COMPLETION",
    "LOOP",
    "TIME_TO_WAIT",
    "TIMEOUT",
    "CONTINGENCY",
    "COMMAND",
    "COMPENSATION",
    "RETRIES",
    "TASK_CLASS",
    "APPLICATION",
    "IN_CONTEXT",
    "OUT_CONTEXT",
    "ROLE",
    "DEPARTMENT",
    "TEAM",
    "ASSIGNMENT",
    "POLICY",
    "PRIORITY",
    "DISCONNECTED_OPERATION",
    "DEADLINE",
    "PAUSE_STOPS_DEADLINE",
];

/// Words with a meaning inside clauses (`RETRIES 2 WAIT 1 SECONDS`, `ROUTE TO`, `LOOP TO t
/// WHILE f MAX n`, `MERGE OR FLAG x`, `CONTINGENCY RELEASE`, `and(...)`).
const INNER: &[&str] = &[
    "INPUT", "SECONDS", "HOURS", "WAIT", "TO", "FLAG", "BASIS", "METHOD", "BLOCK", "RELEASE",
    "AND", "OR", "VOTE", "WHILE", "MAX",
];

/// The parts of WorkToDo's language that mobiwf does not hold yet, wherever they are written,
/// each with why and what to do instead.
const REFUSED: &[(&str, &str)] = &[(
    "QUERY",
    "mobiwf's instance data holds STRING, NUMBER and FILE values, not database queries; \
         declare what the query gives as a STRING or a FILE",
)];

/// Why `word`, a keyword of WorkToDo that mobiwf does not hold yet, is refused; `None` for any
/// other word.
pub(super) fn refused(word: &str) -> Option<&'static str> {
    REFUSED
        .iter()
        .find(|(keyword, _)| *keyword == word)
        .map(|(_, why)| *why)
}

/// True when `word` is spelt like a keyword of any block or inside a clause, in any case: the
/// writer puts such a name in quotes, so it can never be taken for the keyword.
pub(super) fn is_reserved(word: &str) -> bool {
    Block::ALL
        .iter()
        .flat_map(|b| b.keywords().iter())
        .chain(INNER)
        .chain(REFUSED.iter().map(|(keyword, _)| keyword))
        .any(|k| k.eq_ignore_ascii_case(word))
}

/// The block other than `here` whose clause `word` starts, if any: said when a clause is
/// written in the wrong block.
pub(super) fn home_of(word: &str, here: Block) -> Option<Block> {
    Block::ALL
        .into_iter()
        .find(|b| *b != here && b.keywords().contains(&word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_are_reserved_in_any_case_and_find_their_block() {
        assert!(is_reserved("role") && is_reserved("TO") && is_reserved("and"));
        assert!(is_reserved("query") && refused("QUERY").is_some() && refused("ROLE").is_none());
        assert!(!is_reserved("A1"));
        assert_eq!(home_of("SKILLS", Block::Task), Some(Block::Partner));
        assert_eq!(home_of("ROLE", Block::Task), None);
        assert_eq!(
            home_of("RELATIVE_ORDER", Block::Top),
            Some(Block::Orderings)
        );
        assert!(is_reserved("workflow_definitions") && refused("RELATIVE_ORDER").is_none());
        assert!(Block::Task.repeats("ROUTE") && !Block::Task.repeats("ROLE"));
        assert!(is_reserved("application") && refused("APPLICATION").is_none());
        assert_eq!(home_of("OS", Block::Task), Some(Block::Application));
    }
}
