//! A deployed definition's page (`GET /console/definitions/{name}?version=V`, the latest
//! version by default), what `GET /definitions/{name}` shows: its versions, when deployed,
//! its creator role, its running instances and its document, every line numbered. For a
//! role the API lets start it, a Start form with one field per input the version declares
//! (typed: a number's field asks for a number, a required one must be filled, a defaulted
//! one shows its default and, left empty, takes it). `POST
//! /console/definitions/{name}/start` starts that version through the controller's own start
//! (`POST /definitions/{name}/instances`) and goes to the new instance's page (303); a
//! refusal is said in words on the page, which keeps what was typed.
//!
//! A console session speaks for a role; its login link may also name the organisation user it
//! acts as (`login-link --role R --user U`), as an API token may. A definition with a creator
//! role starts only for a session that names a member (the start checks it, as the API's
//! does); to a session that names none, its page says how to sign in instead of offering a
//! form that cannot succeed.

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use mobiwf_book::{DefinitionVersion, Start, Starter};
use mobiwf_proto::GivenInputs;
use mobiwf_runtime::web::{self, Signed};
use mobiwf_xml_schema::{DataItem, DataKind, DefinitionName, Input, Language};
use serde::Deserialize;

use super::Console;
use crate::daemon::ShownDefinition;

// The form's fields that give inputs are named `data.NAME`, as the API's query parameters.
use crate::inputs::QUERY_PREFIX;

/// What the page's address asks.
#[derive(Debug, Default, Deserialize)]
pub(super) struct ShowQuery {
    #[serde(default)]
    version: Option<u64>,
}

/// What the page shows besides the definition: a refusal of the last start, and what was
/// typed into its form.
#[derive(Debug, Default)]
struct Said {
    refusal: Option<String>,
    typed: Vec<(String, String)>,
}

/// The API path a start of `name` is.
fn start_api_path(name: &str) -> String {
    format!("/definitions/{name}/instances")
}

/// `GET /console/definitions/{name}`.
pub(super) async fn page(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Path(name): Path<String>,
    Query(q): Query<ShowQuery>,
) -> Response {
    let api_path = format!("/definitions/{name}");
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, &api_path)) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    let version = q.version.map(DefinitionVersion);
    answer(
        &console,
        &signed,
        (&name, version),
        StatusCode::OK,
        &Said::default(),
    )
    .await
}

/// `POST /console/definitions/{name}/start`: fields `csrf`, `version`, `data.NAME`.
pub(super) async fn start(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Path(name): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let api_path = start_api_path(&name);
    let signed = match super::allowed(&console, &headers, &uri, (&Method::POST, &api_path)) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    };
    if let Some(refused) = console.web.csrf_refusal(&signed, field("csrf")) {
        return refused;
    }
    let version = match field("version").map(str::trim).filter(|v| !v.is_empty()) {
        None => None,
        Some(v) => match v.parse() {
            Ok(v) => Some(DefinitionVersion(v)),
            Err(_) => {
                let why = format!("{v:?} is not a version (a number).");
                return super::failed(&signed, StatusCode::BAD_REQUEST, &why);
            }
        },
    };
    let typed: Vec<(String, String)> = fields
        .iter()
        .filter(|(k, _)| k.starts_with(QUERY_PREFIX))
        .cloned()
        .collect();
    // An empty field gives nothing: a defaulted input takes its default, a required one is
    // said missing by the start's own check.
    let given: Vec<(String, String)> = typed
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .cloned()
        .collect();
    let outcome = match crate::inputs::from_query(&given) {
        Err(problem) => Err((StatusCode::BAD_REQUEST, problem)),
        Ok(inputs) => {
            let user = signed.session.user.clone();
            started(&console, (&name, version), user, inputs).await
        }
    };
    match outcome {
        Ok(instance) => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, format!("/console/instances/{instance}"))],
        )
            .into_response(),
        Err((status, why)) => {
            let said = Said {
                refusal: Some(why),
                typed,
            };
            answer(&console, &signed, (&name, version), status, &said).await
        }
    }
}

/// The controller's start, as `POST /definitions/{name}/instances` asks it for a token that
/// names the session's `user` (or none): the new instance's id, or the status and words of
/// the refusal.
async fn started(
    console: &Console,
    (name, version): (&str, Option<DefinitionVersion>),
    user: Option<String>,
    inputs: GivenInputs,
) -> Result<u64, (StatusCode, String)> {
    let start = Start {
        name: DefinitionName::new(name),
        version,
        responsible: None,
        starter: Starter::Token {
            user: user.map(mobiwf_proto::UserId::new),
        },
        inputs,
    };
    match console.client.start(start).await {
        Ok(Ok(started)) => Ok(started.instance.0),
        Ok(Err(e)) => Err((crate::api_definitions::refused(&e).status(), e.to_string())),
        Err(e) => Err((
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the controller did not answer: {e:#}"),
        )),
    }
}

/// The page of `name`'s `version` (the latest when none), with what `said` says.
async fn answer(
    console: &Console,
    signed: &Signed,
    (name, version): (&str, Option<DefinitionVersion>),
    status: StatusCode,
    said: &Said,
) -> Response {
    let shown = match console
        .client
        .definition(DefinitionName::new(name), version)
        .await
    {
        Ok(Ok(shown)) => shown,
        Ok(Err(e)) => {
            let status = crate::api_definitions::refused(&e).status();
            return super::failed(signed, status, &e.to_string());
        }
        Err(e) => {
            let why = format!("cannot read definition {name}: {e:#}");
            return super::failed(signed, StatusCode::SERVICE_UNAVAILABLE, &why);
        }
    };
    let csrf = signed.csrf();
    let starts = super::may(&signed.session.grant, &Method::POST, &start_api_path(name));
    let starting = starts.then(|| Starting {
        csrf: &csrf,
        user: signed.session.user.as_deref(),
    });
    let body = body(&shown, said, starting);
    let title = format!("Definition {name}");
    web::html(
        status,
        web::layout(&title, Some(web::bar(signed, &csrf)), &body),
    )
}

/// What the Start form needs of a session whose role may start: its CSRF token, and the
/// organisation user it acts as, if its link named one.
#[derive(Debug, Clone, Copy)]
struct Starting<'a> {
    csrf: &'a str,
    user: Option<&'a str>,
}

/// The page's body; the Start form when the session may start (`starting`).
fn body(shown: &ShownDefinition, said: &Said, starting: Option<Starting<'_>>) -> Markup {
    let name = shown.name.as_str();
    let instances = format!("/?definition={}", super::list::encode(name));
    html! {
        (super::nav(Some(super::Section::Definitions)))
        h1 { "Definition " (name) " " small { "version " (shown.version.0) } }
        p.versions {
            "Versions: "
            @for v in &shown.versions {
                @if *v == shown.version {
                    strong aria-current="page" { (v.0) }
                } @else {
                    a href=(format!("{}?version={}", super::definitions::link(name), v.0)) { (v.0) }
                }
                " "
            }
            "(latest " (shown.latest.0) "). Deployed "
            (mobiwf_book::format_time(shown.deployed_ms)) ". "
            @if let Some(role) = &shown.creator_role { "Creator role: " (role.as_str()) ". " }
            a href=(instances) { (shown.running) " running" }
        }
        @if let Some(refusal) = &said.refusal {
            p.refused role="alert" { "Not started: " (refusal) }
        }
        @if let Some(starting) = starting { (start_form(shown, said, starting)) }
        h2 { "Document" }
        (super::excerpt::numbered(&shown.document))
    }
}

/// The Start form: one field per declared input of the shown version.
fn start_form(shown: &ShownDefinition, said: &Said, starting: Starting<'_>) -> Markup {
    let name = shown.name.as_str();
    let csrf = starting.csrf;
    let creator = match (&shown.creator_role, starting.user) {
        (Some(role), None) => {
            return html! {
                p.creator {
                    "Only members of role " (role.as_str()) " may start it, and this session "
                    "speaks for no user: sign in with a link that names one ("
                    code { "mobiwf-controller login-link --role operator --user USER" } ")."
                }
            };
        }
        (Some(role), Some(user)) => html! {
            p.creator {
                "Only members of role " (role.as_str()) " may start it: it starts as " (user) "."
            }
        },
        (None, _) => html! {},
    };
    let read = mobiwf_xml_schema::load_definition_in(Language::MobiWfMs, shown.document.as_bytes());
    let Ok(read) = read else {
        return html! { p.refused { "This version does not read back: it cannot be started." } };
    };
    let inputs: Vec<&DataItem> = read
        .value
        .data
        .iter()
        .filter(|d| d.input.is_input())
        .collect();
    let action = format!("{}/start", super::definitions::link(name));
    html! {
        h2 { "Start" }
        (creator)
        form.start method="post" action=(action) {
            input type="hidden" name="csrf" value=(csrf);
            input type="hidden" name="version" value=(shown.version.0);
            @if inputs.is_empty() { p { "It takes no inputs." } }
            @for item in inputs { (input_field(item, said)) }
            button type="submit" { "Start " (name) " version " (shown.version.0) }
        }
    }
}

/// One input's field, typed as declared, holding what was typed.
fn input_field(item: &DataItem, said: &Said) -> Markup {
    let field = format!("{QUERY_PREFIX}{}", item.name);
    let typed = said
        .typed
        .iter()
        .find(|(k, _)| *k == field)
        .map_or("", |(_, v)| v.as_str());
    let (required, default) = match &item.input {
        Input::Required => (true, None),
        Input::Default(d) => (false, Some(d.as_str())),
        Input::No => (false, None),
    };
    let mode = match item.kind {
        DataKind::Number => "decimal",
        DataKind::String | DataKind::File => "text",
    };
    html! {
        label.input data-input=(item.name) {
            (item.name) " " small { "(" (item.kind.as_str())
                @if required { ", required" }
                @if let Some(d) = default { ", default " (d) }
                ")" }
            " "
            input type="text" name=(field) value=(typed) inputmode=(mode)
                required[required] placeholder=[default];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_xml_schema::RoleId;

    fn shown(document: &str, creator_role: Option<&str>) -> ShownDefinition {
        ShownDefinition {
            name: DefinitionName::new("m-1"),
            version: DefinitionVersion(2),
            deployed_ms: 0,
            creator_role: creator_role.map(RoleId::new),
            latest: DefinitionVersion(2),
            versions: vec![DefinitionVersion(1), DefinitionVersion(2)],
            running: 0,
            document: document.to_owned(),
        }
    }

    /// The meter example (inputs `reading` required, `limit` and `note` defaulted), an
    /// activity named as markup.
    fn document() -> String {
        include_str!("../../../examples/data/meter-input.xml").replace(
            "<nameActivity>Report</nameActivity>",
            "<nameActivity>&lt;script&gt;alert(1)&lt;/script&gt;</nameActivity>",
        )
    }

    #[test]
    fn the_document_is_text_and_the_form_asks_the_declared_inputs() {
        let said = Said {
            refusal: Some("<b>no</b>".into()),
            typed: vec![("data.reading".into(), "4<2".into())],
        };
        let page = body(&shown(&document(), None), &said, Some(starting(None))).into_string();
        assert!(!page.contains("<script"), "{page}");
        assert!(page.contains("&amp;lt;script&amp;gt;alert(1)"), "{page}");
        assert!(page.contains("Not started: &lt;b&gt;no"), "{page}");
        assert!(
            page.contains("action=\"/console/definitions/m-1/start\""),
            "{page}"
        );
        assert!(page.contains("name=\"csrf\" value=\"tok\""), "{page}");
        assert!(
            page.contains("href=\"/console/definitions/m-1?version=1\""),
            "{page}"
        );
        // Each input typed as declared, what was typed kept.
        assert!(
            page.contains("name=\"data.reading\" value=\"4&lt;2\" inputmode=\"decimal\" required"),
            "{page}"
        );
        assert!(
            page.contains(
                "name=\"data.limit\" value=\"\" inputmode=\"decimal\" placeholder=\"100\""
            ),
            "{page}"
        );
        assert!(
            page.contains("name=\"data.note\" value=\"\" inputmode=\"text\" placeholder=\"none\""),
            "{page}"
        );
        assert!(!page.contains("data.verdict"), "{page}");
    }

    #[test]
    fn a_viewer_and_a_creator_role_get_no_form() {
        let page = body(&shown(&document(), None), &Said::default(), None).into_string();
        assert!(!page.contains("<form"), "{page}");
        let page = body(
            &shown(&document(), Some("boss")),
            &Said::default(),
            Some(starting(None)),
        )
        .into_string();
        assert!(!page.contains("<form"), "{page}");
        assert!(page.contains("Only members of role boss"), "{page}");
        assert!(
            page.contains("login-link --role operator --user USER"),
            "{page}"
        );
    }

    #[test]
    fn a_session_that_names_a_user_gets_the_form_of_a_creator_role() {
        let page = body(
            &shown(&document(), Some("boss")),
            &Said::default(),
            Some(starting(Some("carol"))),
        )
        .into_string();
        assert!(page.contains("<form"), "{page}");
        assert!(page.contains("it starts as carol"), "{page}");
    }

    fn starting(user: Option<&'static str>) -> Starting<'static> {
        Starting { csrf: "tok", user }
    }
}
