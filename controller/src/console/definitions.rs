//! `GET /console/definitions`: the deployed definitions (as `GET /definitions` lists them),
//! each a link to its page (`definition`); for a role the API lets deploy, a form that takes a
//! document in any of the three languages (MobiWfMS XML, PDL, BPMN), an optional source name
//! (its extension tells the language, as `deploy FILE` does) and definition name.
//! `POST /console/definitions` with `do=check` reads and validates the document and asks the
//! controller what its deploy would refuse beyond it (classes its class document lacks); with
//! `do=deploy` it deploys it through the controller's own deploy (`POST /definitions`). A
//! document with problems is not deployed: the page shows each problem at its line and column
//! with the lines around it (`excerpt`), from the reader's and validator's own
//! [`Diagnostics`], and keeps what was typed. Refused (403) to a role the API refuses.

use axum::Form;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use mobiwf_book::{BookError, DefinitionSummary, Deploy, Deployment};
use mobiwf_runtime::web::{self, Signed};
use mobiwf_xml_schema::{Diagnostics, Language, WorkflowDefinition};
use serde::Deserialize;

use super::Console;

/// The API request a deploy is: what the console asks of the API's table.
const DEPLOY: (&Method, &str) = (&Method::POST, "/definitions");

/// The source name when the form gives none (the language is then told by the content).
const NO_SOURCE: &str = "console";

/// What the deploy form sends.
#[derive(Debug, Default, Deserialize)]
pub(super) struct DeployForm {
    #[serde(default)]
    csrf: Option<String>,
    #[serde(default)]
    document: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    name: String,
    /// `check` or `deploy`.
    #[serde(default, rename = "do")]
    action: String,
}

impl DeployForm {
    fn source(&self) -> &str {
        Some(self.source.trim())
            .filter(|s| !s.is_empty())
            .unwrap_or(NO_SOURCE)
    }

    fn name(&self) -> Option<String> {
        Some(self.name.trim())
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    }
}

/// What the page says about the form's last post.
enum Outcome {
    /// Nothing posted.
    None,
    /// The reader's or validator's problems, shown at their lines.
    Problems(Diagnostics),
    /// The document reads and validates (a check): as which language, under which name.
    Checked {
        language: Language,
        name: Option<String>,
    },
    /// Deployed, or already the latest version.
    Deployed(Deployment),
    /// The controller's refusal, in its words.
    Refused(String),
}

/// `GET /console/definitions`.
pub(super) async fn page(State(console): State<Console>, headers: HeaderMap, uri: Uri) -> Response {
    let signed = match super::allowed(&console, &headers, &uri, (&Method::GET, "/definitions")) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    answer(
        &console,
        &signed,
        StatusCode::OK,
        &DeployForm::default(),
        &Outcome::None,
    )
    .await
}

/// `POST /console/definitions`: check or deploy the form's document.
pub(super) async fn post(
    State(console): State<Console>,
    headers: HeaderMap,
    uri: Uri,
    Form(form): Form<DeployForm>,
) -> Response {
    let signed = match super::allowed(&console, &headers, &uri, DEPLOY) {
        Ok(signed) => signed,
        Err(instead) => return instead.into_response(),
    };
    if let Some(refused) = console.web.csrf_refusal(&signed, form.csrf.as_deref()) {
        return refused;
    }
    let deploy = match form.action.as_str() {
        "check" => false,
        "deploy" => true,
        other => {
            let why = format!("No action {other:?}: check or deploy.");
            return super::failed(&signed, StatusCode::BAD_REQUEST, &why);
        }
    };
    let language = Language::of(form.source(), form.document.as_bytes());
    let document = form.document.clone();
    let read = tokio::task::spawn_blocking(move || read(language, &document)).await;
    let (status, outcome) = match read {
        Err(e) => {
            let why = format!("the document's check did not finish: {e}");
            return super::failed(&signed, StatusCode::INTERNAL_SERVER_ERROR, &why);
        }
        Ok(Err(problems)) => (StatusCode::BAD_REQUEST, Outcome::Problems(problems)),
        Ok(Ok(def)) if !deploy => checked(&console, &form, language, def).await,
        Ok(Ok(_)) => deployed(&console, &form).await,
    };
    answer(&console, &signed, status, &form, &outcome).await
}

/// `document` read as `language` and validated as a new definition: the book reads a
/// deployed document with this very function, so the problems are the deploy's own, kept
/// structured rather than rendered.
fn read(language: Language, document: &str) -> Result<WorkflowDefinition, Diagnostics> {
    mobiwf_xml_schema::load_new_definition_in(language, document.as_bytes()).map(|d| d.value)
}

/// A check of a document that reads and validates: what the controller's deploy would refuse
/// beyond it (classes its class document lacks), or under which name it would deploy.
async fn checked(
    console: &Console,
    form: &DeployForm,
    language: Language,
    def: WorkflowDefinition,
) -> (StatusCode, Outcome) {
    let name = form.name().or(def.name.as_ref().map(ToString::to_string));
    match console.client.check_definition(def).await {
        Ok(Ok(())) => (StatusCode::OK, Outcome::Checked { language, name }),
        Ok(Err(e)) => refused(&e),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Outcome::Refused(format!("the controller did not answer: {e:#}")),
        ),
    }
}

/// The controller's refusal of a deploy (or of a check), with the API's status.
fn refused(e: &BookError) -> (StatusCode, Outcome) {
    let status = crate::api_definitions::refused(e).status();
    let words = match e {
        BookError::Invalid(words) => words.clone(),
        e => e.to_string(),
    };
    (status, Outcome::Refused(words))
}

/// The controller's deploy of the form's document, as `POST /definitions` asks it.
async fn deployed(console: &Console, form: &DeployForm) -> (StatusCode, Outcome) {
    let request = Deploy {
        document: form.document.clone().into_bytes(),
        source: form.source().to_owned(),
        name: form.name(),
    };
    match console.client.deploy(request).await {
        Ok(Ok(d)) if d.new_version => (StatusCode::CREATED, Outcome::Deployed(d)),
        Ok(Ok(d)) => (StatusCode::OK, Outcome::Deployed(d)),
        Ok(Err(e)) => refused(&e),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Outcome::Refused(format!("the controller did not answer: {e:#}")),
        ),
    }
}

/// The page: the definitions, the form (as typed, emptied after a deploy) and the outcome.
async fn answer(
    console: &Console,
    signed: &Signed,
    status: StatusCode,
    form: &DeployForm,
    outcome: &Outcome,
) -> Response {
    let all = match console.client.definitions().await {
        Ok(all) => all,
        Err(e) => {
            let why = format!("cannot read the deployed definitions: {e:#}");
            return super::failed(signed, StatusCode::SERVICE_UNAVAILABLE, &why);
        }
    };
    let csrf = signed.csrf();
    let deploys = super::may(&signed.session.grant, DEPLOY.0, DEPLOY.1);
    let emptied = DeployForm::default();
    let typed = if matches!(outcome, Outcome::Deployed(_)) {
        &emptied
    } else {
        form
    };
    let body = html! {
        (super::nav(Some(super::Section::Definitions)))
        h1 { "Definitions" }
        (said(form, outcome))
        (table(&all))
        @if deploys { (deploy_form(typed, &csrf)) }
    };
    web::html(
        status,
        web::layout("Definitions", Some(web::bar(signed, &csrf)), &body),
    )
}

/// The link to a definition's page.
pub(super) fn link(name: &str) -> String {
    format!("/console/definitions/{}", super::list::encode(name))
}

/// What the outcome says, above the list.
fn said(form: &DeployForm, outcome: &Outcome) -> Markup {
    html! {
        @match outcome {
            Outcome::None => {}
            Outcome::Problems(problems) => { (super::excerpt::diagnostics(&form.document, problems)) }
            Outcome::Checked { language, name } => {
                p.done role="status" {
                    "No problems: the document reads as " (language.name()) " and validates"
                    @match name {
                        Some(name) => { "; it would deploy as " strong { (name) } "." }
                        None => { ", but it has no name: give one below or a <name> in it." }
                    }
                    " Nothing was deployed."
                }
            }
            Outcome::Deployed(d) => {
                @let name = d.definition.name.to_string();
                p.done role="status" {
                    @if d.new_version {
                        "Deployed " (name) " version " (d.definition.version.0) ": "
                    } @else {
                        (name) " version " (d.definition.version.0) " is already the latest version: nothing changed. "
                    }
                    a.deployed href=(link(&name)) { "open " (name) }
                }
            }
            Outcome::Refused(words) => { p.refused role="alert" { "Not deployed: " (words) } }
        }
    }
}

/// The deployed definitions, each a link to its page.
fn table(all: &[DefinitionSummary]) -> Markup {
    html! {
        @if all.is_empty() {
            p.empty { "No definition is deployed." }
        } @else {
            div.wide { table.definitions {
                thead { tr {
                    th { "Name" } th { "Latest" } th { "Versions" } th { "Deployed" }
                    th { "Creator role" } th { "Running" }
                } }
                tbody {
                    @for d in all {
                        @let name = d.name.to_string();
                        @let versions: Vec<String> = d.versions.iter().map(|v| v.0.to_string()).collect();
                        tr data-definition=(name) {
                            td { a href=(link(&name)) { (name) } }
                            td { (d.latest.0) }
                            td { (versions.join(", ")) }
                            td { (mobiwf_book::format_time(d.deployed_ms)) }
                            td { (d.creator_role.as_ref().map_or(String::new(), ToString::to_string)) }
                            td { (d.running) }
                        }
                    }
                }
            } }
        }
    }
}

/// The deploy form, holding what was typed.
fn deploy_form(form: &DeployForm, csrf: &str) -> Markup {
    html! {
        h2 { "Deploy a definition" }
        form.deploy method="post" action="/console/definitions" {
            input type="hidden" name="csrf" value=(csrf);
            label { "Document (MobiWfMS XML, PDL or BPMN)"
                // A browser drops one newline right after the tag: this one, never the
                // document's own first line.
                textarea name="document" rows="16" wrap="off" spellcheck="false" required { "\n" (form.document) }
            }
            label { "Source name (optional: its extension .xml, .pdl or .bpmn tells the language) "
                input type="text" name="source" value=(form.source) placeholder="maintenance.pdl";
            }
            label { " Definition name (optional: else the document's own) "
                input type="text" name="name" value=(form.name);
            }
            " "
            button type="submit" name="do" value="check" { "Check" }
            " "
            button type="submit" name="do" value="deploy" { "Deploy" }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobiwf_book::{DefinitionRef, DefinitionVersion};
    use mobiwf_xml_schema::{DefinitionName, Diagnostic, Pos};

    #[test]
    fn problems_keep_what_was_typed_and_a_deploy_links_its_definition() {
        let form = DeployForm {
            document: "a\n<b>\nc".into(),
            ..DeployForm::default()
        };
        let problems = Diagnostics(vec![Diagnostic::new(Pos { line: 2, column: 2 }, "no b")]);
        let page = said(&form, &Outcome::Problems(problems)).into_string();
        assert!(page.contains("2:2"), "{page}");
        assert!(page.contains("&lt;<mark>b</mark>&gt;"), "{page}");
        let typed = deploy_form(&form, "tok").into_string();
        assert!(typed.contains(">\na\n&lt;b&gt;\nc</textarea>"), "{typed}");
        assert!(typed.contains("name=\"csrf\" value=\"tok\""), "{typed}");

        let deployed = Deployment {
            definition: DefinitionRef {
                name: DefinitionName::new("m-1".to_owned()),
                version: DefinitionVersion(3),
            },
            new_version: true,
        };
        let page = said(&form, &Outcome::Deployed(deployed.clone())).into_string();
        assert!(page.contains("Deployed m-1 version 3"), "{page}");
        assert!(page.contains("href=\"/console/definitions/m-1\""), "{page}");
        let same = Deployment {
            new_version: false,
            ..deployed
        };
        let page = said(&form, &Outcome::Deployed(same)).into_string();
        assert!(page.contains("already the latest version"), "{page}");
    }

    /// The line and column of `document`'s only problem, read as its `source` tells.
    fn only_problem(source: &str, document: &str) -> (u32, u32) {
        let Err(problems) = read(Language::of(source, document.as_bytes()), document) else {
            panic!("{source} has problems");
        };
        assert_eq!(problems.len(), 1, "{problems}");
        let pos = problems.0[0].pos;
        (pos.line, pos.column)
    }

    /// `text` with its only `from` replaced by `to`, and the 1-based line it is on.
    fn broken(text: &str, from: &str, to: &str) -> (String, u32) {
        assert_eq!(text.matches(from).count(), 1, "{from}");
        let line = text.lines().position(|l| l.contains(from)).unwrap() + 1;
        (text.replace(from, to), u32::try_from(line).unwrap())
    }

    #[test]
    fn each_language_s_problem_is_at_its_own_line() {
        let xml = include_str!("../../../examples/paper/workflow.xml");
        let (bad, line) = broken(
            xml,
            "<preconditionId>16</preconditionId>",
            "<preconditionId>99</preconditionId>",
        );
        assert_eq!(only_problem("", &bad).0, line);
        let pdl = include_str!("../../../examples/paper/workflow.pdl");
        let (bad, line) = broken(pdl, "PRECONDITIONS A3;", "PRECONDITIONS A9;");
        assert_eq!(only_problem("x.pdl", &bad).0, line);
        assert_eq!(only_problem("", &bad).0, line, "PDL told by its content");
        let bpmn = include_str!("../../../examples/bpmn/paper.bpmn");
        assert!(
            read(Language::of("", bpmn.as_bytes()), bpmn).is_ok(),
            "BPMN told by its content"
        );
    }

    #[test]
    fn a_refusal_is_text() {
        let form = DeployForm::default();
        let page = said(&form, &Outcome::Refused("<script>x</script>".into())).into_string();
        assert!(page.contains("Not deployed: &lt;script&gt;"), "{page}");
    }
}
