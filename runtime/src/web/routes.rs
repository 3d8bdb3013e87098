//! The sign-in routes every daemon's pages share:
//!
//! - `GET /login?code=CODE`: exchanges a login code (once, within its minutes) for a session
//!   cookie and goes on (303) to the path the link was made for; a spent, expired or unknown
//!   code gets a page saying so (400).
//! - `POST /logout` (form field `csrf`): ends the session and clears the cookie.
//! - `GET /assets/{name}`: the script and the style sheet.
//! - `POST /login-links` with `{"user": "alice", "path": "/"}` (a node) or `{"role":
//!   "operator", "path": "/"}` (the controller; with `"user"` too, the organisation user the
//!   session acts as where one counts: a definition's creator role), on the API behind its
//!   token check: 201
//!   `{"code", "login", "expires_ms"}` (`login` is the path with the code: the daemon's address
//!   before it makes the link); 400 what is wrong. The code is on disk before it is shown.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use maud::html;
use serde::Deserialize;
use serde_json::json;

use super::page::{self, Bar, html as page_html, layout, message};
use super::rules::{self, SESSION_TTL_MS, Speaker};
use super::{LinkGrants, Web, WebSettings};
use crate::api_auth::{Grant, Role};

/// The sign-in routes and the assets, with the security headers.
pub(super) fn pages(web: Web) -> Router {
    Router::new()
        .route("/login", get(login))
        .route("/logout", post(logout))
        .route("/assets/{name}", get(super::assets::serve))
        .with_state(web)
        .layer(axum::middleware::from_fn(page::secure_headers))
}

/// `POST /login-links`.
pub(super) fn links(web: Web) -> Router {
    Router::new()
        .route("/login-links", post(make_link))
        .with_state(web)
}

/// The page for someone not signed in.
pub(super) fn sign_in_page(settings: &WebSettings, why: Option<&str>) -> Response {
    let body = html! {
        section.message {
            h1 { "Sign in" }
            @if let Some(why) = why { p.refused { (why) } }
            p { "Open the sign-in link you were given. To make one, on the daemon's machine:" }
            pre { code { (settings.how_to_sign_in) } }
        }
    };
    let status = if why.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::UNAUTHORIZED
    };
    page_html(status, layout("Sign in", None, &body))
}

/// A page that loads `path` again, from this daemon: the navigation that brings a strict
/// cookie along.
pub(super) fn again_from_here(path: &str) -> Response {
    let path = rules::local_path(path).unwrap_or_else(|_| "/".to_owned());
    let body = html! {
        section.message {
            p { a id="continue" href=(path) { "Continue" } }
        }
    };
    let mut response = page_html(StatusCode::OK, layout("Continue", None, &body));
    if let Ok(value) = HeaderValue::from_str(&format!("0; url={path}")) {
        response.headers_mut().insert("refresh", value);
    }
    response
}

#[derive(Deserialize)]
struct LoginQuery {
    code: Option<String>,
}

async fn login(
    State(web): State<Web>,
    headers: HeaderMap,
    Query(q): Query<LoginQuery>,
) -> Response {
    let Some(code) = q.code.filter(|c| !c.trim().is_empty()) else {
        return sign_in_page(&web.settings, None);
    };
    let now = crate::process::now_ms();
    let sessions = web.sessions.clone();
    let redeemed = tokio::task::spawn_blocking(move || sessions.redeem(code.trim(), now)).await;
    let (signed, then) = match redeemed {
        Ok(Ok(Ok(made))) => made,
        Ok(Ok(Err(refused))) => return sign_in_page(&web.settings, Some(&refused.to_string())),
        Ok(Err(e)) => return failed(&format!("{e:#}")),
        Err(e) => return failed(&e.to_string()),
    };
    let user = signed.session.user.as_deref().unwrap_or("-");
    tracing::info!(
        session = %signed.session.id,
        grant = %signed.session.grant,
        acting_as = user,
        "signed in with a login link"
    );
    let cookie = rules::session_cookie(
        &web.settings.cookie,
        &signed.token,
        SESSION_TTL_MS,
        secure(&web.settings, &headers),
    );
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, then)]).into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// Whether the cookie is to be `Secure`: the settings say so, or the request came over TLS.
fn secure(settings: &WebSettings, headers: &HeaderMap) -> bool {
    settings.secure
        || headers
            .get("x-forwarded-proto")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"))
}

fn failed(why: &str) -> Response {
    message(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something failed",
        &format!("The daemon could not do it: {why}"),
        None,
    )
}

/// A form that carries only the CSRF token.
#[derive(Deserialize)]
pub(super) struct CsrfForm {
    #[serde(default)]
    csrf: Option<String>,
}

async fn logout(
    State(web): State<Web>,
    headers: HeaderMap,
    Form(form): Form<CsrfForm>,
) -> Response {
    let signed = match web.require(&headers, None) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    if let Some(refused) = web.csrf_refusal(&signed, form.csrf.as_deref()) {
        return refused;
    }
    let (sessions, id) = (web.sessions.clone(), signed.session.id.clone());
    match tokio::task::spawn_blocking(move || sessions.end(&id)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return failed(&e.to_string()),
        Err(e) => return failed(&e.to_string()),
    }
    tracing::info!(session = %signed.session.id, "signed out");
    let body = html! {
        section.message {
            h1 { "Signed out" }
            p { "Your session ended. Open a new sign-in link to come back." }
        }
    };
    let mut response = page_html(StatusCode::OK, layout("Signed out", None::<Bar<'_>>, &body));
    let cleared = rules::cleared_cookie(&web.settings.cookie, secure(&web.settings, &headers));
    if let Ok(value) = HeaderValue::from_str(&cleared) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkBody {
    #[serde(default)]
    user: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    path: Option<String>,
}

fn error(status: StatusCode, message: String) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// Whom a link asked with `body` speaks for on a daemon whose links speak for `grants`: a
/// node's, one user; the controller's, a role, and maybe the organisation user it acts as.
fn speaker_of(grants: LinkGrants, body: &LinkBody) -> Result<Speaker, String> {
    let user_ok = |user: &String| crate::api_auth::user_id_problem(user).map_or(Ok(()), Err);
    match (grants, &body.user, &body.role) {
        (LinkGrants::User, Some(user), None) => {
            user_ok(user)?;
            Ok(Grant::User(user.clone()).into())
        }
        (LinkGrants::User, _, _) => {
            Err("a node's login link is for one user: {\"user\": \"alice\"}".to_owned())
        }
        (LinkGrants::Role, user, Some(role)) => {
            if let Some(user) = user {
                user_ok(user)?;
            }
            Ok(Speaker {
                grant: Role::parse(role).map(Grant::Role)?,
                user: user.clone(),
            })
        }
        (LinkGrants::Role, _, None) => Err(
            "the controller's login link is for a role: {\"role\": \"operator\"} (and \
             maybe the user it acts as: \"user\": \"alice\")"
                .to_owned(),
        ),
    }
}

async fn make_link(State(web): State<Web>, Json(body): Json<LinkBody>) -> Response {
    let speaker = match speaker_of(web.settings.grants, &body) {
        Ok(speaker) => speaker,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let then = match rules::local_path(body.path.as_deref().unwrap_or("/")) {
        Ok(then) => then,
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    let now = crate::process::now_ms();
    let sessions = web.sessions.clone();
    match tokio::task::spawn_blocking(move || sessions.issue(speaker, then, now)).await {
        Ok(Ok((code, kept))) => {
            let user = kept.user.as_deref().unwrap_or("-");
            tracing::info!(code = %kept.id, grant = %kept.grant, acting_as = user, "login link made");
            let login = format!("/login?code={code}");
            let answer = json!({ "code": code, "login": login, "expires_ms": kept.expires_ms });
            (StatusCode::CREATED, Json(answer)).into_response()
        }
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(user: Option<&str>, role: Option<&str>) -> LinkBody {
        LinkBody {
            user: user.map(str::to_owned),
            role: role.map(str::to_owned),
            path: None,
        }
    }

    fn grant(grants: LinkGrants, body: &LinkBody) -> Result<Grant, String> {
        speaker_of(grants, body).map(|s| s.grant)
    }

    #[test]
    fn a_node_links_a_user_and_the_controller_a_role() {
        assert_eq!(
            grant(LinkGrants::User, &body(Some("alice"), None)),
            Ok(Grant::User("alice".into()))
        );
        assert!(grant(LinkGrants::User, &body(Some("a b"), None)).is_err());
        assert!(grant(LinkGrants::User, &body(None, Some("operator"))).is_err());
        assert_eq!(
            grant(LinkGrants::Role, &body(None, Some("operator"))),
            Ok(Grant::Role(Role::Operator))
        );
        assert!(grant(LinkGrants::Role, &body(None, Some("root"))).is_err());
        assert!(grant(LinkGrants::Role, &body(Some("alice"), None)).is_err());
    }

    #[test]
    fn a_controller_link_may_name_the_user_its_role_acts_as() {
        assert_eq!(
            speaker_of(LinkGrants::Role, &body(Some("alice"), Some("operator"))),
            Ok(Speaker {
                grant: Grant::Role(Role::Operator),
                user: Some("alice".to_owned()),
            })
        );
        assert!(speaker_of(LinkGrants::Role, &body(Some("a b"), Some("operator"))).is_err());
        assert_eq!(
            speaker_of(LinkGrants::Role, &body(None, Some("viewer"))).map(|s| s.user),
            Ok(None)
        );
    }
}
