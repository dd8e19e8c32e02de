//! `pokeshell skill`: the pi skill that teaches an agent to delegate work to other sessions, shipped
//! inside the binary (`assets/skill/SKILL.md`). `pokeshell skill` prints it; `pokeshell skill
//! install` writes it where pi loads skills: `<agent dir>/skills/pokeshell/SKILL.md` (pi's agent dir:
//! `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`), this project's `.pi/skills/pokeshell/` with
//! `--project`, or `DIR/pokeshell/` with `--dir DIR`. docs/driving.md.

use std::path::{Path, PathBuf};

use crate::cli::drive_args::{SkillAction, SkillArgs};

/// The skill's text (its name, `pokeshell`, is its directory's name, as pi wants).
pub const SKILL: &str = include_str!("../../assets/skill/SKILL.md");
/// The skill's name: the directory it is installed in.
pub const NAME: &str = "pokeshell";

/// Where `install` puts the skill's directory: the skills directory asked for, or pi's.
fn skills_dir(project: bool, dir: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = dir {
        return Ok(dir.to_path_buf());
    }
    let cwd = std::env::current_dir().map_err(|e| format!("cannot find the current directory: {e}"))?;
    let paths = crate::pi::settings_files::paths_from_env(&cwd)?;
    Ok(if project {
        paths.project_dir.join("skills")
    } else {
        paths.agent_dir.join("skills")
    })
}

/// Writes the skill into `skills/pokeshell/SKILL.md`; the file written.
pub fn install_into(skills: &Path) -> Result<PathBuf, String> {
    let dir = skills.join(NAME);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let file = dir.join("SKILL.md");
    std::fs::write(&file, SKILL).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(file)
}

/// `pokeshell skill [install]`; the exit code.
pub fn run(args: &SkillArgs) -> i32 {
    let Some(SkillAction::Install { project, dir }) = &args.action else {
        print!("{SKILL}");
        return 0;
    };
    match skills_dir(*project, dir.as_deref()).and_then(|s| install_into(&s)) {
        Ok(file) => {
            eprintln!(
                "pokeshell: installed the skill {NAME} in {}; pi loads it when it starts",
                file.display()
            );
            0
        }
        Err(e) => {
            eprintln!("pokeshell: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_skill_names_itself_as_its_directory_and_says_when_to_use_it() {
        let front = SKILL.strip_prefix("---\n").and_then(|s| s.split_once("\n---\n"));
        let (front, body) = front.expect("the skill starts with its frontmatter");
        assert!(front.lines().any(|l| l == format!("name: {NAME}")), "{front}");
        let description = front.lines().find_map(|l| l.strip_prefix("description: "));
        assert!(
            description.is_some_and(|d| d.len() > 50 && d.len() <= 1024),
            "{front}"
        );
        for command in [
            "pokeshell new -d --worktree",
            "pokeshell send",
            "pokeshell wait",
            "pokeshell read",
            "pokeshell kill",
        ] {
            assert!(body.contains(command), "the skill shows {command}");
        }
    }

    #[test]
    fn install_writes_the_skill_under_its_name() {
        let tmp = tempfile::tempdir().unwrap();
        let file = install_into(tmp.path()).unwrap();
        assert_eq!(file, tmp.path().join("pokeshell/SKILL.md"));
        assert_eq!(std::fs::read_to_string(file).unwrap(), SKILL);
    }
}
