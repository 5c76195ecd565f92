//! Arbitrary bytes as a saved tool list: parse, assess every tool, and render the JSON report,
//! the terminal table (with and without colour) and the policies. Any panic, overflow or hang
//! is a bug; an `Err` from parsing is the expected answer to most inputs.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcprisk::assess::{assess, Settings};
use mcprisk::classify::{Engine, RuleFile};
use mcprisk::policy::{claude_code, policylayer};
use mcprisk::report::{json, table, Report};
use std::sync::LazyLock;

static ENGINE: LazyLock<Engine> = LazyLock::new(|| Engine::new(RuleFile::embedded()));

fuzz_target!(|data: &[u8]| {
    let Ok(list) = mcprisk::targets::toollist::parse(data, "fuzz") else {
        return;
    };
    let server = assess(&ENGINE, "fuzz", "fuzz input", list, &Settings::default());
    let servers = [server];
    let policy = policylayer::policy(&servers);
    let _ = claude_code::settings(&servers);
    let report = Report {
        servers: &servers,
        policy: &policy,
    };
    let mut out = Vec::new();
    json::write(&report, &mut out).expect("writing to a Vec cannot fail");
    // The JSON report must itself be valid JSON.
    serde_json::from_slice::<serde_json::Value>(&out).expect("the JSON report parses");
    out.clear();
    table::write(&report, &mut out, false, 100).expect("writing to a Vec cannot fail");
    out.clear();
    table::write(&report, &mut out, true, 40).expect("writing to a Vec cannot fail");
});
