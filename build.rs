//! Embeds the catalog: every `catalog/servers/*.yaml` record is parsed and checked here (a bad
//! record fails the build with its file and line), then stored as deflated compact JSON beside
//! a small index, so a lookup inflates and parses only the record it needs.
//!
//! `MCPRISK_EMBED_CATALOG=DIR` embeds another directory (used to benchmark a large catalog).

#[allow(dead_code)]
#[path = "src/catalog/record.rs"]
mod record;

#[allow(dead_code)]
#[path = "src/classify/model/fnv.rs"]
mod fnv;

#[path = "src/classify/model/lexnames.rs"]
mod lexnames;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    embed_rules();
    pack_weights();
    pack_word_classes();
    let dir = std::env::var("MCPRISK_EMBED_CATALOG")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("catalog/servers"));
    println!("cargo:rerun-if-env-changed=MCPRISK_EMBED_CATALOG");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    // The index holds no pointers: every string is a span of one text and every list a span
    // of one span table. A table of `&'static str` would cost the loader one relocation per
    // string (84,000 for 3,900 records) on every start of every command.
    let mut index = CatalogIndex::default();
    let mut out = String::from(
        "/// Records embedded at build time.\npub static EMBEDDED: &[EmbeddedRecord] = &[\n",
    );
    // Every record as compact JSON, deflated one by one into one blob, so a lookup inflates
    // only the record it shows.
    let mut blob: Vec<u8> = Vec::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let rec: record::Record = serde_saphyr::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: invalid catalog record: {e}", path.display()));
        let json = serde_json::to_string(&rec).expect("records serialize");
        let packed = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 6);
        let at = (blob.len(), packed.len());
        blob.extend_from_slice(&packed);
        let pkgs: Vec<&str> = rec.packages.iter().map(|p| p.identifier.as_str()).collect();
        let aliases: Vec<&str> = rec.aliases.iter().map(String::as_str).collect();
        let tools: Vec<&str> = rec.tool_names().collect();
        let repository = match &rec.repository {
            Some(r) => format!("Some({})", index.text(r)),
            None => "None".to_string(),
        };
        let _ = writeln!(
            out,
            "    EmbeddedRecord {{ file: {}, id: {}, name: {}, aliases: {}, packages: {}, summary: {}, tools: {}, repository: {repository}, publisher: {}, at: ({}, {}) }},",
            index.text(&rel(path)),
            index.text(&rec.id),
            index.text(&rec.name),
            index.list(&aliases),
            index.list(&pkgs),
            index.text(&rec.summary),
            index.list(&tools),
            index.text(&rec.publisher),
            at.0,
            at.1
        );
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    out.push_str(
        "/// The deflated records, one after another.\npub static BLOB: &[u8] = include_bytes!(concat!(env!(\"OUT_DIR\"), \"/embedded_catalog.bin\"));\n",
    );
    out.push_str(
        "/// The index's strings, back to back.\nstatic TEXT: &str = include_str!(concat!(env!(\"OUT_DIR\"), \"/embedded_catalog.txt\"));\n",
    );
    out.push_str(
        "/// The index's lists, each a run of spans of [`TEXT`].\nstatic LISTS: &[Span] = &[\n",
    );
    for (from, len) in &index.lists {
        let _ = writeln!(out, "    Span({from}, {len}),");
    }
    out.push_str("];\n");
    std::fs::write(out_dir.join("embedded_catalog.bin"), blob).unwrap();
    std::fs::write(out_dir.join("embedded_catalog.txt"), &index.text).unwrap();
    std::fs::write(out_dir.join("embedded_catalog.rs"), out).unwrap();
}

/// The catalog index's strings and lists as build.rs lays them out: one text, one table of
/// spans; each field is written as `Span(start, len)` code.
#[derive(Default)]
struct CatalogIndex {
    text: String,
    lists: Vec<(u32, u32)>,
}

impl CatalogIndex {
    fn span(&mut self, s: &str) -> (u32, u32) {
        let from = u32::try_from(self.text.len()).expect("catalog index text under 4 GiB");
        self.text.push_str(s);
        (from, s.len() as u32)
    }

    /// A string's span, as code.
    fn text(&mut self, s: &str) -> String {
        let (from, len) = self.span(s);
        format!("Span({from}, {len})")
    }

    /// A list of strings: its entries' spans go to the table; the code spans the table.
    fn list(&mut self, items: &[&str]) -> String {
        let from = self.lists.len() as u32;
        for s in items {
            let span = self.span(s);
            self.lists.push(span);
        }
        format!("Span({from}, {})", items.len())
    }
}

/// The shipped rules as JSON, so start-up parses JSON instead of YAML (the runtime still
/// checks them with the same types, and `--rules FILE` still reads YAML).
fn embed_rules() {
    let path = Path::new("catalog/rules.yaml");
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).expect("catalog/rules.yaml");
    let value: serde_json::Value =
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("catalog/rules.yaml: {e}"));
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("rules.json");
    std::fs::write(dest, serde_json::to_string(&value).unwrap()).unwrap();
}

/// The shipped model's weights, packed so that start-up copies them instead of parsing 50,000
/// decimal numbers (a third of a `lookup`'s time): the header (magic `MRW4`, temperature,
/// five thresholds and five offsets as f64, then a byte 1 and the three stance offsets as f64
/// or a byte 0 when there are none, five biases as f32, the row count as u32), then the keys'
/// hashes (u64, ascending), then each row's five weights (f32), then where each row's key
/// ends (u32) and the keys back to back, in row order; numbers little-endian. The same table as
/// `ModelText::parse` then `Table::new` make from the text (a test in tests/model.rs checks).
fn pack_weights() {
    let path = Path::new("catalog/model/weights.tsv");
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).expect("catalog/model/weights.tsv");
    let (mut temperature, mut thresholds, mut offsets, mut bias) =
        (1.0f64, [0.5f64; 5], [0.0f64; 5], [0.0f64; 5]);
    let mut stance_offsets: Option<[f64; 3]> = None;
    let mut rows: Vec<(u64, [f32; 5], &str)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let mut cols = line.split('\t');
        let key = cols.next().unwrap_or_default();
        let nums: Vec<f64> = cols
            .map(|c| {
                c.parse()
                    .unwrap_or_else(|e| panic!("{}:{}: {c:?}: {e}", path.display(), n + 1))
            })
            .collect();
        match (key, nums.len()) {
            ("temperature", 1) => temperature = nums[0],
            ("thresholds", 5) => thresholds.copy_from_slice(&nums),
            ("offsets", 5) => offsets.copy_from_slice(&nums),
            ("stance_offsets", 3) => stance_offsets = Some([nums[0], nums[1], nums[2]]),
            ("bias", 5) => bias.copy_from_slice(&nums),
            (_, 5) => rows.push((
                fnv::hash_key(key),
                std::array::from_fn(|c| nums[c] as f32),
                key,
            )),
            _ => panic!("{}:{}: expected a key and 5 numbers", path.display(), n + 1),
        }
    }
    rows.sort_by_key(|r| r.0);
    let mut out: Vec<u8> = b"MRW4".to_vec();
    out.extend_from_slice(&temperature.to_le_bytes());
    for t in thresholds.into_iter().chain(offsets) {
        out.extend_from_slice(&t.to_le_bytes());
    }
    match stance_offsets {
        None => out.push(0),
        Some(o) => {
            out.push(1);
            for v in o {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    for b in bias {
        out.extend_from_slice(&(b as f32).to_le_bytes());
    }
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    for (h, _, _) in &rows {
        out.extend_from_slice(&h.to_le_bytes());
    }
    for (_, w, _) in &rows {
        for v in w {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    // The keys themselves, so an explanation can name a feature: where each ends, then all of
    // them back to back, in row order.
    let mut end = 0u32;
    for (_, _, key) in &rows {
        end += key.len() as u32;
        out.extend_from_slice(&end.to_le_bytes());
    }
    for (_, _, key) in &rows {
        out.extend_from_slice(key.as_bytes());
    }
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("weights.bin");
    std::fs::write(dest, out).unwrap();
}

/// The word classes of `catalog/model/word-classes.tsv`, packed as `src/classify/model/classes.rs`
/// reads them: the count (u32), each word's end (u32), verb classes, noun classes (a byte each),
/// then the words. The words must be ascending (a lookup searches them by halves).
fn pack_word_classes() {
    let path = Path::new("catalog/model/word-classes.tsv");
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path).expect("catalog/model/word-classes.tsv");
    let class = |name: &str, n: usize| -> u8 {
        if name == "-" {
            return 0;
        }
        let i = lexnames::CLASS_NAMES
            .iter()
            .position(|c| *c == name)
            .unwrap_or_else(|| panic!("{}:{}: unknown class {name:?}", path.display(), n + 1));
        i as u8 + 1
    };
    let mut rows: Vec<(&str, u8, u8)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let [word, verb, noun] = cols[..] else {
            panic!(
                "{}:{}: expected a word and two classes",
                path.display(),
                n + 1
            );
        };
        if rows.last().is_some_and(|r| r.0 >= word) {
            panic!("{}:{}: {word:?} is out of order", path.display(), n + 1);
        }
        rows.push((word, class(verb, n), class(noun, n)));
    }
    let mut out: Vec<u8> = (rows.len() as u32).to_le_bytes().to_vec();
    let mut end = 0u32;
    for (w, _, _) in &rows {
        end += w.len() as u32;
        out.extend_from_slice(&end.to_le_bytes());
    }
    out.extend(rows.iter().map(|r| r.1));
    out.extend(rows.iter().map(|r| r.2));
    for (w, _, _) in &rows {
        out.extend_from_slice(w.as_bytes());
    }
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("word_classes.bin");
    std::fs::write(dest, out).unwrap();
}

fn rel(p: &Path) -> String {
    format!(
        "catalog/servers/{}",
        p.file_name().unwrap().to_string_lossy()
    )
}
