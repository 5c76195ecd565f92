//! Splits identifiers and prose into lowercase words.

/// Splits a tool or property name into lowercase words at `_ - . / :` and spaces, camelCase
/// humps and letter/digit changes: `API-patch-block`, `getHTTPStatus2` and `pve_get_vm` all work.
pub fn split_identifier(name: &str, out: &mut Vec<String>) {
    let mut word = String::new();
    let mut prev: Option<char> = None;
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            flush(&mut word, out);
            prev = Some(c);
            continue;
        }
        if let (false, Some(p)) = (word.is_empty(), prev) {
            let next_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            let boundary = (c.is_uppercase()
                && (p.is_lowercase() || (p.is_uppercase() && next_lower)))
                || (c.is_ascii_digit() != p.is_ascii_digit());
            if boundary {
                flush(&mut word, out);
            }
        }
        if c.is_ascii() {
            word.push(c.to_ascii_lowercase());
        } else {
            word.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    flush(&mut word, out);
}

fn flush(word: &mut String, out: &mut Vec<String>) {
    if !word.is_empty() {
        out.push(std::mem::take(word));
    }
}

/// Lowercases a property name and drops separators, so `force_stop`, `forceStop` and
/// `force-stop` compare equal.
pub fn normalize_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The first `limit` words of prose, lowercased, skipping punctuation.
pub fn leading_words(text: &str, limit: usize) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .take(limit)
        .map(|w| w.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        split_identifier(s, &mut v);
        v
    }

    #[test]
    fn splits_every_style() {
        assert_eq!(
            split("pve_get_cluster_status"),
            ["pve", "get", "cluster", "status"]
        );
        assert_eq!(
            split("API-patch-block-children"),
            ["api", "patch", "block", "children"]
        );
        assert_eq!(split("getHTTPStatus2"), ["get", "http", "status", "2"]);
        assert_eq!(split("browser.click"), ["browser", "click"]);
        assert_eq!(split("sequentialthinking"), ["sequentialthinking"]);
    }

    #[test]
    fn normalizes_keys() {
        assert_eq!(normalize_key("force_stop"), "forcestop");
        assert_eq!(normalize_key("launchOptions"), "launchoptions");
    }
}
