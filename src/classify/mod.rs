//! Classification: a rules engine over each tool's name, description, schema and annotations,
//! and the findings that need the whole server.

pub mod engine;
pub mod features;
pub mod findings;
pub mod phrases;
pub mod rules;
pub mod words;

pub use engine::{Engine, Verdict};
pub use rules::{Rule, RuleFile, RuleKind};
