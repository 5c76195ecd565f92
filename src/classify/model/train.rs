//! Trains the model: multinomial logistic regression over binary feature keys, with an L2
//! penalty, fitted by L-BFGS. Deterministic: the same examples in the same order give the same
//! weights, bit for bit, so a test can prove the shipped weights are what training makes.

use super::tokens::{split_source, CLASS_PLACES, CLASS_SOURCES};
use super::weights::{ModelText, CLASSES};
use crate::model::Category;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// One labelled tool, as training sees it.
#[derive(Debug, Clone)]
pub struct Example {
    /// The server it belongs to (features seen on one server only are not kept).
    pub server: String,
    /// Its feature keys (repeats are ignored).
    pub keys: Vec<String>,
    /// The label.
    pub label: Category,
    /// The rules' verdict, when some rule decided.
    pub rules_verdict: Option<Category>,
    /// The rules' verdict when they decide the tool alone (the model is not asked).
    pub rules_decide: Option<Category>,
    /// A hard rule's floor under the model's choice.
    pub floor: Option<Category>,
    /// The other category the labeller named as a close call (see
    /// `Settings::close_call_share`).
    pub close_call: Option<Category>,
}

/// Training settings.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// L2 penalty on the weights (not the biases).
    pub l2: f64,
    /// A feature is kept only when it occurs on at least this many servers. One: a word seen
    /// on a single training server still helps when an unseen server uses it too
    /// (cross-validated on 7,529 training tools, with `prune` 0.02: category 88.7 -> 89.4%,
    /// dangerous tools called Read or Write 11.9 -> 12.2%).
    pub min_servers: usize,
    /// Class weights are (mean class size / class size) raised to this power.
    pub balance: f64,
    /// Each example also weighs (mean tools a server / its server's tools) raised to this
    /// power, so that a few large servers do not decide every word's weight.
    pub server_power: f64,
    /// L-BFGS iterations at most.
    pub iterations: usize,
    /// Key prefixes left out (for experiments: `["rc"]` trains without the rules' verdict); an
    /// entry with a colon leaves out the keys that start with it (`"wc:n+"`). By default the
    /// WordNet word classes ([`WORD_CLASS_PLACES`]), which the shipped weights do not read.
    pub drop: &'static [&'static str],
    /// With the word classes trained (not in `drop`): a name or leading word counts as met, and
    /// its classes are left out, when its own key (`n:`, `dl:`) is on at least this many
    /// training servers; a word on fewer takes its classes, and its own key is spelled as a
    /// rare word's (`nr:`, `dlr:`), as a running model takes classes (and the rare key) only
    /// for a word whose own key it lacks.
    pub known_servers: usize,
    /// The share of Execute, Destructive and Financial tools that the fitted decision may call
    /// Read or Write.
    pub danger_cap: f64,
    /// A fitted feature is dropped when no category's weight is this far from the mean of its
    /// weights: it moves no category against another, and the table stays small. (With soft
    /// close calls, `close_call_share`, at 0.02 the weights pack to 2,051,268 bytes, over the
    /// issue's 2 MB ceiling; 0.03 makes them 1,680,933.)
    pub prune: f64,
    /// How many draws of cross-validation folds calibration pools (see
    /// `corpus::evaluate::calibrate`). One: on the training split of 14,132 tools, with
    /// per-category thresholds, three draws fit the then shipped thresholds exactly as one does (Write 0.47, Execute 0.11, Destructive
    /// 0.35, Financial 0.15), and in cross-validation (each fold calibrated on three draws of its
    /// own) got 12,332 tools right against 12,352, letting 245 dangerous tools through against
    /// 253 and finding 123 Financial tools against 125: no gain for three times the work
    /// (`model cv draws=3`). With one offset, five draws pooled got 12,434 right, let 256
    /// through and found 131 (single draws 0 to 4: on average 12,428.4, 262.6 and 129.0); but on
    /// the held sets AA, AB and AC together 2,024 right against 2,022, 39 dangerous tools let
    /// through against 37 and 12 Financial tools found against 14, failing the rule written
    /// before they were measured (fitted offset 1.45 and Financial 0.11, against 1.40 and 0.07).
    pub calibration_draws: usize,
    /// For experiments: the first draw of folds calibration uses (0, the shipped one). Another
    /// draw is an equally valid calibration, so `model cv first_draw=N` for a few N shows how
    /// far the figures move with the draw alone: the noise a change must beat. For draws 0 to
    /// 4 of the shipped settings, cross-validated category 12,408 to 12,443 tools right of
    /// 14,132, dangerous tools let through 254 to 271 of 2,144, Financial found 125 to 137 of
    /// 184; draw 0 is the end of that spread with the fewest let through.
    pub calibration_first_draw: usize,
    /// How calibration turns probabilities into a category. Offsets: in 5-fold
    /// cross-validation on the training split (14,132 tools), 12,408 tools right against 12,352
    /// with thresholds, severity 12,075 against 12,017, Financial tools found 137 of 184
    /// against 125, letting 254 dangerous tools through against 253 (`model cv decision=X`).
    pub decision: DecisionKind,
    /// For experiments: no decision fitted, but this offset for the dangerous categories and
    /// this Financial threshold used as they are (`model cv fixed=1.4,0.07`). Two models
    /// compared at one decision differ only in their probabilities: a refitted decision moves
    /// along a flat stretch of its cost from one training run to the next, and that move can
    /// be larger than what a change of features does.
    pub fixed_decision: Option<(f64, f64)>,
    /// For experiments: fit the decision on the verdicts that ship (`model cv verdicts=1`): a
    /// tool the rules decide alone counts with their verdict, and the model's choice is raised
    /// to a hard rule's floor, as `Engine::classify` does. Off: every tool counts with the
    /// model's own choice. Off, because in cross-validation over calibration draws 0 to 4 it
    /// averaged 12,418.4 tools right of 14,132 against 12,428.4, let 258.8 dangerous tools
    /// through against 262.6 and found 127.2 Financial tools against 129.0: fewer let through,
    /// but fewer right and fewer Financial found, failing the rule written before measuring.
    pub calibrate_on_verdicts: bool,
    /// For experiments: one dangerous offset per stance of the rules (silent, Write, another
    /// verdict; `model cv stance=1`), fitted under the one cap, instead of one for all. Over
    /// calibration draws 0 to 4: on average 12,453.8 tools right against 12,428.4, severity
    /// 12,119.0 against 12,083.0, the training cost 1,962.2 against 1,986.6 (lower on every
    /// draw), but 264.0 dangerous tools let through against 262.6 and 128.4 Financial tools
    /// found against 129.0, so it failed the rule written before measuring it. With the cap
    /// at 0.12 to spend part of the gain on fewer let through (`stance=1 cap=0.12`, also
    /// written down before measuring): 12,421.8 right, 254.0 let through, 128.0 Financial;
    /// it failed again, on right and Financial. The two lie on a better trade between right
    /// and let through than the shipped fit; Financial found is where both fell short. Judged
    /// again by a second rule written before measuring, on the held sets it had never met
    /// (`MODEL_WEIGHTS=... model held`, AA to AD): 2,851 right against 2,845, dangerous let
    /// through 63 against 63, but 19 Financial tools found against 21 (its fit moves the
    /// Financial threshold from 0.07 to 0.13). Failed again, on Financial. Off.
    pub stance_offsets: bool,
    /// For experiments, with `stance_offsets`: a Financial threshold per stance too
    /// (`model cv stance=2`). Written down before measuring as the last try of stance offsets
    /// this round, to mend their Financial count: over draws 0 to 4, 12,446.4 right, 264.8
    /// dangerous let through and 126.8 Financial found: Financial fell further. Off.
    pub stance_financial: bool,
    /// The Financial threshold held at this value while the offsets (one, or one per stance)
    /// are fitted; none: fitted with them (`model cv financial=fit`). Shipped held at
    /// [`FINANCIAL_THRESHOLD`] since change J5b. Before that, for experiments only
    /// (`model cv financial=0.07`). With `stance_offsets` (`model cv stance=1 financial=0.07`): Judged by a rule written before measuring, on set AG (which no
    /// stance fit had met) and on all seven held sets: the offsets came out as before (1.40,
    /// 1.30, 1.65), AG got 446 tools right against 451 (cost 89 against 84), and the seven
    /// sets cost 716 against 710. Failed; off.
    pub financial_at: Option<f64>,
    /// For experiments: an offset of its own for Execute (`model cv execute=1`), fitted with the
    /// shared offset of Destructive and Financial on one grid under the one cap, after the
    /// shared fit (see `corpus::evaluate::fit_execute_offset`). Judged by a rule written before
    /// set AJ was labelled (catalog/corpus/preregistrations.md): on AJ, cost lower, right not
    /// fewer, at most two more dangerous tools let through. The fit moved Execute's offset
    /// from 1.55 to 1.45 and the shared one to 1.80 (Financial 0.13 to 0.15); on AJ (935 tools)
    /// 777 right against 780, 17 let through against 16, cost 175 against 171: fewer Reads
    /// and Writes called Execute (74 against 82), more called Destructive (39 against 29).
    /// Failed; off.
    pub execute_offset: bool,
    /// For experiments: with N above one, the Financial threshold is the median of the N
    /// thresholds fitted, each as the shipped fit makes it, on calibration draws
    /// `calibration_first_draw` onwards; then the dangerous offset is refitted on the first
    /// draw with the threshold held there (`model cv financial_median=5`). Change F of
    /// catalog/corpus/preregistrations.md: the refit threshold moved between 0.07 and 0.15 from
    /// one training run to the next, and that move, not the change under test, made most of
    /// each difference in tools right. Judged on set AM by a rule written before it was
    /// labelled: 753 tools right against 754, cost 111 against 109, Financial 22 of 27 against
    /// 23 (its draws gave 0.09, 0.11, 0.17, 0.13 and 0.13). Failed; off.
    pub financial_median_of: usize,
    /// For experiments: a tool whose label names a close call of another category counts this
    /// share towards that category and the rest towards its label (cross-entropy against that
    /// soft target; `model train OUT close_call=0.25`). Zero: labels are hard. Change K of
    /// catalog/corpus/preregistrations.md: a third of the frozen split's misses are the
    /// reading the labeller named as the close call. Judged on set AO by a rule written before
    /// it was labelled: 1,051 tools right against 1,050, cost 145 against 145 (a tie passes);
    /// on AM and AN, which neither had trained on, 2,335 against 2,320, cost 365 against 383.
    /// But its refit Financial threshold falls to 0.07 (offset 1.50), and on the 16 shared
    /// servers it gets 227 of 235 (96.6%, under the 98% bar: paddle's product, address
    /// and previews called Financial, git_reset and write_file Destructive). With the
    /// threshold held at 0.13 (`financial=0.13`) still 228 of 235: the soft labels lift
    /// dangerous readings of Write tools generally, not only Financial. Off.
    pub close_call_share: f64,
    /// For experiments, with `close_call_share`: only a close call less dangerous than the
    /// label (in `Category`'s order) counts (`model train OUT close_call=0.25
    /// close_call_down=1`). Change K2 of catalog/corpus/preregistrations.md: K's soft labels
    /// lifted Write tools' dangerous readings, since most close calls named on Write labels
    /// are Destructive or Execute; softening only downwards keeps K's doubt about the
    /// dangerous labels without teaching the model that Write tools might be dangerous.
    /// Trained on J5's corpus before set AP had a label, it refit the offset to 1.80 (shipped
    /// 1.55) and the Financial threshold to 0.09: the softer dangerous class is answered by a
    /// larger offset, which lifts Write tools again, and the 16 shared servers fell to 229 of
    /// 235, under their 98% bar. Not put to a judgement; off.
    pub close_call_down_only: bool,
}

/// How calibration turns probabilities into a category (see `corpus::evaluate::calibrate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecisionKind {
    /// Each category chosen outright at its own probability, the most dangerous first.
    Thresholds,
    /// The dangerous categories' log-probabilities weighed up by one offset, then the
    /// likeliest; Financial also outright at its own probability.
    Offsets,
    /// For experiments: as `Offsets`, but the offset weighs the three dangerous categories'
    /// pooled probability against that of Read and Write (see `Decision::pooled`; `model cv
    /// decision=pooled`). Judged by a rule written before set AH was labelled: on AH, cost
    /// lower, at most two more dangerous tools let through, as many Financial tools found; and
    /// on AA to AG together, cost not higher. Fitted offset 1.35 and Financial 0.09 (against
    /// 1.40 and 0.07). On AH it made the same count, 499 of 594 right, 15 let through, 6
    /// Financial found, cost 110 (two verdicts trade places): failed, on the first clause. On
    /// AA to AG: 4,570 right against 4,559, 120 let through against 125, 46 Financial found
    /// against 49, cost 696 against 710. In cross-validation, draws 0 to 2: 12,418, 12,442 and
    /// 12,415 right, 262, 265 and 259 let through, 130, 128 and 128 Financial found (shipped,
    /// draws 0 to 4 on average: 12,428.4, 262.6, 129.0). Off.
    Pooled,
}

/// The share of the Execute, Destructive and Financial tools that the fitted decision may call
/// Read or Write: one in eight.
///
/// The decision is fitted at this fixed point of the trade between getting most tools right
/// and letting few dangerous ones through, rather than wherever a cost weighs the two equal:
/// the cost of a dangerous miss puts that point on a flat stretch, so a rule change that fixed
/// a few tools moved it along the stretch, trading tens of dangerous tools for a like number of
/// others. With the share fixed, a change shows as more or fewer tools right at the same risk.
///
/// What other shares would give, by nested cross-validation on an earlier training split, with
/// per-category thresholds (category right, and dangerous tools called Read or Write): 0.15: 90.5%, 12.8%; 0.125: 90.1%, 11.6%;
/// 0.10: 88.8%, 9.1%; 0.08: 86.9%, 7.7%; 0.06: 84.4%, 5.9% (`model cv cap=X`).
pub const DANGER_CAP: f64 = 0.125;

/// The Financial threshold the shipped decision holds while its offset is fitted.
///
/// Fitted afresh, it moved between 0.07 and 0.17 from one training run to the next (change F's
/// five calibration draws alone gave 0.09 to 0.17), and whenever it fell to 0.09 or below,
/// paddle's previews and GitHub's `transfer_repository_ownership` were called Financial and the
/// 16 shared servers fell under their 98% bar. Change J5b of catalog/corpus/preregistrations.md
/// held it at 0.13, the value then shipped, when set AO joined training; judged on set AP by a
/// rule written before AP was labelled: 1,022 tools right against 1,010, cost 241 against 254,
/// the shared servers 231 of 235. (AO joined with the threshold fitted, J5, refit it to 0.09
/// and failed that bar, 230 of 235.)
pub const FINANCIAL_THRESHOLD: f64 = 0.13;

/// The key prefixes of the WordNet word classes (`super::classes`), left out of training by
/// default. Change K1 (catalog/corpus/preregistrations.md) trained with them: on sets AW and AX
/// pooled, 1,482 tools right against the shipped weights' 1,472 and cost 335 against 340, its
/// pre-registered pass, but 23 dangerous tools let through against 18, and one hand-written
/// case of tests/accuracy.rs (a repository's ownership transferred, called Financial through
/// the possession noun 'ownership') failed with them, so they did not ship. Change K4 gave
/// classes only to words met on fewer than `known_servers` training servers or not at all (the
/// form `model train OUT classes=1` trains now): on sets AY and AZ, 793 right against 792 and
/// cost 177 against 179, but the same case failed ('ownership' is in no training tool's name),
/// so it did not ship either.
pub const WORD_CLASS_PLACES: &[&str] = &[
    CLASS_PLACES[0].prefix(),
    CLASS_PLACES[1].prefix(),
    CLASS_PLACES[2].prefix(),
];

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            l2: 1.0,
            min_servers: 1,
            balance: 0.5,
            server_power: 0.5,
            iterations: 400,
            drop: WORD_CLASS_PLACES,
            known_servers: 2,
            danger_cap: DANGER_CAP,
            prune: 0.02,
            calibration_draws: 1,
            calibration_first_draw: 0,
            decision: DecisionKind::Offsets,
            fixed_decision: None,
            calibrate_on_verdicts: false,
            stance_offsets: false,
            stance_financial: false,
            financial_at: Some(FINANCIAL_THRESHOLD),
            execute_offset: false,
            financial_median_of: 0,
            close_call_share: 0.0,
            close_call_down_only: false,
        }
    }
}

const K: usize = CLASSES.len();

/// Fits a model to `examples`.
pub fn train(examples: &[Example], settings: Settings) -> ModelText {
    // `classed`: the own keys of the words with classes, which a running model must find to
    // know it met them: kept whatever their spread (left out, the word would look unmet and
    // take its classes).
    let (keys, classed) = resolved_keys(examples, &settings);
    // The vocabulary: keys seen on enough servers, in sorted order.
    let mut servers_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (e, keys) in examples.iter().zip(&keys) {
        for k in keys {
            servers_of.entry(k.as_ref()).or_default().insert(&e.server);
        }
    }
    let vocab: Vec<&str> = servers_of
        .iter()
        .filter(|(_, s)| s.len() >= settings.min_servers)
        .filter(|(k, _)| {
            let prefix = k.split(':').next().unwrap_or_default();
            !settings.drop.iter().any(|d| {
                if d.contains(':') {
                    k.starts_with(d)
                } else {
                    *d == prefix
                }
            })
        })
        .map(|(k, _)| *k)
        .collect();
    let index: BTreeMap<&str, u32> = vocab
        .iter()
        .enumerate()
        .map(|(i, k)| (*k, i as u32))
        .collect();
    let mut rows: Vec<Vec<u32>> = keys
        .iter()
        .map(|keys| {
            let mut r: Vec<u32> = keys
                .iter()
                .filter_map(|k| index.get(k.as_ref()).copied())
                .collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    let mut labels: Vec<usize> = examples.iter().map(|e| class_index(e.label)).collect();
    let mut counts = [0usize; K];
    for &y in &labels {
        counts[y] += 1;
    }
    let mean = examples.len() as f64 / K as f64;
    let class_weight: [f64; K] = std::array::from_fn(|c| {
        if counts[c] == 0 {
            0.0
        } else {
            (mean / counts[c] as f64).powf(settings.balance)
        }
    });
    let mut per_server: BTreeMap<&str, usize> = BTreeMap::new();
    for e in examples {
        *per_server.entry(&e.server).or_default() += 1;
    }
    let mean_tools = examples.len() as f64 / per_server.len().max(1) as f64;
    let mut weights: Vec<f64> = examples
        .iter()
        .zip(&labels)
        .map(|(e, &y)| {
            let n = per_server[e.server.as_str()] as f64;
            class_weight[y] * (mean_tools / n).powf(settings.server_power)
        })
        .collect();
    // A close call counts twice: `close_call_share` of the example's weight towards the named
    // category, the rest towards the label (the soft target's cross-entropy, term by term).
    let share = settings.close_call_share;
    if share > 0.0 {
        for (i, e) in examples.iter().enumerate() {
            let counts =
                |c: &Category| *c != e.label && (!settings.close_call_down_only || *c < e.label);
            if let Some(c) = e.close_call.filter(counts) {
                rows.push(rows[i].clone());
                labels.push(class_index(c));
                weights.push(weights[i] * share);
                weights[i] *= 1.0 - share;
            }
        }
    }
    let problem = Problem {
        rows: &rows,
        labels: &labels,
        weights: &weights,
        features: vocab.len(),
        l2: settings.l2,
    };
    let mut x = vec![0.0; (vocab.len() + 1) * K];
    lbfgs(&problem, &mut x, settings.iterations);
    let bias: [f64; K] = std::array::from_fn(|c| x[vocab.len() * K + c]);
    let weights = vocab
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let w: [f64; K] = std::array::from_fn(|c| x[i * K + c]);
            (k.to_string(), w)
        })
        .filter(|(k, w)| spread(w) >= settings.prune || classed.contains(k.as_str()))
        .collect::<Vec<_>>();
    let kept = weights.len();
    ModelText {
        bias,
        weights,
        temperature: 1.0,
        decision: super::weights::Decision::thresholds(super::weights::DEFAULT_THRESHOLDS),
        comment: format!(
            "multinomial logistic regression; {} examples, {} features; l2 {}, features on at least {} servers, pruned below a spread of {}, class balance {}, server weight power {}",
            examples.len(),
            kept,
            settings.l2,
            settings.min_servers,
            settings.prune,
            settings.balance,
            settings.server_power
        ),
    }
    .rounded()
}

/// Whether `settings` trains any word-class key.
fn trains_classes(settings: &Settings) -> bool {
    !WORD_CLASS_PLACES.iter().all(|p| settings.drop.contains(p))
}

/// Whether `key` is a word's own key that says whether a model has met the word.
fn is_class_source(key: &str) -> bool {
    CLASS_SOURCES.iter().any(|p| {
        key.strip_prefix(p.prefix())
            .is_some_and(|k| k.starts_with(':'))
    })
}

/// The keys training reads of each example. Without word classes, the keys as they are (a
/// class key's source cut off; `drop` leaves the class out). With them, as a running model
/// reads them: a word's class keys only when its own key (`n:`, `dl:`) is on fewer than
/// `known_servers` servers, and then its own key spelled as a rare word's (`nr:`, `dlr:`), which
/// the model looks up only for a word it has not met as common. Also the own keys of every
/// word with classes (none without classes).
fn resolved_keys<'a>(
    examples: &'a [Example],
    settings: &Settings,
) -> (Vec<Vec<Cow<'a, str>>>, BTreeSet<&'a str>) {
    let plain = |e: &'a Example| e.keys.iter().map(|k| split_source(k).0);
    if !trains_classes(settings) {
        let keys = examples
            .iter()
            .map(|e| plain(e).map(Cow::Borrowed).collect())
            .collect();
        return (keys, BTreeSet::new());
    }
    let mut servers_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in examples {
        for k in plain(e).filter(|k| is_class_source(k)) {
            servers_of.entry(k).or_default().insert(&e.server);
        }
    }
    let met = |k: &str| servers_of.get(k).map_or(0, BTreeSet::len) >= settings.known_servers;
    let mut every_classed = BTreeSet::new();
    let keys = examples
        .iter()
        .map(|e| {
            let classed: BTreeSet<&str> = e.keys.iter().filter_map(|k| split_source(k).1).collect();
            let keys = e
                .keys
                .iter()
                .filter_map(|k| match split_source(k) {
                    (k, Some(source)) => (!met(source)).then_some(Cow::Borrowed(k)),
                    (k, None) if classed.contains(k) && !met(k) => rare_spelling(k).map(Cow::Owned),
                    (k, None) => Some(Cow::Borrowed(k)),
                })
                .collect();
            every_classed.extend(classed);
            keys
        })
        .collect();
    (keys, every_classed)
}

/// A word's own key (`n:erase`) spelled as the key of a word met rarely (`nr:erase`).
pub fn rare_spelling(key: &str) -> Option<String> {
    CLASS_SOURCES.iter().find_map(|p| {
        let rest = key.strip_prefix(p.prefix())?.strip_prefix(':')?;
        Some(format!("{}:{rest}", p.rare()?.prefix()))
    })
}

/// How far a feature's farthest weight is from the mean of its weights: how much it can move
/// one category against the others.
fn spread(w: &[f64; K]) -> f64 {
    let mean = w.iter().sum::<f64>() / K as f64;
    w.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max)
}

/// A category's row in the weights.
pub fn class_index(c: Category) -> usize {
    CLASSES
        .iter()
        .position(|&k| k == c)
        .expect("every category is a class")
}

/// The objective: weighted cross-entropy plus the L2 penalty. Weights are laid out feature by
/// feature, `K` per feature, then the `K` biases.
struct Problem<'a> {
    rows: &'a [Vec<u32>],
    labels: &'a [usize],
    /// Each example's weight (its class's and its server's).
    weights: &'a [f64],
    features: usize,
    l2: f64,
}

impl Problem<'_> {
    /// The objective at `x`, with its gradient written to `g`.
    fn eval(&self, x: &[f64], g: &mut [f64]) -> f64 {
        g.iter_mut().for_each(|v| *v = 0.0);
        let bias = self.features * K;
        let mut loss = 0.0;
        for ((row, &y), &w) in self.rows.iter().zip(self.labels).zip(self.weights) {
            let mut z: [f64; K] = std::array::from_fn(|c| x[bias + c]);
            for &f in row {
                let base = f as usize * K;
                for (c, zc) in z.iter_mut().enumerate() {
                    *zc += x[base + c];
                }
            }
            let max = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let mut sum = 0.0;
            for zc in &mut z {
                *zc = (*zc - max).exp();
                sum += *zc;
            }
            loss -= w * (z[y] / sum).ln();
            for (c, zc) in z.iter().enumerate() {
                let d = w * (zc / sum - if c == y { 1.0 } else { 0.0 });
                g[bias + c] += d;
                for &f in row {
                    g[f as usize * K + c] += d;
                }
            }
        }
        for i in 0..bias {
            loss += 0.5 * self.l2 * x[i] * x[i];
            g[i] += self.l2 * x[i];
        }
        loss
    }
}

/// Minimises the problem from `x` with limited-memory BFGS (memory 10) and a backtracking line
/// search. Written here rather than taken from an optimisation crate: it is fifty lines, and
/// the crates that have it bring a large generic framework for this one call.
fn lbfgs(p: &Problem, x: &mut [f64], iterations: usize) {
    const M: usize = 10;
    let n = x.len();
    let mut g = vec![0.0; n];
    let mut f = p.eval(x, &mut g);
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let mut x_new = vec![0.0; n];
    let mut g_new = vec![0.0; n];
    for _ in 0..iterations {
        // The search direction: -H g, by the two-loop recursion.
        let mut d: Vec<f64> = g.iter().map(|v| -v).collect();
        let mut alpha = vec![0.0; s_hist.len()];
        for i in (0..s_hist.len()).rev() {
            let rho = 1.0 / dot(&y_hist[i], &s_hist[i]);
            alpha[i] = rho * dot(&s_hist[i], &d);
            axpy(-alpha[i], &y_hist[i], &mut d);
        }
        if let (Some(s), Some(y)) = (s_hist.last(), y_hist.last()) {
            let gamma = dot(s, y) / dot(y, y);
            d.iter_mut().for_each(|v| *v *= gamma);
        } else {
            let norm = dot(&g, &g).sqrt().max(1e-12);
            d.iter_mut().for_each(|v| *v /= norm);
        }
        for i in 0..s_hist.len() {
            let rho = 1.0 / dot(&y_hist[i], &s_hist[i]);
            let beta = rho * dot(&y_hist[i], &d);
            axpy(alpha[i] - beta, &s_hist[i], &mut d);
        }
        let slope = dot(&g, &d);
        if slope >= 0.0 {
            // Not a descent direction: start the memory again along the gradient.
            s_hist.clear();
            y_hist.clear();
            continue;
        }
        let mut step = 1.0;
        let mut f_new;
        loop {
            for i in 0..n {
                x_new[i] = x[i] + step * d[i];
            }
            f_new = p.eval(&x_new, &mut g_new);
            if f_new <= f + 1e-4 * step * slope || step < 1e-10 {
                break;
            }
            step *= 0.5;
        }
        let s: Vec<f64> = (0..n).map(|i| x_new[i] - x[i]).collect();
        let y: Vec<f64> = (0..n).map(|i| g_new[i] - g[i]).collect();
        let converged = (f - f_new).abs() <= 1e-9 * f.abs().max(1.0);
        x.copy_from_slice(&x_new);
        g.copy_from_slice(&g_new);
        f = f_new;
        if converged {
            break;
        }
        if dot(&s, &y) > 1e-12 {
            if s_hist.len() == M {
                s_hist.remove(0);
                y_hist.remove(0);
            }
            s_hist.push(s);
            y_hist.push(y);
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(server: &str, keys: &[&str], label: Category) -> Example {
        Example {
            server: server.into(),
            keys: keys.iter().map(|k| k.to_string()).collect(),
            label,
            rules_verdict: None,
            rules_decide: None,
            floor: None,
            close_call: None,
        }
    }

    #[test]
    fn learns_separable_words_and_drops_one_server_words() {
        let mut examples = Vec::new();
        for s in ["a", "b", "c"] {
            examples.push(ex(
                s,
                &["n0:delet", &format!("n:only{s}")],
                Category::Destructive,
            ));
            examples.push(ex(s, &["n0:list"], Category::Read));
            examples.push(ex(s, &["n0:creat"], Category::Write));
        }
        let two = Settings {
            min_servers: 2,
            ..Settings::default()
        };
        let m = train(&examples, two);
        assert!(m.weights.iter().all(|(k, _)| !k.starts_with("n:only")));
        let delete = &m.weights.iter().find(|(k, _)| k == "n0:delet").unwrap().1;
        assert!(delete[class_index(Category::Destructive)] > delete[class_index(Category::Read)]);
        // Deterministic.
        let again = train(&examples, two);
        assert_eq!(m.to_text(), again.to_text());
    }

    #[test]
    fn classes_stand_in_only_for_words_on_too_few_servers() {
        // "erase" is on one server: its own key is spelled as a rare word's and its class stays;
        // "delete" is on three: its key stays, its class goes. Without classes, keys stay as
        // they are.
        let mut examples = vec![ex(
            "a",
            &["n:eras", "wc:v+change@n:eras", "n0:eras"],
            Category::Destructive,
        )];
        for s in ["a", "b", "c"] {
            examples.push(ex(
                s,
                &["n:delet", "wc:v+change@n:delet", "n0:delet"],
                Category::Destructive,
            ));
            examples.push(ex(
                s,
                &["n:list", "wc:v+communication@n:list"],
                Category::Read,
            ));
        }
        let on = Settings {
            drop: &[],
            ..Settings::default()
        };
        let (keys, classed) = resolved_keys(&examples, &on);
        assert_eq!(keys[0], ["nr:eras", "wc:v+change", "n0:eras"]);
        assert_eq!(keys[1], ["n:delet", "n0:delet"]);
        assert_eq!(
            classed.into_iter().collect::<Vec<_>>(),
            ["n:delet", "n:eras", "n:list"]
        );
        let (off, none) = resolved_keys(&examples, &Settings::default());
        assert_eq!(off[0], ["n:eras", "wc:v+change", "n0:eras"]);
        assert!(none.is_empty());
        let m = train(&examples, Settings { prune: 10.0, ..on });
        // A met word's own key stays whatever its spread, so that a running model knows it met
        // the word; other keys are pruned as usual.
        let kept: Vec<&str> = m.weights.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kept, ["n:delet", "n:list"]);
    }

    #[test]
    fn features_that_move_no_category_are_pruned() {
        // A row's spread: how far its farthest weight is from the row's mean.
        assert!(spread(&[0.01, 0.0, 0.0, 0.0, 0.0]) < 0.02);
        assert!(spread(&[0.5, 0.5, 0.5, 0.5, 0.5]) == 0.0);
        assert!(spread(&[0.0, 0.0, 0.0, 0.5, 0.0]) >= 0.02);
        let examples: Vec<Example> = ["a", "b", "c"]
            .iter()
            .flat_map(|s| {
                [
                    ex(s, &["n0:delet"], Category::Destructive),
                    ex(s, &["n0:list"], Category::Read),
                ]
            })
            .collect();
        let with = |prune: f64| {
            train(
                &examples,
                Settings {
                    prune,
                    ..Settings::default()
                },
            )
            .weights
            .len()
        };
        assert_eq!(with(0.0), 2);
        assert_eq!(with(100.0), 0);
    }

    /// How far `key`'s weights lean to Execute over Write, trained on `examples` so.
    fn execute_over_write(examples: &[Example], key: &str, settings: Settings) -> f64 {
        let m = train(examples, settings);
        let w = &m.weights.iter().find(|(k, _)| k == key).unwrap().1;
        w[class_index(Category::Execute)] - w[class_index(Category::Write)]
    }

    #[test]
    fn a_named_close_call_moves_weight_towards_it_only_when_asked() {
        // "n0:stop" is labelled Write everywhere, each time a close call against Execute.
        let examples: Vec<Example> = ["a", "b", "c"]
            .iter()
            .flat_map(|s| {
                [
                    Example {
                        close_call: Some(Category::Execute),
                        ..ex(s, &["n0:stop"], Category::Write)
                    },
                    ex(s, &["n0:run"], Category::Execute),
                    ex(s, &["n0:list"], Category::Read),
                ]
            })
            .collect();
        let lean = |share: f64| {
            let settings = Settings {
                close_call_share: share,
                ..Settings::default()
            };
            execute_over_write(&examples, "n0:stop", settings)
        };
        let (hard, soft) = (lean(0.0), lean(0.25));
        assert!(hard < soft, "hard {hard}, soft {soft}");
        // Still Write's word: a quarter does not outvote three quarters.
        assert!(soft < 0.0, "soft {soft}");
    }

    #[test]
    fn down_only_close_calls_soften_a_label_towards_a_milder_category_alone() {
        // "n0:stop" is labelled Write, a close call against Execute (more dangerous);
        // "n0:kill" is labelled Execute, a close call against Write (milder).
        let examples: Vec<Example> = ["a", "b", "c"]
            .iter()
            .flat_map(|s| {
                [
                    Example {
                        close_call: Some(Category::Execute),
                        ..ex(s, &["n0:stop"], Category::Write)
                    },
                    Example {
                        close_call: Some(Category::Write),
                        ..ex(s, &["n0:kill"], Category::Execute)
                    },
                    ex(s, &["n0:list"], Category::Read),
                ]
            })
            .collect();
        let lean = |key: &str, share: f64, down: bool| {
            let settings = Settings {
                close_call_share: share,
                close_call_down_only: down,
                ..Settings::default()
            };
            execute_over_write(&examples, key, settings)
        };
        // The milder close call softens, as with every close call counted.
        assert!(lean("n0:kill", 0.25, true) < lean("n0:kill", 0.0, false));
        // The more dangerous one does not: the Write label stays nearer the hard one than
        // where every close call counted (it moves a little, as the classes' sizes change).
        let (hard, down) = (lean("n0:stop", 0.0, false), lean("n0:stop", 0.25, true));
        let all = lean("n0:stop", 0.25, false);
        assert!(
            down - hard < all - down,
            "hard {hard}, down {down}, all {all}"
        );
    }
}
