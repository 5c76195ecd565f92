//! Training on the corpus and measuring verdicts against its labels: the shipped training
//! step, cross-validation on the training split, and the figures the bars are stated in.

use crate::classify::engine::{MODEL_RULE, NOTHING_DECIDED};
use crate::classify::model::train::{self, DecisionKind, Example, Settings};
use crate::classify::model::weights::{self, softmax, Decision, ModelText, Stance};
use crate::classify::model::{tokens, Model};
use crate::classify::Engine;
use crate::corpus::{Corpus, Labelled};
use crate::model::{Category, Severity};
use std::fmt::Write as _;

/// Cross-validation folds used to calibrate the shipped model.
pub const CALIBRATION_FOLDS: usize = 5;

/// A tool's training example: its feature keys (words and the rules' signals) and its label.
pub fn example(rules: &Engine, server: &str, t: &Labelled) -> Example {
    let view = rules.model_view(&t.tool);
    Example {
        server: server.to_string(),
        keys: view.keys,
        label: t.label.category,
        rules_verdict: view.rules_verdict,
        rules_decide: view.rules_decide,
        floor: view.floor,
        close_call: t.label.close_call(),
    }
}

/// The training split's examples, in corpus order.
fn training_examples(corpus: &Corpus, rules: &Engine) -> Vec<Example> {
    corpus
        .split(false)
        .flat_map(|s| s.tools.iter().map(move |t| example(rules, &s.id, t)))
        .collect()
}

/// The fold of a server in `folds`-fold cross-validation (stable, by its id).
fn fold_of(server: &str, folds: usize) -> usize {
    (tokens::hash_key(server) % folds as u64) as usize
}

/// The shipped model: trained on the whole training split with the default settings; its
/// temperature, thresholds and offsets fitted to out-of-fold predictions (see [`calibrate`]).
pub fn train_shipped(corpus: &Corpus, rules: &Engine) -> ModelText {
    train_with(corpus, rules, Settings::default())
}

/// The model trained as [`train_shipped`] trains it, with other settings (for experiments).
pub fn train_with(corpus: &Corpus, rules: &Engine, settings: Settings) -> ModelText {
    let examples = training_examples(corpus, rules);
    let calibration = calibrate_recorded(&examples, settings);
    let mut m = train::train(&examples, settings);
    m.temperature = calibration.temperature;
    m.decision = calibration.decision;
    let draws = match settings.calibration_draws {
        _ if !calibration.financial_thresholds.is_empty() => String::new(),
        0 | 1 => String::new(),
        n => format!(" of {n} draws of folds, pooled"),
    };
    m.comment.push_str(&format!(
        "; temperature, thresholds and offsets fitted on {CALIBRATION_FOLDS}-fold out-of-fold predictions{draws}"
    ));
    if calibration.financial_thresholds.is_empty() {
        if let Some(f) = settings.financial_at {
            m.comment.push_str(&format!(
                "; the Financial threshold held at {f:.2}, the offsets fitted with it"
            ));
        }
    } else {
        let each: Vec<String> = calibration
            .financial_thresholds
            .iter()
            .map(|f| format!("{f:.2}"))
            .collect();
        m.comment.push_str(&format!(
            "; the Financial threshold is the median of those fitted on {} draws of folds ({}), the offset refitted with it held",
            each.len(),
            each.join(", ")
        ));
    }
    m.rounded()
}

/// Each example's class scores from a model trained without its fold, and its label; with
/// `draw` 0 the folds are those of [`fold_of`], and each other draw deals the servers into folds
/// anew.
fn out_of_fold(
    examples: &[Example],
    settings: Settings,
    folds: usize,
    draw: usize,
) -> Vec<([f64; 5], usize)> {
    let fold = |server: &str| fold_in_draw(server, folds, draw);
    let mut out = vec![([0.0; 5], 0); examples.len()];
    for f in 0..folds {
        let train_set: Vec<Example> = examples
            .iter()
            .filter(|e| fold(&e.server) != f)
            .cloned()
            .collect();
        let table = weights::Table::new(&train::train(&train_set, settings));
        for (i, e) in examples.iter().enumerate() {
            if fold(&e.server) == f {
                out[i] = (
                    table.logits(&hashes_of(&table, &e.keys)),
                    train::class_index(e.label),
                );
            }
        }
    }
    out
}

/// A server's fold in one draw of folds: draw 0 is [`fold_of`]; the others hash the server id
/// with the draw's number.
fn fold_in_draw(server: &str, folds: usize, draw: usize) -> usize {
    if draw == 0 {
        fold_of(server, folds)
    } else {
        (tokens::hash_key(&format!("{draw}\0{server}")) % folds as u64) as usize
    }
}

/// The temperature that makes out-of-fold confidences honest, and the decision (thresholds
/// and offsets) that makes the fewest mistakes on them while calling at most
/// `settings.danger_cap` of the dangerous tools Read or Write (see [`fit_decision`]). The out-of-fold predictions of
/// `settings.calibration_draws` draws of folds are pooled, so that the fit does not follow the
/// way one draw happened to deal the servers.
pub fn calibrate(examples: &[Example], settings: Settings) -> (f64, Decision) {
    let c = calibrate_recorded(examples, settings);
    (c.temperature, c.decision)
}

/// What [`calibrate_recorded`] fitted.
struct Calibration {
    temperature: f64,
    decision: Decision,
    /// With `settings.financial_median_of`: the Financial threshold fitted on each draw, in
    /// draw order (empty otherwise).
    financial_thresholds: Vec<f64>,
}

/// [`calibrate`], keeping what a median Financial threshold was taken of (see
/// `Settings::financial_median_of`; it calibrates on one draw, whatever
/// `settings.calibration_draws` says).
fn calibrate_recorded(examples: &[Example], settings: Settings) -> Calibration {
    let first = settings.calibration_first_draw;
    let of_draw = |draw: usize| out_of_fold(examples, settings, CALIBRATION_FOLDS, draw);
    let n = settings.financial_median_of;
    if n > 1 && settings.financial_at.is_none() && settings.fixed_decision.is_none() {
        let single = Settings {
            calibration_draws: 1,
            financial_median_of: 0,
            ..settings
        };
        let draws: Vec<_> = (first..first + n).map(of_draw).collect();
        let thresholds: Vec<f64> = draws
            .iter()
            .map(|logits| {
                let (_, d) = calibrate_on(examples, logits, 1, single);
                d.thresholds[Category::Financial as usize]
            })
            .collect();
        let median = median_of(&thresholds);
        let held = Settings {
            financial_at: Some(median),
            ..single
        };
        let (temperature, decision) = calibrate_on(examples, &draws[0], 1, held);
        return Calibration {
            temperature,
            decision,
            financial_thresholds: thresholds,
        };
    }
    let draws = settings.calibration_draws.max(1);
    let logits: Vec<([f64; 5], usize)> = (first..first + draws).flat_map(of_draw).collect();
    let (temperature, decision) = calibrate_on(examples, &logits, draws, settings);
    Calibration {
        temperature,
        decision,
        financial_thresholds: Vec::new(),
    }
}

/// The middle value (the lower of the two middle ones for an even count).
fn median_of(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[(sorted.len() - 1) / 2]
}

/// The temperature and decision fitted to `logits`: the out-of-fold predictions of `draws`
/// draws of folds over `examples`, one after the other.
fn calibrate_on(
    examples: &[Example],
    logits: &[([f64; 5], usize)],
    draws: usize,
    settings: Settings,
) -> (f64, Decision) {
    let temperature = fit_temperature(logits);
    let probs: Vec<([f64; 5], usize)> = logits
        .iter()
        .map(|(z, y)| (softmax(*z, temperature), *y))
        .collect();
    let standing: Vec<Standing> = examples
        .iter()
        .map(|e| {
            let on_verdicts = settings.calibrate_on_verdicts;
            Standing {
                rules_decide: e.rules_decide.filter(|_| on_verdicts),
                floor: e.floor.filter(|_| on_verdicts),
                stance: Stance::of(e.rules_verdict),
            }
        })
        .cycle()
        .take(examples.len() * draws)
        .collect();
    (temperature, fit_decision(&probs, &standing, settings))
}

/// Where the rules stand on a tool in the decision's fit (see `Settings::calibrate_on_verdicts`):
/// nothing, by default.
#[derive(Debug, Clone, Copy)]
struct Standing {
    rules_decide: Option<Category>,
    floor: Option<Category>,
    /// The group of its stance offset (see `Settings::stance_offsets`).
    stance: Stance,
}

impl Default for Standing {
    fn default() -> Standing {
        Standing {
            rules_decide: None,
            floor: None,
            stance: Stance::Other,
        }
    }
}

impl Standing {
    /// The verdict that ships when the model would choose `model`.
    fn verdict(&self, model: Category) -> Category {
        self.rules_decide
            .unwrap_or_else(|| self.floor.map_or(model, |f| f.max(model)))
    }
}

/// The hashes of the keys `table` reads of an example, as a running model reads them: a class
/// key only for a word whose own key the table lacks, and then the word's rare key.
fn hashes_of(table: &weights::Table, keys: &[String]) -> Vec<u64> {
    let mut h: Vec<u64> = Vec::with_capacity(keys.len());
    for k in keys {
        match tokens::split_source(k) {
            (k, Some(source)) => {
                if table.find(tokens::hash_key(source)).is_none() {
                    h.push(tokens::hash_key(k));
                    if let Some(rare) = train::rare_spelling(source) {
                        h.push(tokens::hash_key(&rare));
                    }
                }
            }
            (k, None) => h.push(tokens::hash_key(k)),
        }
    }
    h.sort_unstable();
    h.dedup();
    h
}

/// The temperature (0.5 to 4, in steps of 0.01) with the least negative log-likelihood.
fn fit_temperature(logits: &[([f64; 5], usize)]) -> f64 {
    let nll = |t: f64| -> f64 {
        logits
            .iter()
            .map(|(z, y)| -softmax(*z, t)[*y].max(1e-12).ln())
            .sum()
    };
    (50..=400)
        .map(|i| i as f64 / 100.0)
        .min_by(|a, b| nll(*a).total_cmp(&nll(*b)))
        .unwrap_or(1.0)
}

/// What a mistake costs: calling an Execute, Destructive or Financial tool Read or Write, or
/// missing a Financial one, is worse than other confusions (a policy would let it through).
pub fn mistake_cost(label: Category, chosen: Category) -> f64 {
    if label == chosen {
        0.0
    } else if (label >= Category::Execute && chosen <= Category::Write)
        || label == Category::Financial
    {
        DANGER_COST
    } else {
        1.0
    }
}

/// See [`mistake_cost`].
pub const DANGER_COST: f64 = 2.0;

/// The mistakes `d` makes on `probs` (missing a Financial tool counts twice), plus a thousand
/// for each dangerous tool called Read or Write beyond `allowed`.
fn capped_cost(
    probs: &[([f64; 5], usize)],
    standing: &[Standing],
    d: &Decision,
    allowed: f64,
) -> f64 {
    let (mut mistakes, mut let_through) = (0.0, 0.0);
    for ((p, y), st) in probs.iter().zip(standing) {
        let (m, t) = tally(Category::ALL[*y], st.verdict(d.choose_in(p, st.stance)));
        mistakes += m;
        let_through += t;
    }
    capped(mistakes, let_through, allowed)
}

/// What one verdict adds to a fit's count: a mistake (missing a Financial tool counts twice),
/// and a dangerous tool let through as Read or Write.
fn tally(label: Category, chosen: Category) -> (f64, f64) {
    let mistake = match (chosen == label, label) {
        (true, _) => 0.0,
        (false, Category::Financial) => 2.0,
        (false, _) => 1.0,
    };
    let let_through = label >= Category::Execute && chosen <= Category::Write;
    (mistake, if let_through { 1.0 } else { 0.0 })
}

/// A fit's cost: its mistakes, plus a thousand for each dangerous tool let through beyond
/// `allowed`.
fn capped(mistakes: f64, let_through: f64, allowed: f64) -> f64 {
    mistakes + 1000.0 * (let_through - allowed).max(0.0)
}

/// The Financial thresholds the fits try: 0.03 to 0.61 in steps of 0.02, then never (1.01).
fn financial_grid() -> impl Iterator<Item = f64> {
    (3..=61)
        .step_by(2)
        .map(|f| f64::from(f) * 0.01)
        .chain([1.01])
}

/// How many dangerous offsets the fits try: [`offset_grid`].
const OFFSET_STEPS: usize = 81;

/// The dangerous offsets the fits try: 0 to 4 in steps of 0.05.
fn offset_grid() -> impl Iterator<Item = f64> {
    (0..OFFSET_STEPS as u32).map(|b| f64::from(b) * 0.05)
}

/// How many dangerous tools `danger_cap` allows to be called Read or Write.
fn allowed(probs: &[([f64; 5], usize)], danger_cap: f64) -> f64 {
    let dangerous = probs
        .iter()
        .filter(|(_, y)| *y >= Category::Execute as usize)
        .count();
    (danger_cap * dangerous as f64).floor()
}

/// Fits how probabilities become a category, by `settings.decision` (or takes
/// `settings.fixed_decision` as it is).
fn fit_decision(
    probs: &[([f64; 5], usize)],
    standing: &[Standing],
    settings: Settings,
) -> Decision {
    if let Some((offset, financial)) = settings.fixed_decision {
        return Decision::offset(offset, financial);
    }
    match settings.decision {
        DecisionKind::Thresholds => {
            Decision::thresholds(fit_thresholds(probs, standing, settings.danger_cap))
        }
        DecisionKind::Offsets if settings.stance_offsets => fit_stance_offsets(
            probs,
            standing,
            settings.danger_cap,
            settings.stance_financial,
            settings.financial_at,
        ),
        DecisionKind::Offsets if settings.execute_offset => {
            let shared = fit_offsets_at(probs, standing, settings, false);
            fit_execute_offset(probs, standing, settings.danger_cap, shared)
        }
        DecisionKind::Offsets => fit_offsets_at(probs, standing, settings, false),
        DecisionKind::Pooled => fit_offsets_at(probs, standing, settings, true),
    }
}

/// Like [`fit_offsets`], with one offset per [`Stance`] under the one cap: for each Financial
/// threshold and each weight `lambda` of a dangerous tool let through, each stance takes the
/// offset of least mistakes + lambda * let-through on its own tools (the groups do not
/// interact), and the pair (threshold, lambda) whose total meets the cap at the least mistake
/// cost wins. (Lagrangian relaxation of the cap: it finds the allocations on the convex hull
/// of each stance's trade, which a grid of three offsets at once would take 81^3 steps for.)
fn fit_stance_offsets(
    probs: &[([f64; 5], usize)],
    standing: &[Standing],
    danger_cap: f64,
    financial_by_stance: bool,
    financial_at: Option<f64>,
) -> Decision {
    let allowed = allowed(probs, danger_cap);
    let offsets: Vec<f64> = offset_grid().collect();
    let financials: Vec<f64> = match financial_at {
        Some(f) => vec![f],
        None => financial_grid().collect(),
    };
    // (mistakes, let through) of each stance at each Financial threshold and offset.
    let mut table = vec![[[(0.0f64, 0.0f64); OFFSET_STEPS]; 3]; financials.len()];
    for (fi, &f) in financials.iter().enumerate() {
        for (i, &b) in offsets.iter().enumerate() {
            let d = Decision::offset(b, f);
            for ((p, y), st) in probs.iter().zip(standing) {
                let (m, t) = tally(Category::ALL[*y], st.verdict(d.choose(p)));
                let cell = &mut table[fi][st.stance as usize][i];
                cell.0 += m;
                cell.1 += t;
            }
        }
    }
    // The Financial thresholds a stance may take: one shared (tried in turn), or its own.
    let shared: Vec<Vec<usize>> = (0..financials.len()).map(|fi| vec![fi]).collect();
    let own = vec![(0..financials.len()).collect::<Vec<usize>>()];
    let mut best: Option<(f64, Decision)> = None;
    for allowed_f in if financial_by_stance { &own } else { &shared } {
        for l in (0..=600).map(|l| f64::from(l) * 0.05) {
            let mut pick = [(0usize, 0usize); 3];
            let (mut mistakes, mut let_through) = (0.0, 0.0);
            for (g, choice) in pick.iter_mut().enumerate() {
                let value = |(fi, i): (usize, usize)| {
                    let (m, t) = table[fi][g][i];
                    m + l * t
                };
                *choice = allowed_f
                    .iter()
                    .flat_map(|&fi| (0..offsets.len()).map(move |i| (fi, i)))
                    .min_by(|&a, &b| value(a).total_cmp(&value(b)))
                    .unwrap_or((0, 0));
                let (m, t) = table[choice.0][g][choice.1];
                mistakes += m;
                let_through += t;
            }
            let v = capped(mistakes, let_through, allowed);
            if best.as_ref().is_none_or(|(c, _)| v < c - 1e-9) {
                let o = pick.map(|(_, i)| offsets[i]);
                let f = pick.map(|(fi, _)| financials[fi]);
                let other = Stance::Other as usize;
                let mut d = Decision::offset(o[other], f[other]);
                d.stance_offsets = Some(o);
                d.stance_financial = financial_by_stance.then_some(f);
                best = Some((v, d));
            }
        }
    }
    best.expect("the grid is not empty").1
}

/// A Financial threshold (0.03 to 0.61, or none) and one offset for the three dangerous
/// categories (0 to 4, in steps of 0.05) of least mistake cost, calling at most `danger_cap`
/// of the dangerous tools Read or Write. Weighing the dangerous categories up against the
/// likeliest benign one, rather than choosing each outright at a low probability (which
/// [`fit_thresholds`] does), keeps a tool Read or Write when a dangerous reading is possible
/// but a benign one is far likelier. (A second offset, for Write, was tried: in
/// cross-validation 12,440 tools right against 12,408, but 258 dangerous tools let through
/// against 254.)
/// With `pooled`, the offset weighs the dangerous categories' pooled probability instead
/// (see [`Decision::pooled`]).
fn fit_offsets(
    probs: &[([f64; 5], usize)],
    standing: &[Standing],
    danger_cap: f64,
    pooled: bool,
) -> Decision {
    fit_offsets_among(probs, standing, danger_cap, pooled, financial_grid())
}

/// [`fit_offsets`] with `settings`' cap, the Financial threshold held at
/// `settings.financial_at` when it is set.
fn fit_offsets_at(
    probs: &[([f64; 5], usize)],
    standing: &[Standing],
    settings: Settings,
    pooled: bool,
) -> Decision {
    match settings.financial_at {
        Some(f) => fit_offsets_among(
            probs,
            standing,
            settings.danger_cap,
            pooled,
            [f].into_iter(),
        ),
        None => fit_offsets(probs, standing, settings.danger_cap, pooled),
    }
}

/// [`fit_offsets`], trying only the Financial thresholds `financials`.
fn fit_offsets_among(
    probs: &[([f64; 5], usize)],
    standing: &[Standing],
    danger_cap: f64,
    pooled: bool,
    financials: impl Iterator<Item = f64>,
) -> Decision {
    let allowed = allowed(probs, danger_cap);
    let mut best: Option<(f64, Decision)> = None;
    for f in financials {
        for b in offset_grid() {
            let d = Decision {
                pooled,
                ..Decision::offset(b, f)
            };
            let v = capped_cost(probs, standing, &d, allowed);
            if best.as_ref().is_none_or(|(c, _)| v < c - 1e-9) {
                best = Some((v, d));
            }
        }
    }
    best.expect("the grid is not empty").1
}

/// From the shared fit `start`, an offset of its own for Execute: the Execute offset and the
/// shared offset of Destructive and Financial searched together on the grid (under a binding
/// cap, moving one alone would only break it), then the Financial threshold given both; twice.
/// Each step keeps what it started from unless something costs less, so the result costs at
/// most what `start` does.
fn fit_execute_offset(
    probs: &[([f64; 5], usize)],
    standing: &[Standing],
    danger_cap: f64,
    start: Decision,
) -> Decision {
    let allowed = allowed(probs, danger_cap);
    let cost = |d: &Decision| capped_cost(probs, standing, d, allowed);
    let with = |execute: f64, shared: f64, financial: f64| {
        let mut d = Decision::offset(shared, financial);
        d.offsets[Category::Execute as usize] = execute;
        d
    };
    let mut best = (cost(&start), start);
    let consider = |d: Decision, best: &mut (f64, Decision)| {
        let v = cost(&d);
        if v < best.0 - 1e-9 {
            *best = (v, d);
        }
    };
    for _ in 0..2 {
        let financial = best.1.thresholds[Category::Financial as usize];
        for execute in offset_grid() {
            for shared in offset_grid() {
                consider(with(execute, shared, financial), &mut best);
            }
        }
        let execute = best.1.offsets[Category::Execute as usize];
        let shared = best.1.offsets[Category::Destructive as usize];
        for financial in financial_grid() {
            consider(with(execute, shared, financial), &mut best);
        }
    }
    best.1
}

/// Thresholds (Write, Execute, Destructive, Financial; 0.05 to 1.01) that make the fewest
/// mistakes (missing a Financial tool counts twice) while calling at most `danger_cap` (by
/// default [`DANGER_CAP`](train::DANGER_CAP)) of the dangerous tools Read or Write. From those
/// of least total mistake cost (see [`cost_thresholds`]), the Write and Execute thresholds,
/// which decide between the benign and the dangerous side, are moved together on a grid of
/// 0.02; Destructive and Financial keep theirs (moving them too found other fits as good that
/// flipped twice as many verdicts).
fn fit_thresholds(probs: &[([f64; 5], usize)], standing: &[Standing], danger_cap: f64) -> [f64; 5] {
    let allowed = allowed(probs, danger_cap);
    let cost =
        |t: &[f64; 5]| -> f64 { capped_cost(probs, standing, &Decision::thresholds(*t), allowed) };
    let t = cost_thresholds(probs);
    let mut best = (cost(&t), t);
    for w in (5..=101).step_by(2) {
        for e in (5..=101).step_by(2) {
            let mut trial = t;
            trial[Category::Write as usize] = f64::from(w) * 0.01;
            trial[Category::Execute as usize] = f64::from(e) * 0.01;
            let v = cost(&trial);
            if v < best.0 - 1e-9 {
                best = (v, trial);
            }
        }
    }
    best.1
}

/// Thresholds (Write, Execute, Destructive, Financial; 0.05 to 0.95) of least total mistake
/// cost, by coordinate descent from one half.
fn cost_thresholds(probs: &[([f64; 5], usize)]) -> [f64; 5] {
    let cost = |t: &[f64; 5]| -> f64 {
        probs
            .iter()
            .map(|(p, y)| mistake_cost(Category::ALL[*y], Decision::thresholds(*t).choose(p)))
            .sum()
    };
    let mut t = weights::DEFAULT_THRESHOLDS;
    for _ in 0..4 {
        for c in [4usize, 3, 2, 1] {
            let mut best = (cost(&t), t[c]);
            for i in 1..=19 {
                let mut trial = t;
                trial[c] = i as f64 * 0.05;
                let v = cost(&trial);
                if v < best.0 - 1e-9 {
                    best = (v, trial[c]);
                }
            }
            t[c] = best.1;
        }
    }
    t
}

/// One tool's verdict beside its label.
#[derive(Debug, Clone)]
pub struct Scored {
    pub server: String,
    pub tool: String,
    pub label: Category,
    pub label_severity: Severity,
    pub category: Category,
    pub severity: Severity,
    pub confidence: f64,
    /// The verdict was marked for review.
    pub review: bool,
    /// What the rules alone said.
    pub rules_category: Category,
    /// The rules' own confidence (0 when they were silent).
    pub rules_confidence: f64,
    /// The learned model decided (the rules were not sure).
    pub by_model: bool,
}

/// Scores every tool of one split with `engine`.
pub fn score_split(corpus: &Corpus, engine: &Engine, test: bool) -> Vec<Scored> {
    let rules = Engine::new(engine.rules().clone()).with_model(None);
    corpus
        .split(test)
        .flat_map(|s| s.tools.iter().map(|t| score(engine, &rules, &s.id, t)))
        .collect()
}

fn score(engine: &Engine, rules: &Engine, server: &str, t: &Labelled) -> Scored {
    let v = engine.classify(&t.tool);
    let alone = rules.classify(&t.tool);
    Scored {
        server: server.to_string(),
        tool: t.tool.name.clone(),
        label: t.label.category,
        label_severity: t.label.severity,
        category: v.category,
        severity: v.severity,
        confidence: v.confidence,
        review: v.needs_review(),
        rules_category: alone.category,
        rules_confidence: if alone.evidence.iter().any(|e| e.rule == NOTHING_DECIDED) {
            0.0
        } else {
            alone.confidence
        },
        by_model: v.evidence.iter().any(|e| e.rule == MODEL_RULE),
    }
}

/// Cross-validation on the training split: each fold of servers is scored by an engine whose
/// model was trained and calibrated (temperature and decision) on the other folds alone.
pub fn cross_validate(
    corpus: &Corpus,
    rules: &Engine,
    settings: Settings,
    folds: usize,
) -> Vec<Scored> {
    let examples = training_examples(corpus, rules);
    let mut out = Vec::new();
    for fold in 0..folds {
        let train_set: Vec<Example> = examples
            .iter()
            .filter(|e| fold_of(&e.server, folds) != fold)
            .cloned()
            .collect();
        // Each fold goes through the whole of training, calibration included, without its
        // own servers: a decision fitted on the tools they are scored on made the figures,
        // the share of dangerous tools let through above all, look better than they are.
        let (temperature, decision) = calibrate(&train_set, settings);
        let mut m = train::train(&train_set, settings);
        m.temperature = temperature;
        m.decision = decision;
        // The engine keeps a `'static` model; a fold's model lives as long as the process.
        let model: &'static Model = Box::leak(Box::new(Model::from_text(&m)));
        let engine = Engine::new(rules.rules().clone()).with_model(Some(model));
        for s in corpus
            .split(false)
            .filter(|s| fold_of(&s.id, folds) == fold)
        {
            for t in &s.tools {
                out.push(score(&engine, rules, &s.id, t));
            }
        }
    }
    out
}

/// The figures the bars are stated in.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub tools: usize,
    pub servers: usize,
    pub category: f64,
    pub severity: f64,
    /// How many tools' category, and how many tools' severity, are right (the counts behind
    /// `category` and `severity`, so that two runs can be compared tool for tool).
    pub category_right: usize,
    pub severity_right: usize,
    pub rules_category: f64,
    /// Of the tools labelled Execute, Destructive or Financial: how many, and the share
    /// classified Read or Write.
    pub dangerous: usize,
    pub dangerous_as_benign: f64,
    pub financial: usize,
    pub financial_recall: f64,
    /// Of the verdicts with confidence 0.9 or more: how many, and the share right.
    pub confident: usize,
    pub confident_right: f64,
    pub review: usize,
    /// Confusion counts: `[label][verdict]`.
    pub confusion: [[usize; 5]; 5],
}

impl Figures {
    /// The figures of a set of scored tools.
    pub fn of(scored: &[Scored]) -> Figures {
        let share = |n: usize, d: usize| if d == 0 { 1.0 } else { n as f64 / d as f64 };
        let mut f = Figures {
            tools: scored.len(),
            ..Figures::default()
        };
        let mut servers: Vec<&str> = scored.iter().map(|s| s.server.as_str()).collect();
        servers.dedup();
        f.servers = servers.len();
        let (mut right, mut sev, mut rules, mut benign, mut fin_right) = (0, 0, 0, 0, 0);
        let mut conf_right = 0;
        for s in scored {
            f.confusion[s.label as usize][s.category as usize] += 1;
            right += usize::from(s.category == s.label);
            sev += usize::from(s.severity == s.label_severity);
            rules += usize::from(s.rules_category == s.label);
            if s.label >= Category::Execute {
                f.dangerous += 1;
                benign += usize::from(s.category <= Category::Write);
            }
            if s.label == Category::Financial {
                f.financial += 1;
                fin_right += usize::from(s.category == Category::Financial);
            }
            if s.confidence >= 0.9 {
                f.confident += 1;
                conf_right += usize::from(s.category == s.label);
            }
            f.review += usize::from(s.review);
        }
        f.category = share(right, f.tools);
        f.severity = share(sev, f.tools);
        (f.category_right, f.severity_right) = (right, sev);
        f.rules_category = share(rules, f.tools);
        f.dangerous_as_benign = share(benign, f.dangerous);
        f.financial_recall = share(fin_right, f.financial);
        f.confident_right = share(conf_right, f.confident);
        f
    }

    /// The figures as a short report.
    pub fn to_text(&self) -> String {
        let pct = |v: f64| format!("{:.1}%", v * 100.0);
        let mut out = String::new();
        let _ = writeln!(out, "tools {} of {} servers", self.tools, self.servers);
        let _ = writeln!(
            out,
            "category {}  (rules alone {})  severity {}",
            pct(self.category),
            pct(self.rules_category),
            pct(self.severity)
        );
        let _ = writeln!(
            out,
            "Execute/Destructive/Financial as Read or Write: {} of {}",
            pct(self.dangerous_as_benign),
            self.dangerous
        );
        let _ = writeln!(
            out,
            "Financial recall {} of {}",
            pct(self.financial_recall),
            self.financial
        );
        let _ = writeln!(
            out,
            "confidence >= 0.9: {} verdicts, {} right; needs review: {}",
            self.confident,
            pct(self.confident_right),
            self.review
        );
        out.push_str("label \\ verdict   Read  Write  Exec  Destr  Fin\n");
        for c in Category::ALL {
            let row = &self.confusion[c as usize];
            let _ = writeln!(
                out,
                "{:<16} {:>5} {:>6} {:>5} {:>6} {:>4}",
                c.as_str(),
                row[0],
                row[1],
                row[2],
                row[3],
                row[4]
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Out-of-fold predictions: `n` tools of `label` each predicted `p`.
    fn many(n: usize, p: [f64; 5], label: Category) -> Vec<([f64; 5], usize)> {
        vec![(p, label as usize); n]
    }

    #[test]
    fn the_fitted_offset_keeps_within_the_cap_at_the_least_cost() {
        // 100 Execute tools the model half misses (p(Execute) 0.25), 300 Reads it is surer of
        // (0.1), and 120 Reads it is as unsure of as of the Executes: no offset lets all 100
        // Executes through, one that calls the unsure ones Execute lets none through.
        let mut probs = many(100, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Execute);
        probs.extend(many(300, [0.9, 0.0, 0.1, 0.0, 0.0], Category::Read));
        probs.extend(many(120, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Read));
        let none = vec![Standing::default(); probs.len()];
        let d = fit_offsets(&probs, &none, 0.125, false);
        assert_eq!(
            d.choose(&[0.75, 0.0, 0.25, 0.0, 0.0]),
            Category::Execute,
            "{d:?}"
        );
        // The surer Reads stay Read: the least offset that meets the cap was taken.
        assert_eq!(
            d.choose(&[0.9, 0.0, 0.1, 0.0, 0.0]),
            Category::Read,
            "{d:?}"
        );
        // With no cap to meet, the 120 unsure Reads outweigh the 100 Executes.
        let free = fit_offsets(&probs, &none, 1.0, false);
        assert_eq!(
            free.choose(&[0.75, 0.0, 0.25, 0.0, 0.0]),
            Category::Read,
            "{free:?}"
        );
    }

    #[test]
    fn an_execute_offset_of_its_own_leaves_unsure_reads_alone() {
        // 100 Destructive tools the model half misses (p 0.3), 100 Execute tools it is sure of,
        // and 200 Reads with an Execute reading as faint as the Destructives' (p 0.3). One
        // shared offset large enough for the Destructives calls the faint Reads Execute too; an
        // Execute offset of its own need not.
        let half_destructive = [0.7, 0.0, 0.0, 0.3, 0.0];
        let faint_execute = [0.7, 0.0, 0.3, 0.0, 0.0];
        let mut probs = many(100, half_destructive, Category::Destructive);
        probs.extend(many(100, [0.2, 0.0, 0.8, 0.0, 0.0], Category::Execute));
        probs.extend(many(200, faint_execute, Category::Read));
        let none = vec![Standing::default(); probs.len()];
        let shared = fit_offsets(&probs, &none, 0.125, false);
        assert_eq!(shared.choose(&half_destructive), Category::Destructive);
        assert_eq!(
            shared.choose(&faint_execute),
            Category::Execute,
            "{shared:?}"
        );
        let own = fit_execute_offset(&probs, &none, 0.125, shared);
        assert_eq!(
            own.choose(&half_destructive),
            Category::Destructive,
            "{own:?}"
        );
        assert_eq!(own.choose(&faint_execute), Category::Read, "{own:?}");
    }

    #[test]
    fn a_fixed_decision_is_taken_as_it_is() {
        // The same predictions the fit above would weigh Execute up on.
        let mut probs = many(100, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Execute);
        probs.extend(many(120, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Read));
        let settings = Settings {
            fixed_decision: Some((0.0, 0.3)),
            ..Settings::default()
        };
        let d = fit_decision(&probs, &vec![Standing::default(); probs.len()], settings);
        assert_eq!(d.offsets, [0.0; 5]);
        assert_eq!(d.thresholds[Category::Financial as usize], 0.3);
        assert_eq!(d.choose(&[0.75, 0.0, 0.25, 0.0, 0.0]), Category::Read);
        // Financial outright at its threshold, though Read is likelier.
        assert_eq!(d.choose(&[0.65, 0.0, 0.0, 0.0, 0.35]), Category::Financial);
    }

    #[test]
    fn a_held_financial_threshold_is_kept_while_the_offset_is_fitted() {
        // 40 Financial tools at p 0.2 and 40 Writes at 0.15: a free fit puts the threshold
        // between them (0.17 to 0.19); held at 0.13 it calls the Writes Financial too, and the
        // offset is still fitted (the half-missed Executes need one).
        let mut probs = many(40, [0.0, 0.8, 0.0, 0.0, 0.2], Category::Financial);
        probs.extend(many(40, [0.0, 0.85, 0.0, 0.0, 0.15], Category::Write));
        probs.extend(many(100, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Execute));
        probs.extend(many(120, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Read));
        let none = vec![Standing::default(); probs.len()];
        let fitted = Settings {
            financial_at: None,
            ..Settings::default()
        };
        let free = fit_decision(&probs, &none, fitted);
        let financial = free.thresholds[Category::Financial as usize];
        assert!(financial > 0.15 && financial <= 0.2, "{free:?}");
        let held = Settings {
            financial_at: Some(0.13),
            ..Settings::default()
        };
        let d = fit_decision(&probs, &none, held);
        assert_eq!(d.thresholds[Category::Financial as usize], 0.13);
        assert_eq!(d.choose(&[0.0, 0.85, 0.0, 0.0, 0.15]), Category::Financial);
        assert_eq!(d.offsets, free.offsets, "{d:?} against {free:?}");
        assert_eq!(d.choose(&[0.75, 0.0, 0.25, 0.0, 0.0]), Category::Execute);
    }

    #[test]
    fn the_median_is_the_middle_value_or_the_lower_middle_one() {
        assert_eq!(median_of(&[0.15, 0.07, 0.09, 0.13, 0.11]), 0.11);
        assert_eq!(median_of(&[0.15, 0.07, 0.09, 0.13]), 0.09);
        assert_eq!(median_of(&[1.01]), 1.01);
    }

    #[test]
    fn on_verdicts_the_fit_counts_what_the_rules_decide_as_they_decide_it() {
        // The same 100 half-missed Executes and 120 unsure Reads, but the rules decide 95 of
        // the Executes alone (rightly): the 5 left are within the 12 misses the cap allows,
        // so no offset is needed, and the 120 unsure Reads stay Read.
        let mut probs = many(100, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Execute);
        probs.extend(many(300, [0.9, 0.0, 0.1, 0.0, 0.0], Category::Read));
        probs.extend(many(120, [0.75, 0.0, 0.25, 0.0, 0.0], Category::Read));
        let mut standing = vec![Standing::default(); probs.len()];
        for st in &mut standing[..95] {
            st.rules_decide = Some(Category::Execute);
        }
        let d = fit_offsets(&probs, &standing, 0.125, false);
        assert_eq!(
            d.choose(&[0.75, 0.0, 0.25, 0.0, 0.0]),
            Category::Read,
            "{d:?}"
        );
        // Without the rules' standing the same predictions need the offset (see above).
        let none = vec![Standing::default(); probs.len()];
        let blind = fit_offsets(&probs, &none, 0.125, false);
        assert_eq!(
            blind.choose(&[0.75, 0.0, 0.25, 0.0, 0.0]),
            Category::Execute
        );
        // A floor raises the model's choice; the rules' own verdict stands whatever it is.
        let floored = Standing {
            floor: Some(Category::Destructive),
            ..Standing::default()
        };
        assert_eq!(floored.verdict(Category::Read), Category::Destructive);
        assert_eq!(floored.verdict(Category::Financial), Category::Financial);
        let ruled = Standing {
            rules_decide: Some(Category::Read),
            ..Standing::default()
        };
        assert_eq!(ruled.verdict(Category::Execute), Category::Read);
    }

    #[test]
    fn stance_offsets_spend_the_cap_where_it_costs_least() {
        // Where the rules are silent, 180 half-missed Executes among 10 Reads as unsure; where
        // they say Write, 20 among 300. The cap allows 25 of the 200 through: one offset must
        // weigh every unsure tool up (310 Reads wrong); by stance, only the silent ones are
        // (10 wrong, and the 20 let through are within the cap).
        let unsure = [0.75, 0.0, 0.25, 0.0, 0.0];
        let mut probs = many(180, unsure, Category::Execute);
        probs.extend(many(10, unsure, Category::Read));
        probs.extend(many(20, unsure, Category::Execute));
        probs.extend(many(300, unsure, Category::Read));
        let standing: Vec<Standing> = (0..probs.len())
            .map(|i| Standing {
                stance: if i < 190 {
                    Stance::Silent
                } else {
                    Stance::Write
                },
                ..Standing::default()
            })
            .collect();
        let one = fit_offsets(&probs, &standing, 0.125, false);
        assert_eq!(one.choose_in(&unsure, Stance::Write), Category::Execute);
        let by_stance = fit_stance_offsets(&probs, &standing, 0.125, false, None);
        assert_eq!(
            by_stance.choose_in(&unsure, Stance::Silent),
            Category::Execute
        );
        assert_eq!(by_stance.choose_in(&unsure, Stance::Write), Category::Read);
    }
}
