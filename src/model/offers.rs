//! What a server offers besides its tools: the `instructions` of its handshake, its prompts,
//! resources and resource templates. The model reads all of them, so they are assessed (and
//! pinned in lock files) like tools. Each keeps the raw JSON the server sent.

use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// What the server says it is for (empty when absent).
    pub description: String,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// A prompt (`prompts/list`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prompt {
    /// The prompt's name.
    pub name: String,
    /// Its title for people, if the server gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its description (empty when absent).
    pub description: String,
    /// Its arguments, in order.
    pub arguments: Vec<PromptArgument>,
    /// Exactly what the server sent for it.
    #[serde(skip)]
    pub raw: Value,
}

/// A resource (`resources/list`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name (empty when absent).
    pub name: String,
    /// Its title for people, if the server gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its description (empty when absent).
    pub description: String,
    /// Its MIME type, if the server gave one.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Exactly what the server sent for it.
    #[serde(skip)]
    pub raw: Value,
}

/// A resource template (`resources/templates/list`): URIs a client fills in (RFC 6570).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceTemplate {
    /// The URI template, e.g. `file:///{path}`.
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    /// Its name (empty when absent).
    pub name: String,
    /// Its title for people, if the server gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its description (empty when absent).
    pub description: String,
    /// Its MIME type, if the server gave one.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Exactly what the server sent for it.
    #[serde(skip)]
    pub raw: Value,
}

/// Everything a server offers besides tools, as read (the unreadable items are input errors).
/// In the JSON document these are four fields of each server.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Offers {
    /// The `instructions` of the initialize result (or `server/discover`), if any.
    pub instructions: Option<String>,
    /// Every prompt, in order.
    pub prompts: Vec<Prompt>,
    /// Every resource, in order.
    pub resources: Vec<Resource>,
    /// Every resource template, in order.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The kinds whose list the server announced but did not deliver (their findings say
    /// why): what they hold is unknown, not empty, so a lock keeps its entries for them.
    #[serde(skip)]
    pub unlisted: Vec<OfferKind>,
}

impl Offers {
    /// Whether the server offers nothing besides tools.
    pub fn is_empty(&self) -> bool {
        self.instructions.is_none()
            && self.prompts.is_empty()
            && self.resources.is_empty()
            && self.resource_templates.is_empty()
    }
}

/// Which kind of offer a finding or a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OfferKind {
    /// The server's `instructions`.
    Instructions,
    /// A prompt.
    Prompt,
    /// A resource.
    Resource,
    /// A resource template.
    ResourceTemplate,
}

impl OfferKind {
    /// The name used in every output.
    pub fn as_str(self) -> &'static str {
        match self {
            OfferKind::Instructions => "instructions",
            OfferKind::Prompt => "prompt",
            OfferKind::Resource => "resource",
            OfferKind::ResourceTemplate => "resource_template",
        }
    }

    /// The MCP method that lists this kind (none for the instructions).
    pub fn list_method(self) -> Option<&'static str> {
        match self {
            OfferKind::Instructions => None,
            OfferKind::Prompt => Some("prompts/list"),
            OfferKind::Resource => Some("resources/list"),
            OfferKind::ResourceTemplate => Some("resources/templates/list"),
        }
    }
}

impl fmt::Display for OfferKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a finding is about when it is not a tool: one offer of the server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Subject {
    /// Which kind of offer.
    pub kind: OfferKind,
    /// Its name: a prompt's name, a resource's URI, a template's URI template; empty for the
    /// instructions.
    pub name: String,
}

impl Subject {
    /// A subject of `kind` named `name`.
    pub fn new(kind: OfferKind, name: impl Into<String>) -> Subject {
        Subject {
            kind,
            name: name.into(),
        }
    }
}

impl fmt::Display for Subject {
    /// `prompt greet`, `resource file:///etc/passwd`, `instructions`. The name is server text:
    /// escape the result for the output it goes to.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.is_empty() {
            f.write_str(self.kind.as_str())
        } else {
            write!(f, "{} {}", self.kind, self.name)
        }
    }
}
