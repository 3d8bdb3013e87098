//! The operator's console: the controller's instances in a browser, signed in with a login
//! link (`mobiwf-controller login-link --role R`). A session stands for a token of its role
//! and may do what such a token may: every page and action asks the API's own table
//! (`crate::api_access::need`) and acts through the API's own functions.
//!
//! - `GET /?state=S&definition=NAME&id=ID&after=ID`: the instances, a page at a time
//!   (`crate::listing`, as `GET /instances` pages them), filtered or found by id.
//! - `GET /console/instances/{id}`, `POST /console/instances/{id}/{interrupt|resume|cancel}`:
//!   an instance's page and an operator's controls (`instance`), and
//!   `POST /console/instances/{id}/activities/{activity}/rerun`: a failed activity rerun. The pages live under
//!   `/console/` because the API's JSON has `/instances/...`.
//! - `GET /console/instances/{id}/events`: the instance's state, graph, work items and
//!   history, live (server-sent events: `live`), so the page follows what the partners report
//!   without a reload.
//! - `GET /console/instances/{id}/graph`: the graph alone, which the page's script fetches
//!   again every [`live::FALLBACK_MS`] (`data-refresh`) only when the live stream cannot be
//!   opened (no `EventSource`, or refused: too many open).
//! - `GET /console/nodes`: the registered nodes, their users and who is away (`nodes`).
//! - `GET /console/org`: the organisation: users, roles, departments, teams, devices, and who
//!   is offered no new work and why (`org`).
//! - `GET /console/definitions`, `POST /console/definitions`: the deployed definitions and a
//!   form that checks or deploys a document, its problems shown at their lines
//!   (`definitions`, `excerpt`); `GET /console/definitions/{name}`, `POST
//!   /console/definitions/{name}/start`: a definition's versions and document, and a Start
//!   form with its inputs (`definition`).
//! - Sign-in, sign-out, assets: `mobiwf_runtime::web`.
//!
//! Every page carries the runtime's security headers; every form its session's CSRF token.

mod definition;
mod definitions;
mod excerpt;
mod instance;
mod list;
pub mod live;
mod nodes;
mod org;

use axum::Router;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::routing::{get, post};
use maud::{Markup, html};
use mobiwf_runtime::api_auth::Grant;
use mobiwf_runtime::web::{self, Signed, Web};

use crate::daemon::ControllerClient;

/// What the pages' handlers share.
#[derive(Clone)]
pub(crate) struct Console {
    client: ControllerClient,
    web: Web,
    /// How many live instance pages may stream at once ([`live::MAX_CONSOLE_STREAMS`]).
    streams: web::streams::StreamSlots,
}

/// The console's pages, on `client`, with the sessions of `web`; with the security headers.
pub fn router(client: ControllerClient, web: Web) -> Router {
    let console = Console {
        client,
        web: web.clone(),
        streams: web::streams::StreamSlots::new(live::MAX_CONSOLE_STREAMS, "MAX_CONSOLE_STREAMS"),
    };
    Router::new()
        .route("/", get(list::page))
        .route("/console/nodes", get(nodes::page))
        .route("/console/org", get(org::page))
        .route(
            "/console/definitions",
            get(definitions::page).post(definitions::post),
        )
        .route("/console/definitions/{name}", get(definition::page))
        .route("/console/definitions/{name}/start", post(definition::start))
        .route("/console/instances/{id}", get(instance::page))
        .route("/console/instances/{id}/events", get(live::stream))
        .route("/console/instances/{id}/graph", get(instance::graph))
        .route("/console/instances/{id}/{action}", post(instance::act))
        .route(
            "/console/instances/{id}/activities/{activity}/rerun",
            post(instance::rerun),
        )
        .with_state(console)
        .layer(axum::middleware::from_fn(web::secure_headers))
        .merge(web.routes())
}

/// The session of the request, if it may make an API request with `method` on `api_path`;
/// else the page to answer instead: how to sign in, or a refusal (403).
fn allowed(
    console: &Console,
    headers: &HeaderMap,
    uri: &Uri,
    (method, api_path): (&Method, &str),
) -> Result<Signed, web::Instead> {
    // A page opened from another site is loaded again from here; a form's post never is.
    let page = (method == Method::GET).then(|| uri.path_and_query().map_or("/", |p| p.as_str()));
    let signed = console.web.require(headers, page)?;
    if may(&signed.session.grant, method, api_path) {
        return Ok(signed);
    }
    let csrf = signed.csrf();
    Err(web::message(
        StatusCode::FORBIDDEN,
        "Refused",
        "Your session's role may not do this: ask for a sign-in link with a role that may.",
        Some(web::bar(&signed, &csrf)),
    )
    .into())
}

/// Whether `grant` may make an API request with `method` on `api_path`, as the API's table
/// says.
fn may(grant: &Grant, method: &Method, api_path: &str) -> bool {
    crate::api_access::need(method, api_path).allows(grant)
}

/// The console's sections, as its navigation names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    Instances,
    Definitions,
    Org,
    Nodes,
}

impl Section {
    const ALL: [Section; 4] = [
        Section::Instances,
        Section::Definitions,
        Section::Org,
        Section::Nodes,
    ];

    fn path(self) -> &'static str {
        match self {
            Section::Instances => "/",
            Section::Definitions => "/console/definitions",
            Section::Org => "/console/org",
            Section::Nodes => "/console/nodes",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Section::Instances => "Instances",
            Section::Definitions => "Definitions",
            Section::Org => "Organisation",
            Section::Nodes => "Nodes",
        }
    }
}

/// The console's navigation, `current` marked.
fn nav(current: Option<Section>) -> Markup {
    html! {
        nav.sections aria-label="Console" {
            @for section in Section::ALL {
                @if Some(section) == current {
                    a href=(section.path()) aria-current="page" { (section.words()) }
                } @else {
                    a href=(section.path()) { (section.words()) }
                }
            }
        }
    }
}

/// A page that says the daemon could not do something (500, or what `status` says).
fn failed(signed: &Signed, status: StatusCode, why: &str) -> axum::response::Response {
    let csrf = signed.csrf();
    web::message(status, "Not done", why, Some(web::bar(signed, &csrf)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_runtime::api_auth::Role;

    #[test]
    fn a_viewer_reads_and_an_operator_also_controls() {
        let viewer = Grant::Role(Role::Viewer);
        let operator = Grant::Role(Role::Operator);
        assert!(may(&viewer, &Method::GET, "/instances/7"));
        assert!(!may(&viewer, &Method::POST, "/instances/7/interrupt"));
        assert!(may(&operator, &Method::POST, "/instances/7/interrupt"));
        assert!(!may(&Grant::User("ann".into()), &Method::GET, "/instances"));
    }
}
