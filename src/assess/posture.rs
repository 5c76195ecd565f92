//! Identity and auth posture of a live server, as observed: what it says it is, how it is
//! reached, what it asks for. Feeds the JSON document, findings and the grade.

use crate::classify::RuleFile;
use crate::model::{Finding, GradeReason, Severity};
use crate::targets::clients::ServerEntry;
use crate::targets::fetch::Fetched;
use crate::targets::mcp::{AuthPosture, ChannelSecurity, Introspection, Transport};
use crate::targets::Source;
use serde_json::{json, Value};

/// What a live scan (or its failure) tells about a server beyond its tools.
#[derive(Debug, Clone, Default)]
pub struct Posture {
    /// Who the server says or the catalog vouches it is (the JSON document's `identity`).
    pub identity: Value,
    /// How it authenticates and how it is reached (the JSON document's `auth`).
    pub auth: Value,
    /// Findings about identity, auth and the config entry.
    pub findings: Vec<Finding>,
    /// Deductions (or zero-point notes) for the grade.
    pub grade: Vec<GradeReason>,
}

fn rule_points(rules: &RuleFile, id: &str) -> u32 {
    rules.get(id).and_then(|r| r.points).unwrap_or(0)
}

fn finding(rules: &RuleFile, id: &str, tool: Option<&str>, message: String) -> Option<Finding> {
    let rule = rules.get(id)?;
    Some(Finding {
        rule: rule.id.clone(),
        severity: rule.severity.unwrap_or(Severity::Medium),
        tool: tool.map(str::to_string),
        subject: None,
        message,
    })
}

fn transport_name(t: Transport) -> &'static str {
    match t {
        Transport::Stdio => "stdio",
        Transport::StreamableHttp => "streamable-http",
        Transport::Sse => "sse",
    }
}

/// Env or header names that carry a credential.
fn credential_like(name: &str) -> bool {
    crate::targets::clients::secret::credential_name(name)
}

/// The posture of a fetched target: what its catalog record states, or what its server showed
/// over the wire (also one that refused us with a 401), or else what its config entry declares;
/// `None` for a saved tool list.
pub fn of(rules: &RuleFile, fetched: &Fetched) -> Option<Posture> {
    let (env_names, header_names): (Vec<String>, Vec<String>) = match &fetched.target.source {
        Source::ToolsFile(_) => return None,
        Source::Catalog(record) => return Some(from_record(rules, record)),
        Source::Stdio(cmd) => (cmd.env.iter().map(|(k, _)| k.clone()).collect(), Vec::new()),
        Source::Http { headers, .. } => {
            (Vec::new(), headers.iter().map(|(k, _)| k.clone()).collect())
        }
    };
    let entry = fetched.target.entry.as_ref();
    match fetched.wire.as_ref()? {
        Ok(intro) => Some(observed(
            rules,
            Some(intro),
            Some(&intro.auth),
            &env_names,
            &header_names,
            entry,
        )),
        Err(err) => err
            .auth_posture()
            .map(|a| observed(rules, None, Some(a), &env_names, &header_names, entry))
            .or_else(|| {
                entry.map(|e| {
                    let mut p = Posture::default();
                    config_findings(rules, e, &mut p.findings);
                    p
                })
            }),
    }
}

/// The posture of a server that answered.
fn observed(
    rules: &RuleFile,
    intro: Option<&Introspection>,
    auth: Option<&AuthPosture>,
    env_names: &[String],
    header_names: &[String],
    entry: Option<&ServerEntry>,
) -> Posture {
    let mut p = Posture::default();
    let info = intro
        .and_then(|i| i.server_info.clone())
        .unwrap_or(Value::Null);
    let transport = intro.map(|i| transport_name(i.transport));
    p.identity = json!({
        "assessed": true,
        "server_info": info,
        "protocol_version": intro.and_then(|i| i.protocol_version.clone()),
        "transport": transport,
        "verification": "unverified: a live server's serverInfo is self-reported; the catalog vouches for publishers",
    });
    let env_creds: Vec<&String> = env_names.iter().filter(|n| credential_like(n)).collect();
    let header_creds: Vec<&String> = header_names.iter().filter(|n| credential_like(n)).collect();
    let channel = auth.map(|a| a.channel);
    let challenge = auth.and_then(|a| a.challenge.as_ref());
    let oauth = challenge.is_some_and(|c| {
        c.resource_metadata_url.is_some()
            || c.metadata.is_some()
            || c.www_authenticate
                .iter()
                .any(|h| h.to_ascii_lowercase().starts_with("bearer"))
    });
    let method = if oauth {
        "oauth"
    } else if !header_creds.is_empty() {
        "header"
    } else if !env_creds.is_empty() {
        "env-token"
    } else {
        "none"
    };
    let remote = matches!(
        channel,
        Some(ChannelSecurity::Https) | Some(ChannelSecurity::PlainHttp { loopback: false })
    );
    let answered_without_credentials =
        intro.is_some() && header_creds.is_empty() && method != "oauth";
    p.auth = json!({
        "assessed": true,
        "method": method,
        "credentials": env_creds.iter().chain(header_creds.iter()).collect::<Vec<_>>(),
        "channel": match channel {
            Some(ChannelSecurity::Local) | None => "local",
            Some(ChannelSecurity::Https) => "https",
            Some(ChannelSecurity::PlainHttp { loopback: true }) => "plain-http-loopback",
            Some(ChannelSecurity::PlainHttp { loopback: false }) => "plain-http",
        },
        "reachable_without_auth": if remote || matches!(channel, Some(ChannelSecurity::PlainHttp { .. })) { Value::Bool(answered_without_credentials) } else { Value::Null },
        "challenge": challenge.map(|c| json!({
            "status": c.status,
            "www_authenticate": c.www_authenticate,
            "resource_metadata_url": c.resource_metadata_url,
            "metadata": c.metadata,
        })),
    });
    if matches!(
        channel,
        Some(ChannelSecurity::PlainHttp { loopback: false })
    ) {
        let pts = rule_points(rules, "MR-G009");
        p.grade.push(GradeReason {
            points: pts,
            reason: format!("MR-G009: reached over plain HTTP, not on this machine (-{pts})"),
        });
        p.findings.extend(finding(rules, "MR-F203", None, "the server is reached over plain HTTP from another host: traffic and any token can be read and changed on the way".into()));
    }
    if remote && answered_without_credentials {
        let pts = rule_points(rules, "MR-G008");
        p.grade.push(GradeReason {
            points: pts,
            reason: format!(
                "MR-G008: a remote server listed its tools without any credential (-{pts})"
            ),
        });
    }
    p.grade.push(GradeReason {
        points: 0,
        reason: format!(
            "MR-G007: identity is self-reported ({}); auth: {method}",
            match info.get("name").and_then(Value::as_str) {
                Some(n) => format!(
                    "serverInfo name {}",
                    crate::output::sanitize::one_line(n, 60)
                ),
                None => "no serverInfo".into(),
            }
        ),
    });
    if let Some(e) = entry {
        config_findings(rules, e, &mut p.findings);
    }
    p
}

/// Findings about how a config file declares a server.
fn config_findings(rules: &RuleFile, e: &ServerEntry, out: &mut Vec<Finding>) {
    let at = format!("{}:{}", e.file.display(), e.line);
    for key in &e.literal_secrets {
        out.extend(finding(rules, "MR-F201", None, format!("{key} holds a literal secret in {at} (value not shown); use a variable reference or the client's secret store")));
    }
    for v in &e.unresolved {
        out.extend(finding(
            rules,
            "MR-F202",
            None,
            format!("{v} in {at} could not be resolved; the server was started without it"),
        ));
    }
}

/// The posture a catalog record states: who publishes the server and what it needs.
pub fn from_record(rules: &RuleFile, r: &crate::catalog::Record) -> Posture {
    use crate::catalog::record::{AuthKind, IdentityLevel};
    let mut p = Posture::default();
    let level = r.identity.level;
    p.identity = json!({
        "assessed": true,
        "id": r.id,
        "name": r.name,
        "publisher": r.publisher,
        "verification": level,
        "evidence": r.identity.evidence,
        "repository": r.repository,
        "license": r.license,
        "packages": r.packages,
        "snapshot": r.snapshot.as_ref().map(|s| json!({
            "source": s.source,
            "taken": s.taken,
            "fingerprint": s.fingerprint,
            "server_info": s.server_info,
            "protocol_version": s.protocol_version,
        })),
    });
    let secret_vars: Vec<&str> = r
        .auth
        .variables
        .iter()
        .filter(|v| v.secret)
        .map(|v| v.name.as_str())
        .collect();
    p.auth = json!({
        "assessed": true,
        "kinds": r.auth.kinds,
        "variables": r.auth.variables,
        "secrets": secret_vars,
        "notes": r.auth.notes,
        "transports": r.transports,
        "remotes": r.remotes,
    });
    let per = rule_points(rules, "MR-G011");
    let points = match level {
        IdentityLevel::OfficialVendor | IdentityLevel::RegistryVerified => 0,
        IdentityLevel::Community => per.min(3),
        IdentityLevel::Unverified => per,
    };
    p.grade.push(GradeReason {
        points,
        reason: format!(
            "MR-G011: publisher {} ({})",
            r.publisher,
            serde_json::to_value(level)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default()
        ),
    });
    if !r.remotes.is_empty() && r.auth.kinds.iter().all(|k| *k == AuthKind::None) {
        let pts = rule_points(rules, "MR-G008");
        p.grade.push(GradeReason {
            points: pts,
            reason: format!("MR-G008: a hosted endpoint that needs no credential (-{pts})"),
        });
    }
    if r.remotes.iter().any(|u| u.starts_with("http://")) {
        let pts = rule_points(rules, "MR-G009");
        p.grade.push(GradeReason {
            points: pts,
            reason: format!("MR-G009: a hosted endpoint over plain HTTP (-{pts})"),
        });
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names() {
        assert!(credential_like("GITHUB_PERSONAL_ACCESS_TOKEN"));
        assert!(credential_like("Authorization"));
        assert!(credential_like("X-Api-Key"));
        assert!(!credential_like("LOG_LEVEL"));
        assert!(!credential_like("MEMORY_FILE_PATH"));
    }
}
