//! The well-known places each client keeps its MCP config, on Linux, macOS and Windows.

use super::Client;
use std::path::{Path, PathBuf};

/// Where to look: the home directory, the platform's config directory (`~/.config`,
/// `~/Library/Application Support`, `%APPDATA%`), and the current project directory.
pub struct Roots {
    pub home: PathBuf,
    pub config_dir: PathBuf,
    pub project: PathBuf,
}

impl Roots {
    /// The roots of the current user and working directory.
    pub fn current() -> Option<Roots> {
        let home = std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .map(PathBuf::from)?;
        let config_dir = if cfg!(target_os = "macos") {
            home.join("Library/Application Support")
        } else if cfg!(windows) {
            std::env::var_os("APPDATA")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join("AppData/Roaming"))
        } else {
            std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".config"))
        };
        let project = std::env::current_dir().ok()?;
        Some(Roots {
            home,
            config_dir,
            project,
        })
    }
}

/// Every candidate config path with the client it belongs to (existing or not).
pub fn candidates(r: &Roots) -> Vec<(Client, PathBuf)> {
    let h = |p: &str| r.home.join(p);
    let c = |p: &str| r.config_dir.join(p);
    let p = |x: &str| r.project.join(x);
    vec![
        (
            Client::ClaudeDesktop,
            c("Claude/claude_desktop_config.json"),
        ),
        (Client::ClaudeCode, h(".claude.json")),
        (Client::ClaudeCode, p(".mcp.json")),
        (Client::Cursor, h(".cursor/mcp.json")),
        (Client::Cursor, p(".cursor/mcp.json")),
        (Client::VsCode, p(".vscode/mcp.json")),
        (Client::VsCode, c("Code/User/mcp.json")),
        (Client::VsCode, c("Code/User/settings.json")),
        (Client::VsCode, c("Code - Insiders/User/mcp.json")),
        (Client::Windsurf, h(".codeium/windsurf/mcp_config.json")),
        (Client::Gemini, h(".gemini/settings.json")),
        (Client::Gemini, p(".gemini/settings.json")),
        (Client::Codex, h(".codex/config.toml")),
    ]
}

/// The candidate paths that exist, each once.
pub fn existing(r: &Roots) -> Vec<(Client, PathBuf)> {
    let mut seen: Vec<PathBuf> = Vec::new();
    candidates(r)
        .into_iter()
        .filter(|(_, path)| Path::is_file(path))
        .filter(|(_, path)| {
            let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            if seen.contains(&key) {
                false
            } else {
                seen.push(key);
                true
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_configs_under_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let proj = dir.path().join("proj");
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        std::fs::create_dir_all(proj.join(".vscode")).unwrap();
        std::fs::write(home.join(".cursor/mcp.json"), "{}").unwrap();
        std::fs::write(proj.join(".vscode/mcp.json"), "{}").unwrap();
        let roots = Roots {
            home: home.clone(),
            config_dir: home.join(".config"),
            project: proj,
        };
        let found = existing(&roots);
        assert_eq!(found.len(), 2);
        assert!(found.iter().any(|(c, _)| *c == Client::Cursor));
        assert!(found.iter().any(|(c, _)| *c == Client::VsCode));
    }
}
