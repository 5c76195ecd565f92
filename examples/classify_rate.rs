//! Classification throughput as the best of many passes over the labelled tools.
//!
//! `cargo run --release --example classify_rate`
//!
//! The criterion benchmark (`cargo bench --bench classify`) reports means, which on a shared
//! machine move by a third from run to run with other load. The fastest of many passes is what
//! the code costs when it has the core to itself, so this is the figure to compare changes by.

use mcprisk::classify::features::Features;
use mcprisk::classify::{Engine, RuleFile};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The allocator the `mcprisk` binary uses, so these figures are the product's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long to keep taking passes.
const RUN_FOR: Duration = Duration::from_secs(4);

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/labels/tools");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the labelled tool lists")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    let mut tools = Vec::new();
    for path in files {
        let bytes = std::fs::read(&path).expect("a labelled tool list");
        let list = mcprisk::targets::toollist::parse(&bytes, &path.display().to_string())
            .expect("a valid tool list");
        tools.extend(list.tools);
    }
    let engine = Engine::new(RuleFile::embedded());
    let mut passes: Vec<Duration> = Vec::new();
    let mut features = Duration::MAX;
    let start = Instant::now();
    while start.elapsed() < RUN_FOR {
        let t = Instant::now();
        for tool in &tools {
            black_box(engine.classify(black_box(tool)));
        }
        passes.push(t.elapsed());
        let t = Instant::now();
        for tool in &tools {
            black_box(Features::of(black_box(tool)));
        }
        features = features.min(t.elapsed());
    }
    passes.sort();
    let n = tools.len() as f64;
    let rate = |d: Duration| n / d.as_secs_f64();
    let classify = passes[0];
    println!(
        "{} tools, best pass: classify {:.0} tools/s ({:.2} µs a tool); features alone {:.0} tools/s",
        tools.len(),
        rate(classify),
        classify.as_secs_f64() * 1e6 / n,
        rate(features),
    );
    // How much other load on the machine moved the passes: a wide spread means the mean
    // (what criterion reports) says more about the machine than about the code.
    // The mean is what criterion's figure follows: slow passes weigh in it as they come.
    let mean = passes.iter().sum::<Duration>() / passes.len() as u32;
    println!(
        "{} passes: 10th percentile {:.0} tools/s, median {:.0} tools/s, mean {:.0} tools/s",
        passes.len(),
        rate(passes[passes.len() / 10]),
        rate(passes[passes.len() / 2]),
        rate(mean),
    );
}
