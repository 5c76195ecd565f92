//! Secrets in command lines: what of a server's arguments is never shown.
//!
//! Env and header values are [`Secret`](super::clients::Secret)s and never shown at all. A
//! command line is shown (reports, the lock file, the consent listing, error messages) with
//! these parts replaced by [`MASK`]:
//!
//! * the value of a flag whose name sounds secret: `--api-key=VALUE`, `--token VALUE`,
//!   `--db-password=VALUE` (words such as token, secret, password, key, auth, credential);
//! * the value of a `NAME=VALUE` argument (`docker run -e API_KEY=...`) or a `Name: value`
//!   header argument whose name sounds secret, or whose value looks like a known token;
//! * an argument shaped like a known token (`ghp_...`, `sk-...`, `xoxb-...`);
//! * the user-info of a URL anywhere in an argument (`postgres://user:PASS@host` shows as
//!   `postgres://<redacted>@host`), and the values of its secret-sounding query parameters.

use super::clients::parse::looks_secret;

/// What a hidden value is shown as.
pub const MASK: &str = "<redacted>";

/// Whether a flag or variable name sounds like it names a secret.
fn secret_name(name: &str) -> bool {
    let n = name
        .trim_start_matches('-')
        .to_ascii_lowercase()
        .replace('_', "-");
    if n.is_empty() {
        return false;
    }
    const WORDS: &[&str] = &[
        "token",
        "tokens",
        "secret",
        "secrets",
        "password",
        "passwd",
        "pass",
        "passphrase",
        "key",
        "apikey",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "pat",
        "cookie",
        "bearer",
        "jwt",
        "dsn",
    ];
    n.split(['-', '.'])
        .any(|w| WORDS.contains(&w) || w.ends_with("token") || w.ends_with("secret"))
        || n.contains("apikey")
        || n.contains("api-key")
        || n.contains("password")
}

/// Whether a flag takes its value in the next argument: `--token VALUE`.
fn takes_secret_value(arg: &str) -> bool {
    arg.starts_with('-') && !arg.contains('=') && secret_name(arg)
}

/// A command line's arguments as they may be shown.
pub fn args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for a in args {
        if hide_next && !a.starts_with('-') {
            out.push(MASK.to_string());
            hide_next = false;
            continue;
        }
        hide_next = takes_secret_value(a);
        out.push(arg(a));
    }
    out
}

/// One argument as it may be shown (without the context of the one before it).
pub fn arg(a: &str) -> String {
    // --flag=value
    if a.starts_with('-') {
        if let Some((flag, value)) = a.split_once('=') {
            if secret_name(flag) || looks_secret("", value) {
                return format!("{flag}={MASK}");
            }
            return format!("{flag}={}", urls(value));
        }
        return urls(a);
    }
    // NAME=VALUE, as `docker run -e` or `env` take them.
    if let Some((name, value)) = a.split_once('=') {
        let is_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
        if is_name && (secret_name(name) || looks_secret(name, value)) {
            return format!("{name}={MASK}");
        }
    }
    // Name: value, as a header argument.
    if let Some((name, _)) = a.split_once(": ") {
        let is_name = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if is_name && (secret_name(name) || looks_secret(name, a)) {
            return format!("{name}: {MASK}");
        }
    }
    if !a.contains("://") && looks_secret("", a) {
        return MASK.to_string();
    }
    urls(a)
}

/// Every URL in `s` without user-info, and with secret-sounding query values masked.
fn urls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        // The URL goes on to the next whitespace or quote.
        let end = tail
            .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
            .unwrap_or(tail.len());
        let (url, after) = tail.split_at(end);
        let auth_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let (authority, path) = url.split_at(auth_end);
        match authority.rfind('@') {
            Some(i) => {
                out.push_str(MASK);
                out.push_str(&authority[i..]);
            }
            None => out.push_str(authority),
        }
        out.push_str(&query(path));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// A URL's path, query and fragment with the values of secret-sounding parameters masked.
fn query(path: &str) -> String {
    let Some(q) = path.find('?') else {
        return path.to_string();
    };
    let (p, qs) = path.split_at(q + 1);
    let (qs, frag) = match qs.find('#') {
        Some(h) => qs.split_at(h),
        None => (qs, ""),
    };
    let parts: Vec<String> = qs
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, v)) if secret_name(k) || looks_secret(k, v) => format!("{k}={MASK}"),
            _ => kv.to_string(),
        })
        .collect();
    format!("{p}{}{frag}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(line: &[&str]) -> String {
        args(&line.iter().map(|s| s.to_string()).collect::<Vec<_>>()).join(" ")
    }

    #[test]
    fn secret_flags_lose_their_values() {
        assert_eq!(
            shown(&["srv", "--api-key=sk1", "--token", "t0k", "--port", "80"]),
            "srv --api-key=<redacted> --token <redacted> --port 80"
        );
        assert_eq!(
            shown(&["--db-password=x", "--client_secret", "y", "--verbose"]),
            "--db-password=<redacted> --client_secret <redacted> --verbose"
        );
        // A flag without a value is left alone, and so is the flag after it.
        assert_eq!(shown(&["--token", "--port=1"]), "--token --port=1");
        // Not secret: author, keyboard, passthrough.
        assert_eq!(
            shown(&["--author=me", "--keyboard=us", "--monkey=1"]),
            "--author=me --keyboard=us --monkey=1"
        );
    }

    #[test]
    fn env_and_header_arguments_and_tokens() {
        assert_eq!(
            shown(&["-e", "API_KEY=abcdefgh12345", "-e", "LOG_LEVEL=debug"]),
            "-e API_KEY=<redacted> -e LOG_LEVEL=debug"
        );
        assert_eq!(
            shown(&["--header", "Authorization: Bearer abc"]),
            "--header Authorization: <redacted>"
        );
        assert_eq!(shown(&["ghp_1234567890abcdef"]), "<redacted>");
    }

    #[test]
    fn urls_lose_user_info_and_secret_query_values() {
        assert_eq!(
            arg("postgres://user:PASS@db.invalid:5432/x"),
            "postgres://<redacted>@db.invalid:5432/x"
        );
        assert_eq!(
            arg("--db=postgres://u:p@h/x"),
            "--db=postgres://<redacted>@h/x"
        );
        assert_eq!(
            arg("https://h.example/mcp?api_key=s3cret&page=2#f"),
            "https://h.example/mcp?api_key=<redacted>&page=2#f"
        );
        assert_eq!(arg("https://h.example/a@b"), "https://h.example/a@b");
    }
}
