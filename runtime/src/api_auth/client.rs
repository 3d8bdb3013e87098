//! The client side of the token check, for both CLIs and the benchmark: an HTTP client that
//! shows a bearer token with every request (and speaks TLS as `crate::tls` says), the token a
//! command shows (a file, the environment, or a file the daemon keeps), and the token check's
//! refusal told apart from the daemon's own answers.

use std::path::Path;

use super::{EXIT_NOT_AUTHORISED, is_auth_refusal};

/// An HTTP client that sends `Authorization: Bearer TOKEN` with every request (marked
/// sensitive, so it never shows in a debug print), or a plain one without a token; to an
/// `https://` API it trusts the CA certificates in `ca` (`--api-ca`) and the platform's roots.
pub fn bearer_client(token: Option<&str>, ca: Option<&Path>) -> anyhow::Result<reqwest::Client> {
    let mut builder = crate::tls::client_builder(ca)?;
    if let Some(token) = token {
        let mut bearer = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| anyhow::anyhow!("the API token holds characters a token cannot"))?;
        bearer.set_sensitive(true);
        builder = builder.default_headers(reqwest::header::HeaderMap::from_iter([(
            reqwest::header::AUTHORIZATION,
            bearer,
        )]));
    }
    Ok(builder.build()?)
}

/// The base URL of the API at `location`, as a CLI's `--api` or a daemon's `api` file gives
/// it: `https://HOST:PORT` (or `http://...`) as it is, a bare `HOST:PORT` over plain HTTP.
pub fn base_url(location: &str) -> String {
    let location = location.trim().trim_end_matches('/');
    let lower = location.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        location.to_owned()
    } else {
        format!("http://{location}")
    }
}

/// The token in environment variable `var`, trimmed; none when unset or blank.
pub fn token_from_env(var: &str) -> Option<String> {
    std::env::var(var)
        .ok()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
}

/// The token a command shows: the one in `file` (its `--token-file`), else the one in
/// environment variable `env`, else the one in `fallback` when that file exists (a node's
/// `DIR/api.token`); none otherwise.
pub fn token(
    file: Option<&Path>,
    env: &str,
    fallback: Option<&Path>,
) -> anyhow::Result<Option<String>> {
    if let Some(file) = file {
        return Ok(Some(crate::secret::read_token_file(file)?));
    }
    if let Some(token) = token_from_env(env) {
        return Ok(Some(token));
    }
    match fallback {
        Some(file) if file.exists() => Ok(Some(crate::secret::read_token_file(file)?)),
        _ => Ok(None),
    }
}

/// The token check refused a request, for want of a token (401) or of a role (403 with
/// `WWW-Authenticate`): the command exits with [`EXIT_NOT_AUTHORISED`].
#[derive(Debug)]
pub struct NotAuthorised {
    /// The HTTP status.
    pub status: reqwest::StatusCode,
    /// The API's message, when it gave one.
    pub error: Option<String>,
}

impl std::fmt::Display for NotAuthorised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.error {
            Some(error) => write!(f, "not authorised: {error}"),
            None => write!(f, "not authorised: HTTP {}", self.status),
        }
    }
}

impl std::error::Error for NotAuthorised {}

/// `response`, unless it is the token check's refusal ([`NotAuthorised`], with the API's
/// message).
pub async fn authorised(response: reqwest::Response) -> Result<reqwest::Response, NotAuthorised> {
    let status = response.status();
    let challenged = response
        .headers()
        .contains_key(reqwest::header::WWW_AUTHENTICATE);
    if !is_auth_refusal(status.as_u16(), challenged) {
        return Ok(response);
    }
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    Err(NotAuthorised {
        status,
        error: body["error"].as_str().map(str::to_owned),
    })
}

/// The exit code of a command's error: [`EXIT_NOT_AUTHORISED`] when the API refused the
/// token, `otherwise` else.
pub fn exit_code_of(e: &anyhow::Error, otherwise: u8) -> u8 {
    if e.downcast_ref::<NotAuthorised>().is_some() {
        EXIT_NOT_AUTHORISED
    } else {
        otherwise
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment variable no test sets.
    const UNSET: &str = "MOBIWF_TEST_UNSET_TOKEN";

    #[test]
    fn the_token_file_wins_then_the_environment_then_the_daemons_file() {
        let dir = tempfile::tempdir().unwrap();
        let given = dir.path().join("given.token");
        let own = dir.path().join("api.token");
        std::fs::write(&given, "mwf_api_given\n").unwrap();
        std::fs::write(&own, "mwf_api_own\n").unwrap();
        let missing = dir.path().join("none.token");
        assert_eq!(
            token(Some(&given), UNSET, Some(&own)).unwrap().as_deref(),
            Some("mwf_api_given")
        );
        assert_eq!(
            token(None, UNSET, Some(&own)).unwrap().as_deref(),
            Some("mwf_api_own")
        );
        assert_eq!(token(None, UNSET, Some(&missing)).unwrap(), None);
        assert_eq!(token(None, UNSET, None).unwrap(), None);
        assert!(
            token(Some(&missing), UNSET, Some(&own)).is_err(),
            "a --token-file that cannot be read is an error, not the next source"
        );
    }

    #[test]
    fn an_api_location_is_plain_http_unless_it_says_its_scheme() {
        assert_eq!(base_url("127.0.0.1:7700"), "http://127.0.0.1:7700");
        assert_eq!(base_url("https://ctl:7700/\n"), "https://ctl:7700");
        assert_eq!(base_url("HTTPS://ctl:7700"), "HTTPS://ctl:7700");
        assert_eq!(base_url("http://[::1]:7700"), "http://[::1]:7700");
    }

    #[test]
    fn a_refusal_says_the_apis_message_or_its_status_and_exits_6() {
        let said = NotAuthorised {
            status: reqwest::StatusCode::FORBIDDEN,
            error: Some("this needs the operator role".into()),
        };
        assert_eq!(
            said.to_string(),
            "not authorised: this needs the operator role"
        );
        let bare = NotAuthorised {
            status: reqwest::StatusCode::UNAUTHORIZED,
            error: None,
        };
        assert_eq!(bare.to_string(), "not authorised: HTTP 401 Unauthorized");
        assert_eq!(exit_code_of(&bare.into(), 2), EXIT_NOT_AUTHORISED);
        assert_eq!(exit_code_of(&anyhow::anyhow!("unreachable"), 2), 2);
    }
}
