//! Tests of the BPMN import.
