//! The check in front of every route of an API: `Authorization: Bearer TOKEN`, a token the
//! daemon knows (else 401), whose grant covers what the route needs (else 403). Both answers
//! carry `WWW-Authenticate: Bearer` (RFC 6750) and a JSON `{"error"}` saying what to do. A
//! request let through carries who made it ([`Caller`], a request extension), also when the
//! check is off.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{ApiToken, ApiTokens, Caller, Need};
use crate::metrics::Metrics;

/// A daemon's `router` with the API token routes, behind the token check (each request
/// needing what `settings.need` says), once the administrator's token file is there
/// (`settings.token_file`): what both daemons serve (`daemon::Base::guarded`).
pub fn protect(
    store: Arc<dyn crate::store::Store>,
    settings: super::AuthSettings,
    metrics: Arc<Metrics>,
    router: axum::Router,
) -> anyhow::Result<axum::Router> {
    let (enforce, need) = (settings.enforce, settings.need);
    let tokens = Arc::new(ApiTokens::open(store, settings)?);
    tokens.ensure_file(crate::process::now_ms())?;
    if !enforce {
        tracing::warn!(
            "the API checks no tokens (--insecure-no-auth): anyone who reaches it may do anything"
        );
    }
    let router = router.merge(super::routes(tokens.clone()));
    Ok(guard(router, tokens, need, metrics))
}

/// `router` behind the token check, each request needing what `need` says for its method
/// and path, and handed its [`Caller`] (the token's role and user); refusals counted in
/// `metrics` (`mobiwf_api_refused_total{status}`). Without checking (`--insecure-no-auth`),
/// every request passes, handed [`Caller::Unchecked`].
pub fn guard(
    router: axum::Router,
    tokens: Arc<ApiTokens>,
    need: fn(&Method, &str) -> Need,
    metrics: Arc<Metrics>,
) -> axum::Router {
    if !tokens.settings().enforce {
        return router.layer(axum::middleware::from_fn(
            |mut request: Request, next: Next| async move {
                request.extensions_mut().insert(Caller::Unchecked);
                next.run(request).await
            },
        ));
    }
    router.layer(axum::middleware::from_fn(
        move |mut request: Request, next: Next| {
            let (tokens, metrics) = (tokens.clone(), metrics.clone());
            async move {
                let wanted = need(request.method(), request.uri().path());
                match authorise(&tokens, request.headers(), &wanted) {
                    Ok(token) => {
                        let caller = Caller::Token {
                            id: token.id,
                            user: token.user,
                        };
                        request.extensions_mut().insert(caller);
                        next.run(request).await
                    }
                    Err(refusal) => {
                        let (method, path) = (request.method(), request.uri().path());
                        tracing::debug!(%method, path, "API request refused: {}", refusal.1);
                        metrics.api_refused(refusal.0.as_u16());
                        refused(refusal)
                    }
                }
            }
        },
    ))
}

/// Why a request is refused: its status, the message, the `WWW-Authenticate` value.
type Refusal = (StatusCode, String, &'static str);

fn authorise(tokens: &ApiTokens, headers: &HeaderMap, need: &Need) -> Result<ApiToken, Refusal> {
    let settings = tokens.settings();
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err((
            StatusCode::UNAUTHORIZED,
            format!(
                "this API needs a token: send `Authorization: Bearer TOKEN` (the {} CLI: \
                 --token-file FILE; the administrator's token is in {} on the daemon's \
                 machine, more with `{} api-tokens create`)",
                settings.command,
                settings.token_file.display(),
                settings.command
            ),
            r#"Bearer realm="mobiwf""#,
        ));
    };
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    let Some(token) = presented.and_then(|t| tokens.check(t)) else {
        return Err((
            StatusCode::UNAUTHORIZED,
            format!(
                "the token is not one this daemon knows (revoked, mistyped, or another \
                 daemon's): ask an administrator for one (`{} api-tokens create`)",
                settings.command
            ),
            r#"Bearer realm="mobiwf", error="invalid_token""#,
        ));
    };
    if need.allows(&token.grant) {
        return Ok(token);
    }
    Err((
        StatusCode::FORBIDDEN,
        format!(
            "token {} ({}) may not do this: it needs {need}",
            token.id, token.grant
        ),
        r#"Bearer realm="mobiwf", error="insufficient_scope""#,
    ))
}

fn refused((status, message, challenge): Refusal) -> Response {
    (
        status,
        [(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static(challenge),
        )],
        axum::Json(serde_json::json!({ "error": message })),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_auth::{AuthSettings, Grant, Role};
    use crate::store::MemoryStore;

    fn tokens() -> (tempfile::TempDir, ApiTokens) {
        let dir = tempfile::tempdir().unwrap();
        let settings = AuthSettings {
            enforce: true,
            users: true,
            command: "mobiwf-node",
            token_file: dir.path().join("api.token"),
            need: |_, _| Need::Role(Role::Viewer),
        };
        let tokens = ApiTokens::open(Arc::new(MemoryStore::new()), settings).unwrap();
        (dir, tokens)
    }

    fn bearer(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
        headers.insert(header::AUTHORIZATION, value);
        headers
    }

    #[test]
    fn no_token_or_a_wrong_one_is_401_and_a_low_role_403() {
        let (_dir, tokens) = tokens();
        let (viewer, _) = tokens
            .create(Grant::Role(Role::Viewer), String::new(), 0)
            .unwrap()
            .unwrap();
        let run = Need::Role(Role::Operator);
        let none = authorise(&tokens, &HeaderMap::new(), &run).unwrap_err();
        assert_eq!(none.0, StatusCode::UNAUTHORIZED);
        assert!(none.1.contains("api.token"), "{}", none.1);
        let wrong = authorise(&tokens, &bearer("mwf_api_nope"), &run).unwrap_err();
        assert_eq!(wrong.0, StatusCode::UNAUTHORIZED);
        let low = authorise(&tokens, &bearer(&viewer), &run).unwrap_err();
        assert_eq!(low.0, StatusCode::FORBIDDEN);
        assert!(low.1.contains("the operator role"), "{}", low.1);
        assert!(authorise(&tokens, &bearer(&viewer), &Need::Role(Role::Viewer)).is_ok());
    }
}
