//! The data that flows through the pipeline: tools in, assessments out.

pub mod offers;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// What a tool can do, ordered from least to most dangerous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Category {
    Read,
    Write,
    Execute,
    Destructive,
    Financial,
}

impl Category {
    /// Every category, least dangerous first.
    pub const ALL: [Category; 5] = [
        Category::Read,
        Category::Write,
        Category::Execute,
        Category::Destructive,
        Category::Financial,
    ];

    /// The severity a tool of this category has before adjustments.
    pub fn default_severity(self) -> Severity {
        match self {
            Category::Read => Severity::Low,
            Category::Write => Severity::Medium,
            Category::Execute => Severity::High,
            Category::Destructive | Category::Financial => Severity::Critical,
        }
    }

    /// The name used in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Read => "Read",
            Category::Write => "Write",
            Category::Execute => "Execute",
            Category::Destructive => "Destructive",
            Category::Financial => "Financial",
        }
    }

    /// Parses a category name, ignoring case.
    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How bad misuse is, ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    /// Every severity, least severe first.
    pub const ALL: [Severity; 4] = [
        Severity::Low,
        Severity::Medium,
        Severity::High,
        Severity::Critical,
    ];

    /// The name used in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "Low",
            Severity::Medium => "Medium",
            Severity::High => "High",
            Severity::Critical => "Critical",
        }
    }

    /// Parses a severity name, ignoring case.
    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// One step more severe, saturating at Critical.
    pub fn raised(self) -> Severity {
        match self {
            Severity::Low => Severity::Medium,
            Severity::Medium => Severity::High,
            Severity::High | Severity::Critical => Severity::Critical,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool as the server described it, with the raw JSON kept for reports and fingerprints.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    /// Exactly what the server sent for this tool; `inputSchema` is an object and
    /// `annotations`, when present, an object (checked when the tool was read).
    pub raw: Value,
}

impl Tool {
    /// The input schema (an empty object's stand-in, `null`, when absent).
    pub fn input_schema(&self) -> &Value {
        self.raw.get("inputSchema").unwrap_or(&Value::Null)
    }

    /// The annotations object, if the server sent one.
    pub fn annotations(&self) -> Option<&Value> {
        self.raw.get("annotations").filter(|v| v.is_object())
    }

    /// A boolean annotation such as `readOnlyHint`, if the server set it.
    pub fn hint(&self, key: &str) -> Option<bool> {
        self.annotations()?.get(key)?.as_bool()
    }
}

/// A piece of evidence behind a verdict: which rule matched and on what text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    pub rule: String,
    pub detail: String,
}

/// A problem found beside the category verdict (poisoning, lying annotations, ...).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The prompt, resource, template or instructions it is about, when not a tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<offers::Subject>,
    pub message: String,
}

impl Finding {
    /// What the finding is about, for people: the tool, the offer, or `(server)`. Server
    /// text: escape it for the output it goes to.
    pub fn about(&self) -> String {
        match (&self.tool, &self.subject) {
            (Some(t), _) => t.clone(),
            (None, Some(s)) => s.to_string(),
            (None, None) => "(server)".to_string(),
        }
    }
}

/// What should stand in front of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Allow,
    RateLimit,
    Validate,
    Approval,
    Hide,
    Deny,
}

impl Action {
    /// The name used in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::RateLimit => "rate-limit",
            Action::Validate => "validate",
            Action::Approval => "approval",
            Action::Hide => "hide",
            Action::Deny => "deny",
        }
    }

    /// Parses an action name as written in outputs and flags.
    pub fn parse(s: &str) -> Option<Action> {
        [
            Action::Allow,
            Action::RateLimit,
            Action::Validate,
            Action::Approval,
            Action::Hide,
            Action::Deny,
        ]
        .into_iter()
        .find(|a| a.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// A condition on one argument that sends a call to approval (argument validation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArgCondition {
    /// The argument the condition reads.
    pub argument: String,
    /// Values of the argument that pass without approval.
    pub allowed: Vec<String>,
}

/// The recommended rule for one tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    pub action: Action,
    /// Calls per minute, for rate limits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_per_minute: Option<u32>,
    /// Argument checks the schema makes possible.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub validate: Vec<ArgCondition>,
    pub reason: String,
}

/// The verdict on one tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolAssessment {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    pub category: Category,
    pub severity: Severity,
    pub confidence: f64,
    pub evidence: Vec<Evidence>,
    pub recommended: Recommendation,
    /// A person set this verdict in the catalog record (see rule MR-R001).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reviewed: bool,
    /// The verdict is not sure enough to stand alone: a person should look at it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_review: Option<Review>,
}

/// Why a verdict needs review, and the category it was weighed against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Review {
    /// The next likeliest category; the recommended rule is the stricter of the two.
    pub alternative: Category,
    /// In words, for reports.
    pub reason: String,
}

/// One deduction from a server's score, listed with every grade.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GradeReason {
    pub points: u32,
    pub reason: String,
}

/// A tool that could not be read, reported instead of assessed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputError {
    /// Where in the input: `tools[3]`.
    pub location: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub message: String,
}

/// Where a server was declared: the config file and line, or the saved tool list it was read
/// from (no line). Reports use it to point CI annotations at a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The path as it was given or discovered.
    pub file: String,
    /// 1-based line of the declaration, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

/// The assessment of one server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerAssessment {
    pub name: String,
    pub source: String,
    /// Where the server was declared (a config file line or a tool list file), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    pub grade: char,
    pub score: u32,
    pub grade_reasons: Vec<GradeReason>,
    pub identity: Value,
    pub auth: Value,
    pub tools: Vec<ToolAssessment>,
    /// Instructions, prompts, resources and resource templates (four fields in JSON).
    #[serde(flatten)]
    pub offers: offers::Offers,
    pub findings: Vec<Finding>,
    pub errors: Vec<InputError>,
}

impl ServerAssessment {
    /// How many tools fall in each category, least dangerous first.
    pub fn category_counts(&self) -> [(Category, usize); 5] {
        Category::ALL.map(|c| (c, self.tools.iter().filter(|t| t.category == c).count()))
    }

    /// The highest severity among tools and findings, if any.
    pub fn max_severity(&self) -> Option<Severity> {
        self.tools
            .iter()
            .map(|t| t.severity)
            .chain(self.findings.iter().map(|f| f.severity))
            .max()
    }
}
