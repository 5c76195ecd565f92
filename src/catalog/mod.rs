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
