//! Opens the HTML report of a hostile tool list in a real browser (Debian's headless Chromium)
//! and proves that no injected script ran.
//!
//! The payloads in `tests/data/hostile/tools.json` set `document.title` to the marker
//! `MCPRISK-PWNED`, or add an element with id `mcprisk-pwned` holding it, without spelling the
//! marker out, so the marker can only appear in the page if a payload ran. A control page with
//! the same kind of script shows that this Chromium runs scripts and that the check sees them.
//! The report is checked twice: as written (with its Content-Security-Policy) and with the CSP
//! removed, so escaping alone is shown to be enough. Chromium only loads local files: DNS is
//! mapped to nowhere and background networking is off.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const MARKER: &str = "MCPRISK-PWNED";
const MARKER_ID: &str = "mcprisk-pwned";

/// Runs headless Chromium on a local file with `extra` flags; returns stdout.
fn chromium(page: &Path, extra: &[String]) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--no-default-browser-check",
            "--no-pings",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--hide-scrollbars",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {CHROMIUM}: {e}"));
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut std::io::BufReader::new(stdout), &mut out).unwrap();
        out
    });
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed on {}", page.display());
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 30 s on {}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().unwrap()
}

/// Asserts that no payload ran in the DOM Chromium dumped for `what`.
fn assert_clean(dom: &str, what: &str) {
    assert!(
        dom.contains("Tools (14), most severe first"),
        "{what}: the report did not load:\n{}",
        &dom[..dom.len().min(2000)]
    );
    assert!(!dom.contains(MARKER), "{what}: an injected script ran");
    assert!(
        !dom.contains(MARKER_ID),
        "{what}: an injected element appeared"
    );
    let title_start = dom.find("<title>").expect("title") + 7;
    let title = &dom[title_start..title_start + dom[title_start..].find("</title>").unwrap()];
    assert!(
        title.starts_with("mcprisk report"),
        "{what}: title changed to {title:?}"
    );
    // The serializer escapes `<` in text, so every raw `<` is a live element: each must be one
    // of the report's own, with no event handler and no script URL.
    const TAGS: &[&str] = &[
        "!doctype", "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p",
        "section", "div", "span", "table", "tbody", "colgroup", "col", "tr", "th", "td", "code",
        "pre", "details", "summary", "ul", "li", "a", "mark", "small", "strong", "br", "footer",
    ];
    let lower = dom.to_lowercase();
    for (i, _) in lower.match_indices('<') {
        let tag = &lower[i + 1..i + lower[i..].find('>').unwrap()];
        let name = tag.trim_start_matches('/').split(' ').next().unwrap();
        assert!(TAGS.contains(&name), "{what}: live element <{tag}>");
        let attrs = &tag[name.len()..];
        assert!(
            !attrs.contains(" on") && !attrs.contains("javascript:"),
            "{what}: active attribute in <{tag}>"
        );
    }
    // The payloads are in the page, as text.
    assert!(dom.contains("&lt;script&gt;document.title="));
}

#[test]
fn hostile_html_report_runs_no_injected_script_in_chromium() {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: this test needs Debian's chromium package \
         (`apt-get update && apt-get install -y chromium`; CI installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.html");
    let status = Command::new(env!("CARGO_BIN_EXE_mcprisk"))
        .args([
            "scan",
            "--tools",
            "tests/data/hostile/tools.json",
            "--format",
            "html",
            "-q",
            "-o",
        ])
        .arg(&report)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(&report).unwrap();

    // The same report without its CSP: escaping alone must keep the payloads inert.
    let csp_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("CSP meta tag");
    let csp_end = csp_start + html[csp_start..].find('>').unwrap() + 1;
    let no_csp = dir.path().join("report-no-csp.html");
    std::fs::write(
        &no_csp,
        format!("{}{}", &html[..csp_start], &html[csp_end..]),
    )
    .unwrap();

    // A control page whose script writes the marker the same way the payloads try to.
    let control = dir.path().join("control.html");
    std::fs::write(
        &control,
        "<!DOCTYPE html><html><head><title>control</title></head><body><p>control</p>\
         <script>document.title='MCPRISK'+'-PWNED';var d=document.createElement('div');\
         d.id='mcprisk'+'-pwned';document.body.appendChild(d)</script></body></html>",
    )
    .unwrap();

    let shot: PathBuf = dir.path().join("report.png");
    let jobs: Vec<(&str, PathBuf, Vec<String>)> = vec![
        ("control", control, vec!["--dump-dom".into()]),
        ("report", report.clone(), vec!["--dump-dom".into()]),
        ("report without CSP", no_csp, vec!["--dump-dom".into()]),
        (
            "screenshot",
            report,
            vec![
                format!("--screenshot={}", shot.display()),
                "--window-size=1400,2000".into(),
            ],
        ),
    ];
    let runs: Vec<_> = jobs
        .into_iter()
        .map(|(what, page, flags)| std::thread::spawn(move || (what, chromium(&page, &flags))))
        .collect();
    for run in runs {
        let (what, dom) = run.join().unwrap();
        match what {
            "control" => assert!(
                dom.contains(MARKER) && dom.contains(MARKER_ID),
                "the control page's script did not run, so this check could not see an \
                 injected one:\n{dom}"
            ),
            "screenshot" => {}
            _ => assert_clean(&dom, what),
        }
    }

    let png = std::fs::read(&shot).expect("no screenshot written");
    assert!(
        png.len() > 10_000,
        "screenshot is too small: {} bytes",
        png.len()
    );
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "screenshot is not a PNG");
}
