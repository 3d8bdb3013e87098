//! The two BPMN texts the import reads as values: a sequence flow's condition (the completion
//! flag it tests) and a timer's ISO 8601 duration.

use crate::limits::MAX_DURATION_SECS;
use crate::model::flag_problem;

/// The completion flag a `conditionExpression` tests: `${flag == 'approved'}`,
/// `#{flag == "approved"}`, `flag == 'approved'` or a bare `approved`; `Ok(None)` for an empty
/// condition (none). Anything else is refused with the forms that are read.
pub(crate) fn condition_flag(text: &str) -> Result<Option<String>, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let inner = ["${", "#{"]
        .iter()
        .find_map(|open| trimmed.strip_prefix(open)?.strip_suffix('}'))
        .unwrap_or(trimmed)
        .trim();
    let flag = match inner.strip_prefix("flag") {
        Some(rest) if rest.trim_start().starts_with("==") => {
            let value = rest.trim_start()["==".len()..].trim();
            unquote(value)
        }
        _ if is_word(inner) => Some(inner),
        _ => None,
    };
    match flag {
        Some("true" | "false") | None => Err(format!(
            "condition `{trimmed}` is not one mobiwf reads: a flow out of an exclusive gateway \
             is taken when the task before the gateway ends with a completion flag; write \
             ${{flag == 'approved'}}, flag == 'approved' or just approved"
        )),
        Some(flag) => match flag_problem(flag) {
            Some(problem) => Err(format!("condition `{trimmed}`: {problem}")),
            None => Ok(Some(flag.to_owned())),
        },
    }
}

/// `'x'` or `"x"` → `x`.
fn unquote(value: &str) -> Option<&str> {
    ['\'', '"'].iter().find_map(|q| {
        value
            .strip_prefix(*q)?
            .strip_suffix(*q)
            .filter(|v| !v.contains(*q))
    })
}

/// A run of the characters a flag may hold.
fn is_word(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Whole seconds of an ISO 8601 duration `P[nD][T[nH][nM][nS]]` (whole numbers, at least one
/// part, more than zero seconds in all).
pub(crate) fn duration_secs(text: &str) -> Result<u32, String> {
    let text = text.trim();
    let bad = || {
        format!(
            "timeDuration `{text}` is not a duration mobiwf reads: write ISO 8601 days, hours, \
             minutes and whole seconds, more than none, e.g. PT30S, PT5M, PT1H30M or P2D"
        )
    };
    let rest = text.strip_prefix('P').ok_or_else(bad)?;
    let (date, time) = match rest.split_once('T') {
        Some((date, time)) if !time.is_empty() => (date, Some(time)),
        Some(_) => return Err(bad()),
        None => (rest, None),
    };
    let mut total: u64 = 0;
    let mut parts = 0;
    for (section, units) in [
        (Some(date), &[('D', 86_400)][..]),
        (time, &[('H', 3_600), ('M', 60), ('S', 1)][..]),
    ] {
        let Some(mut section) = section else { continue };
        for (unit, secs) in units {
            if let Some((n, after)) = section.split_once(*unit) {
                let n: u64 = n.parse().map_err(|_| bad())?;
                total = total.saturating_add(n.saturating_mul(*secs));
                parts += 1;
                section = after;
            }
        }
        if !section.is_empty() {
            return Err(bad());
        }
    }
    if parts == 0 || total == 0 {
        return Err(bad());
    }
    if total > u64::from(MAX_DURATION_SECS) {
        return Err(format!(
            "timeDuration `{text}` is {total} seconds, over the limit of {MAX_DURATION_SECS} \
             seconds a time limit can hold (MAX_DURATION_SECS)"
        ));
    }
    Ok(u32::try_from(total).unwrap_or(MAX_DURATION_SECS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_name_a_flag() {
        for text in [
            "${flag == 'approved'}",
            "#{flag==\"approved\"}",
            " flag == 'approved' ",
            "approved",
            "${approved}",
        ] {
            assert_eq!(
                condition_flag(text),
                Ok(Some("approved".to_owned())),
                "{text}"
            );
        }
        assert_eq!(condition_flag("  "), Ok(None));
        for text in [
            "true",
            "${amount > 100}",
            "flag == approved",
            "flag == 'two words'",
        ] {
            assert!(condition_flag(text).is_err(), "{text}");
        }
    }

    #[test]
    fn durations_are_iso_8601() {
        assert_eq!(duration_secs("PT30S"), Ok(30));
        assert_eq!(duration_secs("PT1H30M"), Ok(5_400));
        assert_eq!(duration_secs("P2D"), Ok(172_800));
        assert_eq!(duration_secs("P1DT1S"), Ok(86_401));
        for text in ["30", "PT", "P", "PT0S", "PT1.5S", "PT1S1M", "P1Y", "PT5X"] {
            assert!(duration_secs(text).is_err(), "{text}");
        }
        assert!(
            duration_secs("P99999D")
                .unwrap_err()
                .ends_with("(MAX_DURATION_SECS)")
        );
    }
}
