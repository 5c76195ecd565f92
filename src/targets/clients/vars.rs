//! Variable references in client configs: `${VAR}`, `${VAR:-default}`, `${env:VAR}`,
//! `${input:id}`, `${workspaceFolder}`, `${userHome}`. What cannot be resolved is reported,
//! never guessed.

/// Where variable values come from.
pub trait Lookup {
    /// An environment variable's value.
    fn env(&self, name: &str) -> Option<String>;
    /// The workspace folder (the config's project directory), if known.
    fn workspace(&self) -> Option<String>;
    /// The user's home directory, if known.
    fn home(&self) -> Option<String>;
}

/// Values from the process environment.
pub struct ProcessEnv {
    /// The project directory for `${workspaceFolder}`.
    pub workspace: Option<String>,
}

impl Lookup for ProcessEnv {
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn workspace(&self) -> Option<String> {
        self.workspace.clone()
    }
    fn home(&self) -> Option<String> {
        std::env::var("HOME")
            .ok()
            .or_else(|| std::env::var("USERPROFILE").ok())
    }
}

/// The result of expanding one string.
#[derive(Debug, Default, PartialEq)]
pub struct Expanded {
    pub value: String,
    /// References that could not be resolved, as written (`${input:token}`).
    pub unresolved: Vec<String>,
    /// Whether the string referred to any variable (so it is not a literal).
    pub had_reference: bool,
    /// The environment variables whose values were put into the string.
    pub env_vars: Vec<String>,
}

/// Expands every reference in `s`. Unresolvable references are left as written and listed.
pub fn expand(s: &str, lookup: &dyn Lookup) -> Expanded {
    let mut out = Expanded::default();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.value.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.value.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &after[..end];
        let written = &rest[start..start + 2 + end + 1];
        out.had_reference = true;
        match resolve(inner, lookup) {
            Some((v, var)) => {
                out.value.push_str(&v);
                out.env_vars.extend(var);
            }
            None => {
                out.value.push_str(written);
                out.unresolved.push(written.to_string());
            }
        }
        rest = &after[end + 1..];
    }
    out.value.push_str(rest);
    // A bare `$VAR` (Codex, shell style) is not expanded by clients in args; leave it.
    out
}

/// The value of one reference, and the environment variable it came from, if one did.
fn resolve(inner: &str, lookup: &dyn Lookup) -> Option<(String, Option<String>)> {
    let from_env = |name: &str| lookup.env(name).map(|v| (v, Some(name.to_string())));
    if let Some(name) = inner.strip_prefix("env:") {
        return from_env(name.trim());
    }
    if inner.starts_with("input:") || inner.starts_with("command:") || inner.starts_with("config:")
    {
        return None;
    }
    let plain = |v: Option<String>| v.map(|v| (v, None));
    match inner {
        "workspaceFolder" | "workspaceRoot" | "CLAUDE_PROJECT_DIR" => {
            return plain(lookup.workspace())
        }
        "userHome" | "HOME" if lookup.env("HOME").is_none() => return plain(lookup.home()),
        "pathSeparator" | "/" => return Some((std::path::MAIN_SEPARATOR.to_string(), None)),
        _ => {}
    }
    if let Some((name, default)) = inner.split_once(":-") {
        return match lookup.env(name).filter(|v| !v.is_empty()) {
            Some(v) => Some((v, Some(name.to_string()))),
            None => Some((default.to_string(), None)),
        };
    }
    if inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !inner.is_empty() {
        return from_env(inner);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;
    impl Lookup for Fixed {
        fn env(&self, name: &str) -> Option<String> {
            (name == "TOKEN").then(|| "t0k".to_string())
        }
        fn workspace(&self) -> Option<String> {
            Some("/proj".into())
        }
        fn home(&self) -> Option<String> {
            Some("/home/u".into())
        }
    }

    #[test]
    fn expands_every_syntax() {
        assert_eq!(expand("Bearer ${TOKEN}", &Fixed).value, "Bearer t0k");
        assert_eq!(expand("${env:TOKEN}", &Fixed).value, "t0k");
        assert_eq!(expand("${MISSING:-dflt}", &Fixed).value, "dflt");
        assert_eq!(expand("${workspaceFolder}/x", &Fixed).value, "/proj/x");
        assert_eq!(expand("${userHome}", &Fixed).value, "/home/u");
        let e = expand("${input:pat} ${NOPE}", &Fixed);
        assert_eq!(e.unresolved, ["${input:pat}", "${NOPE}"]);
        assert!(e.had_reference);
        assert!(!expand("literal", &Fixed).had_reference);
        assert_eq!(
            expand("a ${TOKEN} ${env:TOKEN}", &Fixed).env_vars,
            ["TOKEN", "TOKEN"]
        );
        assert!(expand("${MISSING:-dflt} ${workspaceFolder}", &Fixed)
            .env_vars
            .is_empty());
    }
}
