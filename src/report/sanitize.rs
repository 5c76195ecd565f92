//! Makes hostile tool text safe to show: control and invisible characters become visible
//! escapes, and Markdown special characters are escaped.

/// Whether a character must not reach a reader as-is (controls, zero-width, bidi, tags).
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{feff}' | '\u{180e}' | '\u{fff9}'..='\u{fffb}'
        | '\u{e0000}'..='\u{e007f}')
        || c.is_control()
}

/// Text with every hidden or control character shown as `\u{XXXX}`; newlines and tabs kept.
pub fn visible(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\n' || c == '\t' {
            out.push(c);
        } else if is_hidden(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
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

/// Escapes text for Markdown (inline, including table cells): special characters are
/// backslash-escaped, `<` `>` `&` become entities, and newlines become spaces.
pub fn markdown(s: &str) -> String {
    let shown = visible(s);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '.'
            | '!' | '|' | '~' | '"' | '\'' | '=' | ':' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
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
    }

    #[test]
    fn one_line_folds_and_cuts() {
        assert_eq!(one_line("  a\n\n b  c ", 80), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }

    #[test]
    fn markdown_escapes_everything_active() {
        let s = markdown("<script>x</script> [a](javascript:b) | *x*\n# h");
        assert!(!s.contains('<'));
        assert!(!s.contains("]("));
        assert!(!s.contains('\n'));
        assert!(s.contains("\\|"));
    }
}
