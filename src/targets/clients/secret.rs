//! A value that must never be printed, logged or written: header and env values.

use std::fmt;

/// A secret string. Debug and Display show `<redacted>`; only [`Secret::expose`] gives the value.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for handing to a child process or an HTTP request, and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Whether an env variable or header name says its value is a credential (`GITHUB_TOKEN`,
/// `X-Api-Key`, `Authorization`, `GITHUB_PAT`). Words are compared whole where a short word
/// would match inside another: `PAT` is not in `MEMORY_FILE_PATH`, `KEY` not in `MONKEY`,
/// `AUTH` not in `AUTHOR`. A name that ends in `PATH` (or `DIR`) names a place, not a secret,
/// even when it mentions one (`SSH_KEY_PATH`): its value is a location.
pub fn credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if matches!(
        words.last(),
        Some(&("PATH" | "PATHS" | "DIR" | "DIRS" | "DIRECTORY"))
    ) {
        return false;
    }
    let within = [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "APIKEY",
        "CREDENTIAL",
        "AUTHORIZATION",
        "COOKIE",
    ];
    let whole = ["PAT", "KEY", "AUTH", "OAUTH", "BEARER"];
    within.iter().any(|p| upper.contains(p)) || words.iter().any(|w| whole.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_whole_words_and_paths_are_not_secrets() {
        for yes in [
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "Authorization",
            "X-Api-Key",
            "OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "GITHUB_PAT",
            "PAT",
            "DB_PASSWORD",
            "Cookie",
            "SLACK_BOT_TOKEN",
            "BRAVE_APIKEY",
            "AUTH",
            "PRIVATE_KEY",
        ] {
            assert!(credential_name(yes), "{yes}");
        }
        // Issue 12, item 16: MEMORY_FILE_PATH was reported as a secret (`_PAT` inside `_PATH`).
        for no in [
            "MEMORY_FILE_PATH",
            "LOG_LEVEL",
            "PATH",
            "SSH_KEY_PATH",
            "TOKEN_CACHE_DIR",
            "MONKEY_MODE",
            "AUTHOR_NAME",
            "PATTERN",
            "COMPATIBILITY",
            "PWD",
        ] {
            assert!(!credential_name(no), "{no}");
        }
    }

    #[test]
    fn never_shows_the_value() {
        let s = Secret::new("ghp_abc");
        assert_eq!(format!("{s} {s:?}"), "<redacted> <redacted>");
        assert_eq!(s.expose(), "ghp_abc");
    }
}
