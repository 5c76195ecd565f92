//! Classification: a rules engine over each tool's name, description, schema and annotations,
//! and the findings that need the whole server.

mod cond;
pub mod engine;
pub mod features;
pub mod findings;
mod lexicon;
pub mod markup;
pub mod model;
pub mod offers;
pub mod phrases;
mod prefilter;
pub mod rules;
mod scratch;
pub mod unmask;
pub mod words;

pub use engine::{Engine, Verdict};
pub use rules::{Rule, RuleFile, RuleKind};
