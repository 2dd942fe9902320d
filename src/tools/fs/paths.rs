//! What the file tools share about the one project path a call names:
//! locating it together with the call's facts, naming it in fields and
//! results, and refusing again at run time a target the decision has already
//! refused. Never decides, and never touches the file system itself: every
//! look goes through `Project`.

use super::confine::{ConfineError, Project};
use crate::policy::{CallFacts, CallKind, PathTarget, ProtectedPaths, Protection, ToolKey};
use crate::tools::{ToolError, ToolOutcome};

/// Locates `path` in the project and states the facts of a `kind` call by
/// `tool` on it. An absolute path that does not exist, where its reading
/// relative to the project does (a model that put a `/` before a project
/// path), fails as not found and names the path to use; the retry is
/// decided like any call. The hint is never given for a protected path,
/// so it says nothing a listing would not.
pub(crate) fn locate_with_facts(
    project: &Project,
    protected: &ProtectedPaths,
    path: &str,
    tool: &'static str,
    kind: CallKind,
) -> Result<(PathTarget, CallFacts), ToolError> {
    let target = project.locate(path)?;
    if let PathTarget::Outside { given } = &target
        && let Some(relative) = project.misread_absolute(given)
        && protected.protection(&relative).is_none()
    {
        return Err(ConfineError::MeantInside {
            given: given.clone(),
            relative,
        }
        .into());
    }
    let facts = CallFacts::new(ToolKey::new(tool), kind).with_target(target.clone());
    Ok((target, facts))
}

/// The project-relative path a target names, or why it names none.
pub(crate) fn inside(target: &PathTarget) -> Result<&str, ConfineError> {
    match target {
        PathTarget::Inside { relative, .. } => Ok(relative),
        PathTarget::Outside { given } => Err(ConfineError::Outside {
            path: given.clone(),
        }),
    }
}

/// How a target is named in fields and results: the normalized relative
/// path (`.` for the project itself), or the path as given when outside.
pub(crate) fn shown_path(target: &PathTarget) -> String {
    match target {
        PathTarget::Inside { relative, .. } => shown_relative(relative).to_string(),
        PathTarget::Outside { given } => given.clone(),
    }
}

/// A project-relative path as results name it: `.` for the project itself.
pub(crate) fn shown_relative(relative: &str) -> &str {
    if relative.is_empty() { "." } else { relative }
}

/// The project-relative path of `name` inside the directory `dir`.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The project-relative path of `target`, or the error a run ends with when
/// the target passes through a symbolic link, lies outside the project or is
/// protected. The decision has already refused these; refusing again here
/// keeps a caller that skipped it from reaching what it must not.
pub(crate) fn recheck_target<'a>(
    target: &'a PathTarget,
    protected: &ProtectedPaths,
) -> Result<&'a str, ToolOutcome> {
    let relative = match target {
        PathTarget::Inside {
            through_link: Some(_),
            relative,
            ..
        } => {
            return Err(ToolOutcome::error(format!(
                "{} passes through a symbolic link; file tools only follow real directories",
                shown_relative(relative)
            )));
        }
        PathTarget::Inside { relative, .. } => relative,
        PathTarget::Outside { given } => {
            return Err(ToolOutcome::error(format!(
                "{given} is outside the project directory"
            )));
        }
    };
    match protected.protection(relative) {
        Some(Protection::MinoHome) => {
            return Err(ToolOutcome::error(format!(
                "{} is mino's own home; file tools never read or write it.",
                shown_relative(relative)
            )));
        }
        Some(Protection::Pattern) => {
            return Err(ToolOutcome::error(format!(
                "{relative} is a protected path; file tools never read or write it."
            )));
        }
        None => {}
    }
    Ok(relative)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inside_at(relative: &str, through_link: Option<&str>) -> PathTarget {
        PathTarget::Inside {
            relative: relative.to_string(),
            through_link: through_link.map(str::to_string),
            hard_linked: false,
        }
    }

    #[test]
    fn a_refused_target_is_refused_again() {
        let protected = ProtectedPaths::builtin();
        let refused = |target: &PathTarget| match recheck_target(target, &protected) {
            Ok(relative) => panic!("{relative} was not refused"),
            Err(outcome) => outcome.output,
        };
        assert_eq!(
            refused(&inside_at("", Some("link"))),
            ". passes through a symbolic link; file tools only follow real directories"
        );
        assert_eq!(
            refused(&PathTarget::Outside {
                given: "../x".into()
            }),
            "../x is outside the project directory"
        );
        assert_eq!(
            refused(&inside_at(".env", None)),
            ".env is a protected path; file tools never read or write it."
        );
        assert_eq!(
            recheck_target(&inside_at("src", None), &protected),
            Ok("src")
        );
    }

    #[test]
    fn paths_are_named_with_a_dot_for_the_project() {
        assert_eq!(shown_path(&inside_at("", None)), ".");
        assert_eq!(shown_path(&inside_at("a/b", None)), "a/b");
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("d", "a"), "d/a");
    }
}
