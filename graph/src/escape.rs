//! Text from documents and registrations (activity, partner and node names, flags) made safe
//! for the two outputs: every name passes here on its way into SVG or DOT, so a name cannot
//! open an element, end an attribute or a DOT string, or hold a character the XML cannot.

/// `text` for XML character data and attribute values (double-quoted): `& < > " '` as
/// entities, and a character XML 1.0 cannot hold (most control characters) as U+FFFD.
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if xml_char(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// True for a character XML 1.0 allows (its `Char` production).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
        || c >= '\u{10000}'
}

/// `text` inside a double-quoted DOT string: `"` and `\` escaped (a backslash would start
/// one of DOT's label escapes), a line break as DOT's `\n`, other control characters as
/// spaces.
pub fn dot(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `text`, the last one `…` when it was cut (the whole name goes
/// in the element's title).
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
