//! Turns the bytes of a document into text, honouring its byte-order mark or the `encoding`
//! of its XML declaration (the published examples declare `iso-8859-1`; UTF-8 is the default).

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};

use crate::diagnostic::{Diagnostic, Pos};
use crate::limits::MAX_DOCUMENT_BYTES;
use crate::text::LineIndex;

/// Decodes `src` to text. Refuses documents over [`MAX_DOCUMENT_BYTES`], unknown encodings and
/// bytes that are not valid in the declared encoding.
pub(crate) fn decode(src: &[u8]) -> Result<Cow<'_, str>, Diagnostic> {
    if src.len() > MAX_DOCUMENT_BYTES {
        return Err(Diagnostic::new(
            Pos::START,
            format!(
                "the document is {} bytes, over the limit of {MAX_DOCUMENT_BYTES} bytes \
                 (MAX_DOCUMENT_BYTES); split the workflow or remove unused content",
                src.len()
            ),
        ));
    }
    if let Some((encoding, bom_len)) = Encoding::for_bom(src) {
        return decode_with(encoding, &src[bom_len..]);
    }
    let encoding = match declared_encoding(src) {
        None => UTF_8,
        Some(label) => Encoding::for_label(label.as_bytes()).ok_or_else(|| {
            Diagnostic::new(
                Pos::START,
                format!(
                    "the XML declaration names encoding \"{label}\", which is not known; \
                     use \"UTF-8\" or \"ISO-8859-1\""
                ),
            )
        })?,
    };
    decode_with(encoding, src)
}

fn decode_with<'a>(encoding: &'static Encoding, src: &'a [u8]) -> Result<Cow<'a, str>, Diagnostic> {
    if encoding == UTF_8 {
        return match std::str::from_utf8(src) {
            Ok(text) => Ok(Cow::Borrowed(text)),
            Err(e) => {
                let valid = &src[..e.valid_up_to()];
                // The prefix is valid UTF-8 by construction of `valid_up_to`.
                let prefix = String::from_utf8_lossy(valid);
                let pos = LineIndex::new(&prefix).pos(prefix.len());
                let byte = src.get(e.valid_up_to()).copied().unwrap_or_default();
                Err(Diagnostic::new(
                    pos,
                    format!(
                        "byte 0x{byte:02X} is not valid UTF-8; the document is read as UTF-8 \
                         (its declaration says so, or says nothing): save it as UTF-8, or \
                         declare its real encoding, e.g. <?xml version=\"1.0\" \
                         encoding=\"iso-8859-1\"?>"
                    ),
                ))
            }
        };
    }
    encoding
        .decode_without_bom_handling_and_without_replacement(src)
        .ok_or_else(|| {
            Diagnostic::new(
                Pos::START,
                format!(
                    "the document contains bytes that are not valid {}; save it in the \
                     encoding its declaration names",
                    encoding.name()
                ),
            )
        })
}

/// The `encoding` pseudo-attribute of a leading `<?xml ...?>` declaration, if any.
fn declared_encoding(src: &[u8]) -> Option<String> {
    let head = &src[..src.len().min(256)];
    if !head.starts_with(b"<?xml") {
        return None;
    }
    let end = head.windows(2).position(|w| w == b"?>")?;
    let decl = std::str::from_utf8(&head[..end]).ok()?;
    let after = &decl[decl.find("encoding")? + "encoding".len()..];
    let after = after.trim_start().strip_prefix('=')?.trim_start();
    let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let value = &after[1..];
    Some(value[..value.find(quote)?].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_declaration_is_honoured() {
        let src = b"<?xml version=\"1.0\" encoding=\"iso-8859-1\"?><a>\xe7\xe3o</a>";
        assert!(decode(src).unwrap().contains("ção"));
    }

    #[test]
    fn utf8_is_the_default() {
        let src = "<a>ção</a>".as_bytes();
        assert_eq!(decode(src).unwrap(), "<a>ção</a>");
    }

    #[test]
    fn latin1_bytes_without_declaration_point_at_the_byte() {
        let err = decode(b"<a>\n  x\xe7</a>").unwrap_err();
        assert_eq!(err.pos, Pos { line: 2, column: 4 });
        assert!(err.message.contains("0xE7"), "{}", err.message);
    }

    #[test]
    fn unknown_encoding_is_refused() {
        let err = decode(b"<?xml version='1.0' encoding='klingon'?><a/>").unwrap_err();
        assert!(err.message.contains("klingon"));
    }

    #[test]
    fn utf16_with_bom_is_read() {
        let mut src = vec![0xFF, 0xFE];
        for unit in "<a>é</a>".encode_utf16() {
            src.extend_from_slice(&unit.to_le_bytes());
        }
        assert_eq!(decode(&src).unwrap(), "<a>é</a>");
    }
}
