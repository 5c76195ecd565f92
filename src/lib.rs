//! mcprisk: classify an MCP server's tools, grade the server, and write least-privilege policies.
//!
//! Data flows one way: target -> tool list -> assessment -> policy / report.

pub mod assess;
pub mod catalog;
pub mod ci;
pub mod classify;
pub mod cli;
pub mod commands;
pub mod error;
pub mod model;
pub mod output;
pub mod policy;
pub mod report;
pub mod targets;

/// The tool-list reader at its former path too, for the classifier's corpus test (in
/// `classify/engine.rs`), which reads the corpus through `crate::toollist`.
#[cfg(test)]
use targets::toollist;
