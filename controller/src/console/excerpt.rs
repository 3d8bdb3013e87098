//! A document as the console shows it: every line numbered, and a reader's or validator's
//! problems each with the lines around it and the offending line marked, as a compiler
//! prints them (line numbers, the line, a caret under the column, the character at the column
//! highlighted). Pure: text and the parser's own [`Diagnostics`] in, markup out; every piece
//! of the document is text in the page, never markup.

use maud::{Markup, html};
use mobiwf_xml_schema::{Diagnostic, Diagnostics};

/// Lines shown before and after a problem's line.
pub(super) const CONTEXT_LINES: usize = 2;

/// The most problems a page shows; the rest are counted.
pub(super) const MAX_SHOWN: usize = 50;

/// `document`'s problems, sorted by place, each with its excerpt.
pub(super) fn diagnostics(document: &str, problems: &Diagnostics) -> Markup {
    let lines: Vec<&str> = document.lines().collect();
    let mut sorted: Vec<&Diagnostic> = problems.iter().collect();
    sorted.sort_by_key(|d| d.pos);
    let hidden = sorted.len().saturating_sub(MAX_SHOWN);
    html! {
        div.diagnostics role="alert" {
            p { strong { (count(problems.len())) } " in the document: nothing was deployed." }
            ol {
                @for d in sorted.iter().take(MAX_SHOWN) {
                    li.diagnostic data-line=(d.pos.line) data-column=(d.pos.column) {
                        @if d.pos.is_known() {
                            code.at { (d.pos.line) ":" (d.pos.column) } ": "
                        }
                        span.message { (d.message) }
                        @if d.pos.is_known() { (excerpt(&lines, d)) }
                    }
                }
            }
            @if hidden > 0 { p { "And " (hidden) " more." } }
        }
    }
}

/// "1 problem", "3 problems".
fn count(n: usize) -> String {
    if n == 1 {
        "1 problem".to_owned()
    } else {
        format!("{n} problems")
    }
}

/// The lines around `d`'s line, numbered, its own marked: the character at its column
/// highlighted and a caret under it.
fn excerpt(lines: &[&str], d: &Diagnostic) -> Markup {
    let at = d.pos.line as usize;
    // A problem past the last line (the end of a document without a final newline) points at
    // the last line's end.
    let shown_at = at.min(lines.len().max(1));
    let first = shown_at.saturating_sub(CONTEXT_LINES).max(1);
    let last = (shown_at + CONTEXT_LINES).min(lines.len());
    let width = last.max(shown_at).to_string().len();
    html! {
        pre.excerpt {
            @for n in first..=last.max(first) {
                @let text = lines.get(n - 1).copied().unwrap_or("");
                @if n == shown_at {
                    (marked_line(n, width, text, d.pos.column as usize))
                } @else {
                    span.line { span.n { (format!("{n:>width$} | ")) } (text) "\n" }
                }
            }
        }
    }
}

/// Line `n` with the character at `column` (1-based, in characters) highlighted, and the
/// caret line under it (tabs kept, so the caret stands under the character however wide a
/// tab shows).
fn marked_line(n: usize, width: usize, text: &str, column: usize) -> Markup {
    let column = column.max(1);
    let split = text
        .char_indices()
        .nth(column - 1)
        .map_or(text.len(), |(i, _)| i);
    let (before, rest) = text.split_at(split);
    let mut chars = rest.chars();
    let marked: String = chars.next().map(String::from).unwrap_or_default();
    let after = chars.as_str();
    let under: String = before
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    html! {
        span.line.offending data-line=(n) {
            span.n { (format!("{n:>width$} > ")) }
            (before) mark { (marked) } (after) "\n"
        }
        span.caret { (" ".repeat(width)) " | " (under) "^" "\n" }
    }
}

/// The whole document, every line numbered (a deployed definition's page).
pub(super) fn numbered(document: &str) -> Markup {
    let lines: Vec<&str> = document.lines().collect();
    let width = lines.len().max(1).to_string().len();
    html! {
        pre.document {
            @for (i, text) in lines.iter().enumerate() {
                span.line id=(format!("L{}", i + 1)) {
                    span.n { (format!("{:>width$} | ", i + 1)) } (text) "\n"
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_xml_schema::Pos;

    fn at(line: u32, column: u32, message: &str) -> Diagnostic {
        Diagnostic::new(Pos { line, column }, message)
    }

    const DOCUMENT: &str = "one\ntwo\nthree <x>\nfour\nfive\nsix\nseven";

    #[test]
    fn a_problem_shows_its_lines_around_it_with_its_own_marked() {
        let page = diagnostics(DOCUMENT, &vec![at(3, 7, "no <x> here")].into()).into_string();
        assert!(
            page.contains("<strong>1 problem</strong> in the document"),
            "{page}"
        );
        assert!(page.contains("3:7"), "{page}");
        // Two lines before and after, numbered; not further.
        for (n, text) in [(1, "one"), (2, "two"), (4, "four"), (5, "five")] {
            let shown = format!("{n} | </span>{text}\n");
            assert!(page.contains(&shown), "{shown}: {page}");
        }
        assert!(!page.contains("six"), "{page}");
        // The offending line marked, its character at the column highlighted, a caret under.
        assert!(
            page.contains("3 &gt; </span>three <mark>&lt;</mark>x&gt;"),
            "{page}"
        );
        assert!(page.contains("  |       ^"), "{page}");
        assert!(page.contains("data-line=\"3\" data-column=\"7\""), "{page}");
    }

    #[test]
    fn problems_are_sorted_and_those_at_the_edges_keep_within_the_document() {
        let problems = vec![
            at(7, 99, "past the end of the last line"),
            at(1, 1, "first"),
            at(0, 0, "no place"),
        ]
        .into();
        let page = diagnostics(DOCUMENT, &problems).into_string();
        assert!(page.contains("<strong>3 problems</strong>"), "{page}");
        let order: Vec<usize> = ["no place", "first", "past the end"]
            .iter()
            .map(|m| page.find(m).unwrap())
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{page}");
        assert!(page.contains("1 &gt; </span><mark>o</mark>ne"), "{page}");
        // Past the line's end: the caret after it, nothing highlighted.
        assert!(page.contains("7 &gt; </span>seven<mark></mark>"), "{page}");
        // An empty document still has a line to point at.
        let empty = diagnostics("", &vec![at(1, 1, "empty")].into()).into_string();
        assert!(empty.contains("1 &gt; </span><mark></mark>"), "{empty}");
    }

    #[test]
    fn columns_count_characters_and_tabs_keep_the_caret_under_its_character() {
        let page = diagnostics("\tné <b>", &vec![at(1, 5, "here")].into()).into_string();
        assert!(page.contains("\tné <mark>&lt;</mark>b&gt;"), "{page}");
        assert!(page.contains("| \t   ^"), "{page}");
    }

    #[test]
    fn the_document_and_the_messages_are_text_never_markup() {
        let document = "<script>alert(1)</script>";
        let page = diagnostics(document, &vec![at(1, 2, "<script>bad</script>")].into())
            .into_string()
            + &numbered(document).into_string();
        assert!(!page.contains("<script"), "{page}");
        assert!(page.contains("&lt;script&gt;bad"), "{page}");
        assert!(page.contains("id=\"L1\""), "{page}");
    }

    #[test]
    fn past_the_most_shown_the_rest_are_counted() {
        let problems: Vec<Diagnostic> = (1..=60).map(|i| at(1, i, "again")).collect();
        let page = diagnostics("x", &problems.into()).into_string();
        assert!(page.contains("<strong>60 problems</strong>"), "{page}");
        assert!(page.contains("And 10 more."), "{page}");
    }
}
