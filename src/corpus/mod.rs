//! The labelled corpus the classifier's model learns from (`catalog/corpus/`): each server's tool list as it
//! sent it, its blind labels with the labeller and a reason per tool, and the frozen split.
//!
//! The split is fixed before any tuning: a server is in the test split when the first four bytes
//! of `sha256("mcprisk-corpus-split-v1\0" + server id)`, read big-endian, are below a quarter of
//! 2^32, unless its tool list was in the repository before the corpus was made (`seen.txt`):
//! earlier rule edits may have looked at those, so they train.

use crate::error::{Error, Result};
use crate::model::{Category, Severity, Tool};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

pub mod evaluate;

/// The seed of the split's hash.
pub const SPLIT_SEED: &str = "mcprisk-corpus-split-v1";

/// A server's labels file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelFile {
    /// The server's catalog id.
    pub server: String,
    /// Who labelled it.
    pub labeller: String,
    /// One label per tool.
    pub tools: Vec<Label>,
}

/// One tool's label.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Label {
    /// The tool's name, as the server sent it.
    pub name: String,
    /// The category.
    pub category: Category,
    /// The severity.
    pub severity: Severity,
    /// The capability that decided it, in a line.
    pub why: String,
}

impl Label {
    /// Whether the reason names `category` as the close call: the labelling instructions ask
    /// for "close call vs CATEGORY (...)" when a label was one, so a verdict it names is the
    /// other reading the labeller weighed. Only the first three words after "close call vs"
    /// count ("close call vs Execute or Write" names both; any case).
    pub fn names_close_call(&self, category: Category) -> bool {
        self.close_call_words()
            .iter()
            .any(|w| *w == category.as_str().to_lowercase())
    }

    /// The category the reason names as the close call: the first among the three words after
    /// "close call vs" that is a category other than the label (none when the close call is a
    /// severity, or there is none).
    pub fn close_call(&self) -> Option<Category> {
        self.close_call_words().iter().find_map(|w| {
            Category::ALL
                .into_iter()
                .find(|c| c.as_str().to_lowercase() == *w && *c != self.category)
        })
    }

    /// The first three words after each "close call vs" in the reason, lowercased.
    fn close_call_words(&self) -> Vec<String> {
        let why = self.why.to_lowercase();
        why.match_indices("close call vs ")
            .flat_map(|(i, m)| {
                why[i + m.len()..]
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .take(3)
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// A server's tool list file.
#[derive(Debug, Deserialize)]
struct ToolsFile {
    server: String,
    #[allow(dead_code)]
    source: Option<String>,
    tools: Vec<serde_json::Value>,
}

/// A labelled tool.
#[derive(Debug, Clone)]
pub struct Labelled {
    /// The tool as the server sent it.
    pub tool: Tool,
    /// Its label.
    pub label: Label,
}

/// One server of the corpus.
#[derive(Debug)]
pub struct Server {
    /// Its catalog id.
    pub id: String,
    /// Who labelled it.
    pub labeller: String,
    /// In the frozen test split.
    pub test: bool,
    /// Its labelled tools.
    pub tools: Vec<Labelled>,
    /// A second, independent labelling of some of its tools, where there is one.
    pub second: Option<LabelFile>,
}

/// The whole corpus.
#[derive(Debug)]
pub struct Corpus {
    /// Servers in file-name order.
    pub servers: Vec<Server>,
}

impl Corpus {
    /// The corpus shipped in the repository.
    pub fn shipped() -> Result<Corpus> {
        Corpus::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog/corpus"))
    }

    /// Loads a corpus directory: `labels/*.yaml`, `tools/*.json` by the same name, optional
    /// `second/*.yaml`, and `seen.txt`.
    pub fn load(dir: &Path) -> Result<Corpus> {
        let seen: BTreeSet<String> = std::fs::read_to_string(dir.join("seen.txt"))
            .map_err(|e| Error::new(format!("{}: {e}", dir.join("seen.txt").display())))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
        let mut servers = Vec::new();
        for path in files(&dir.join("labels"), "yaml")? {
            let labels: LabelFile = read_yaml(&path)?;
            let stem = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            let tools_path = dir.join("tools").join(format!("{stem}.json"));
            let text = std::fs::read(&tools_path)
                .map_err(|e| Error::new(format!("{}: {e}", tools_path.display())))?;
            let file: ToolsFile = serde_json::from_slice(&text)
                .map_err(|e| Error::new(format!("{}: {e}", tools_path.display())))?;
            if file.server != labels.server {
                return Err(Error::new(format!(
                    "{}: server {:?} but its labels say {:?}",
                    tools_path.display(),
                    file.server,
                    labels.server
                )));
            }
            let list = crate::targets::toollist::from_tools(file.tools);
            let mut tools = Vec::new();
            for label in labels.tools {
                let tool = list
                    .tools
                    .iter()
                    .find(|t| t.name == label.name)
                    .cloned()
                    .ok_or_else(|| {
                        Error::new(format!(
                            "{}: tool {:?} is not in {}",
                            path.display(),
                            label.name,
                            tools_path.display()
                        ))
                    })?;
                tools.push(Labelled { tool, label });
            }
            let second_path = dir.join("second").join(format!("{stem}.yaml"));
            let second = if second_path.exists() {
                Some(read_yaml::<LabelFile>(&second_path)?)
            } else {
                None
            };
            servers.push(Server {
                test: !seen.contains(&labels.server) && in_test_split(&labels.server),
                id: labels.server,
                labeller: labels.labeller,
                tools,
                second,
            });
        }
        Ok(Corpus { servers })
    }

    /// The servers of one split.
    pub fn split(&self, test: bool) -> impl Iterator<Item = &Server> {
        self.servers.iter().filter(move |s| s.test == test)
    }
}

/// Whether a server's id hashes into the test split (before `seen.txt` is applied).
pub fn in_test_split(id: &str) -> bool {
    let mut h = Sha256::new();
    h.update(SPLIT_SEED.as_bytes());
    h.update([0u8]);
    h.update(id.as_bytes());
    let d = h.finalize();
    u32::from_be_bytes([d[0], d[1], d[2], d[3]]) < 0x4000_0000
}

fn files(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::new(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    Ok(v)
}

fn read_yaml<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(format!("{}: {e}", path.display())))?;
    serde_saphyr::from_str(&text).map_err(|e| Error::new(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_hash_is_the_documented_one() {
        // sha256("mcprisk-corpus-split-v1\0io.github.modelcontextprotocol/server-git") starts 04a768b5.
        assert!(in_test_split("io.github.modelcontextprotocol/server-git"));
        // ... and for npm/@hubspot/mcp-server it starts e5c2b367.
        assert!(!in_test_split("npm/@hubspot/mcp-server"));
    }

    fn label(why: &str) -> Label {
        Label {
            name: "t".into(),
            category: Category::Write,
            severity: Severity::Medium,
            why: why.into(),
        }
    }

    #[test]
    fn a_reason_names_its_close_call_and_nothing_else() {
        let l = label("marks a record closed; close call vs Execute (ending something)");
        assert!(l.names_close_call(Category::Execute));
        assert!(!l.names_close_call(Category::Destructive));
        let both = label("overwrites the file; Close call vs destructive or Execute");
        assert!(both.names_close_call(Category::Destructive));
        assert!(both.names_close_call(Category::Execute));
        // A category named later in the reason, not as the close call, does not count.
        let later = label("close call vs Medium (returns private messages); not Execute");
        assert!(!later.names_close_call(Category::Execute));
        assert!(!label("adds a comment").names_close_call(Category::Read));
    }

    #[test]
    fn the_close_call_is_the_first_other_category_named() {
        // The label is Write: "Write or Destructive" names Destructive as the other reading.
        let l = label("replaces a note; close call vs Write or Destructive (overwrites)");
        assert_eq!(l.close_call(), Some(Category::Destructive));
        assert_eq!(label("close call vs Medium (a path)").close_call(), None);
        assert_eq!(label("adds a tag").close_call(), None);
        assert_eq!(
            label("close call vs Read (bookkeeping)").close_call(),
            Some(Category::Read)
        );
    }
}
