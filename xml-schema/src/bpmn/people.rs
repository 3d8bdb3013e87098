//! Who does a user or manual task: the groups BPMN and the workflow engines' modelers name
//! (`potentialOwner`/`humanPerformer` expressions, `candidateGroups`), read as the people
//! extensions of the model: a role, and a department or a team as the basis.

use crate::model::{Basis, DepartmentId, People, RoleId, TeamId};

/// Reads a list of groups, separated by commas: `tech` or `role:tech` or `group(tech)` (a role),
/// `department:field` or `department(field)`, `team:north` or `team(north)`; at most one role
/// and one department or team. The groups are set on `people`; a department or team becomes
/// the basis (the role then filters its members).
pub(crate) fn read_groups(text: &str, people: &mut People) -> Result<(), String> {
    let mut any = false;
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        any = true;
        let (kind, name) = split_item(item)?;
        let taken = match kind {
            "role" | "group" => set_once(&mut people.role, RoleId::new(name)),
            "department" => set_once(&mut people.department, DepartmentId::new(name)),
            "team" => set_once(&mut people.team, TeamId::new(name)),
            "user" => {
                return Err(format!(
                    "`{item}` names a person: mobiwf offers work to the members of a role, \
                     department or team (the organisation document says who they are); name \
                     a group instead, e.g. tech or department:field"
                ));
            }
            other => {
                return Err(format!(
                    "`{item}`: `{other}` is not a kind of group; write a role (tech, \
                     role:tech or group(tech)), department:NAME or team:NAME"
                ));
            }
        };
        if !taken {
            return Err(format!(
                "`{item}`: a task is offered to one {kind}; name one (and filter it by a role \
                 if need be: department:field, tech)"
            ));
        }
    }
    if !any {
        return Err("no group is named; name a role, e.g. tech".to_owned());
    }
    if people.department.is_some() && people.team.is_some() {
        return Err(
            "both a department and a team are named: a task is offered on one basis; keep one \
             (a role may filter it)"
                .to_owned(),
        );
    }
    people.basis = if people.department.is_some() {
        Basis::Department
    } else if people.team.is_some() {
        Basis::Team
    } else {
        Basis::Role
    };
    Ok(())
}

/// `(kind, name)` of one group: `kind:name`, `kind(name)` or a bare role name.
fn split_item(item: &str) -> Result<(&str, &str), String> {
    let (kind, name) = if let Some((kind, name)) = item.split_once(':') {
        (kind.trim(), name.trim())
    } else if let Some((kind, rest)) = item.split_once('(') {
        let name = rest.strip_suffix(')').ok_or_else(|| {
            format!("`{item}` opens a parenthesis it does not close; write e.g. group(tech)")
        })?;
        (kind.trim(), name.trim())
    } else {
        ("role", item)
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(format!(
            "`{item}` does not name a group: a group's id is one word, e.g. tech"
        ));
    }
    Ok((kind, name))
}

/// Sets `slot` when it is empty; false when it was taken.
fn set_once<T>(slot: &mut Option<T>, value: T) -> bool {
    if slot.is_some() {
        return false;
    }
    *slot = Some(value);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<People, String> {
        let mut people = People::default();
        read_groups(text, &mut people).map(|()| people)
    }

    #[test]
    fn groups_are_roles_departments_and_teams() {
        let p = read("tech").unwrap();
        assert_eq!(p.role, Some(RoleId::new("tech")));
        assert_eq!(p.basis, Basis::Role);
        let p = read("group(tech), department:field").unwrap();
        assert_eq!(p.role, Some(RoleId::new("tech")));
        assert_eq!(p.department, Some(DepartmentId::new("field")));
        assert_eq!(p.basis, Basis::Department);
        let p = read("team(north)").unwrap();
        assert_eq!(p.basis, Basis::Team);
        for bad in [
            "",
            "user(alice)",
            "tech, clerk",
            "department:a, team:b",
            "group(x",
            "x y",
            "boss:x",
        ] {
            assert!(read(bad).is_err(), "{bad}");
        }
    }
}
