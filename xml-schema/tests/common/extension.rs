//! Documents for the tests of one language extension: a definition of two activities and a
//! partition document of one, with the extension's elements in an activity, and loading a
//! document to its value or its rendered diagnostics; derived documents read back as written.

use mobiwf_xml_schema::{
    DerivedPartition, Diagnostics, PartitionDocument, WorkflowDefinition, load_definition,
    load_partition, write_partition,
};

/// A two-activity definition, both in one partition; `extra` goes into activity 2 (line 5).
pub fn definition_xml(extra: &str) -> String {
    format!(
        r#"<workflow id="1">
<activities>
<activity id="1"><activityTypeId>1</activityTypeId></activity>
<activity id="2"><activityTypeId>1</activityTypeId>
{extra}
<preconditions><preconditionId>1</preconditionId></preconditions></activity>
</activities>
<activityTypes><activityType id="1"/></activityTypes>
<partitions><partition id="1"><partnerId>1</partnerId><activityId>1</activityId><activityId>2</activityId></partition></partitions>
<partners><partner id="1"><ip>10.0.0.1</ip><skills><activityTypeId>1</activityTypeId></skills></partner></partners>
</workflow>"#
    )
}

/// [`definition_xml`] with `extra`, loaded.
pub fn definition(extra: &str) -> Result<WorkflowDefinition, Diagnostics> {
    load_def(&definition_xml(extra))
}

/// The diagnostics of [`definition_xml`] with `extra` (which must have some), as `d.xml`.
pub fn definition_errors(extra: &str) -> String {
    def_errors(&definition_xml(extra))
}

/// A one-activity partition document (activity 2); `extra` goes into the activity (line 4).
pub fn partition_xml(extra: &str) -> String {
    format!(
        r#"<workflow id="1">
<activities>
<activity id="2"><responseImmediate>0</responseImmediate>
{extra}
</activity>
</activities>
</workflow>"#
    )
}

/// The definition `xml`, loaded.
pub fn load_def(xml: &str) -> Result<WorkflowDefinition, Diagnostics> {
    load_definition(xml.as_bytes()).map(|l| l.value)
}

/// [`partition_xml`] with `extra`, loaded.
pub fn partition(extra: &str) -> Result<PartitionDocument, Diagnostics> {
    load_partition(partition_xml(extra).as_bytes()).map(|l| l.value)
}

/// The diagnostics of the definition `xml` (which must have some), rendered as `d.xml`.
pub fn def_errors(xml: &str) -> String {
    load_def(xml).unwrap_err().render("d.xml")
}

/// The diagnostics of [`partition_xml`] with `extra` (which must have some), as `p.xml`.
pub fn partition_errors(extra: &str) -> String {
    partition(extra).unwrap_err().render("p.xml")
}

/// Each derived partition document, written and read back, is the document itself.
pub fn assert_read_back(derived: &[DerivedPartition]) {
    for part in derived {
        let text = write_partition(&part.document);
        let back = load_partition(text.as_bytes())
            .unwrap_or_else(|d| panic!("{}", d.render("derived")))
            .value;
        assert_eq!(back, part.document);
    }
}
