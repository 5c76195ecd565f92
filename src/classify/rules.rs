//! The rule set as data: what `catalog/rules.yaml` holds, loaded and checked.

use crate::error::{Error, Result};
use crate::model::{Category, Severity};
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};

/// The rules shipped inside the binary, as written.
pub const EMBEDDED_RULES: &str = include_str!("../../catalog/rules.yaml");
/// The same rules converted to JSON at build time (faster to read at start-up).
const EMBEDDED_RULES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/rules.json"));

/// A whole rules file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Format version of the file; only 1 exists.
    pub version: u32,
    /// Word lists that shape how a tool's action words are found.
    #[serde(default)]
    pub vocabulary: Vocabulary,
    /// Every rule, in the order they are documented.
    pub rules: Vec<Rule>,
}

/// How the engine finds a tool's action words (its verbs).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vocabulary {
    /// Verbs that are as often nouns (`monitor`, `status`): when one comes first in a name and a
    /// stronger verb follows, the later one is the tool's action word.
    #[serde(default)]
    pub weak_verbs: Vec<String>,
    /// Arguments whose enum values are modes of the tool (`action: [list, delete]`): each value's
    /// verb counts as an action word, so the tool is judged by its most dangerous mode.
    #[serde(default)]
    pub mode_arguments: Vec<String>,
    /// Mode arguments whose free-text description lists the modes ("create, patch or delete").
    #[serde(default)]
    pub mode_text_arguments: Vec<String>,
    /// Action words that make mode arguments filters: `list_x(action: refund)` lists refunds.
    #[serde(default)]
    pub filter_verbs: Vec<String>,
    /// How much a verb found later in the name counts, against 1 for the first (0 to 1).
    #[serde(default)]
    pub secondary_verb_factor: Option<f64>,
}

/// What a rule contributes when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// Evidence for a category.
    Category,
    /// Moves a tool of the named categories one severity step up.
    Severity,
    /// Evidence noted beside the verdict that changes nothing (a confirm guard, a dry-run flag).
    Signal,
    /// A finding reported beside the verdict.
    Finding,
    /// A server-grade input, documented here so `mcprisk rules` explains every deduction.
    Grade,
}

/// One rule with its docs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable ID, never reused for another meaning.
    pub id: String,
    /// Short kebab-case name.
    pub name: String,
    pub kind: RuleKind,
    /// For `category` rules: the category the evidence points to.
    #[serde(default)]
    pub category: Option<Category>,
    /// For `category` rules: how strongly a match points to the category (0 to 1).
    #[serde(default)]
    pub weight: Option<f64>,
    /// For `category` rules: a hard constraint. When it matches, the verdict is at least this
    /// dangerous, whatever the learned model says.
    #[serde(default)]
    pub hard: bool,
    /// For `severity` rules: the categories whose severity the rule raises.
    #[serde(default)]
    pub applies_to: Vec<Category>,
    /// For `finding` rules: how severe the finding is.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// For `grade` rules: points deducted per item.
    #[serde(default)]
    pub points: Option<u32>,
    /// For `grade` rules: most points this input can cost.
    #[serde(default)]
    pub max_points: Option<u32>,
    /// For rules whose logic lives in code: which check runs.
    #[serde(default)]
    pub check: Option<String>,
    /// When the rule matches; absent for code checks.
    #[serde(default)]
    pub when: Option<Cond>,
    /// For code checks that look for words or paths: what they look for (each check says how
    /// it compares; kept here so the data lives beside the rule's docs).
    #[serde(default)]
    pub phrases: Vec<String>,
    /// What it matches, in a sentence.
    pub summary: String,
    /// Why it matters.
    pub why: String,
    /// An example tool it matches.
    pub example: String,
}

/// A condition over a tool's name, description, input schema and annotations.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Cond {
    /// Every condition holds.
    All(Vec<Cond>),
    /// At least one condition holds.
    Any(Vec<Cond>),
    /// The condition does not hold.
    Not(Box<Cond>),
    /// The tool's action word (the first word of its name that any `verb` list knows) is one of these.
    Verb(Vec<String>),
    /// Any word of the tool name is one of these.
    Name(Vec<String>),
    /// The description contains one of these phrases (any case, whole words; `*` at the end
    /// matches any word ending).
    Desc(Vec<String>),
    /// Like `desc`, but also searches the texts inside the input schema (argument descriptions).
    Text(Vec<String>),
    /// Like `desc`, but case-sensitive (SQL keywords, HTTP methods).
    DescExact(Vec<String>),
    /// The description's action word (among its first words, after boilerplate) is one of these.
    Lead(Vec<String>),
    /// The schema has a property with one of these names (compared without case or separators).
    Prop(Vec<String>),
    /// A word of some property name is one of these.
    PropWord(Vec<String>),
    /// A switch (a boolean property) whose name's first word is one of these
    /// (`prune_previous_versions`, `dropTarget`).
    SwitchLead(Vec<String>),
    /// A property with one of these names takes free text (a string with no enum or const).
    FreeText(Vec<String>),
    /// An enum or const value (any of its words) of some property is one of these.
    Enum(Vec<String>),
    /// An enum or const value of one of the named properties is one of these.
    EnumIn {
        props: Vec<String>,
        values: Vec<String>,
    },
    /// The annotations set these hints to these values.
    Annotation(BTreeMap<String, bool>),
}

impl RuleFile {
    /// Parses and checks a rules file; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<RuleFile> {
        let file: RuleFile = serde_saphyr::from_str(text)
            .map_err(|e| Error::new(format!("{origin}: invalid rules file: {e}")))?;
        file.validate(origin)?;
        Ok(file)
    }

    /// The shipped rules.
    pub fn embedded() -> RuleFile {
        let file: RuleFile = serde_json::from_str(EMBEDDED_RULES_JSON)
            .expect("the embedded rules are checked by tests");
        file.validate("catalog/rules.yaml (embedded)")
            .expect("the embedded rules are checked by tests");
        file
    }

    /// Loads the rules from a file.
    pub fn load(path: &str) -> Result<RuleFile> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::new(format!("{path}: cannot read rules: {e}")))?;
        RuleFile::parse(&text, path)
    }

    /// A rule by ID, ignoring case.
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id.eq_ignore_ascii_case(id))
    }

    /// The rule an ID a person typed names: in any case, with or without its `MR-` prefix
    /// (`c304`, `mr-c304`, `MR-C304`).
    pub fn find(&self, id: &str) -> Option<&Rule> {
        let id = id.trim();
        self.get(id).or_else(|| self.get(&format!("MR-{id}")))
    }

    fn validate(&self, origin: &str) -> Result<()> {
        if self.version != 1 {
            return Err(Error::new(format!(
                "{origin}: unsupported rules version {} (this mcprisk reads version 1)",
                self.version
            )));
        }
        let mut ids = HashSet::new();
        for rule in &self.rules {
            let at = format!("{origin}: rule {}", rule.id);
            if !ids.insert(rule.id.to_ascii_uppercase()) {
                return Err(Error::new(format!("{at}: duplicate rule ID")));
            }
            if rule
                .phrases
                .iter()
                .any(|p| p.trim_end_matches('*').is_empty() || p.chars().any(char::is_control))
            {
                return Err(Error::new(format!(
                    "{at}: a `phrases` entry is empty (or only `*`) or has a control character"
                )));
            }
            if rule.when.as_ref().is_some_and(has_bad_phrase) {
                return Err(Error::new(format!(
                    "{at}: a `desc`, `desc_exact` or `text` phrase is empty (or only `*`) or has a control character"
                )));
            }
            match rule.kind {
                RuleKind::Category => {
                    if rule.category.is_none() || rule.weight.is_none() || rule.when.is_none() {
                        return Err(Error::new(format!(
                            "{at}: a category rule needs `category`, `weight` and `when`"
                        )));
                    }
                    let w = rule.weight.unwrap_or_default();
                    if !(0.0..=1.0).contains(&w) {
                        return Err(Error::new(format!("{at}: weight must be between 0 and 1")));
                    }
                }
                RuleKind::Severity => {
                    if rule.applies_to.is_empty() || rule.when.is_none() {
                        return Err(Error::new(format!(
                            "{at}: a severity rule needs `applies_to` and `when`"
                        )));
                    }
                }
                RuleKind::Signal => {
                    if rule.when.is_none() && rule.check.is_none() {
                        return Err(Error::new(format!(
                            "{at}: a signal rule needs `when` or `check`"
                        )));
                    }
                }
                RuleKind::Finding => {
                    if rule.severity.is_none() || (rule.when.is_none() && rule.check.is_none()) {
                        return Err(Error::new(format!(
                            "{at}: a finding rule needs `severity` and `when` or `check`"
                        )));
                    }
                }
                RuleKind::Grade => {}
            }
        }
        Ok(())
    }
}

/// Whether a condition lists a phrase that is empty once its `*` is taken off (it would match
/// nowhere or, read the other way, everywhere, so it is refused rather than guessed at) or that
/// holds a control character (none belongs in prose, and schema texts are searched joined by
/// NULs, so such a phrase could span two texts).
fn has_bad_phrase(c: &Cond) -> bool {
    match c {
        Cond::All(cs) | Cond::Any(cs) => cs.iter().any(has_bad_phrase),
        Cond::Not(c) => has_bad_phrase(c),
        Cond::Desc(ps) | Cond::Text(ps) | Cond::DescExact(ps) => ps
            .iter()
            .any(|p| p.trim_end_matches('*').is_empty() || p.chars().any(char::is_control)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::findings::ALL_CHECKS;

    #[test]
    fn embedded_rules_parse_and_ids_are_unique_and_stable() {
        let rules = RuleFile::embedded();
        let from_yaml = RuleFile::parse(EMBEDDED_RULES, "catalog/rules.yaml").unwrap();
        assert_eq!(from_yaml.rules.len(), rules.rules.len());
        let mut seen = HashSet::new();
        for r in &rules.rules {
            assert!(r.id.starts_with("MR-"), "{}", r.id);
            assert!(seen.insert(r.id.clone()), "duplicate {}", r.id);
            assert!(
                !r.summary.is_empty() && !r.why.is_empty() && !r.example.is_empty(),
                "{}",
                r.id
            );
        }
        // IDs other code relies on.
        for id in [
            "MR-C304", "MR-F101", "MR-G001", "MR-G004", "MR-G005", "MR-G006", "MR-G007",
        ] {
            assert!(rules.get(id).is_some(), "{id} missing");
        }
    }

    #[test]
    fn every_code_check_has_a_rule() {
        let rules = RuleFile::embedded();
        for check in ALL_CHECKS {
            assert!(
                rules
                    .rules
                    .iter()
                    .any(|r| r.check.as_deref() == Some(check)),
                "no rule documents check {check}"
            );
        }
    }

    #[test]
    fn unknown_keys_are_rejected_with_a_location() {
        let text = "version: 1\nrules:\n  - id: MR-X1\n    name: x\n    kind: signal\n    bogus: 1\n    when: {verb: [a]}\n    summary: s\n    why: w\n    example: e\n";
        let err = RuleFile::parse(text, "r.yaml").unwrap_err().to_string();
        assert!(err.contains("r.yaml") && err.contains("bogus"), "{err}");
    }

    #[test]
    fn empty_phrases_and_control_characters_are_rejected() {
        for phrase in ["\"\"", "\"*\"", "\"a\\0b\"", "\"x\\ty\""] {
            let text = format!("version: 1\nrules:\n  - id: MR-X1\n    name: x\n    kind: signal\n    when: {{any: [{{verb: [a]}}, {{desc: [ok, {phrase}]}}]}}\n    summary: s\n    why: w\n    example: e\n");
            let err = RuleFile::parse(&text, "r.yaml").unwrap_err().to_string();
            assert!(
                err.contains("MR-X1") && err.contains("empty") && err.contains("control"),
                "{err}"
            );
        }
    }
}
