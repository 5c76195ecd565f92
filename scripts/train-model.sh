#!/usr/bin/env bash
# Trains the learned classifier from the corpus and writes catalog/model/weights.tsv.
# Deterministic: the same corpus and rules give the same file, byte for byte (tests/model.rs
# checks that the shipped file is what this makes). Cross-validation on the training split:
#   cargo run --release --example model -- cv
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release --example model -- train catalog/model/weights.tsv
