//! Maps byte offsets in decoded text to line and column.

use std::cell::Cell;

use crate::diagnostic::Pos;

/// The byte offsets where each line of a text starts, and a cursor at the last position
/// asked for.
///
/// The reader asks for positions in increasing order, so the column is counted on from the
/// cursor rather than from the start of the line: a document written on one long line
/// (generated XML often is) costs linear time, not quadratic.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
    /// (byte offset, 1-based line, 1-based column) of the last position computed.
    cursor: Cell<(usize, usize, usize)>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex {
            text,
            line_starts,
            cursor: Cell::new((0, 1, 1)),
        }
    }

    /// The position of byte `offset` (clamped to the text, rounded down to a character).
    pub(crate) fn pos(&self, offset: usize) -> Pos {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let (last_offset, last_line, last_column) = self.cursor.get();
        let column = if last_line == line && last_offset <= offset {
            crate::work::count(offset - last_offset);
            last_column + self.text[last_offset..offset].chars().count()
        } else {
            let start = self.line_starts[line - 1];
            crate::work::count(offset - start);
            self.text[start..offset].chars().count() + 1
        };
        self.cursor.set((offset, line, column));
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }
}

/// True for a character the MobiWfMS XML reader refuses in a text or an attribute value, so
/// that no reader may let it into a model that is kept as that XML: the control characters
/// (C0 but tab, line feed and carriage return; DEL; C1), which XML 1.0 either cannot hold or
/// holds only to lose them in transit, and U+FFFE and U+FFFF, which are not XML characters.
pub(crate) fn unwritable(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
}

/// How a message names the unwritable character `c`: `control character U+0001`.
pub(crate) fn unwritable_name(c: char) -> String {
    if c.is_control() {
        format!("control character U+{:04X}", u32::from(c))
    } else {
        format!("the non-character U+{:04X}", u32::from(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_count_characters() {
        let idx = LineIndex::new("ab\nçd\n");
        assert_eq!(idx.pos(0), Pos { line: 1, column: 1 });
        assert_eq!(idx.pos(3), Pos { line: 2, column: 1 });
        assert_eq!(idx.pos(5), Pos { line: 2, column: 2 });
        assert_eq!(idx.pos(100), Pos { line: 3, column: 1 });
        // Asking again out of order does not disturb the result.
        assert_eq!(idx.pos(5), Pos { line: 2, column: 2 });
        assert_eq!(idx.pos(1), Pos { line: 1, column: 2 });
        assert_eq!(idx.pos(5), Pos { line: 2, column: 2 });
    }
}
