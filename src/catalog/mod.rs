//! The catalog: records of known MCP servers, shipped in the binary and extended by the user's
//! directories, looked up by id, alias, package name or a close spelling, and linted. A record's
//! tool snapshot is one of the targets the pipeline can assess.

pub mod dircache;
pub mod facts;
pub mod lint;
pub mod lookup;
pub mod record;
pub mod registry;
pub mod store;

pub use record::Record;
pub use store::{Catalog, Entry};

use serde_json::Value;

impl record::Snapshot {
    /// A snapshot of `tools` and `offers` with its fingerprint.
    pub fn new(
        source: String,
        taken: String,
        server_info: Option<Value>,
        protocol_version: Option<String>,
        tools: Vec<Value>,
        offers: crate::targets::offers::RawOffers,
    ) -> record::Snapshot {
        let mut s = record::Snapshot {
            source,
            taken,
            server_info,
            protocol_version,
            fingerprint: String::new(),
            tools,
            instructions: offers.instructions,
            prompts: offers.prompts,
            resources: offers.resources,
            resource_templates: offers.resource_templates,
        };
        s.fingerprint = s.expected_fingerprint();
        s
    }

    /// What the server offers besides tools, as sent.
    pub fn raw_offers(&self) -> crate::targets::offers::RawOffers {
        crate::targets::offers::RawOffers {
            instructions: self.instructions.clone(),
            prompts: self.prompts.clone(),
            resources: self.resources.clone(),
            resource_templates: self.resource_templates.clone(),
        }
    }
}
