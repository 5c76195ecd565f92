//! Speed of the assessment pipeline (criterion; `cargo bench --bench classify`).
//!
//! - `classify/labelled_tools`: `Engine::classify` over every tool in tests/data/labels/tools,
//!   reported as tools per second on one core (target: at least 150,000, the learned model
//!   included).
//! - `classify/features`: the feature extraction alone, to see how classification splits.
//! - `pipeline/parse_assess_300`: `toollist::parse` + `assess` of a 300-tool list (the label
//!   tools repeated under new names), the work `scan --tools` does before rendering.
//! - `startup/engine_new`: parsing the embedded rules and compiling the engine, once per process.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mcprisk::assess::{assess, Settings};
use mcprisk::classify::features::Features;
use mcprisk::classify::{Engine, RuleFile};
use mcprisk::model::Tool;
use serde_json::Value;
use std::hint::black_box;
use std::path::Path;

/// The allocator the `mcprisk` binary uses, so these figures are the product's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Every labelled tool, as raw JSON values, in a stable order.
fn label_tool_values() -> Vec<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/labels/tools");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut tools = Vec::new();
    for path in files {
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let list = match doc {
            Value::Array(items) => items,
            Value::Object(mut map) => match map.remove("tools") {
                Some(Value::Array(items)) => items,
                _ => match map
                    .remove("result")
                    .and_then(|mut r| r.get_mut("tools").map(Value::take))
                {
                    Some(Value::Array(items)) => items,
                    _ => panic!("{}: no tools", path.display()),
                },
            },
            _ => panic!("{}: not a tool list", path.display()),
        };
        tools.extend(list);
    }
    assert!(tools.len() > 200, "only {} label tools", tools.len());
    tools
}

/// A `{"tools": [...]}` document of exactly `n` tools: the label tools, repeated under new names.
fn tool_list_json(n: usize) -> Vec<u8> {
    let base = label_tool_values();
    let tools: Vec<Value> = (0..n)
        .map(|i| {
            let mut t = base[i % base.len()].clone();
            let round = i / base.len();
            if round > 0 {
                let name = format!("{}_{round}", t["name"].as_str().unwrap());
                t["name"] = Value::String(name);
            }
            t
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({ "tools": tools })).unwrap()
}

fn label_tools() -> Vec<Tool> {
    let doc = serde_json::to_vec(&Value::Array(label_tool_values())).unwrap();
    let list = mcprisk::targets::toollist::parse(&doc, "labels").unwrap();
    assert!(list.errors.is_empty(), "{:?}", list.errors);
    list.tools
}

fn classify(c: &mut Criterion) {
    let engine = Engine::new(RuleFile::embedded());
    let tools = label_tools();
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(tools.len() as u64));
    group.bench_function("labelled_tools", |b| {
        b.iter(|| {
            for tool in &tools {
                black_box(engine.classify(black_box(tool)));
            }
        })
    });
    group.bench_function("features", |b| {
        b.iter(|| {
            for tool in &tools {
                black_box(Features::of(black_box(tool)));
            }
        })
    });
    group.finish();
}

fn pipeline(c: &mut Criterion) {
    let engine = Engine::new(RuleFile::embedded());
    let doc = tool_list_json(300);
    let mut group = c.benchmark_group("pipeline");
    group.throughput(Throughput::Elements(300));
    group.bench_function("parse_assess_300", |b| {
        b.iter(|| {
            let list = mcprisk::targets::toollist::parse(black_box(&doc), "bench").unwrap();
            black_box(assess(
                &engine,
                "bench",
                "bench",
                list,
                &Settings::default(),
            ))
        })
    });
    group.finish();

    // Paid once per process: parsing the embedded rules YAML and compiling the engine.
    let mut group = c.benchmark_group("startup");
    group.bench_function("engine_new", |b| {
        b.iter(|| black_box(Engine::new(RuleFile::embedded())))
    });
    group.finish();
}

criterion_group!(benches, classify, pipeline);
criterion_main!(benches);
