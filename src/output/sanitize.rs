//! Makes hostile tool text safe to show. Tool names, descriptions and schema texts come from
//! the server, so they may carry terminal escapes, invisible or bidi characters, HTML and
//! Markdown. Every output format goes through one of these functions:
//!
//! - [`visible`] / [`one_line`]: terminal text; control and invisible characters become `\u{XXXX}`;
//! - [`markdown`]: inline Markdown (table cells included), every active character escaped;
//! - [`html_reveal`]: HTML text with invisible characters highlighted as `U+XXXX` marks;
//! - [`json_text`]: JSON that stays valid and means the same, with `<`, `>`, `&`, backticks and
//!   every invisible character written as `\uXXXX` escapes.

pub use super::deceptive::is_hidden;
use super::deceptive::look_alike_spans;
use std::fmt::Write as _;

/// Text with every hidden or control character, and every look-alike letter of a disguised
/// word (a Cyrillic "е" in "dеstroy"), shown as `\u{XXXX}`; newlines and tabs kept.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let disguise = look_alike_spans(s);
    let mut next = disguise.iter().peekable();
    for (i, c) in s.char_indices() {
        let look_alike = next.next_if(|span| span.start == i).is_some();
        if c == '\n' || c == '\t' {
            out.push(c);
        } else if is_hidden(c) || look_alike {
            let _ = write!(out, "\\u{{{:04X}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The whole of `s` on one line, nothing cut or folded: like [`visible`], with newlines and
/// tabs escaped too (`\n`, `\t`), so no character of it can start a line of its own.
pub fn whole_line(s: &str) -> String {
    visible(s).replace('\n', "\\n").replace('\t', "\\t")
}

/// `text` wrapped at spaces into lines of about `width` characters, each after `indent`;
/// nothing is cut (a longer word gets a line of its own) and the words stay as they were.
pub fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split(' ') {
        let n = word.chars().count();
        if line_len > 0 && line_len + 1 + n > width {
            out.push('\n');
            line_len = 0;
        }
        if line_len == 0 {
            out.push_str(indent);
        } else {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += n;
    }
    out
}

/// File- or server-provided text for a message: [`visible`] escapes, at most `max_lines` lines
/// of at most `max_chars` characters each, and a note of what was left out.
pub fn excerpt(s: &str, max_chars: usize, max_lines: usize) -> String {
    let mut out = String::new();
    let total = s.lines().count();
    for (i, line) in s.lines().enumerate() {
        if i == max_lines {
            out.push_str(&format!("\n… ({} more lines)", total - max_lines));
            break;
        }
        if i > 0 {
            out.push('\n');
        }
        let n = line.chars().count();
        if n > max_chars {
            let head: String = line.chars().take(max_chars).collect();
            out.push_str(&visible(&head));
            out.push_str(&format!("… ({} more characters)", n - max_chars));
        } else {
            out.push_str(&visible(line));
        }
    }
    out
}

/// An error message as it may reach a terminal: every control and invisible character escaped
/// (newlines kept, as the message's own), and no line longer than 64 Ki characters. The
/// messages' parts from files and servers are capped where they are made; this is the last
/// guard, for all of them.
pub fn message(s: &str) -> String {
    excerpt(s, 64 * 1024, usize::MAX)
}

/// One line of at most `max` characters: visible escapes, whitespace runs folded, `…` when cut.
pub fn one_line(s: &str, max: usize) -> String {
    let shown = visible(s);
    let mut out = String::new();
    let mut count = 0;
    let mut last_space = false;
    for c in shown.chars() {
        let c = if c.is_whitespace() { ' ' } else { c };
        if c == ' ' && (last_space || count == 0) {
            continue;
        }
        last_space = c == ' ';
        if count == max {
            out.push('…');
            return out.trim_end().to_string();
        }
        out.push(c);
        count += 1;
    }
    out.trim_end().to_string()
}

/// Like [`one_line`], but a longer text keeps its start and its end around `…`: for error
/// messages, whose end (a traceback's last line) usually says why.
pub fn one_line_ends(s: &str, max: usize) -> String {
    cut_middle(&one_line(s, usize::MAX), max)
}

/// A text of at most `max` characters: unchanged when it fits, else its first two fifths and
/// its end around `…`.
pub fn cut_middle(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let head_len = max * 2 / 5;
    let tail_len = max.saturating_sub(head_len + 1);
    let head: String = s.chars().take(head_len).collect();
    let tail: String = s.chars().skip(count - tail_len).collect();
    format!("{}…{}", head.trim_end(), tail.trim_start())
}

/// Escapes text for Markdown (inline, including GitHub table cells; not for the start of a
/// line): the characters that start links, images, emphasis, code spans, strikethrough, math
/// and URL autolinks, or split a table cell, are backslash-escaped, `<` `>` `&` become entities
/// (no raw HTML, no entity tricks), and line breaks become spaces (a row stays one line).
/// GitHub's extended autolinks are stopped too: the dot of `www.` is escaped, and `@` (e-mail
/// addresses, `@mentions`) is followed by an empty `<sub></sub>`, the only markup added.
pub fn markdown(s: &str) -> String {
    let shown = visible(s);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '#' | '!' | '|' | '~' | '$' | ':' => {
                out.push('\\');
                out.push(c);
            }
            // GitHub links `www.x.y` by itself: an escaped dot is not "www.".
            '.' if out.len() >= 3 && out[out.len() - 3..].eq_ignore_ascii_case("www") => {
                out.push_str("\\.");
            }
            // GitHub links `a@b.c` (and mentions `@user`) after every escape has been undone,
            // so only markup between `@` and what follows stops it: an empty <sub> shows nothing.
            '@' => out.push_str("@<sub></sub>"),
            c => out.push(c),
        }
    }
    out
}

/// Escapes one character for HTML text or a quoted attribute value.
fn push_html(out: &mut String, c: char) {
    match c {
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '&' => out.push_str("&amp;"),
        '"' => out.push_str("&quot;"),
        '\'' => out.push_str("&#x27;"),
        c => out.push(c),
    }
}

/// Whether `c` is a Unicode tag character that mirrors a printable ASCII character.
fn is_tag_text(c: char) -> bool {
    ('\u{e0020}'..='\u{e007e}').contains(&c)
}

/// The ASCII character a tag character mirrors.
fn tag_ascii(c: char) -> char {
    char::from_u32(c as u32 - 0xe0000).unwrap_or('?')
}

/// HTML-escaped text (safe in element content and in quoted attributes) in which every hidden
/// or control character is shown as a highlighted `U+XXXX` mark (a run of Unicode tag
/// characters as the text it spells); newlines and tabs kept.
/// The result is markup: insert it without escaping it again.
pub fn html_reveal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let disguise = look_alike_spans(s);
    let mut next = disguise.iter().peekable();
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if next.next_if(|span| span.start == i).is_some() {
            let _ = write!(
                out,
                "<mark class=\"hidden-char\" title=\"a letter that looks like another (a disguised word)\">U+{:04X}</mark>",
                c as u32
            );
            continue;
        }
        if is_tag_text(c) {
            // Unicode tag characters spell invisible ASCII: show what they spell.
            let mut spelled = String::new();
            push_html(&mut spelled, tag_ascii(c));
            while let Some(&(_, n)) = chars.peek().filter(|(_, n)| is_tag_text(*n)) {
                push_html(&mut spelled, tag_ascii(n));
                chars.next();
            }
            let _ = write!(
                out,
                "<mark class=\"hidden-char\" title=\"invisible Unicode tag characters\">tags: {spelled}</mark>"
            );
        } else if c == '\n' || c == '\t' {
            out.push(c);
        } else if is_hidden(c) {
            let _ = write!(
                out,
                "<mark class=\"hidden-char\" title=\"invisible or control character\">U+{:04X}</mark>",
                c as u32
            );
        } else {
            push_html(&mut out, c);
        }
    }
    out
}

/// Compact JSON of `value` made inert like [`json_text`].
pub fn json_inline(value: &serde_json::Value) -> String {
    inert(serde_json::to_string(value).unwrap_or_else(|_| "null".into()))
}

/// Pretty JSON of `value` that is still valid JSON with the same meaning, but safe to paste
/// into HTML, Markdown code blocks and terminals: `<` `>` `&` and backticks, and every hidden or
/// control character, are written as `\uXXXX` escapes. Those characters only ever occur inside
/// JSON strings, where the escapes mean the same characters.
pub fn json_text(value: &serde_json::Value) -> String {
    inert(serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into()))
}

/// Rewrites serialized JSON so that the characters [`json_text`] names become `\uXXXX`.
fn inert(raw: String) -> String {
    let active = |c: char| matches!(c, '<' | '>' | '&' | '`') || (is_hidden(c) && c != '\n');
    if !raw.contains(active) {
        return raw;
    }
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        if active(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{:04x}", u);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_visible() {
        assert_eq!(visible("a\u{1b}[2Jb"), "a\\u{001B}[2Jb");
        assert_eq!(visible("x\u{200b}y"), "x\\u{200B}y");
        assert_eq!(visible("\u{e0041}"), "\\u{E0041}");
        assert_eq!(
            visible("r\u{202e}l\u{fe0f}\u{061c}"),
            "r\\u{202E}l\\u{FE0F}\\u{061C}"
        );
        assert_eq!(visible("a\u{85}b\u{7f}"), "a\\u{0085}b\\u{007F}");
    }

    #[test]
    fn excerpts_escape_and_cap() {
        let e = excerpt("a\u{1b}]0;x\u{7}\n{}\nc\nd", 4, 2);
        assert_eq!(e, "a\\u{001B}]0… (3 more characters)\n{}\n… (2 more lines)");
        let long = "[".repeat(100_000);
        assert!(message(&long).len() < 70_000);
    }

    #[test]
    fn error_lines_keep_their_start_and_their_last_words() {
        let long = format!(
            "the server closed its output; Traceback: {} ModuleNotFoundError: No module named 'mcp.server.fastmcp'",
            "File \"x.py\", line 5, in <module>\n".repeat(40)
        );
        let cut = one_line_ends(&long, 400);
        assert!(cut.chars().count() <= 400);
        assert!(cut.starts_with("the server closed its output; Traceback:"));
        assert!(cut.ends_with("No module named 'mcp.server.fastmcp'"));
        assert!(cut.contains('…') && !cut.contains('\n'));
        assert_eq!(one_line_ends("short\u{1b}", 400), "short\\u{001B}");
        assert_eq!(cut_middle("abcdefghij", 5), "ab…ij");
    }

    #[test]
    fn whole_lines_are_wrapped_not_cut() {
        let long = format!("sh -c 'echo {}; touch PAYLOAD'\nfake", "x".repeat(300));
        let w = wrap(&whole_line(&long), 80, "    ");
        assert!(w.lines().all(|l| l.starts_with("    ")));
        let back: Vec<&str> = w.lines().map(|l| l.trim_start()).collect();
        assert_eq!(back.join(" "), whole_line(&long));
        assert!(w.contains("touch PAYLOAD'\\nfake"));
    }

    #[test]
    fn one_line_folds_and_cuts() {
        assert_eq!(one_line("  a\n\n b  c ", 80), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("a\r\nb", 80), "a\\u{000D} b");
    }

    #[test]
    fn markdown_escapes_everything_active() {
        let s = markdown("<script>x</script> [a](javascript:b) ![i](http://x) | *x*\n# h `c` $m$");
        assert!(!s.contains('<'));
        assert!(!s.contains("]("));
        assert!(!s.contains("!["));
        assert!(!s.contains('\n'));
        assert!(!s.contains(" |"));
        assert!(s.contains("\\|"));
        assert!(s.contains("\\`c\\`"));
        assert!(s.contains("\\$m\\$"));
        // No extended autolinks: www., e-mail addresses, mentions.
        let s = markdown("see www.evil.example or WWW.x.y, mail a@b.co, ping @octocat");
        assert!(!s.to_ascii_lowercase().contains("www."), "{s}");
        assert!(
            s.contains("www\\.evil.example") && s.contains("WWW\\.x.y"),
            "{s}"
        );
        assert!(
            s.contains("a@<sub></sub>b.co") && s.contains("@<sub></sub>octocat"),
            "{s}"
        );
        // A backslash before a pipe cannot unescape it: both are escaped.
        assert_eq!(markdown("a\\|b"), "a\\\\\\|b");
    }

    #[test]
    fn look_alike_letters_of_a_disguised_word_are_revealed_and_other_scripts_are_not() {
        assert_eq!(visible("d\u{0435}stroy_vm"), "d\\u{0435}stroy_vm");
        assert_eq!(
            one_line("Удаляет d\u{0435}stroy", 40),
            "Удаляет d\\u{0435}stroy"
        );
        // Markdown escapes the backslash, so it renders as the terminal shows it.
        assert_eq!(markdown("d\u{0435}lete"), "d\\\\u{0435}lete");
        assert!(html_reveal("d\u{0435}stroy").starts_with("d<mark class=\"hidden-char\""));
        assert!(html_reveal("d\u{0435}stroy").ends_with(">U+0435</mark>stroy"));
        assert_eq!(visible("Удаляет ρgh"), "Удаляет ρgh");
    }

    #[test]
    fn html_reveal_escapes_and_marks() {
        let s = html_reveal("<img src=x onerror='a()'>\"\u{202e}&");
        assert!(!s.contains("<img"));
        assert!(!s.contains('\''));
        assert!(s.starts_with("&lt;img src=x onerror=&#x27;a()&#x27;&gt;&quot;"));
        assert!(s.contains(">U+202E</mark>&amp;"));
        let tags: String = "<b>"
            .chars()
            .map(|c| char::from_u32(0xe0000 + c as u32).unwrap())
            .collect();
        assert!(html_reveal(&format!("x{tags}\u{e007f}")).contains(">tags: &lt;b&gt;</mark><mark"));
    }

    #[test]
    fn json_text_is_valid_and_inert() {
        let v = serde_json::json!({"t<s>": "a&b`c\u{1b}[2J\u{200b}\u{e0041}\n"});
        let s = json_text(&v);
        for bad in ['<', '>', '&', '`', '\u{1b}', '\u{200b}', '\u{e0041}'] {
            assert!(!s.contains(bad), "{bad:?} in {s}");
        }
        assert!(s.contains("\\udb40\\udc41"));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn ascii_fast_paths_change_nothing() {
        // The ASCII shortcut in is_hidden must agree with the general test.
        for b in 0u8..0x80 {
            assert_eq!(
                is_hidden(b as char),
                (b as char).is_control(),
                "byte {b:#x}"
            );
        }
        // Plain printable JSON comes back as it went in; one active character is escaped.
        let plain = serde_json::json!({"name": "list_items", "n": 3});
        assert_eq!(
            json_text(&plain),
            serde_json::to_string_pretty(&plain).unwrap()
        );
        assert!(json_text(&serde_json::json!("a>b")).contains("\\u003e"));
    }
}
