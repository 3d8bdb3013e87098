//! What the daemons' web pages share: sign-in by a one-time login link, sessions in an
//! `HttpOnly`, `SameSite=Strict` cookie, a CSRF token per session on every state-changing
//! form, the layout and the security headers of every page, and the one script and style sheet
//! compiled in. A node serves its users' worklists with it (`node::web`); the controller can
//! serve an operator's console the same way.
//!
//! - `rules`: what codes and sessions are, the CSRF token, safe redirects, cookies (pure).
//! - `sessions`: the codes and sessions a daemon keeps (hashed, synced before shown).
//! - `routes`: `GET /login?code=`, `POST /logout`, `GET /assets/{name}`, and the API's
//!   `POST /login-links` (behind the token check: what `login-link` asks).
//! - `page`: the layout, the plain pages, the security headers.
//! - `assets`: the script and the style sheet, under names that hold their hash.
//! - `streams`: how many live pages are open, in all and by session, and how often each
//!   renders.
//!
//! A session carries exactly the rights of an API token with the same grant
//! (`api_auth::Grant`): a user's own worklist on a node, a role on the controller; the pages
//! decide with `api_auth::Need::allows` as the API does.

mod assets;
mod page;
mod routes;
pub mod rules;
mod sessions;
pub mod streams;

use std::sync::Arc;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub use assets::{script_path, style_path};
pub use page::{Bar, CONTENT_SECURITY_POLICY, html, layout, message, secure_headers};
pub use sessions::{MAX_CODES, MAX_SESSIONS, Sessions, Signed};

use crate::api_auth::Grant;

/// Whom a login link may speak for on a daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkGrants {
    /// One user of the organisation (a node: their own worklist).
    User,
    /// A role (the controller).
    Role,
}

/// How a daemon serves its pages.
#[derive(Debug, Clone)]
pub struct WebSettings {
    /// The session cookie's name ([`rules::cookie_name`] of the daemon's identity).
    pub cookie: String,
    /// Mark the cookie `Secure`: the pages are reached over TLS (a proxy in front that
    /// terminates it). A request that says it came over TLS (`X-Forwarded-Proto: https`)
    /// gets a `Secure` cookie too.
    pub secure: bool,
    /// How a person gets a sign-in link, as the sign-in page says it.
    pub how_to_sign_in: &'static str,
    /// Whom its login links may speak for.
    pub grants: LinkGrants,
}

/// The sessions of a daemon and how its pages are served: what the web routes share.
#[derive(Clone)]
pub struct Web {
    /// The login codes and sessions.
    pub sessions: Arc<Sessions>,
    /// How the pages are served.
    pub settings: Arc<WebSettings>,
}

impl Web {
    /// The sessions the store holds (what is over dropped), served as `settings` say.
    pub fn open(store: Arc<dyn crate::store::Store>, settings: WebSettings) -> anyhow::Result<Web> {
        let sessions = Sessions::open(store, crate::process::now_ms())?;
        Ok(Web {
            sessions: Arc::new(sessions),
            settings: Arc::new(settings),
        })
    }

    /// The pages' own routes: sign-in, sign-out, the assets (no token check: the session is
    /// the check).
    pub fn routes(&self) -> axum::Router {
        routes::pages(self.clone())
    }

    /// `POST /login-links`, for the daemon's API (behind its token check, which decides who
    /// may make links: the administrators).
    pub fn link_routes(&self) -> axum::Router {
        routes::links(self.clone())
    }

    /// The session the request's cookie names, if it is open.
    pub fn signed(&self, headers: &HeaderMap) -> Option<Signed> {
        let cookies = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok());
        let token = rules::cookie_value(cookies, &self.settings.cookie)?;
        self.sessions.check(token, crate::process::now_ms())
    }

    /// The session of the request, or the page to answer instead: how to sign in (401), or,
    /// for a page (`page`: its path, `None` for a form's post) opened from another site, the
    /// same page again from this one (a `SameSite=Strict` cookie is not sent on the first
    /// navigation, and is on the second).
    pub fn require(&self, headers: &HeaderMap, page: Option<&str>) -> Result<Signed, Instead> {
        if let Some(signed) = self.signed(headers) {
            return Ok(signed);
        }
        let cross_site = headers
            .get("sec-fetch-site")
            .is_some_and(|v| v.as_bytes() == b"cross-site");
        if let (true, Some(path)) = (cross_site, page) {
            return Err(Instead(Box::new(routes::again_from_here(path))));
        }
        Err(Instead(Box::new(routes::sign_in_page(
            &self.settings,
            None,
        ))))
    }

    /// `None` when `presented` is the session's CSRF token, else the 403 page to answer.
    pub fn csrf_refusal(&self, signed: &Signed, presented: Option<&str>) -> Option<Response> {
        if signed.csrf_ok(presented) {
            return None;
        }
        let csrf = signed.csrf();
        Some(message(
            StatusCode::FORBIDDEN,
            "Refused",
            "This form did not come from this page (its CSRF token is missing or wrong): \
             reload the page and try again.",
            Some(bar(signed, &csrf)),
        ))
    }
}

/// The page to answer instead of the one asked for (how to sign in, a refusal).
#[derive(Debug)]
pub struct Instead(pub Box<Response>);

impl IntoResponse for Instead {
    fn into_response(self) -> Response {
        *self.0
    }
}

impl From<Response> for Instead {
    fn from(page: Response) -> Instead {
        Instead(Box::new(page))
    }
}

/// The bar of a signed-in page, for `signed` (whose CSRF token is `csrf`).
pub fn bar<'a>(signed: &'a Signed, csrf: &'a str) -> Bar<'a> {
    let who = match &signed.session.grant {
        Grant::User(user) => user.as_str(),
        Grant::Role(role) => role.as_str(),
    };
    Bar { who, csrf }
}
