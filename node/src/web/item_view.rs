//! What an item's page shows, pure: its facts and description, what it reads (files as
//! download links), the buttons its state allows, the completion form (a field per value it
//! writes, typed as the definition's `<data>` declares it), the delegation form, and, after an
//! action that was refused, the reason where the buttons were.

use maud::{Markup, html};
use mobiwf_people::EntryState;
use mobiwf_proto::DataValue;
use mobiwf_xml_schema::DataKind;

use super::view::{facts, item_name, item_path};
use crate::daemon::{ItemDetail, ReadValue};

/// What became of the action just taken on the page, shown where the buttons are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// Refused: the item cannot be worked this way (or at all: "no longer available").
    Refused(String),
    /// Sent to the item's host, not answered yet.
    Pending(String),
}

/// The page of an item that is no longer on the user's worklist, after an action on it:
/// the reason where the buttons were.
pub fn gone_page(instance: u64, activity: u64, said: &Said) -> Markup {
    html! {
        h1 { "Activity " (activity) " of instance " (instance) }
        section.actions { (said_markup(said)) }
        p { a href="/" { "Back to the worklist" } }
    }
}

fn said_markup(said: &Said) -> Markup {
    match said {
        Said::Refused(why) => html! { p.gone role="alert" { (why) } },
        Said::Pending(what) => html! { p.pending role="status" { (what) } },
    }
}

/// The body of an item's page; `csrf` goes into every form.
pub fn item_page(detail: &ItemDetail, csrf: &str, said: Option<&Said>, now_ms: u64) -> Markup {
    let entry = &detail.entry;
    let info = &entry.entry.info;
    html! {
        h1 { (item_name(entry)) }
        (facts(entry, now_ms))
        @if !info.description.is_empty() { p.description { (info.description) } }
        (reads(detail))
        @if let Some(said) = said { (said_markup(said)) }
        @if !matches!(said, Some(Said::Refused(why)) if why.contains("no longer available")) {
            (actions(detail, csrf))
        }
        p { a href="/" { "Back to the worklist" } }
    }
}

fn reads(detail: &ItemDetail) -> Markup {
    let path = item_path(&detail.entry);
    html! {
        h2 { "What it reads" }
        @match &detail.reads {
            None => p.empty { "Not known on this device: its host holds it." },
            Some(reads) if reads.is_empty() => p.empty { "Nothing." },
            Some(reads) => dl.reads {
                @for read in reads {
                    dt { (read.name) }
                    dd { (read_value(&path, read)) }
                }
            },
        }
    }
}

fn read_value(item_path: &str, read: &ReadValue) -> Markup {
    match &read.value {
        None => html! { span.empty { "not known yet" } },
        Some(DataValue::String(text) | DataValue::Number(text)) => html! { (text) },
        Some(DataValue::File(file)) => html! {
            a href=(format!("{item_path}/files/{}", read.name)) download=(read.name) {
                "download (" (file.size) " bytes)"
            }
        },
    }
}

/// One button: a form posting `action` on the item, with the CSRF token.
fn button(path: &str, action: &str, label: &str, csrf: &str, primary: bool) -> Markup {
    html! {
        form method="post" action=(format!("{path}/{action}")) {
            input type="hidden" name="csrf" value=(csrf);
            button class=[primary.then_some("primary")] type="submit" name="action" value=(action) { (label) }
        }
    }
}

fn actions(detail: &ItemDetail, csrf: &str) -> Markup {
    let entry = &detail.entry.entry;
    let path = item_path(&detail.entry);
    let paused = entry.info.paused_ms.is_some();
    let held = entry.state != EntryState::Offered;
    if entry.disabled.is_some() {
        return html! {};
    }
    html! {
        section.actions {
            @match entry.state {
                EntryState::Offered => {
                    (button(&path, "select", "Select", csrf, true))
                    @if entry.info.disconnected { (button(&path, "lock", "Lock for offline", csrf, false)) }
                }
                EntryState::Selected => { (button(&path, "release", "Release", csrf, false)) }
                EntryState::Locked => { (button(&path, "unlock", "Unlock", csrf, false)) }
            }
            @if held && paused { (button(&path, "resume", "Resume", csrf, false)) }
            @if held && !paused { (button(&path, "pause", "Pause", csrf, false)) }
        }
        @if held && !paused {
            (complete_form(detail, &path, csrf))
            h2 { "Delegate" }
            form.complete method="post" action=(format!("{path}/delegate")) {
                input type="hidden" name="csrf" value=(csrf);
                label { "To user" input type="text" name="to" required autocomplete="off"; }
                button type="submit" { "Delegate" }
            }
        }
    }
}

/// The input for a value of `kind` named `name`.
fn value_input(name: &str, kind: DataKind) -> Markup {
    match kind {
        DataKind::String => html! { input type="text" name=(format!("value.{name}")); },
        DataKind::Number => html! {
            input type="number" step="any" inputmode="decimal" name=(format!("value.{name}"));
        },
        DataKind::File => html! { input type="file" name=(format!("file.{name}")); },
    }
}

fn complete_form(detail: &ItemDetail, path: &str, csrf: &str) -> Markup {
    html! {
        h2 { "Complete" }
        form.complete method="post" action=(format!("{path}/complete")) enctype="multipart/form-data" {
            input type="hidden" name="csrf" value=(csrf);
            @match &detail.writes {
                Some(writes) => @for (name, kind) in writes {
                    label { (name) " (" (kind.as_str()) ")" (value_input(name, *kind)) }
                },
                None => label {
                    "Values it writes, one NAME=VALUE a line (its host checks them)"
                    textarea name="values" rows="3" {}
                },
            }
            label { "Flag (a decision its routes read, if any)" input type="text" name="flag" autocomplete="off"; }
            label { "Detail" textarea name="detail" rows="2" {} }
            fieldset {
                legend { "Outcome" }
                label { input type="radio" name="outcome" value="succeeded" checked; " done" }
                label { input type="radio" name="outcome" value="failed"; " could not be done" }
            }
            button.primary type="submit" { "Complete" }
        }
    }
}
