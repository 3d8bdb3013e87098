//! What a node will run: the `<command>`s of the activities deployed to it come from whoever
//! submitted the workflow, so the node's owner decides which it runs (`mobiwf-node run
//! --commands any|none|allow FILE`). A refused command never starts: its activity fails with
//! the reason, and its contingency applies.
//!
//! An allow file holds one rule a line (`#` starts a comment line, blank lines are skipped):
//! - a command line, e.g. `scripts/read-meter.sh --all`: the command must be exactly that line
//!   (leading and trailing spaces aside);
//! - a line ending in ` *`, e.g. `backup.sh *`: the command is `backup.sh` alone or followed by
//!   a space and arguments made of plain characters only (letters, digits and
//!   [`PLAIN_ARGUMENT_CHARS`]), so that a prefix cannot be extended with `;`, `|`, `$(...)`,
//!   quotes or a redirection into another command.

use std::path::Path;

/// The largest allow file read, in bytes.
pub const MAX_ALLOW_FILE_BYTES: u64 = 1 << 20;

/// The characters besides ASCII letters and digits that may follow an allowed prefix.
pub const PLAIN_ARGUMENT_CHARS: &str = " -_./=:,@%+";

/// Which commands a node runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandPolicy {
    /// Every command (the node's owner trusts whoever may submit workflows).
    Any,
    /// None: activities with a command fail (the default).
    None,
    /// The commands an allow file names.
    Allow {
        /// Where the rules came from, for the refusal's message.
        file: String,
        /// The rules, in file order.
        rules: Vec<Rule>,
    },
}

/// One line of an allow file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The command must be exactly this.
    Exact(String),
    /// The command must start with this, followed by plain arguments only.
    Prefix(String),
}

impl CommandPolicy {
    /// The policy `--commands` names: `any`, `none`, or `allow` with the allow file.
    pub fn from_args(mode: &str, file: Option<&Path>) -> anyhow::Result<CommandPolicy> {
        match (mode, file) {
            ("any", None) => Ok(CommandPolicy::Any),
            ("none", None) => Ok(CommandPolicy::None),
            ("allow", Some(file)) => CommandPolicy::read(file),
            ("allow", None) => anyhow::bail!(
                "--commands allow needs the allow file: --commands allow FILE (one command \
                 line or `PREFIX *` a line)"
            ),
            ("any" | "none", Some(file)) => anyhow::bail!(
                "--commands {mode} takes no file (got {}); a file goes with --commands allow",
                file.display()
            ),
            (other, _) => {
                anyhow::bail!("--commands {other:?}: use any, none, or allow FILE")
            }
        }
    }

    /// The rules of an allow file.
    pub fn read(file: &Path) -> anyhow::Result<CommandPolicy> {
        let shown = file.display().to_string();
        let size = std::fs::metadata(file)
            .map_err(|e| anyhow::anyhow!("cannot read the allow file {shown}: {e}"))?
            .len();
        if size > MAX_ALLOW_FILE_BYTES {
            anyhow::bail!(
                "the allow file {shown} holds {size} bytes, over the limit of \
                 {MAX_ALLOW_FILE_BYTES} (MAX_ALLOW_FILE_BYTES)"
            );
        }
        let text = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("cannot read the allow file {shown}: {e}"))?;
        let rules = parse(&text).map_err(|(line, why)| anyhow::anyhow!("{shown}:{line}: {why}"))?;
        Ok(CommandPolicy::Allow { file: shown, rules })
    }

    /// `Ok` when `command` may run; otherwise why not, in words for the activity's detail.
    pub fn permits(&self, command: &str) -> Result<(), String> {
        match self {
            CommandPolicy::Any => Ok(()),
            CommandPolicy::None => Err(format!(
                "refused: this node runs no commands (`mobiwf-node run --commands none`, the \
                 default), so `{command}` did not run; its owner can allow it with \
                 --commands allow FILE or --commands any"
            )),
            CommandPolicy::Allow { file, rules } => {
                if rules.iter().any(|rule| rule.matches(command)) {
                    Ok(())
                } else {
                    Err(format!(
                        "refused: `{command}` is not in this node's allow file {file} \
                         (--commands allow); it did not run"
                    ))
                }
            }
        }
    }

    /// The policy in a word, for the startup log.
    pub fn describe(&self) -> String {
        match self {
            CommandPolicy::Any => "any command".to_owned(),
            CommandPolicy::None => "no commands".to_owned(),
            CommandPolicy::Allow { file, rules } => {
                format!("the {} rules of {file}", rules.len())
            }
        }
    }
}

impl Rule {
    fn matches(&self, command: &str) -> bool {
        let command = command.trim();
        match self {
            Rule::Exact(line) => command == line,
            Rule::Prefix(prefix) => match command.strip_prefix(prefix.as_str()) {
                Some("") => true,
                Some(rest) => {
                    rest.starts_with(' ')
                        && rest
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || PLAIN_ARGUMENT_CHARS.contains(c))
                }
                None => false,
            },
        }
    }
}

/// The rules of an allow file's text, or the line number and what is wrong with it.
fn parse(text: &str) -> Result<Vec<Rule>, (usize, String)> {
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let rule = match line.strip_suffix('*') {
            Some(prefix) if prefix.ends_with(' ') || prefix.is_empty() => {
                let prefix = prefix.trim();
                if prefix.is_empty() {
                    return Err((
                        n + 1,
                        "a lone `*` would allow everything: use --commands any for that".into(),
                    ));
                }
                Rule::Prefix(prefix.to_owned())
            }
            _ => Rule::Exact(line.to_owned()),
        };
        rules.push(rule);
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(text: &str) -> CommandPolicy {
        CommandPolicy::Allow {
            file: "allow.txt".into(),
            rules: parse(text).unwrap(),
        }
    }

    #[test]
    fn exact_lines_match_only_themselves() {
        let policy = allow("# the meter readers' tools\n\n  scripts/read-meter.sh  \n");
        assert!(policy.permits("scripts/read-meter.sh").is_ok());
        assert!(policy.permits(" scripts/read-meter.sh ").is_ok());
        assert!(policy.permits("scripts/read-meter.sh --all").is_err());
        assert!(policy.permits("scripts/read-meter").is_err());
    }

    #[test]
    fn a_prefix_takes_plain_arguments_and_nothing_that_starts_another_command() {
        let policy = allow("backup.sh *\n");
        assert!(policy.permits("backup.sh").is_ok());
        assert!(
            policy
                .permits("backup.sh --to /var/backups/day-1 -v")
                .is_ok()
        );
        for sneaky in [
            "backup.sh; rm -rf /",
            "backup.sh && curl evil",
            "backup.sh | sh",
            "backup.sh $(id)",
            "backup.sh `id`",
            "backup.sh > /etc/passwd",
            "backup.sh\nid",
            "backup.shx",
        ] {
            assert!(policy.permits(sneaky).is_err(), "{sneaky:?} was allowed");
        }
    }

    #[test]
    fn none_and_allow_say_why_and_what_to_do() {
        let why = CommandPolicy::None.permits("echo hi").unwrap_err();
        assert!(
            why.contains("--commands none") && why.contains("--commands any"),
            "{why}"
        );
        let why = allow("true\n").permits("echo hi").unwrap_err();
        assert!(
            why.contains("allow.txt") && why.contains("echo hi"),
            "{why}"
        );
        assert!(
            CommandPolicy::Any
                .permits("anything at all; really")
                .is_ok()
        );
    }

    #[test]
    fn a_lone_star_is_refused_with_its_line() {
        assert_eq!(parse("true\n *\n").unwrap_err().0, 2);
    }

    #[test]
    fn the_flag_and_its_file_go_together() {
        assert_eq!(
            CommandPolicy::from_args("none", None).unwrap(),
            CommandPolicy::None
        );
        assert!(CommandPolicy::from_args("allow", None).is_err());
        assert!(CommandPolicy::from_args("any", Some(Path::new("f"))).is_err());
        assert!(CommandPolicy::from_args("some", None).is_err());
        let missing = CommandPolicy::from_args("allow", Some(Path::new("/no/such/file")));
        assert!(format!("{:#}", missing.unwrap_err()).contains("/no/such/file"));
    }
}
