//! Reads a client config file into [`ServerEntry`]s. JSON files may carry comments and
//! trailing commas (VS Code and Cursor allow them), so they are read as JSONC.

use super::vars::{expand, Lookup, ProcessEnv};
use super::{Client, ConfigFile, HttpKind, Launch, Secret, ServerEntry};
use crate::error::{Error, Result};
use serde_json::{Map, Value};
use std::path::Path;

/// Config files larger than this are not MCP client configs.
const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// Reads and parses a config file, resolving variables from the process environment.
pub fn load(path: &Path) -> Result<ConfigFile> {
    let shown = path.display();
    let meta =
        std::fs::metadata(path).map_err(|e| Error::new(format!("{shown}: cannot read: {e}")))?;
    if meta.is_dir() {
        return Err(Error::new(format!(
            "{shown}: is a directory, not a config file"
        )));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(Error::new(format!(
            "{shown}: larger than 16 MiB; not an MCP client config"
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| Error::new(format!("{shown}: cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::new(format!(
            "{shown}: not valid UTF-8 (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    let workspace = project_dir(path);
    parse_text(path, &text, &ProcessEnv { workspace })
}

/// The project folder a config belongs to: the parent of `.vscode`, `.cursor`, or the file's folder.
fn project_dir(path: &Path) -> Option<String> {
    let abs = std::fs::canonicalize(path).ok()?;
    let dir = abs.parent()?;
    let dir = match dir.file_name().and_then(|n| n.to_str()) {
        Some(".vscode" | ".cursor" | ".gemini" | ".codex" | ".claude") => dir.parent()?,
        _ => dir,
    };
    Some(dir.to_string_lossy().into_owned())
}

/// Parses config text; `path` decides the client where the content does not.
pub fn parse_text(path: &Path, text: &str, lookup: &dyn Lookup) -> Result<ConfigFile> {
    let shown = path.display().to_string();
    let is_toml = path.extension().is_some_and(|e| e == "toml");
    let doc: Value = if is_toml {
        let t: toml::Value = toml::from_str(text).map_err(|e| {
            // The message quotes the offending line, which is the file's text.
            Error::new(format!(
                "{shown}: invalid TOML: {}",
                crate::output::sanitize::excerpt(e.to_string().trim(), 300, 8)
            ))
        })?;
        serde_json::to_value(t).map_err(|e| Error::new(format!("{shown}: {e}")))?
    } else {
        let v: Option<Value> = jsonc_parser::parse_to_serde_value(text, &Default::default())
            .map_err(|e| {
                Error::new(format!(
                    "{shown}: invalid JSON: {}",
                    crate::output::sanitize::excerpt(&e.to_string(), 300, 8)
                ))
            })?;
        v.unwrap_or(Value::Null)
    };
    let Value::Object(root) = doc else {
        return Err(Error::new(format!(
            "{shown}: expected an object at the top level"
        )));
    };
    let mut file = ConfigFile {
        path: path.to_path_buf(),
        client: Client::Generic,
        servers: Vec::new(),
        problems: Vec::new(),
    };
    let mut ctx = Ctx {
        file: &mut file,
        text,
        lookup,
    };
    if is_toml {
        ctx.file.client = Client::Codex;
        match root.get("mcp_servers") {
            Some(Value::Object(m)) => ctx.servers(m, None),
            Some(_) => ctx.problem("\"mcp_servers\" must be a table".into()),
            None => {}
        }
        return Ok(file);
    }
    let fname = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let pstr = path.to_string_lossy().replace('\\', "/");
    let client = if root.contains_key("servers")
        || root.contains_key("inputs")
        || pstr.contains(".vscode/")
        || pstr.contains("/Code/User/")
    {
        Client::VsCode
    } else if fname == "claude_desktop_config.json" {
        Client::ClaudeDesktop
    } else if fname == ".claude.json" || fname == ".mcp.json" || pstr.contains("/.claude/") {
        Client::ClaudeCode
    } else if pstr.contains("/.cursor/") {
        Client::Cursor
    } else if pstr.contains("windsurf") || pstr.contains("codeium") {
        Client::Windsurf
    } else if pstr.contains("/.gemini/") {
        Client::Gemini
    } else {
        Client::Generic
    };
    ctx.file.client = client;
    match client {
        Client::VsCode => {
            let servers = root
                .get("servers")
                .or_else(|| root.get("mcp").and_then(|m| m.get("servers")));
            match servers {
                Some(Value::Object(m)) => ctx.servers(m, None),
                Some(_) => ctx.problem("\"servers\" must be an object".into()),
                None => {}
            }
        }
        _ => {
            match root.get("mcpServers") {
                Some(Value::Object(m)) => {
                    let scope = (client == Client::ClaudeCode && fname == ".claude.json")
                        .then(|| "user".to_string());
                    ctx.servers(m, scope)
                }
                Some(_) => ctx.problem("\"mcpServers\" must be an object".into()),
                None => {}
            }
            if let Some(Value::Object(projects)) = root.get("projects") {
                for (dir, p) in projects {
                    if let Some(Value::Object(m)) = p.get("mcpServers") {
                        ctx.servers(m, Some(format!("local: {dir}")));
                    }
                }
            }
        }
    }
    Ok(file)
}

struct Ctx<'a> {
    file: &'a mut ConfigFile,
    text: &'a str,
    lookup: &'a dyn Lookup,
}

impl Ctx<'_> {
    fn problem(&mut self, msg: String) {
        self.file
            .problems
            .push(format!("{}: {msg}", self.file.path.display()));
    }

    fn servers(&mut self, map: &Map<String, Value>, scope: Option<String>) {
        for (name, entry) in map {
            match entry {
                Value::Object(e) => match self.entry(name, e, scope.clone()) {
                    Ok(s) => self.file.servers.push(s),
                    Err(msg) => self.problem(format!("server {name:?}: {msg}")),
                },
                _ => self.problem(format!("server {name:?}: must be an object")),
            }
        }
    }

    fn line_of(&self, name: &str) -> usize {
        let needles = [
            format!("\"{name}\""),
            format!("[mcp_servers.{name}]"),
            format!("mcp_servers.\"{name}\""),
        ];
        needles
            .iter()
            .filter_map(|n| self.text.find(n.as_str()))
            .min()
            .map(|at| self.text[..at].matches('\n').count() + 1)
            .unwrap_or(1)
    }

    fn entry(
        &mut self,
        name: &str,
        e: &Map<String, Value>,
        scope: Option<String>,
    ) -> std::result::Result<ServerEntry, String> {
        let mut unresolved = Vec::new();
        let mut literal = Vec::new();
        let mut sends_env = Vec::new();
        let s = |v: Option<&Value>, key: &str| -> std::result::Result<Option<String>, String> {
            match v {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!("\"{key}\" must be a string")),
            }
        };
        let kind = s(e.get("type"), "type")?.or(s(e.get("transport"), "transport")?);
        let url = s(e.get("url"), "url")?;
        let server_url = s(e.get("serverUrl"), "serverUrl")?;
        let http_url = s(e.get("httpUrl"), "httpUrl")?;
        let command = s(e.get("command"), "command")?;
        let disabled = e.get("disabled").and_then(Value::as_bool).unwrap_or(false)
            || e.get("enabled").and_then(Value::as_bool) == Some(false);
        let lookup = self.lookup;
        let exp = |raw: &str, unresolved: &mut Vec<String>| {
            let x = expand(raw, lookup);
            unresolved.extend(x.unresolved.iter().cloned());
            x
        };
        let launch = if let Some(cmd) = command.filter(|_| {
            !matches!(
                kind.as_deref(),
                Some("http" | "sse" | "streamable-http" | "streamableHttp")
            )
        }) {
            let args = match e.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(exp(s, &mut unresolved).value),
                        Value::Number(n) => Ok(n.to_string()),
                        _ => Err("\"args\" must hold strings".to_string()),
                    })
                    .collect::<std::result::Result<_, _>>()?,
                Some(_) => return Err("\"args\" must be an array".into()),
            };
            let mut env = Vec::new();
            match e.get("env") {
                None | Some(Value::Null) => {}
                Some(Value::Object(m)) => {
                    for (k, v) in m {
                        let raw = match v {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            _ => return Err(format!("env {k:?} must be a string")),
                        };
                        let x = exp(&raw, &mut unresolved);
                        if !x.had_reference && looks_secret(k, &raw) {
                            literal.push(format!("env {k}"));
                        }
                        env.push((k.clone(), Secret::new(x.value)));
                    }
                }
                Some(_) => return Err("\"env\" must be an object".into()),
            }
            if let Some(Value::String(f)) = e.get("envFile") {
                unresolved.push(format!("envFile {f} (not read)"));
            }
            Launch::Stdio {
                command: exp(&cmd, &mut unresolved).value,
                args,
                env,
                cwd: s(e.get("cwd"), "cwd")?.map(|c| exp(&c, &mut unresolved).value),
            }
        } else {
            let (raw_url, kind) = match (http_url, server_url, url) {
                (Some(u), _, _) => (u, HttpKind::Streamable),
                (None, Some(u), _) => (u, HttpKind::Auto),
                (None, None, Some(u)) => {
                    let k = match kind.as_deref() {
                        Some("sse") => HttpKind::Sse,
                        Some("http" | "streamable-http" | "streamableHttp") => HttpKind::Streamable,
                        _ if self.file.client == Client::Gemini => HttpKind::Sse,
                        _ => HttpKind::Auto,
                    };
                    (u, k)
                }
                (None, None, None) => return Err("has neither \"command\" nor \"url\"".into()),
            };
            let mut headers = Vec::new();
            let mut sends = Vec::new();
            for key in ["headers", "http_headers"] {
                match e.get(key) {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(m)) => {
                        for (k, v) in m {
                            let Value::String(raw) = v else {
                                return Err(format!("header {k:?} must be a string"));
                            };
                            let x = exp(raw, &mut unresolved);
                            if !x.had_reference && looks_secret(k, raw) {
                                literal.push(format!("header {k}"));
                            }
                            sends.extend(x.env_vars);
                            headers.push((k.clone(), Secret::new(x.value)));
                        }
                    }
                    Some(_) => return Err(format!("\"{key}\" must be an object")),
                }
            }
            if let Some(Value::Object(m)) = e.get("env_http_headers") {
                for (k, v) in m {
                    if let Value::String(var) = v {
                        match lookup.env(var) {
                            Some(val) => {
                                sends.push(var.clone());
                                headers.push((k.clone(), Secret::new(val)))
                            }
                            None => unresolved.push(format!("env {var} (for header {k})")),
                        }
                    }
                }
            }
            if let Some(Value::String(var)) = e.get("bearer_token_env_var") {
                match lookup.env(var) {
                    Some(val) => {
                        sends.push(var.clone());
                        headers.push(("Authorization".into(), Secret::new(format!("Bearer {val}"))))
                    }
                    None => unresolved.push(format!("env {var} (bearer token)")),
                }
            }
            let url = exp(&raw_url, &mut unresolved);
            sends.extend(url.env_vars);
            sends.sort();
            sends.dedup();
            sends_env = sends;
            Launch::Http {
                url: url.value,
                headers,
                kind,
            }
        };
        Ok(ServerEntry {
            name: name.to_string(),
            client: self.file.client,
            file: self.file.path.clone(),
            scope,
            line: self.line_of(name),
            launch,
            unresolved,
            literal_secrets: literal,
            sends_env,
            disabled,
        })
    }
}

/// Whether a literal env or header value is a secret: a secret-sounding key with a real value,
/// or a value shaped like a well-known token. Placeholders do not count.
pub fn looks_secret(key: &str, value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() || v.len() < 8 {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let placeholder = [
        "your",
        "<",
        "xxx",
        "changeme",
        "replace",
        "example",
        "placeholder",
        "dummy",
        "todo",
        "...",
    ]
    .iter()
    .any(|p| lower.contains(p));
    if placeholder {
        return false;
    }
    let token_shaped = [
        "ghp_",
        "gho_",
        "ghs_",
        "github_pat_",
        "glpat-",
        "sk-",
        "sk_live_",
        "sk_test_",
        "rk_live_",
        "xoxb-",
        "xoxp-",
        "xapp-",
        "akia",
        "aiza",
        "ntn_",
        "secret_",
        "pat-",
        "shpat_",
        "sq0atp-",
        "dop_v1_",
        "npm_",
        "pypi-",
    ]
    .iter()
    .any(|p| {
        lower.starts_with(p)
            || lower
                .strip_prefix("bearer ")
                .is_some_and(|r| r.starts_with(p))
    });
    let secret_key = super::secret::credential_name(key);
    token_shaped || secret_key
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets::clients::vars::Lookup;

    struct NoEnv;
    impl Lookup for NoEnv {
        fn env(&self, name: &str) -> Option<String> {
            (name == "GH").then(|| "from-env".into())
        }
        fn workspace(&self) -> Option<String> {
            Some("/w".into())
        }
        fn home(&self) -> Option<String> {
            None
        }
    }

    fn parse(path: &str, text: &str) -> ConfigFile {
        parse_text(Path::new(path), text, &NoEnv).unwrap()
    }

    #[test]
    fn claude_desktop_stdio_with_literal_secret() {
        let f = parse(
            "/u/Library/Application Support/Claude/claude_desktop_config.json",
            r#"{"mcpServers": {"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_realLookingToken123"}}}}"#,
        );
        assert_eq!(f.client, Client::ClaudeDesktop);
        let s = &f.servers[0];
        assert_eq!(s.literal_secrets, ["env GITHUB_PERSONAL_ACCESS_TOKEN"]);
        let shown = s.launch.display();
        assert!(!shown.contains("ghp_"), "{shown}");
        assert!(shown.contains("npx -y @modelcontextprotocol/server-github"));
    }

    #[test]
    fn vscode_servers_inputs_and_comments() {
        let f = parse(
            "/p/.vscode/mcp.json",
            r#"{
  // comment
  "inputs": [{"type": "promptString", "id": "pat", "password": true}],
  "servers": {
    "gh": {"type": "http", "url": "https://api.example/mcp", "headers": {"Authorization": "Bearer ${input:pat}"}},
    "local": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/server.js"], "env": {"T": "${env:GH}"}},
  }
}"#,
        );
        assert_eq!(f.client, Client::VsCode);
        assert_eq!(f.servers.len(), 2);
        let gh = f.servers.iter().find(|s| s.name == "gh").unwrap();
        assert_eq!(gh.unresolved, ["${input:pat}"]);
        assert!(gh.literal_secrets.is_empty());
        assert!(matches!(
            gh.launch,
            Launch::Http {
                kind: HttpKind::Streamable,
                ..
            }
        ));
        assert_eq!(gh.line, 5);
        let local = f.servers.iter().find(|s| s.name == "local").unwrap();
        match &local.launch {
            Launch::Stdio { args, env, .. } => {
                assert_eq!(args, &["/w/server.js"]);
                assert_eq!(env[0].1.expose(), "from-env");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn claude_code_user_and_project_scopes() {
        let f = parse(
            "/home/u/.claude.json",
            r#"{"mcpServers": {"a": {"type": "sse", "url": "http://127.0.0.1:1/sse"}},
                "projects": {"/repo": {"mcpServers": {"b": {"command": "uvx", "args": ["mcp-server-git"]}}}}}"#,
        );
        assert_eq!(f.client, Client::ClaudeCode);
        assert_eq!(f.servers[0].scope.as_deref(), Some("user"));
        assert_eq!(f.servers[1].scope.as_deref(), Some("local: /repo"));
    }

    #[test]
    fn windsurf_gemini_codex() {
        let w = parse(
            "/h/.codeium/windsurf/mcp_config.json",
            r#"{"mcpServers": {"r": {"serverUrl": "https://x/mcp"}}}"#,
        );
        assert_eq!(w.client, Client::Windsurf);
        let g = parse(
            "/h/.gemini/settings.json",
            r#"{"mcpServers": {"s": {"url": "http://x/sse"}, "h": {"httpUrl": "http://x/mcp"}}}"#,
        );
        assert!(
            matches!(
                g.servers[0].launch,
                Launch::Http {
                    kind: HttpKind::Streamable,
                    ..
                }
            ) || matches!(
                g.servers[1].launch,
                Launch::Http {
                    kind: HttpKind::Streamable,
                    ..
                }
            )
        );
        let c = parse(
            "/h/.codex/config.toml",
            "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\nenv = { \"API_KEY\" = \"abcdefgh12345\" }\n\n[mcp_servers.remote]\nurl = \"https://r/mcp\"\nbearer_token_env_var = \"NOPE\"\n",
        );
        assert_eq!(c.client, Client::Codex);
        let docs = c.servers.iter().find(|s| s.name == "docs").unwrap();
        assert_eq!(docs.line, 1);
        assert_eq!(docs.literal_secrets, ["env API_KEY"]);
        let remote = c.servers.iter().find(|s| s.name == "remote").unwrap();
        assert_eq!(remote.unresolved, ["env NOPE (bearer token)"]);
    }

    #[test]
    fn bad_entries_are_problems_not_failures() {
        let f = parse(
            "/x/.mcp.json",
            r#"{"mcpServers": {"bad": {"args": []}, "worse": 5, "ok": {"command": "x"}}}"#,
        );
        assert_eq!(f.servers.len(), 1);
        assert_eq!(f.problems.len(), 2);
    }

    #[test]
    fn invalid_json_says_where() {
        let err = parse_text(Path::new("c.json"), "{\n  \"mcpServers\": {,}\n}", &NoEnv)
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.json") && err.contains("line 2"), "{err}");
    }

    #[test]
    fn placeholders_are_not_secrets() {
        assert!(!looks_secret("API_KEY", "<your-api-key>"));
        assert!(!looks_secret("GITHUB_TOKEN", "your_token_here"));
        assert!(looks_secret("X", "ghp_1234567890abcdef"));
        assert!(!looks_secret("LOG_LEVEL", "debugging"));
        // Issue 12, item 16: a path is not a literal secret, whatever its name spells inside.
        assert!(!looks_secret("MEMORY_FILE_PATH", "/home/u/memory.jsonl"));
        assert!(looks_secret("GITHUB_PAT", "abcdefgh12345678"));
    }
}
