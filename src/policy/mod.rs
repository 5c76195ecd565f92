//! Policies: the recommended rule per tool, and one module per output flavour.

pub mod agentgateway;
pub mod claude_code;
pub mod intercept;
pub mod merge;
pub mod policylayer;
pub mod read;
pub mod recommend;

pub use recommend::{recommend, Limits, Profile};

/// The policy formats `mcprisk policy` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Flavor {
    /// PolicyLayer policy.json.
    #[default]
    Policylayer,
    /// Claude Code settings.json permissions (allow / ask / deny).
    ClaudeCode,
    /// Intercept (PolicyLayer's open-source MCP proxy) YAML policy.
    Intercept,
    /// agentgateway mcpAuthorization CEL rules (YAML snippet for a route's policies).
    Agentgateway,
}

impl Flavor {
    /// Whether the flavour is written as YAML (the others are JSON).
    pub fn is_yaml(self) -> bool {
        matches!(self, Flavor::Intercept | Flavor::Agentgateway)
    }

    /// The kind of file this flavour reads back as.
    pub fn kind(self) -> read::Kind {
        match self {
            Flavor::Policylayer => read::Kind::PolicyLayer,
            Flavor::ClaudeCode => read::Kind::ClaudeCode,
            Flavor::Intercept => read::Kind::Intercept,
            Flavor::Agentgateway => read::Kind::Agentgateway,
        }
    }

    /// The flavour's name as given to --flavor.
    pub fn as_str(self) -> &'static str {
        match self {
            Flavor::Policylayer => "policylayer",
            Flavor::ClaudeCode => "claude-code",
            Flavor::Intercept => "intercept",
            Flavor::Agentgateway => "agentgateway",
        }
    }
}

/// Each tool's rule (from `tool_rule`) and the hidden tools, across servers. Tool names are the
/// keys of these formats, so when two servers offer one name the stricter rule wins.
pub fn strictest_rules(
    servers: &[crate::model::ServerAssessment],
    tool_rule: impl Fn(&crate::model::ToolAssessment) -> Option<serde_json::Value>,
) -> (serde_json::Map<String, serde_json::Value>, Vec<String>) {
    use crate::model::Action;
    let mut tools = serde_json::Map::new();
    let mut hide: Vec<String> = Vec::new();
    let mut strictness: std::collections::HashMap<String, Action> = Default::default();
    for server in servers {
        for t in &server.tools {
            let prev = strictness.get(&t.name).copied();
            if prev.is_some_and(|p| p >= t.recommended.action) {
                continue;
            }
            strictness.insert(t.name.clone(), t.recommended.action);
            tools.remove(&t.name);
            hide.retain(|h| h != &t.name);
            match tool_rule(t) {
                Some(rule) => {
                    tools.insert(t.name.clone(), rule);
                }
                None if t.recommended.action == Action::Hide => hide.push(t.name.clone()),
                None => {}
            }
        }
    }
    hide.sort();
    (tools, hide)
}
