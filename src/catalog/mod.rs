//! The catalog: records of known MCP servers, shipped in the binary and extended by the user's
//! directories, looked up by id, alias, package name or a close spelling.

pub mod dircache;
pub mod lookup;
pub mod record;
pub mod registry;
pub mod store;

pub use record::Record;
pub use store::{Catalog, Entry};
