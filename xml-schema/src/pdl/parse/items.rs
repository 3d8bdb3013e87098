//! The top of a PDL text and the workflow's own clauses: the `WORKFLOW` block, task models,
//! instance data, partners and partitions.

use super::Parser;
use crate::diagnostic::Pos;
use crate::model::{DataItem, DataKind, Input};
use crate::pdl::ast::{
    Ast, Data, Id, Inherited, Model, Named, PartitionDecl, PartnerDecl, Workflow,
};
use crate::pdl::grammar::{Block, refused};
use crate::pdl::lexer::{Kind, Token};

const FILE_NAME: &str = "each instance has its own content for a file (written by a task), so \
                         mobiwf keeps no path for it; remove NAME";
const FILE_SIZE: &str = "mobiwf measures a file when a task writes it; remove SIZE";

/// The whole text: one `WORKFLOW`, the task models, and what is refused.
pub(super) fn file(p: &mut Parser<'_>) -> Ast {
    let mut ast = Ast::default();
    loop {
        let token = p.peek().clone();
        match token.kind {
            Kind::End => break,
            Kind::Word if token.is_word("WORKFLOW") => {
                p.bump();
                workflow(p, &token, &mut ast);
            }
            Kind::Word if token.is_word("TASK") => {
                p.bump();
                model(p, &token, &mut ast);
            }
            Kind::Word if token.is_word("APPLICATION") => {
                p.bump();
                if let Some(application) = super::values::application(p) {
                    ast.applications.push((application, token.pos));
                }
            }
            Kind::Word if refused(&token.text).is_some() => {
                p.bump();
                p.refuse(&token);
            }
            _ => {
                p.unknown_clause(Block::Top, "a PDL text", &token);
                p.skip_clause();
                p.eat('}');
            }
        }
    }
    if ast.workflow.is_none() {
        p.error(
            Pos::START,
            "the text holds no WORKFLOW; a definition is written WORKFLOW Name { TASK A : Model \
             { ... } ... }, with its task models (TASK Model { ... }) outside it",
        );
    }
    ast
}

/// `ID n;`: the id and where it is.
pub(super) fn id(p: &mut Parser<'_>) -> Id {
    let at = p.here();
    p.whole::<u64>("the ID", "a whole number, 0 or more")
        .map(|id| (id, at))
}

/// `WORKFLOW [Name] { ... }`, its keyword taken.
fn workflow(p: &mut Parser<'_>, keyword: &Token<'_>, ast: &mut Ast) {
    // Names and roles without the white space around them, as the XML reader takes them.
    let name = if p.peek().is_punct('{') {
        None
    } else {
        p.name("the name of the workflow").map(trimmed)
    };
    if let Some(name) = &name
        && let Some(problem) = crate::model::definition_name_problem(&name.text)
    {
        p.error(name.pos, format!("the name of the workflow: {problem}"));
    }
    let owner = match &name {
        Some(name) => format!("workflow {}", crate::read::abbreviate(&name.text)),
        None => "the workflow".to_owned(),
    };
    let mut wf = Workflow {
        pos: keyword.pos,
        name,
        id: None,
        description: String::new(),
        creator_role: None,
        data: Vec::new(),
        tasks: Vec::new(),
        partners: Vec::new(),
        partitions: Vec::new(),
    };
    p.block(Block::Workflow, &owner, |p, kw| {
        workflow_clause(p, kw, &mut wf)
    });
    match &ast.workflow {
        Some(first) => {
            let first = first.pos;
            p.error(
                keyword.pos,
                format!(
                    "a PDL text holds one WORKFLOW, and the first is at {first}; write this one \
                     in a file of its own"
                ),
            );
        }
        None => ast.workflow = Some(wf),
    }
}

/// One clause of the workflow, its keyword taken.
fn workflow_clause(p: &mut Parser<'_>, keyword: &Token<'_>, wf: &mut Workflow) {
    match keyword.text.as_ref() {
        "ID" => wf.id = id(p),
        "DESCRIPTION" => {
            if let Some(text) = p.text("the DESCRIPTION") {
                wf.description = text;
            }
        }
        "CREATOR_ROLE" => {
            let role = p
                .name("the role whose members may start the workflow")
                .map(trimmed);
            if let Some(role) = &role
                && role.text.is_empty()
            {
                p.error(
                    role.pos,
                    "CREATOR_ROLE is empty; name the role whose members may start the workflow, \
                     or leave the clause out",
                );
            } else if let Some(role) = &role
                && let Some(problem) = crate::model::role_id_problem(&role.text)
            {
                p.error(role.pos, format!("CREATOR_ROLE: {problem}"));
            }
            wf.creator_role = role;
        }
        "STRING" | "NUMBER" | "FILE" => return data(p, keyword, wf),
        "TASK" => return super::task::task(p, keyword, wf),
        "PARTNER" => return partner(p, keyword, wf),
        _ => return partition(p, keyword, wf),
    }
    p.end_clause(&keyword.text);
}

/// `named` without the white space around it.
fn trimmed(named: Named) -> Named {
    Named {
        text: named.text.trim().to_owned(),
        pos: named.pos,
    }
}

/// `STRING|NUMBER Name [value|INPUT];` or `FILE Name [{ }];`, the keyword taken.
fn data(p: &mut Parser<'_>, keyword: &Token<'_>, wf: &mut Workflow) {
    let kind = match keyword.text.as_ref() {
        "STRING" => DataKind::String,
        "NUMBER" => DataKind::Number,
        _ => DataKind::File,
    };
    let Some(name) = p.name("the name of the data") else {
        return p.skip_clause();
    };
    let input = if kind == DataKind::File {
        Input::No
    } else {
        value_or_input(p, kind)
    };
    wf.data.push(Data {
        pos: keyword.pos,
        name_pos: name.pos,
        item: DataItem {
            name: name.text.clone(),
            kind,
            input,
        },
    });
    if kind == DataKind::File && p.peek().is_punct('{') {
        let owner = format!("file {}", crate::read::abbreviate(&name.text));
        p.block(Block::File, &owner, |p, kw| {
            let why = if kw.text == "NAME" {
                FILE_NAME
            } else {
                FILE_SIZE
            };
            p.refuse_because(kw, why);
        });
        p.eat(';');
        return;
    }
    p.end_clause(&keyword.text);
}

/// What follows the name of a value of `kind`: nothing (activities write it), `INPUT` (given
/// when an instance starts), or its default as an input.
fn value_or_input(p: &mut Parser<'_>, kind: DataKind) -> Input {
    let token = p.peek().clone();
    let default = match token.kind {
        Kind::Punct(';' | '}') | Kind::End => return Input::No,
        Kind::Word if token.text == "INPUT" => {
            p.bump();
            return Input::Required;
        }
        Kind::Str => token.text.clone().into_owned(),
        Kind::Number if kind == DataKind::Number => token.text.clone().into_owned(),
        _ => {
            let written = if kind == DataKind::Number {
                "a number, e.g. NUMBER reading 42;"
            } else {
                "a text in double quotes, e.g. STRING note \"none\";"
            };
            p.error(
                token.pos,
                format!(
                    "{} follows the name of a {}; write nothing (tasks write it), INPUT (it is \
                     given when an instance starts), or its default as {written}",
                    token.shown(),
                    kind.as_str()
                ),
            );
            return Input::No;
        }
    };
    p.bump();
    if kind == DataKind::Number
        && let Some(problem) = crate::model::number_problem(&default)
    {
        p.error(token.pos, format!("the default of a NUMBER: {problem}"));
    }
    Input::Default(default)
}

/// `TASK Name { ... }` outside the workflow: a task model, the keyword taken.
fn model(p: &mut Parser<'_>, keyword: &Token<'_>, ast: &mut Ast) {
    let Some(name) = p.name("the name of a task model") else {
        return p.skip_clause();
    };
    if p.peek().is_punct(':') {
        p.error(
            keyword.pos,
            format!(
                "TASK {} : ... is a task, which belongs inside WORKFLOW {{ }}; outside it, TASK \
                 Name {{ ... }} declares a task model (the activity type of the tasks made from \
                 it)",
                crate::read::abbreviate(&name.text)
            ),
        );
        return p.skip_clause();
    }
    let owner = format!("task model {}", crate::read::abbreviate(&name.text));
    let mut m = Model {
        pos: keyword.pos,
        name,
        id: None,
        description: String::new(),
        inherited: Inherited::default(),
    };
    p.block(Block::Model, &owner, |p, kw| {
        model_clause(p, kw, &owner, &mut m)
    });
    ast.models.push(m);
}

/// One clause of a task model, its keyword taken.
fn model_clause(p: &mut Parser<'_>, keyword: &Token<'_>, owner: &str, m: &mut Model) {
    let at = p.here();
    let inherited = &mut m.inherited;
    match keyword.text.as_ref() {
        "ID" => m.id = id(p),
        "DESCRIPTION" => {
            if let Some(text) = p.text("the DESCRIPTION") {
                m.description = text;
            }
        }
        "TYPE" => inherited.kind = p.kind(owner).map(|k| (k, at)),
        "PRIORITY" => inherited.priority = p.priority(owner).map(|n| (n, at)),
        "DEADLINE" => inherited.deadline = p.deadline(owner).map(|n| (n, at)),
        "TASK_CLASS" => inherited.class = p.class(owner).map(|c| (c, at)),
        "APPLICATION" => {
            inherited.application = p.application_name(owner).map(|name| (name, at));
        }
        _ => inherited.disconnected = p.disconnected(owner).map(|b| (b, at)),
    }
    p.end_clause(&keyword.text);
}

/// `PARTNER Name { ID; DESCRIPTION; ADDRESS; SKILLS }`, the keyword taken.
fn partner(p: &mut Parser<'_>, keyword: &Token<'_>, wf: &mut Workflow) {
    let Some(name) = p.name("the name of a partner") else {
        return p.skip_clause();
    };
    let owner = format!("partner {}", crate::read::abbreviate(&name.text));
    let mut decl = PartnerDecl {
        pos: keyword.pos,
        name,
        id: None,
        description: String::new(),
        location: String::new(),
        skills: Vec::new(),
    };
    p.block(Block::Partner, &owner, |p, kw| {
        match kw.text.as_ref() {
            "ID" => decl.id = id(p),
            "DESCRIPTION" => decl.description = p.text("the DESCRIPTION").unwrap_or_default(),
            "ADDRESS" => decl.location = p.text("the ADDRESS").unwrap_or_default(),
            _ => decl.skills = p.references("a task model (a skill of the partner)"),
        }
        p.end_clause(&kw.text);
    });
    wf.partners.push(decl);
}

/// `PARTITION Name { ID; PARTNER; TIMEOUT; TASKS }`, the keyword taken.
fn partition(p: &mut Parser<'_>, keyword: &Token<'_>, wf: &mut Workflow) {
    let Some(name) = p.name("the name of a partition") else {
        return p.skip_clause();
    };
    let owner = format!("partition {}", crate::read::abbreviate(&name.text));
    let mut decl = PartitionDecl {
        pos: keyword.pos,
        name,
        id: None,
        partner: None,
        time_out_secs: 0,
        tasks: Vec::new(),
    };
    p.block(Block::Partition, &owner, |p, kw| {
        match kw.text.as_ref() {
            "ID" => decl.id = id(p),
            "PARTNER" => decl.partner = p.reference("the partner that runs the partition"),
            "TIMEOUT" => decl.time_out_secs = p.seconds("the TIMEOUT").unwrap_or(0),
            _ => decl.tasks = p.references("a task"),
        }
        p.end_clause(&kw.text);
    });
    wf.partitions.push(decl);
}
