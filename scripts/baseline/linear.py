#!/usr/bin/env python3
"""An independent baseline for the learned classifier: a standard text classifier built from
scikit-learn parts, cross-validated on the corpus's training split exactly as
`cargo run --release --example model -- cv` is (same servers, same five folds by server).

It answers one question: is the engine's model the bottleneck, or the data? It uses nothing of
mcprisk but the corpus: TF-IDF over name words and pairs, character 3- to 5-grams of the name,
the name's first and last word, description words and pairs, property names, enum values and
annotations, then multinomial logistic regression. Given the engine's cross-validated verdicts
(`model cv-verdicts`), it also adds the rules' own verdict as a feature, and scores a hybrid in
which the rules decide the tools they are sure of (as in the engine) and the baseline the rest.
Dangerous categories are then weighted up step by step, to compare at the engine's share of
dangerous tools called Read or Write rather than at its accuracy alone. With `--mlp` the
logistic regression gives way to a network of one hidden layer (64 units, 20 epochs), to ask
the same question of a learner that is not linear.

The frozen test split is never read (servers in it are skipped before any feature is made).

    python3 -m venv /tmp/baseline && /tmp/baseline/bin/pip install -r scripts/baseline/requirements.txt
    cargo run --release --example model -- cv-verdicts > /tmp/engine-cv.tsv
    /tmp/baseline/bin/python scripts/baseline/linear.py [--mlp] [/tmp/engine-cv.tsv]
"""
import argparse
import hashlib
import json
import os
import re
import warnings

import numpy as np
import yaml
from scipy.sparse import hstack
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "catalog", "corpus")
SPLIT_SEED = b"mcprisk-corpus-split-v1\0"
FOLDS = 5
DANGEROUS = ["Execute", "Destructive", "Financial"]


def in_test_split(server):
    """src/corpus/mod.rs: the first four bytes of the seeded sha256, below a quarter of 2^32."""
    digest = hashlib.sha256(SPLIT_SEED + server.encode()).digest()
    return int.from_bytes(digest[:4], "big") < (1 << 32) // 4


def fold_of(server):
    """src/corpus/evaluate.rs: 64-bit FNV-1a of the server id, modulo the folds."""
    h = 0xCBF29CE484222325
    for b in server.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h % FOLDS


def training_tools():
    seen_path = os.path.join(ROOT, "seen.txt")
    with open(seen_path, encoding="utf-8") as f:
        seen = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    out = []
    labels_dir = os.path.join(ROOT, "labels")
    for name in sorted(os.listdir(labels_dir)):
        with open(os.path.join(labels_dir, name), encoding="utf-8") as f:
            labels = yaml.safe_load(f)
        server = labels["server"]
        if server not in seen and in_test_split(server):
            continue
        with open(os.path.join(ROOT, "tools", name[: -len(".yaml")] + ".json"), encoding="utf-8") as f:
            tools = {t["name"]: t for t in json.load(f)["tools"]}
        for label in labels["tools"]:
            if label["name"] in tools:
                out.append((server, tools[label["name"]], label["category"]))
    return out


def words(text):
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text or "")
    return [w for w in re.split(r"[^A-Za-z0-9]+", text.lower()) if w]


def walk(schema, props, values, depth=0):
    if not isinstance(schema, dict) or depth > 6:
        return
    for key, sub in (schema.get("properties") or {}).items():
        props.append(key)
        walk(sub, props, values, depth + 1)
    for key in ("items", "additionalProperties"):
        walk(schema.get(key), props, values, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or []:
            walk(sub, props, values, depth + 1)
    values.extend(v for v in schema.get("enum") or [] if isinstance(v, str))
    if isinstance(schema.get("const"), str):
        values.append(schema["const"])


def fields(tool):
    props, values = [], []
    walk(tool.get("inputSchema") or {}, props, values)
    name = words(tool.get("name"))
    hints = [f"{k}_{v}" for k, v in (tool.get("annotations") or {}).items() if isinstance(v, bool)]
    return {
        "name": " ".join(name),
        "ends": f"first_{name[0]} last_{name[-1]}" if name else "",
        "description": " ".join(words(tool.get("description"))[:200]),
        "properties": " ".join(" ".join(words(p)) for p in props),
        "values": " ".join(" ".join(words(v)) for v in values),
        "annotations": " ".join(hints),
    }


def vectorizers(with_rules):
    tokens = r"\S+"
    v = [
        ("name", TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), token_pattern=tokens)),
        ("name", TfidfVectorizer(sublinear_tf=True, analyzer="char_wb", ngram_range=(3, 5), min_df=2)),
        ("ends", TfidfVectorizer(token_pattern=tokens)),
        ("description", TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2)),
        ("properties", TfidfVectorizer(sublinear_tf=True, min_df=2)),
        ("values", TfidfVectorizer(sublinear_tf=True, min_df=2)),
        ("annotations", TfidfVectorizer(token_pattern=tokens)),
    ]
    if with_rules:
        v.append(("rules", TfidfVectorizer(token_pattern=tokens)))
    return v


def learner(mlp):
    """Logistic regression, or with --mlp one hidden layer of 64 units (seeded, so repeatable)."""
    if mlp:
        return MLPClassifier(hidden_layer_sizes=(64,), alpha=1e-3, max_iter=20, random_state=0)
    return LogisticRegression(C=10, max_iter=3000)


def cross_validate(records, labels, folds, with_rules, mlp):
    classes = sorted(set(labels))
    proba = np.zeros((len(labels), len(classes)))
    for k in range(FOLDS):
        train = [i for i, f in enumerate(folds) if f != k]
        test = [i for i, f in enumerate(folds) if f == k]
        parts_train, parts_test = [], []
        for field, vec in vectorizers(with_rules):
            parts_train.append(vec.fit_transform([records[i][field] for i in train]))
            parts_test.append(vec.transform([records[i][field] for i in test]))
        model = learner(mlp)
        model.fit(hstack(parts_train).tocsr(), [labels[i] for i in train])
        assert list(model.classes_) == classes
        proba[test] = model.predict_proba(hstack(parts_test).tocsr())
    return classes, proba


def report(title, verdicts, labels):
    y = np.array(labels)
    dangerous = np.isin(y, DANGEROUS)
    missed = (dangerous & np.isin(verdicts, ["Read", "Write"])).sum() / dangerous.sum()
    financial = (y == "Financial").sum()
    found = ((y == "Financial") & (verdicts == "Financial")).sum()
    print(
        f"  {title:34s} category {100 * (verdicts == y).mean():5.1f}%"
        f"   dangerous called Read or Write {100 * missed:5.1f}%"
        f"   Financial recall {100 * found / financial:5.1f}%"
    )


def main():
    parser = argparse.ArgumentParser(description="Cross-validate a scikit-learn baseline on the corpus's training split.")
    parser.add_argument("--mlp", action="store_true", help="one hidden layer instead of logistic regression")
    parser.add_argument("engine_cv", nargs="?", help="the engine's verdicts from `model cv-verdicts`")
    args = parser.parse_args()
    mlp = args.mlp
    if mlp:
        # Twenty epochs are the budget, not convergence: one notice here instead of one per fold.
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
    engine = {}
    if args.engine_cv:
        with open(args.engine_cv, encoding="utf-8") as f:
            for line in f:
                server, tool, label, rules, rules_conf, final, by = line.rstrip("\n").split("\t")
                engine[(server, tool)] = (rules, float(rules_conf), final, by)
    tools = training_tools()
    records, labels, folds = [], [], []
    for server, tool, label in tools:
        r = fields(tool)
        if engine:
            rules, conf, _, _ = engine[(server, tool["name"])]
            r["rules"] = f"rules_{rules} rules_{rules}_{int(conf * 10)}"
        records.append(r)
        labels.append(label)
        folds.append(fold_of(server))
    print(f"training split: {len(records)} tools of {len(set(s for s, _, _ in tools))} servers, {FOLDS} folds by server")
    if engine:
        keys = [(s, t["name"]) for s, t, _ in tools]
        report("the engine (rules and model)", np.array([engine[k][2] for k in keys]), labels)
        report("the rules alone", np.array([engine[k][0] for k in keys]), labels)
        by_model = np.array([engine[k][3] == "model" for k in keys])
        final = np.array([engine[k][2] for k in keys])
    for with_rules in [False] + ([True] if engine else []):
        classes, proba = cross_validate(records, labels, folds, with_rules, mlp)
        kind = "one hidden layer" if mlp else "logistic regression"
        print(f"baseline ({kind})" + (", the rules' verdict as a feature" if with_rules else ", words only"))
        for weight in [1, 2, 4, 8, 12, 16, 24]:
            scaled = proba.copy()
            for c in DANGEROUS:
                scaled[:, classes.index(c)] *= weight
            verdicts = np.array(classes)[scaled.argmax(axis=1)]
            report(f"dangerous weighted x{weight}", verdicts, labels)
            if with_rules:
                report("  rules where sure, baseline else", np.where(by_model, verdicts, final), labels)


if __name__ == "__main__":
    main()
