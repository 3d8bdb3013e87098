//! Hostile sizes cost linear work: a `<reads>` as long as `MAX_TEXT_BYTES` allows (the same
//! name again and again, or all different and undeclared), far more declarations than
//! `MAX_DATA_ITEMS`, and a chain of stand-ins that each read something. Counted in steps
//! (`crate::work`), at half the sizes and at the sizes, instead of timed.

use crate::load_definition;
use crate::work::{assert_linear, steps_of};

/// Declares `reading`, `note` and `photo`.
const DATA: &str = r#"<data><value name="reading" type="number"/><value name="note" type="string"/><file name="photo"/></data>"#;

/// A definition whose first activity writes `reading` `repeats` times, whose second reads
/// `undeclared` different names nothing declares, and whose `<data>` declares `declarations`
/// files: the steps of reading and checking it.
fn steps_of_long_lists(repeats: usize, undeclared: usize, declarations: usize) -> u64 {
    let repeated = "reading ".repeat(repeats);
    let many: String = (0..undeclared).map(|k| format!("n{k} ")).collect();
    let declared: String = (0..declarations)
        .map(|k| format!("<file name=\"f{k}\"/>"))
        .collect();
    let xml = format!(
        r#"<workflow id="1">
<activities>
<activity id="1"><activityTypeId>1</activityTypeId><writes>{repeated}</writes></activity>
<activity id="2"><activityTypeId>1</activityTypeId><reads>{many}</reads><preconditions><preconditionId>1</preconditionId></preconditions></activity>
</activities>
<activityTypes><activityType id="1"/></activityTypes>
<data>{declared}</data>
</workflow>"#
    );
    let (errors, steps) = steps_of(|| load_definition(xml.as_bytes()));
    let errors = errors.err().map_or(0, |e| e.len());
    assert!(errors > undeclared, "{errors} errors");
    steps
}

/// A definition of `n` activities each the contingency activity of the one before and each
/// reading `note`, which nothing writes: the steps of reading and checking it.
fn steps_of_stand_in_chain(n: usize) -> u64 {
    let chain: String = (1..=n)
        .map(|k| {
            format!(
                "<activity id=\"{k}\"><activityTypeId>1</activityTypeId><contingencyActivityId>{}\
                 </contingencyActivityId><reads>note</reads></activity>",
                k + 1
            )
        })
        .collect();
    let xml = format!(
        "<workflow id=\"1\"><activities>{chain}</activities><activityTypes><activityType \
         id=\"1\"/></activityTypes>{DATA}</workflow>"
    );
    let (errors, steps) = steps_of(|| load_definition(xml.as_bytes()));
    let errors = errors.err().map_or(0, |e| e.len());
    assert!(errors >= n, "{errors} errors");
    steps
}

#[test]
fn hostile_sizes_cost_linear_work() {
    assert_linear(
        "long lists and declarations",
        20_000,
        || steps_of_long_lists(4_000, 4_500, 20_000),
        || steps_of_long_lists(8_000, 9_000, 40_000),
    );
    assert_linear(
        "a chain of stand-ins",
        10_000,
        || steps_of_stand_in_chain(10_000),
        || steps_of_stand_in_chain(20_000),
    );
}
