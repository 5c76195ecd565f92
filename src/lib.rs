//! mcprisk: classify an MCP server's tools, grade the server, and write least-privilege policies.
//!
//! Data flows one way: target -> tool list -> assessment -> policy / report. The folders are
//! its stages:
//!
//! - [`targets`]: what to assess and how its tool list is obtained (client config files, the
//!   MCP wire, saved tool lists);
//! - [`catalog`]: records of known servers, whose tool snapshots are targets too;
//! - [`classify`]: the rules engine that gives each tool its verdict;
//! - [`assess`]: a server's assessment (verdicts, findings, posture, grade), and the pipeline
//!   that runs every stage;
//! - [`policy`]: the recommended rule per tool, and one module per policy flavour;
//! - [`report`]: one module per output format;
//! - [`ci`]: the CI gate's lock file, drift and policy coverage;
//! - [`corpus`]: the blind-labelled tools the classifier's model learns from, and how it is
//!   trained and measured on them;
//! - [`serve`]: mcprisk as an MCP server: the catalog, the rules and assessments for agents;
//! - [`commands`]: one file per subcommand, on top of the rest; nothing below imports a command.
//!
//! Under them all: [`model`] (the data that flows), [`error`], and [`output`] (text made safe
//! to show, and where it goes). [`cli`] holds the command line's definitions.

pub mod assess;
pub mod catalog;
pub mod ci;
pub mod classify;
pub mod cli;
pub mod commands;
pub mod corpus;
pub mod error;
pub mod model;
pub mod output;
pub mod policy;
pub mod report;
pub mod serve;
pub mod targets;
