//! mcprisk as an MCP server (`mcprisk serve`): agents look a server up in the catalog, have a
//! tool list they hold assessed, and get the policy for it, before they install or call anything.
//!
//! Every answer is computed from data mcprisk already holds (the embedded catalog, `--catalog`
//! directories, the rules) or that the client sends (a tool list). No tool starts a process,
//! installs a package or contacts a URL: a client must never be able to make mcprisk run a
//! command, so live scans stay on the command line.
//!
//! * [`protocol`]: JSON-RPC 2.0 and the MCP lifecycle (version negotiation, errors), shared by
//!   both transports;
//! * [`schema`]: the tools' definitions (input and output schemas, annotations);
//! * [`tools`]: what each tool computes;
//! * [`resources`]: the `mcprisk://servers/{id}` and `mcprisk://rules/{id}` resources;
//! * [`stdio`]: newline-delimited JSON on standard input and output;
//! * [`http`]: streamable HTTP (JSON responses, sessions), loopback unless told otherwise.

pub mod http;
pub mod protocol;
pub mod resources;
pub mod schema;
pub mod stdio;
pub mod tools;

use crate::assess::{assess_in, failed, posture, Context, Settings};
use crate::catalog::{Catalog, Record};
use crate::classify::Engine;
use crate::error::Result;
use crate::model::ServerAssessment;
use crate::policy::{Limits, Profile};
use crate::targets::{Source, Target};
use std::path::PathBuf;

/// What the server is started with.
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// More catalog directories (`--catalog`, `MCPRISK_CATALOG`).
    pub catalog_dirs: Vec<PathBuf>,
    /// How strict the recommended rules are.
    pub profile: Profile,
    /// Calls a minute for the rate-limited categories.
    pub limits: Limits,
}

/// Everything a request may read: the catalog, the classifier and the settings. Built once at
/// start-up and never changed, so requests share it without locks.
pub struct Service {
    catalog: Catalog,
    /// Built on first use: `initialize`, `tools/list` and the resource lists do not need the
    /// classifier, so a client that only connects does not wait for it.
    engine: std::sync::OnceLock<Engine>,
    settings: Settings,
}

impl Service {
    /// Loads the catalog and the built-in rules.
    pub fn new(opts: &ServeOptions) -> Result<Service> {
        Ok(Service {
            catalog: Catalog::load(&opts.catalog_dirs)?,
            engine: std::sync::OnceLock::new(),
            settings: Settings {
                profile: opts.profile,
                limits: opts.limits,
                ..Settings::default()
            },
        })
    }

    /// The catalog served.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The classifier (and through it the rules).
    pub fn engine(&self) -> &Engine {
        self.engine
            .get_or_init(|| Engine::new(crate::classify::RuleFile::embedded()))
    }

    /// The assessment of a catalog record, exactly as `mcprisk lookup ID --format json` computes
    /// it (a record without a tool snapshot is graded F with the reason).
    pub fn assess_record(&self, record: &Record) -> ServerAssessment {
        // The target only names the source here: its copy of the record leaves the tools out.
        let target = Target {
            name: record.id.clone(),
            source: Source::Catalog(Box::new(record.clone_without_tools())),
            entry: None,
            needs_consent: false,
        };
        let ctx = Context {
            name: record.id.clone(),
            source: target.describe(),
            posture: Some(posture::from_record(self.engine().rules(), record)),
            extra_findings: Vec::new(),
            overrides: record.overrides.clone(),
        };
        match &record.snapshot {
            Some(s) => {
                // With its offers, as `lookup` assesses it (the instructions are checked too).
                let list = crate::targets::toollist::from_tools(s.tools.clone())
                    .with_offers(&s.raw_offers());
                assess_in(self.engine(), ctx, &list, &self.settings)
            }
            None => {
                let why = record.no_snapshot_reason();
                failed(self.engine(), ctx, why)
            }
        }
    }

    /// The assessment of a tool list a client sent, as `scan --tools FILE` computes it.
    pub fn assess_list(
        &self,
        name: &str,
        list: &crate::targets::toollist::ToolList,
    ) -> ServerAssessment {
        let ctx = Context {
            name: name.to_string(),
            source: "tool list sent by the MCP client".to_string(),
            ..Context::default()
        };
        assess_in(self.engine(), ctx, list, &self.settings)
    }
}
