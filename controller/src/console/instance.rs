//! An instance's page (`GET /console/instances/{id}`): its graph as `graph --svg` draws it
//! (each activity a group with `data-state`), its history as a timeline, its data as its
//! nodes know it, its work items and who holds them; for a session whose role may control
//! (operator and up), the interrupt, resume and cancel forms. `POST
//! /console/instances/{id}/{action}` does what `POST /instances/{id}/{action}` does, through
//! the same function (`crate::api::controlled`), and is refused (403) to a role the API
//! refuses. A failed instance's page also gives such a role a Rerun button per failed
//! activity: `POST /console/instances/{id}/activities/{activity}/rerun`, the controller's
//! rerun as `rerun INSTANCE ACTIVITY` asks it. The state, graph, work items and history
//! follow what the partners report without a reload (`live`); `GET /console/instances/{id}/graph` is the graph alone, which
//! the page's script fetches again (`data-refresh`) only when the live stream cannot be
//! opened.

use axum::Form;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use mobiwf_book::{HistoryEvent, Instance, InstanceState, ItemSummary};
use mobiwf_proto::{ActivityId, ActivityState, Control, InstanceId};
use mobiwf_runtime::web;
use serde::Deserialize;

use super::Console;
use crate::data::DataView;

/// The controls a page offers, with the words of their buttons.
const CONTROLS: [(&str, Control, &str); 3] = [
    ("interrupt", Control::Interrupt, "Interrupt"),
    ("resume", Control::Resume, "Resume"),
    ("cancel", Control::Cancel, "Cancel"),
];

/// What the page shows of an instance, read through the API's functions.
struct Shown {
    live: super::live::Live,
    data: DataView,
}

/// `GET /console/instances/{id}`.
pub(super) async fn page(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Path(id): Path<u64>,
) -> Response {
    let api_path = format!("/instances/{id}");
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, &api_path)) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    let shown = match read(&console, InstanceId(id)).await {
        Ok(Some(shown)) => shown,
        Ok(None) => {
            let why = format!("There is no instance {id}.");
            return super::failed(&signed, StatusCode::NOT_FOUND, &why);
        }
        Err(e) => {
            let why = format!("cannot read instance {id}: {e:#}");
            return super::failed(&signed, StatusCode::SERVICE_UNAVAILABLE, &why);
        }
    };
    let grant = &signed.session.grant;
    let controls = super::may(grant, &Method::POST, &format!("/instances/{id}/interrupt"));
    let reruns = super::may(grant, &Method::POST, &rerun_api_path(id, 0));
    let csrf = signed.csrf();
    let forms = Forms {
        controls: controls.then_some(csrf.as_str()),
        reruns: reruns.then_some(csrf.as_str()),
    };
    let body = body(&shown, &forms);
    let title = format!("Instance {id}");
    web::html(
        StatusCode::OK,
        web::layout(&title, Some(web::bar(&signed, &csrf)), &body),
    )
}

/// `GET /console/instances/{id}/graph`: the graph alone (SVG, as `graph --svg` draws it),
/// for the page to follow.
pub(super) async fn graph(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Path(id): Path<u64>,
) -> Response {
    let api_path = format!("/instances/{id}/graph");
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, &api_path)) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    match console
        .client
        .graph(InstanceId(id), mobiwf_graph::Format::Svg)
        .await
    {
        Ok(Some(svg)) => (
            [
                (header::CONTENT_TYPE, "image/svg+xml"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            svg,
        )
            .into_response(),
        Ok(None) => {
            let why = format!("There is no instance {id}.");
            super::failed(&signed, StatusCode::NOT_FOUND, &why)
        }
        Err(e) => {
            let why = format!("cannot draw instance {id}: {e:#}");
            super::failed(&signed, StatusCode::SERVICE_UNAVAILABLE, &why)
        }
    }
}

/// The instance, its graph, history and data; `None` when there is no such instance.
async fn read(console: &Console, id: InstanceId) -> anyhow::Result<Option<Shown>> {
    let Some(live) = super::live::read(console, id).await? else {
        return Ok(None);
    };
    let client = &console.client;
    let nodes = client.nodes().await?;
    let data = crate::data::read(&client.mesh, &live.instance, &nodes).await;
    Ok(Some(Shown { live, data }))
}

/// The forms a session gets, each with its CSRF token: the controls, and the reruns of a
/// failed instance's failed activities; none for a role that may not.
struct Forms<'a> {
    controls: Option<&'a str>,
    reruns: Option<&'a str>,
}

/// The API's path of a rerun (what the console's rerun is allowed as).
fn rerun_api_path(id: u64, activity: u64) -> String {
    format!("/instances/{id}/activities/{activity}/rerun")
}

/// The page's body, with the `forms` the session gets.
fn body(shown: &Shown, forms: &Forms<'_>) -> Markup {
    let inst = &shown.live.instance;
    html! {
        (super::nav(None))
        h1 { "Instance " (inst.id.0) " " small { (inst.workflow.to_string()) } }
        @if let Some(csrf) = forms.controls {
            section.controls {
                @for (word, _, label) in CONTROLS {
                    form method="post" action=(format!("/console/instances/{}/{word}", inst.id.0)) {
                        input type="hidden" name="csrf" value=(csrf);
                        button type="submit" name="do" value=(word) { (label) }
                    }
                }
            }
        }
        @if let Some(csrf) = forms.reruns { (reruns(inst, csrf)) }
        (super::live::section(&shown.live))
        (data(&shown.data))
    }
}

/// A failed instance's rerun forms, one per failed activity (what `rerun INSTANCE ACTIVITY`
/// does); nothing for an instance in any other state. The controller says why when an
/// activity cannot be rerun (its contingency took over, its partition was given up on).
fn reruns(inst: &Instance, csrf: &str) -> Markup {
    let failed: Vec<_> = inst
        .activities
        .iter()
        .filter(|a| a.state() == ActivityState::Failed)
        .collect();
    html! {
        @if inst.state() == InstanceState::Failed && !failed.is_empty() {
            section.controls.reruns {
                @for a in failed {
                    form method="post"
                        action=(format!("/console/instances/{}/activities/{}/rerun", inst.id.0, a.id.0)) {
                        input type="hidden" name="csrf" value=(csrf);
                        button type="submit" { "Rerun " (a.name) " (" (a.id.0) ")" }
                    }
                }
            }
        }
    }
}

/// The work items and who holds them.
pub(super) fn items(inst: &Instance) -> Markup {
    let name = |id| {
        inst.activities
            .iter()
            .find(|a| a.id == id)
            .map_or(String::new(), |a| a.name.clone())
    };
    html! {
        section.items {
            h2 { "Work items" }
            @if inst.items.is_empty() {
                p.empty { "No work item." }
            } @else {
                table {
                    thead { tr { th { "Activity" } th { "Held by" } th { "Offered to" } th { "Done by" } } }
                    tbody {
                        @for (id, item) in &inst.items {
                            tr data-activity=(id.0) {
                                td { (name(*id)) " (" (id.0) ")" }
                                td { (held(item)) }
                                td { (users(item.offered.iter().map(|u| u.as_str()))) }
                                td { (users(item.done_by.iter().map(|u| u.as_str()))) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Who holds an item, how and since when.
fn held(item: &ItemSummary) -> String {
    let holders: Vec<String> = item
        .holders
        .iter()
        .map(|h| {
            let how = match h.hold {
                mobiwf_proto::Hold::Selected => "selected",
                mobiwf_proto::Hold::Locked => "locked",
            };
            let since = mobiwf_book::format_time(h.since_ms);
            format!("{} ({how} since {since})", h.user.as_str())
        })
        .collect();
    holders.join(", ")
}

fn users<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}

/// The instance data as its nodes know it, and the nodes that did not say.
fn data(view: &DataView) -> Markup {
    html! {
        section.data {
            h2 { "Data" }
            @if view.data.is_empty() {
                p.empty { "No data." }
            } @else {
                table {
                    thead { tr { th { "Name" } th { "Value" } } }
                    tbody {
                        @for datum in &view.data {
                            tr {
                                td { (datum.name) }
                                td { code { (serde_json::to_string(&datum.value).unwrap_or_default()) } }
                            }
                        }
                    }
                }
            }
            @for (node, why) in &view.unanswered {
                p.refused { "Node " (node) " did not answer: " (why) }
            }
        }
    }
}

/// The history, oldest first, in the words of `history`.
pub(super) fn timeline(history: &[HistoryEvent]) -> Markup {
    html! {
        section.history {
            h2 { "History" }
            ol.timeline {
                @for event in history {
                    li {
                        time { (mobiwf_book::format_time(event.at_ms)) }
                        @if let Some(partner) = &event.partner { " " span.partner { (partner.to_string()) } }
                        " " (crate::render::what(&event.what))
                    }
                }
            }
        }
    }
}

/// A control form: only its CSRF token.
#[derive(Deserialize)]
pub(super) struct ControlForm {
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /console/instances/{id}/{action}`: the control, then back to the page (303); 403
/// for a role that may not or a form without the session's CSRF token.
pub(super) async fn act(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Path((id, action)): Path<(u64, String)>,
    Form(form): Form<ControlForm>,
) -> Response {
    let api_path = format!("/instances/{id}/{action}");
    let signed = match super::allowed(&console, &headers, &uri, (&Method::POST, &api_path)) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    if let Some(refused) = console.web.csrf_refusal(&signed, form.csrf.as_deref()) {
        return refused;
    }
    let Some((_, control, _)) = CONTROLS.into_iter().find(|(word, _, _)| *word == action) else {
        let why = format!("No control {action:?}: interrupt, resume or cancel.");
        return super::failed(&signed, StatusCode::NOT_FOUND, &why);
    };
    match crate::api::controlled(&console.client, id, control).await {
        Ok(_) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, format!("/console/instances/{id}"))],
        )
            .into_response(),
        Err((status, why)) => super::failed(&signed, status, &why),
    }
}

/// `POST /console/instances/{id}/activities/{activity}/rerun`: the rerun (the controller's own,
/// as `POST /instances/{id}/activities/{activity}/rerun` does it), then back to the page
/// (303); 403 for a role that may not or a form without the session's CSRF token; 409 with
/// the controller's reason when it does not apply.
pub(super) async fn rerun(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Path((id, activity)): Path<(u64, u64)>,
    Form(form): Form<ControlForm>,
) -> Response {
    let api_path = rerun_api_path(id, activity);
    let signed = match super::allowed(&console, &headers, &uri, (&Method::POST, &api_path)) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    if let Some(refused) = console.web.csrf_refusal(&signed, form.csrf.as_deref()) {
        return refused;
    }
    match console
        .client
        .rerun(InstanceId(id), ActivityId(activity))
        .await
    {
        Ok(Ok(_)) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, format!("/console/instances/{id}"))],
        )
            .into_response(),
        Ok(Err(e @ mobiwf_book::BookError::UnknownInstance(_))) => {
            super::failed(&signed, StatusCode::NOT_FOUND, &e.to_string())
        }
        Ok(Err(e)) => super::failed(&signed, StatusCode::CONFLICT, &e.to_string()),
        Err(e) => super::failed(&signed, StatusCode::SERVICE_UNAVAILABLE, &format!("{e:#}")),
    }
}
