//! `.mcprisk.yaml`: a repository's own settings: ignores by rule, server and tool (each with a
//! reason and an optional expiry date), thresholds and profile. Unknown keys are errors with
//! file and line. An expired ignore stops suppressing and says so.

use crate::error::{Error, Result};
use crate::model::{Finding, Severity};
use crate::policy::Profile;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The file looked for in the current directory when `--settings` is not given.
pub const DEFAULT_FILE: &str = ".mcprisk.yaml";

/// One ignore entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ignore {
    /// The rule ID to ignore (MR-F105, MR-D003...).
    pub rule: String,
    /// Only for this server (default: every server).
    #[serde(default)]
    pub server: Option<String>,
    /// Only for this tool (default: every tool).
    #[serde(default)]
    pub tool: Option<String>,
    /// Why it is acceptable; required, so every exception is explained.
    pub reason: String,
    /// The last day the ignore applies (YYYY-MM-DD).
    #[serde(default)]
    pub expires: Option<String>,
}

/// The whole settings file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectSettings {
    /// The default for --profile.
    #[serde(default)]
    pub profile: Option<String>,
    /// The default for --fail-on.
    #[serde(default)]
    pub fail_on: Option<String>,
    /// Calls a minute per category, as --limit.
    #[serde(default)]
    pub limits: BTreeMap<String, u32>,
    /// Findings not to report, each with its reason.
    #[serde(default)]
    pub ignore: Vec<Ignore>,
    /// Where it was read from, for messages.
    #[serde(skip)]
    pub path: String,
}

impl ProjectSettings {
    /// Reads `path`, or `.mcprisk.yaml` in the current directory when it exists, else defaults.
    pub fn load(path: Option<&str>) -> Result<ProjectSettings> {
        let path = match path {
            Some(p) => p.to_string(),
            None if std::path::Path::new(DEFAULT_FILE).is_file() => DEFAULT_FILE.to_string(),
            None => return Ok(ProjectSettings::default()),
        };
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::new(format!("{path}: cannot read settings: {e}")))?;
        let mut s: ProjectSettings = serde_saphyr::from_str(&text)
            .map_err(|e| Error::new(format!("{path}: invalid settings: {e}")))?;
        s.path = path.clone();
        if let Some(p) = &s.profile {
            s.profile_value().ok_or_else(|| {
                Error::new(format!(
                    "{path}: profile {p:?}: one of strict, balanced, permissive"
                ))
            })?;
        }
        if let Some(f) = &s.fail_on {
            Severity::parse(f).ok_or_else(|| {
                Error::new(format!(
                    "{path}: fail_on {f:?}: one of low, medium, high, critical"
                ))
            })?;
        }
        for (i, ig) in s.ignore.iter().enumerate() {
            if ig.reason.trim().is_empty() {
                return Err(Error::new(format!(
                    "{path}: ignore[{i}] ({}): a reason is required",
                    ig.rule
                )));
            }
            if let Some(d) = &ig.expires {
                if !is_date(d) {
                    return Err(Error::new(format!(
                        "{path}: ignore[{i}] ({}): expires {d:?} is not YYYY-MM-DD",
                        ig.rule
                    )));
                }
            }
        }
        Ok(s)
    }

    /// The profile the file sets, if any.
    pub fn profile_value(&self) -> Option<Profile> {
        match self.profile.as_deref()?.to_ascii_lowercase().as_str() {
            "strict" => Some(Profile::Strict),
            "balanced" => Some(Profile::Balanced),
            "permissive" => Some(Profile::Permissive),
            _ => None,
        }
    }

    /// The --fail-on default the file sets, if any.
    pub fn fail_on_value(&self) -> Option<Severity> {
        self.fail_on.as_deref().and_then(Severity::parse)
    }

    /// Whether an ignore applies to this result today; expired ones never do.
    pub fn suppresses(&self, rule: &str, server: &str, tool: Option<&str>, today: &str) -> bool {
        self.ignore.iter().any(|ig| {
            ig.rule.eq_ignore_ascii_case(rule)
                && ig.server.as_deref().is_none_or(|s| s == server)
                && ig.tool.as_deref().is_none_or(|t| Some(t) == tool)
                && ig.expires.as_deref().is_none_or(|d| d >= today)
        })
    }

    /// Ignores whose date has passed, for a warning.
    pub fn expired(&self, today: &str) -> Vec<&Ignore> {
        self.ignore
            .iter()
            .filter(|ig| ig.expires.as_deref().is_some_and(|d| d < today))
            .collect()
    }

    /// Removes suppressed findings of one server.
    pub fn filter_findings(
        &self,
        server: &str,
        findings: Vec<Finding>,
        today: &str,
    ) -> Vec<Finding> {
        findings
            .into_iter()
            .filter(|f| !self.suppresses(&f.rule, server, f.tool.as_deref(), today))
            .collect()
    }
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// Today's date as YYYY-MM-DD (UTC), without a date crate: days since 1970 to a civil date.
pub fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignores_match_by_rule_server_tool_and_expire() {
        let s: ProjectSettings = serde_saphyr::from_str(
            "ignore:\n  - {rule: MR-F105, tool: create_lxc, reason: needed}\n  - {rule: MR-D003, server: w, reason: r, expires: 2020-01-01}\n",
        )
        .unwrap();
        assert!(s.suppresses("MR-F105", "any", Some("create_lxc"), "2026-11-30"));
        assert!(!s.suppresses("MR-F105", "any", Some("other"), "2026-11-30"));
        assert!(!s.suppresses("MR-D003", "w", None, "2026-11-30"), "expired");
        assert!(s.suppresses("MR-D003", "w", None, "2019-12-31"));
        assert_eq!(s.expired("2026-11-30").len(), 1);
    }

    #[test]
    fn unknown_keys_are_errors_with_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(".mcprisk.yaml");
        std::fs::write(
            &p,
            "profile: strict\nignore:\n  - rule: MR-F105\n    reasn: typo\n",
        )
        .unwrap();
        let err = ProjectSettings::load(Some(p.to_str().unwrap()))
            .unwrap_err()
            .to_string();
        assert!(err.contains("reasn") && err.contains("line"), "{err}");
    }

    #[test]
    fn today_is_a_date() {
        let t = today();
        assert_eq!(t.len(), 10);
        assert!(t.starts_with("20"));
    }
}
