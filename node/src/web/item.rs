//! An item's page and what a person does on it: select, release, lock, unlock, pause, resume,
//! delegate (a form each) and complete (a multipart form: outcome, flag, detail, the values and
//! files it writes). Each action is the JSON API's (`api_people::action_named`,
//! `api_people::act_on`); a done action goes on to the item's page (or, once the item is off the
//! user's hands, the worklist), a refused one shows its reason where the buttons were
//! ("no longer available" when someone else took it), never an error page.

use std::collections::BTreeMap;

use axum::extract::{Form, Multipart, Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use mobiwf_proto::{ActivityId, DataValue, InstanceId, UserId};
use mobiwf_runtime::web::Signed;
use serde::Deserialize;

use super::item_view::{Said, gone_page, item_page};
use super::{Pages, signed_page, signed_user, trouble};
use crate::api_people::{Acted, Details, act_on, action_named};

pub(super) async fn page(
    State(pages): State<Pages>,
    parts: Parts,
    Path((instance, activity)): Path<(u64, u64)>,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    shown(
        &pages,
        &signed,
        user,
        (instance, activity),
        None,
        StatusCode::OK,
    )
    .await
}

/// The item's page, with what became of an action (`said`), answered with `status`; the
/// "gone" page when the item is no longer on the user's worklist.
async fn shown(
    pages: &Pages,
    signed: &Signed,
    user: UserId,
    (instance, activity): (u64, u64),
    said: Option<Said>,
    status: StatusCode,
) -> Response {
    let asked = pages
        .client
        .item(user, InstanceId(instance), ActivityId(activity))
        .await;
    match asked {
        Ok(Ok(Some(detail))) => {
            let now = mobiwf_runtime::process::now_ms();
            let body = item_page(&detail, &signed.csrf(), said.as_ref(), now);
            let title = super::view::item_name(&detail.entry);
            signed_page(status, signed, &title, &body)
        }
        Ok(Ok(None)) => {
            let said = said.unwrap_or_else(|| {
                Said::Refused(format!(
                    "activity {activity} of instance {instance} is not on your worklist (or no \
                     longer available)"
                ))
            });
            let status = if status == StatusCode::OK {
                StatusCode::NOT_FOUND
            } else {
                status
            };
            let body = gone_page(instance, activity, &said);
            signed_page(status, signed, "No longer available", &body)
        }
        Ok(Err(not_here)) => trouble(signed, StatusCode::FORBIDDEN, &not_here),
        Err(e) => trouble(signed, StatusCode::SERVICE_UNAVAILABLE, &format!("{e:#}")),
    }
}

/// A form with the CSRF token and, for a delegation, whom to.
#[derive(Deserialize)]
pub(super) struct ActForm {
    #[serde(default)]
    csrf: Option<String>,
    #[serde(default)]
    to: Option<String>,
}

pub(super) async fn act(
    State(pages): State<Pages>,
    parts: Parts,
    Path((instance, activity, action)): Path<(u64, u64, String)>,
    Form(form): Form<ActForm>,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    if let Some(refused) = pages.web.csrf_refusal(&signed, form.csrf.as_deref()) {
        return refused;
    }
    let details = Details {
        to: form
            .to
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.trim().to_owned()),
        ..Details::default()
    };
    acted(
        &pages,
        &signed,
        user,
        (instance, activity),
        &action,
        details,
    )
    .await
}

/// Carries out `word` with `details` as `user` and answers with what it came to.
async fn acted(
    pages: &Pages,
    signed: &Signed,
    user: UserId,
    (instance, activity): (u64, u64),
    word: &str,
    details: Details,
) -> Response {
    let item = (instance, activity);
    let action = match action_named(word, details) {
        Ok(action) => action,
        Err((status, why)) => {
            return shown(pages, signed, user, item, Some(Said::Refused(why)), status).await;
        }
    };
    let key = (InstanceId(instance), ActivityId(activity));
    match act_on(&pages.client, user.clone(), key, action).await {
        Acted::Done => {
            // Once the item is off the user's hands, the worklist; else the item again.
            let to = if matches!(word, "select" | "lock" | "pause" | "resume") {
                format!("/items/{instance}/{activity}")
            } else {
                "/".to_owned()
            };
            (StatusCode::SEE_OTHER, [(header::LOCATION, to)]).into_response()
        }
        Acted::Pending { message, .. } => {
            let said = Some(Said::Pending(message));
            shown(pages, signed, user, item, said, StatusCode::ACCEPTED).await
        }
        Acted::Refused(status, why) => {
            shown(pages, signed, user, item, Some(Said::Refused(why)), status).await
        }
    }
}

/// A completion as its form sent it.
#[derive(Default)]
struct Completed {
    csrf: Option<String>,
    failed: bool,
    flag: Option<String>,
    detail: Option<String>,
    values: BTreeMap<String, String>,
    files: Vec<(String, Vec<u8>)>,
}

/// The fields of the completion form: `csrf`, `outcome`, `flag`, `detail`, `value.NAME`,
/// `file.NAME` (a file chosen), `values` (`NAME=VALUE` lines, when the writes are not known
/// here). Empty fields say nothing.
async fn completion_of(mut form: Multipart) -> Result<Completed, String> {
    let mut done = Completed::default();
    while let Some(field) = form.next_field().await.map_err(|e| e.body_text())? {
        let name = field.name().unwrap_or_default().to_owned();
        if let Some(file) = name.strip_prefix("file.") {
            let file = file.to_owned();
            let chosen = field.file_name().is_some_and(|f| !f.is_empty());
            let bytes = field.bytes().await.map_err(|e| e.body_text())?;
            if chosen {
                done.files.push((file, bytes.to_vec()));
            }
            continue;
        }
        let text = field.text().await.map_err(|e| e.body_text())?;
        let given = (!text.trim().is_empty()).then(|| text.trim().to_owned());
        match name.as_str() {
            "csrf" => done.csrf = given,
            "outcome" => done.failed = text == "failed",
            "flag" => done.flag = given,
            "detail" => done.detail = given,
            "values" => {
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    let (k, v) = line.split_once('=').ok_or_else(|| {
                        format!("{line:?} is not NAME=VALUE: write one value a line")
                    })?;
                    done.values.insert(k.trim().to_owned(), v.trim().to_owned());
                }
            }
            other => {
                if let (Some(value), Some(given)) = (other.strip_prefix("value."), given) {
                    done.values.insert(value.to_owned(), given);
                }
            }
        }
    }
    Ok(done)
}

pub(super) async fn complete(
    State(pages): State<Pages>,
    parts: Parts,
    Path((instance, activity)): Path<(u64, u64)>,
    form: Multipart,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    let item = (instance, activity);
    let done = match completion_of(form).await {
        Ok(done) => done,
        Err(why) => {
            let said = Some(Said::Refused(why));
            return shown(&pages, &signed, user, item, said, StatusCode::BAD_REQUEST).await;
        }
    };
    // The token first: nothing is kept for a form that did not come from this page.
    if let Some(refused) = pages.web.csrf_refusal(&signed, done.csrf.as_deref()) {
        return refused;
    }
    let written = match crate::api::kept_off(&pages.client.files, done.values, done.files).await {
        Ok(written) => written,
        Err(why) => {
            let said = Some(Said::Refused(why));
            return shown(&pages, &signed, user, item, said, StatusCode::BAD_REQUEST).await;
        }
    };
    let details = Details {
        failed: done.failed,
        detail: done.detail,
        flag: done.flag,
        to: None,
        written,
    };
    acted(&pages, &signed, user, item, "complete", details).await
}

pub(super) async fn download(
    State(pages): State<Pages>,
    parts: Parts,
    Path((instance, activity, name)): Path<(u64, u64, String)>,
) -> Response {
    let (signed, user) = match signed_user(&pages, &parts) {
        Ok(signed) => signed,
        Err(page) => return page.into_response(),
    };
    let key = (InstanceId(instance), ActivityId(activity));
    let detail = match pages.client.item(user, key.0, key.1).await {
        Ok(Ok(Some(detail))) => detail,
        Ok(Ok(None)) => {
            let why = format!("activity {activity} of instance {instance} is not on your worklist");
            return trouble(&signed, StatusCode::NOT_FOUND, &why);
        }
        Ok(Err(why)) => return trouble(&signed, StatusCode::FORBIDDEN, &why),
        Err(e) => return trouble(&signed, StatusCode::SERVICE_UNAVAILABLE, &format!("{e:#}")),
    };
    // Only a file the item reads, as this node knows it.
    let file = detail.reads.iter().flatten().find_map(|r| match &r.value {
        Some(DataValue::File(file)) if r.name == name => Some(file.clone()),
        _ => None,
    });
    let Some(file) = file else {
        let why = format!("the item reads no file named {name} that this device holds");
        return trouble(&signed, StatusCode::NOT_FOUND, &why);
    };
    let path = pages.client.files.path(&file);
    match tokio::task::spawn_blocking(move || std::fs::read(path)).await {
        Ok(Ok(bytes)) => {
            let disposition = format!("attachment; filename=\"{}\"", name.replace('"', ""));
            (
                [
                    (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
                    (header::CONTENT_DISPOSITION, disposition),
                ],
                bytes,
            )
                .into_response()
        }
        _ => {
            let why = format!("file {name} is not on this device yet (it is being copied)");
            trouble(&signed, StatusCode::NOT_FOUND, &why)
        }
    }
}
