//! Maps byte offsets in decoded text to line and column.

use crate::diagnostic::Pos;

/// The byte offsets where each line of a text starts.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    /// The position of byte `offset` (clamped to the text, rounded down to a character).
    pub(crate) fn pos(&self, offset: usize) -> Pos {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let start = self.line_starts[line - 1];
        let column = self.text[start..offset].chars().count() + 1;
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
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
    }
}
