//! Sections of BENCHMARKS.md that their own runs write (`mobiwf-bench soak`, the startup
//! measurements), between `<!-- NAME:begin -->` and `<!-- NAME:end -->`: a run replaces its
//! section and leaves the rest alone, and the main report carries every section of the file
//! it replaces, so that no run erases another's figures.

use std::path::Path;

fn markers(name: &str) -> (String, String) {
    (
        format!("<!-- {name}:begin -->"),
        format!("<!-- {name}:end -->"),
    )
}

/// `text` with section `name` replaced by `content` (added at the end when there is none).
pub fn replace(text: &str, name: &str, content: &str) -> String {
    let (begin, end) = markers(name);
    let block = format!("{begin}\n{}\n{end}", content.trim_end());
    match (text.find(&begin), text.find(&end)) {
        (Some(b), Some(e)) if b < e => {
            format!("{}{block}{}", &text[..b], &text[e + end.len()..])
        }
        _ => format!("{}\n\n{block}\n", text.trim_end()),
    }
}

/// Every marked section of `text`, whole (markers included), in order.
pub fn all(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(b) = rest.find("<!-- ") {
        let after = &rest[b + 5..];
        let Some(name) = after
            .split_whitespace()
            .next()
            .and_then(|w| w.strip_suffix(":begin"))
        else {
            rest = after;
            continue;
        };
        let (_, end) = markers(name);
        let Some(e) = rest.find(&end) else { break };
        found.push(rest[b..e + end.len()].to_owned());
        rest = &rest[e + end.len()..];
    }
    found
}

/// Writes section `name` into the report at `path` (made when missing).
pub fn write(path: &Path, name: &str, content: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    std::fs::write(path, replace(&text, name, content))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// `report` followed by the sections the file at `path` holds now (what a new main report
/// keeps of the old one).
pub fn carried(path: &Path, report: &str) -> String {
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let kept = all(&old);
    if kept.is_empty() {
        return report.to_owned();
    }
    format!("{}\n\n{}\n", report.trim_end(), kept.join("\n\n"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_section_is_added_then_replaced_and_the_rest_stays() {
        let text = replace("# Report\n\nfigures\n", "soak", "## Soak\nv1");
        assert!(text.starts_with("# Report\n\nfigures\n\n<!-- soak:begin -->\n## Soak\nv1\n"));
        let text = replace(&text, "startup", "## Startup\ns1");
        let text = replace(&text, "soak", "## Soak\nv2");
        assert!(
            text.contains("v2") && !text.contains("v1") && text.contains("s1"),
            "{text}"
        );
        let sections = all(&text);
        assert_eq!(sections.len(), 2, "{sections:?}");
        assert!(
            sections[0].starts_with("<!-- soak:begin -->")
                && sections[0].ends_with("<!-- soak:end -->")
        );
    }
}
