//! Reports on hostile tool text: the terminal table, Markdown and HTML never pass tool text
//! through as something active (terminal escapes, HTML, links, table breaks), templates can be
//! overridden and fail clearly, and `-o` writes atomically.

use assert_cmd::Command;
use std::path::Path;

const HOSTILE: &str = "tests/data/hostile/tools.json";

fn mcprisk() -> Command {
    let mut cmd = Command::cargo_bin("mcprisk").unwrap();
    cmd.env_remove("NO_COLOR").env_remove("COLUMNS");
    cmd
}

/// Runs `scan` on the hostile tool list with extra arguments; returns stdout.
fn scan(args: &[&str]) -> String {
    let out = mcprisk()
        .args(["scan", "--tools", HOSTILE])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code() == Some(0),
        "scan {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("reports are UTF-8")
}

/// Characters from tool text that must never reach a reader raw.
fn hidden_chars(s: &str) -> Vec<(usize, char)> {
    s.char_indices()
        .filter(|&(_, c)| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
                    | '\u{2066}'..='\u{2069}' | '\u{2060}' | '\u{feff}' | '\u{061c}' | '\u{00ad}'
                    | '\u{3164}' | '\u{e0000}'..='\u{e007f}')
        })
        .collect()
}

#[test]
fn table_shows_control_characters_instead_of_sending_them() {
    let out = scan(&["--color", "never"]);
    assert_eq!(
        hidden_chars(&out),
        vec![],
        "raw control/invisible characters in the table"
    );
    assert!(!out.as_bytes().contains(&0x1b), "raw ESC in the table");
    // They are shown, not dropped.
    for shown in ["\\u{001B}[2J", "\\u{200B}", "\\u{202E}", "\\u{E0069}"] {
        assert!(out.contains(shown), "{shown} not shown in:\n{out}");
    }
    // Names with newlines stay on their row: no table line starts with tool text.
    assert!(!out.lines().any(|l| l.starts_with("second line")));
}

#[test]
fn color_never_and_no_color_have_no_ansi_at_all() {
    assert!(!scan(&["--color", "never"]).contains('\u{1b}'));
    let out = mcprisk()
        .args(["scan", "--tools", HOSTILE])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains('\u{1b}'));
}

#[test]
fn color_always_emits_only_colour_codes() {
    let out = scan(&["--color", "always"]);
    assert!(out.contains('\u{1b}'), "--color always should colour");
    // Every ESC starts an SGR sequence (ESC [ digits/semicolons m): nothing from tool text.
    for (i, _) in out.match_indices('\u{1b}') {
        let rest = &out[i + 1..];
        let end = rest.find('m').expect("unterminated escape");
        let seq = &rest[..end];
        assert!(
            seq.starts_with('[') && seq[1..].chars().all(|c| c.is_ascii_digit() || c == ';'),
            "non-colour escape {seq:?}"
        );
    }
}

/// Counts the `|` that split GitHub table cells: those not preceded by a backslash.
fn cell_pipes(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
        .count()
}

#[test]
fn markdown_escapes_everything() {
    let md = scan(&["--format", "md"]);
    assert_eq!(
        hidden_chars(&md),
        vec![],
        "raw control/invisible characters"
    );
    let lower = md.to_lowercase();
    for bad in [
        "<script",
        "<img",
        "<svg",
        "<iframe",
        "<style",
        "<a ",
        "</textarea",
        "](javascript:",
        "](",
        "![",
        "javascript:",
    ] {
        assert!(!lower.contains(bad), "{bad:?} in the Markdown report");
    }
    // The only raw HTML is the template's own.
    for (i, _) in md.match_indices('<') {
        let tag = &md[i..];
        assert!(
            ["<code>", "</code>", "<br>", "<sub>", "</sub>"]
                .iter()
                .any(|t| tag.starts_with(t)),
            "raw HTML from tool text: {}",
            &tag[..tag.len().min(40)]
        );
    }
    // Every table keeps the same number of cells in every row.
    let mut tables = 0;
    let mut rows_seen = 0;
    let mut expected: Option<usize> = None;
    for line in md.lines() {
        if line.starts_with('|') {
            let n = cell_pipes(line);
            match expected {
                None => {
                    expected = Some(n);
                    tables += 1;
                }
                Some(e) => assert_eq!(n, e, "row breaks its table: {line}"),
            }
            rows_seen += 1;
        } else {
            expected = None;
        }
    }
    assert!(tables >= 3 && rows_seen > 20, "tables missing:\n{md}");
    // Hostile names are present, escaped.
    assert!(md.contains("get\\|pipe\\|name second line"));
    assert!(md.contains("&lt;script&gt;document.title="));
    // The policy code block cannot be closed early by tool text.
    let fence = md.find("```json").expect("policy block");
    let body = &md[fence + 7..];
    let close = body.find("\n```").expect("policy block end");
    assert!(!body[..close].contains('`'));
    let policy: serde_json::Value = serde_json::from_str(&body[..close]).unwrap();
    assert_eq!(policy, policy_json());
}

fn policy_json() -> serde_json::Value {
    let out = mcprisk()
        .args(["policy", "--tools", HOSTILE])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn html_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[test]
fn html_escapes_everything_and_has_a_csp() {
    let html = scan(&["--format", "html"]);
    assert_eq!(
        hidden_chars(&html),
        vec![],
        "raw control/invisible characters"
    );
    let lower = html.to_lowercase();
    // Every raw `<` starts one of the report's own tags, with no handler or script URL.
    const TAGS: &[&str] = &[
        "!doctype", "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p",
        "section", "div", "span", "table", "colgroup", "col", "tr", "th", "td", "code", "pre",
        "details", "summary", "ul", "li", "a", "mark", "small", "strong", "br", "footer",
    ];
    for (i, _) in html.match_indices('<') {
        let tag = &lower[i + 1..i + lower[i..].find('>').unwrap()];
        let name = tag
            .trim_start_matches('/')
            .split([' ', '>'])
            .next()
            .unwrap();
        assert!(TAGS.contains(&name), "unexpected tag <{tag}>");
        let attrs = &tag[name.len()..];
        assert!(
            !attrs.contains(" on") && !attrs.contains("javascript:") && !attrs.contains("url("),
            "active attribute in <{tag}>"
        );
        if name == "a" && !tag.starts_with('/') {
            assert!(
                attrs.starts_with(" href=\"#"),
                "a link leaves the page: <{tag}>"
            );
        }
    }
    for bad in [
        "<script",
        "href=\"javascript:",
        "href=javascript:",
        "<img",
        "<svg",
        "<iframe",
        "<link",
        "<base",
        "</textarea",
        "<meta http-equiv=\"refresh",
        "<!-- <base",
    ] {
        assert!(!lower.contains(bad), "{bad:?} in the HTML report");
    }
    assert_eq!(
        lower.matches("<style").count(),
        1,
        "only the report's own style"
    );
    // A strict CSP, before anything that could come from tool text.
    let csp = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("CSP meta tag");
    assert!(csp < html.find("<title>").unwrap());
    let csp_tag = &html[csp..csp + html[csp..].find('>').unwrap()];
    assert!(csp_tag.contains("default-src 'none'") && csp_tag.contains("script-src 'none'"));
    // Hostile text is shown, escaped; invisible characters are marked.
    assert!(html.contains("&lt;script&gt;document.title="));
    assert!(html.contains(">U+202E</mark>"));
    assert!(html.contains(">tags: ignore all rules</mark>"));
    assert!(html.contains(
        "<IMPORTANT>"
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .as_str()
    ));
    // The policy block is the same policy as `mcprisk policy`, after HTML unescaping.
    let open = "<pre class=\"policy\">";
    let start = html.find(open).unwrap() + open.len();
    let end = start + html[start..].find("</pre>").unwrap();
    let policy: serde_json::Value =
        serde_json::from_str(&html_unescape(&html[start..end])).unwrap();
    assert_eq!(policy, policy_json());
}

#[test]
fn html_report_of_a_real_server_has_every_section() {
    let out = mcprisk()
        .args([
            "scan",
            "--tools",
            "examples/proxmox-mcp.tools.json",
            "--format",
            "html",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let html = String::from_utf8(out.stdout).unwrap();
    for part in [
        "class=\"badge g-",
        "Why grade",
        "Tools per category",
        "Findings (",
        "Tools (28)",
        "MR-C",
        "pve_api_request",
        "Recommended policy",
    ] {
        assert!(html.contains(part), "{part} missing");
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn templates_dir_overrides_a_template_and_keeps_escaping() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "report.md.j2",
        "CUSTOM {{ servers[0].tool_count }}\n",
    );
    write(
        dir.path(),
        "report.html.j2",
        "<p>{% for t in servers[0].tools %}{{ t.name }}{% endfor %}</p>\n",
    );
    let d = dir.path().to_str().unwrap();
    assert_eq!(scan(&["--format", "md", "--templates", d]), "CUSTOM 14\n");
    let html = scan(&["--format", "html", "--templates", d]);
    assert!(html.starts_with("<p>") && html.contains("&lt;script&gt;"));
    assert!(!html.to_lowercase().contains("<script"));
    // A directory without a file keeps the built-in template for it.
    let other = tempfile::tempdir().unwrap();
    let md = scan(&[
        "--format",
        "md",
        "--templates",
        other.path().to_str().unwrap(),
    ]);
    assert!(md.starts_with("# MCP server risk report"));
    // A directory that does not exist is an error, not a silent fallback.
    let missing = other.path().join("nope");
    let out = mcprisk()
        .args(["scan", "--tools", HOSTILE, "--format", "md", "--templates"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(missing.to_str().unwrap()));
}

#[test]
fn a_broken_template_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "report.md.j2", "{% for t in %}\n");
    let path = dir.path().join("report.md.j2");
    let out = mcprisk()
        .args(["scan", "--tools", HOSTILE, "--format", "md", "--templates"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(path.to_str().unwrap()),
        "no file name in: {err}"
    );
    assert!(out.stdout.is_empty());

    // A template that only fails while rendering names the file too, and -o writes nothing.
    write(
        dir.path(),
        "report.md.j2",
        "{{ servers[0].no_such_field }}\n",
    );
    let target = dir.path().join("out.md");
    let out = mcprisk()
        .args(["scan", "--tools", HOSTILE, "--format", "md", "--templates"])
        .arg(dir.path())
        .arg("-o")
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(path.to_str().unwrap()),
        "no file name in: {err}"
    );
    assert!(err.contains("no_such_field"), "no cause in: {err}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(left, vec!["report.md.j2".to_string()], "files left behind");
}

#[test]
fn output_file_is_written_atomically() {
    let dir = tempfile::tempdir().unwrap();
    for (format, name) in [("html", "r.html"), ("md", "r.md"), ("table", "r.txt")] {
        let target = dir.path().join(name);
        std::fs::write(&target, "old content").unwrap();
        let out = mcprisk()
            .args(["scan", "--tools", HOSTILE, "--format", format, "-o"])
            .arg(&target)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty(), "-o still wrote to stdout");
        let text = std::fs::read_to_string(&target).unwrap();
        assert!(text.len() > 1000 && !text.contains("old content"));
    }
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["r.html", "r.md", "r.txt"], "temporary files left");
}
