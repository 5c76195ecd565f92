//! Trains and measures the learned classifier on the corpus in `catalog/corpus/`.
//!
//!     cargo run --release --example model -- train [OUT]   write the weights (default catalog/model/weights.tsv;
//!                                                          settings after OUT, key=value, for experiments)
//!     cargo run --release --example model -- cv            cross-validate on the training split only
//!     cargo run --release --example model -- cv-spread [N]  the same over calibration draws 0..N (default 5), and the
//!                                                          mean: judge a change against the spread the draw alone makes
//!     cargo run --release --example model -- test          the frozen test split's figures (report them; never tune on them)
//!     cargo run --release --example model -- score DIR     the shipped engine on every server of another labelled set
//!                                                          (laid out as catalog/corpus is), e.g. one labelled before it joins
//!     cargo run --release --example model -- held [SET...] every held set in catalog/corpus/held (or those named)
//!                                                          scored so, and their sum
//!     cargo run --release --example model -- held-misses [SET...]  the tools of those sets the engine gets wrong,
//!                                                          with the labeller's reason (sets already judged only)
//!
//! `scripts/train-model.sh` runs `train`. `MODEL_WEIGHTS=FILE` has `test`, `score`, `held`,
//! `speed` and `verdicts` run on other weights (made by `train OUT key=value...`), without
//! building them into the binary: how a change is judged before anything ships.
//! `MODEL_DANGER_EVIDENCE=MARGIN` (or `off`) does the same for the engine's
//! `DANGER_EVIDENCE_MARGIN` (change D2), and `MODEL_DANGER_UNHEARD=d2` (or `shipped`) for its
//! `DANGER_EVIDENCE_UNHEARD` (`d2`: as before change D3, the argument count only).
//! `MODEL_RULES_DECIDE=CONFIDENCE` (or `never`) sets the engine's `RULES_DECIDE_FROM`, how sure
//! the rules must be to decide a verdict without the model (change V1).

use mcprisk::classify::model::train::{self, Example};
use mcprisk::classify::model::weights::ModelText;
use mcprisk::classify::model::Model;
use mcprisk::classify::{engine, Engine, RuleFile};
use mcprisk::corpus::evaluate::{self, Scored};
use mcprisk::corpus::Corpus;
use std::process::ExitCode;

/// `println!` that ends the program quietly when its reader has gone (`model misses | head`)
/// instead of panicking on the broken pipe; any other write error (a full disk under a
/// redirect) still fails loudly, so a cut-off verdict file is never taken for a whole one.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            panic!("writing to stdout: {e}");
        }
    }};
}

/// The allocator the mcprisk binary uses, so `speed` measures what users get.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The setting the environment variable `name` gives, when it is set: a number (`Some`), or
/// the word `off` that turns the setting off (`None`); anything else is an error naming both.
fn number_or_word<T: std::str::FromStr>(
    name: &str,
    number: &str,
    off: &str,
) -> Result<Option<Option<T>>, String>
where
    T::Err: std::fmt::Display,
{
    let Some(v) = std::env::var_os(name) else {
        return Ok(None);
    };
    let shown = v.to_string_lossy();
    if shown == off {
        return Ok(Some(None));
    }
    shown
        .parse::<T>()
        .map(|n| Some(Some(n)))
        .map_err(|e| format!("{name}={shown}: {e} ({number}, or \"{off}\")"))
}

/// The engine with the shipped weights, or with those of the file `MODEL_WEIGHTS` names; with
/// `MODEL_DANGER_EVIDENCE=MARGIN` (or `off`), with that margin in place of
/// [`mcprisk::classify::engine::DANGER_EVIDENCE_MARGIN`].
fn with_weights() -> Result<Engine, String> {
    let mut engine = Engine::new(RuleFile::embedded());
    if let Some(margin) = number_or_word::<f32>("MODEL_DANGER_EVIDENCE", "a margin", "off")? {
        eprintln!("dangerous verdicts need named evidence: {margin:?}");
        engine = engine.with_danger_evidence_margin(margin);
    }
    if let Some(v) = std::env::var_os("MODEL_DANGER_UNHEARD") {
        engine = match v.to_str() {
            Some("d2") => engine.with_danger_evidence_unheard(engine::DANGER_EVIDENCE_UNHEARD_D2),
            Some("shipped") => engine.with_danger_evidence_unheard(engine::DANGER_EVIDENCE_UNHEARD),
            _ => return Err(format!("MODEL_DANGER_UNHEARD={v:?}: d2 or shipped")),
        };
        eprintln!("places unheard as danger evidence: {v:?}");
    }
    if let Some(from) = number_or_word::<f64>("MODEL_RULES_DECIDE", "a confidence", "never")? {
        eprintln!("the rules decide alone from: {from:?}");
        engine = engine.with_rules_decide_from(from);
    }
    let Some(path) = std::env::var_os("MODEL_WEIGHTS") else {
        return Ok(engine);
    };
    let shown = std::path::Path::new(&path).display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{shown}: {e}"))?;
    let weights = ModelText::parse(&text).map_err(|e| format!("{shown}: {e}"))?;
    eprintln!("on the weights of {shown}, not the shipped ones");
    // One model for the life of this run, as the shipped one is.
    let model: &'static Model = Box::leak(Box::new(Model::from_text(&weights)));
    Ok(engine.with_model(Some(model)))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // MODEL_CORPUS names another corpus directory (for experiments such as a learning curve).
    let corpus = match std::env::var_os("MODEL_CORPUS") {
        Some(dir) => Corpus::load(std::path::Path::new(&dir)),
        None => Corpus::shipped(),
    };
    let corpus = match corpus {
        Ok(c) => c,
        Err(e) => {
            eprintln!("corpus: {e}");
            return ExitCode::from(2);
        }
    };
    let rules = Engine::new(RuleFile::embedded()).with_model(None);
    let engine = match with_weights() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    match args.first().map(String::as_str) {
        Some("train") => {
            let out = args
                .get(1)
                .cloned()
                .unwrap_or_else(|| "catalog/model/weights.tsv".into());
            // Settings other than the defaults (key=value after OUT) are for experiments; the
            // shipped weights are trained with the defaults.
            let m = match args.get(2..).filter(|a| !a.is_empty()) {
                Some(rest) => evaluate::train_with(&corpus, &rules, settings_from(rest)),
                None => evaluate::train_shipped(&corpus, &rules),
            };
            std::fs::write(&out, m.to_text()).expect("write the weights");
            eprintln!("wrote {out}: {} features", m.weights.len());
        }
        Some("cv") => {
            let settings = settings_from(&args[1..]);
            let scored = evaluate::cross_validate(&corpus, &rules, settings, 5);
            report(
                "training split, 5-fold cross-validation by server",
                &scored,
                &corpus,
            );
        }
        Some("cv-spread") => {
            // The same cross-validation over several draws of calibration folds: how far the
            // figures move with the draw alone, and their mean, to compare changes by.
            let (draws, rest) = match args.get(1).and_then(|a| a.parse::<usize>().ok()) {
                Some(n) => (n.max(1), &args[2..]),
                None => (5, &args[1..]),
            };
            let settings = settings_from(rest);
            let mut sums = [0.0; 5];
            for d in 0..draws {
                let s = train::Settings {
                    calibration_first_draw: d,
                    ..settings
                };
                let f = evaluate::Figures::of(&evaluate::cross_validate(&corpus, &rules, s, 5));
                let row = spread_row(&f);
                out!(
                    "draw {d}: right {}, severity {}, dangerous let through {} of {}, Financial found {} of {}, cost {}",
                    row[0], row[1], row[2], f.dangerous, row[3], f.financial, row[4]
                );
                for (sum, v) in sums.iter_mut().zip(row) {
                    *sum += v as f64;
                }
            }
            let m = sums.map(|v| v / draws as f64);
            out!(
                "mean of {draws}: right {:.1}, severity {:.1}, dangerous let through {:.1}, Financial found {:.1}, cost {:.1}",
                m[0], m[1], m[2], m[3], m[4]
            );
        }
        Some("cv-verdicts") => {
            // Training split only: every tool's cross-validated verdict and which part decided.
            let scored = evaluate::cross_validate(&corpus, &rules, settings_from(&args[1..]), 5);
            for s in &scored {
                out!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    s.server,
                    s.tool,
                    s.label,
                    s.rules_category,
                    s.rules_confidence,
                    s.category,
                    if s.by_model { "model" } else { "rules" }
                );
            }
        }
        Some("misses") => {
            // Training split only: where the rules alone and the cross-validated engine miss.
            let scored = evaluate::cross_validate(&corpus, &rules, settings_from(&args[1..]), 5);
            let why = label_reasons(&corpus);
            for s in scored
                .iter()
                .filter(|s| s.category != s.label || s.rules_category != s.label)
            {
                out!(
                    "{}\t{}\tlabel {}\trules {}\tfinal {}\t{}",
                    s.server,
                    s.tool,
                    s.label,
                    s.rules_category,
                    s.category,
                    why(s)
                );
            }
        }
        Some("severity-misses") => {
            // Training split only: tools whose category the cross-validated engine gets right
            // but whose severity it does not (the step-ups of docs/classification.md).
            let scored = evaluate::cross_validate(&corpus, &rules, settings_from(&args[1..]), 5);
            let why = label_reasons(&corpus);
            for s in scored
                .iter()
                .filter(|s| s.category == s.label && s.severity != s.label_severity)
            {
                out!(
                    "{}\t{}\t{}\tlabel {}\tverdict {}\t{}",
                    s.server,
                    s.tool,
                    s.label,
                    s.label_severity,
                    s.severity,
                    why(s)
                );
            }
        }
        Some("test") => {
            let scored = evaluate::score_split(&corpus, &engine, true);
            report("frozen test split", &scored, &corpus);
        }
        Some("score") => {
            // Servers the shipped engine was neither trained nor tuned on, labelled blind and
            // laid out as the corpus is: both of their splits, as a reviewer would meet them.
            let Some(dir) = args.get(1) else {
                eprintln!("usage: model score DIR");
                return ExitCode::from(2);
            };
            // The corpus itself holds the frozen split, whose figures only `test` reports.
            let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog/corpus");
            if std::fs::canonicalize(dir).ok() == std::fs::canonicalize(&shipped).ok() {
                eprintln!("{dir} is the corpus: `model test` reports its frozen split");
                return ExitCode::from(2);
            }
            let other = match Corpus::load(std::path::Path::new(dir)) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("{dir}: {e}");
                    return ExitCode::from(2);
                }
            };
            let scored = score_every_server(&other, &engine);
            report(&format!("{dir}, every server"), &scored, &other);
        }
        Some("held") => {
            // Every held set (catalog/corpus/held/*), or only those named (`held AS AT`), scored
            // as `score` scores one, a row each and their sum: the counts a rule written before
            // measuring a change compares, pooled over the sets it names.
            let sets = match held_sets(&args[1..]) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            let mut sum = [0usize; 8];
            for (name, held) in &sets {
                let f = evaluate::Figures::of(&score_every_server(held, &engine));
                let row = spread_row(&f);
                let counts = [
                    f.tools,
                    row[0],
                    row[1],
                    row[2],
                    f.dangerous,
                    row[3],
                    f.financial,
                    row[4],
                ];
                out!("{name:<6}{}", held_row(&counts));
                for (s, c) in sum.iter_mut().zip(counts) {
                    *s += c;
                }
            }
            out!("{:<6}{}", "all", held_row(&sum));
        }
        Some("held-misses") => {
            // The tools of held sets (all, or those named) whose category the engine misses, with
            // the labeller's reason: for development on sets already judged, never on a set
            // kept to judge a change that is not yet decided.
            let sets = match held_sets(&args[1..]) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("{e}");
                    return ExitCode::from(2);
                }
            };
            for (name, held) in &sets {
                let why = label_reasons(held);
                for s in score_every_server(held, &engine)
                    .iter()
                    .filter(|s| s.category != s.label)
                {
                    out!(
                        "{name}\t{}\t{}\tlabel {}\trules {}\tfinal {}\t{:.2}\t{}",
                        s.server,
                        s.tool,
                        s.label,
                        s.rules_category,
                        s.category,
                        s.confidence,
                        why(s)
                    );
                }
            }
        }
        Some("speed") => {
            // Tools a second, rules alone and rules with the model, best of 40 passes.
            let tools: Vec<_> = corpus
                .split(false)
                .flat_map(|s| s.tools.iter().map(|t| t.tool.clone()))
                .collect();
            let with_model = &engine;
            let which = args.get(1).map(String::as_str).unwrap_or("both");
            for (name, engine) in [("rules alone", &rules), ("rules and model", with_model)]
                .into_iter()
                .filter(|(n, _)| which == "both" || (which == "rules") == (*n == "rules alone"))
            {
                let mut best = f64::MAX;
                for _ in 0..40 {
                    let t0 = std::time::Instant::now();
                    for t in &tools {
                        std::hint::black_box(engine.classify(t));
                    }
                    best = best.min(t0.elapsed().as_secs_f64());
                }
                out!("{name}: {:.0} tools/s", tools.len() as f64 / best);
            }
        }
        Some("verdicts") => {
            // Training split only: every verdict in full, to check that a change meant to
            // keep them (a speed-up) does.
            for s in corpus.split(false) {
                for t in &s.tools {
                    let v = engine.classify(&t.tool);
                    out!(
                        "{}\t{}\t{}\t{}\t{}\t{:?}\t{:?}\t{:?}",
                        s.id,
                        t.tool.name,
                        v.category,
                        v.severity,
                        v.confidence,
                        v.review,
                        v.evidence,
                        v.findings
                    );
                }
            }
        }
        Some("rules-verdicts") => {
            // Training split only: the rules' own verdict and evidence for every tool, to see
            // which rule a miss comes from (the engine's evidence leaves out the rules the
            // model overruled).
            for s in corpus.split(false) {
                for t in &s.tools {
                    let v = rules.classify(&t.tool);
                    out!(
                        "{}\t{}\t{}\t{}\t{:?}",
                        s.id,
                        t.tool.name,
                        v.category,
                        v.confidence,
                        v.evidence
                    );
                }
            }
        }
        Some("keys") => {
            for s in corpus.split(false) {
                for t in &s.tools {
                    let ex: Example = evaluate::example(&rules, &s.id, t);
                    out!(
                        "{}\t{}\t{}\t{}",
                        s.id,
                        t.tool.name,
                        ex.label,
                        ex.keys.join(" ")
                    );
                }
            }
        }
        _ => {
            eprintln!(
                "usage: model train [OUT [key=value...]] | cv [key=value...] | cv-spread [N [key=value...]] \
                 | cv-verdicts | misses | severity-misses | rules-verdicts | verdicts | keys | speed \
                 | test | score DIR | held [SET...] | held-misses [SET...]   (MODEL_CORPUS=DIR, MODEL_WEIGHTS=FILE: see the file's head)"
            );
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// The labeller's reason for each tool, looked up by a scored tool.
fn label_reasons<'c>(corpus: &'c Corpus) -> impl Fn(&Scored) -> &'c str + 'c {
    let label = label_of(corpus);
    move |s| label(s).map_or("", |l| l.why.as_str())
}

/// Each tool's label, looked up by a scored tool.
fn label_of<'c>(corpus: &'c Corpus) -> impl Fn(&Scored) -> Option<&'c mcprisk::corpus::Label> + 'c {
    let labels: std::collections::HashMap<(&str, &str), &mcprisk::corpus::Label> = corpus
        .servers
        .iter()
        .flat_map(|s| {
            s.tools
                .iter()
                .map(move |t| ((s.id.as_str(), t.tool.name.as_str()), &t.label))
        })
        .collect();
    move |s| labels.get(&(s.server.as_str(), s.tool.as_str())).copied()
}

fn settings_from(args: &[String]) -> train::Settings {
    let mut s = train::Settings::default();
    for a in args {
        let (k, v) = a.split_once('=').expect("settings are key=value");
        match k {
            "l2" => s.l2 = v.parse().unwrap(),
            "min" => s.min_servers = v.parse().unwrap(),
            "balance" => s.balance = v.parse().unwrap(),
            "server" => s.server_power = v.parse().unwrap(),
            "iter" => s.iterations = v.parse().unwrap(),
            "cap" => s.danger_cap = v.parse().unwrap(),
            "prune" => s.prune = v.parse().unwrap(),
            "draws" => s.calibration_draws = v.parse().unwrap(),
            "first_draw" => s.calibration_first_draw = v.parse().unwrap(),
            "verdicts" => s.calibrate_on_verdicts = v == "1",
            "execute" => s.execute_offset = v == "1",
            "financial_median" => {
                // The median replaces the held threshold.
                s.financial_median_of = v.parse().unwrap();
                s.financial_at = None;
            }
            "close_call" => s.close_call_share = v.parse().unwrap(),
            "close_call_down" => s.close_call_down_only = v == "1",
            "stance" => {
                s.stance_offsets = v == "1" || v == "2";
                s.stance_financial = v == "2";
            }
            "decision" => {
                s.decision = match v {
                    "thresholds" => train::DecisionKind::Thresholds,
                    "offsets" => train::DecisionKind::Offsets,
                    "pooled" => train::DecisionKind::Pooled,
                    _ => panic!("decision is thresholds, offsets or pooled"),
                }
            }
            "financial" if v == "fit" => s.financial_at = None,
            "financial" => s.financial_at = Some(v.parse().unwrap()),
            "fixed" => {
                let (offset, financial) = v.split_once(',').expect("fixed=OFFSET,FINANCIAL");
                s.fixed_decision = Some((offset.parse().unwrap(), financial.parse().unwrap()));
            }
            "classes" => {
                s.drop = if v == "1" {
                    &[]
                } else {
                    train::WORD_CLASS_PLACES
                }
            }
            "known" => s.known_servers = v.parse().unwrap(),
            "drop" => {
                s.drop = Box::leak(
                    v.split(',')
                        .map(|p| &*Box::leak(p.to_string().into_boxed_str()))
                        .collect::<Vec<&'static str>>()
                        .into_boxed_slice(),
                )
            }
            _ => panic!("unknown setting {k}"),
        }
    }
    s
}

/// The engine's verdicts on both splits of a labelled set nothing trained on.
fn score_every_server(set: &Corpus, engine: &Engine) -> Vec<Scored> {
    let mut scored = evaluate::score_split(set, engine, false);
    scored.extend(evaluate::score_split(set, engine, true));
    scored
}

/// The held sets in catalog/corpus/held, each by its name, in name order: all of them, or only
/// those `named` (an unknown name is an error).
fn held_sets(named: &[String]) -> Result<Vec<(String, Corpus)>, String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("catalog/corpus/held");
    let mut dirs: Vec<_> = std::fs::read_dir(&root)
        .map_err(|e| format!("{}: {e}", root.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    if let Some(missing) = named
        .iter()
        .find(|n| !dirs.iter().any(|p| p.ends_with(n.as_str())))
    {
        return Err(format!("no held set {missing} in {}", root.display()));
    }
    if !named.is_empty() {
        dirs.retain(|p| named.iter().any(|n| p.ends_with(n.as_str())));
    }
    dirs.iter()
        .map(|dir| {
            let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
            Corpus::load(dir)
                .map(|c| (name.unwrap_or_default(), c))
                .map_err(|e| format!("{}: {e}", dir.display()))
        })
        .collect()
}

/// Category right, severity right, dangerous tools called Read or Write, Financial tools found,
/// and the training step's cost (`evaluate::mistake_cost` summed), from a confusion matrix.
fn spread_row(f: &evaluate::Figures) -> [usize; 5] {
    use mcprisk::model::Category;
    let c = &f.confusion;
    let let_through: usize = c[2..].iter().map(|row| row[0] + row[1]).sum();
    let mut cost = 0.0;
    for (y, row) in c.iter().enumerate() {
        for (p, n) in row.iter().enumerate() {
            cost += evaluate::mistake_cost(Category::ALL[y], Category::ALL[p]) * *n as f64;
        }
    }
    [
        f.category_right,
        f.severity_right,
        let_through,
        c[4][4],
        cost as usize,
    ]
}

/// One row of `held`: tools, right, severity right, dangerous let through of all dangerous,
/// Financial found of all Financial, mistake cost.
fn held_row(c: &[usize; 8]) -> String {
    format!(
        "{} tools: right {}, severity {}, dangerous let through {} of {}, Financial found {} of {}, cost {}",
        c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]
    )
}

fn report(title: &str, scored: &[Scored], corpus: &Corpus) {
    out!("== {title}");
    let figures = evaluate::Figures::of(scored);
    out!("{}", figures.to_text().trim_end());
    agreed(scored, corpus);
    close_calls(scored, corpus);
    out!(
        "right: category {}, severity {}, of {}",
        figures.category_right,
        figures.severity_right,
        figures.tools
    );
    // Which part decided, and how often it was right.
    for (who, by_model) in [("rules sure", false), ("model", true)] {
        let part: Vec<&Scored> = scored.iter().filter(|s| s.by_model == by_model).collect();
        let right = part.iter().filter(|s| s.category == s.label).count();
        let rules_right = part.iter().filter(|s| s.rules_category == s.label).count();
        out!(
            "decided by {who}: {} tools, {:.1}% right (rules alone {:.1}%)",
            part.len(),
            percent(right, part.len()),
            percent(rules_right, part.len())
        );
    }
}

/// The figure the first measurement was stated in: of the tools labelled twice, how
/// often the two labellers agree, and how often the verdict matches where they do.
fn agreed(scored: &[Scored], corpus: &Corpus) {
    let seconds: std::collections::HashMap<(&str, &str), &mcprisk::corpus::Label> = corpus
        .servers
        .iter()
        .filter_map(|s| s.second.as_ref().map(|f| (s.id.as_str(), f)))
        .flat_map(|(id, f)| f.tools.iter().map(move |l| ((id, l.name.as_str()), l)))
        .collect();
    let (mut twice, mut agree, mut right, mut pairs, mut pairs_right) = (0, 0, 0, 0, 0);
    for s in scored {
        let Some(second) = seconds.get(&(s.server.as_str(), s.tool.as_str())) else {
            continue;
        };
        twice += 1;
        if second.category == s.label {
            agree += 1;
            right += usize::from(s.category == s.label);
            if second.severity == s.label_severity {
                pairs += 1;
                pairs_right += usize::from(s.category == s.label && s.severity == s.label_severity);
            }
        }
    }
    out!(
        "labelled twice: {twice} tools; the labellers agree on {agree} ({:.1}%), the verdict on {right} of those ({:.1}%); category and severity both, {pairs_right} of {pairs} ({:.1}%)",
        percent(agree, twice),
        percent(right, agree),
        percent(pairs_right, pairs)
    );
}

/// How many misses are the other reading the labeller named: the instructions ask for
/// "close call vs CATEGORY (...)" in the reason when a label was a close call, so such a miss is
/// a verdict the labeller weighed and found slightly less fitting, not one nobody would give.
/// Reported beside the figures, never counted as right.
fn close_calls(scored: &[Scored], corpus: &Corpus) {
    let label = label_of(corpus);
    let misses: Vec<&Scored> = scored.iter().filter(|s| s.category != s.label).collect();
    let named = misses
        .iter()
        .filter(|s| label(s).is_some_and(|l| l.names_close_call(s.category)))
        .count();
    out!(
        "misses that are the close call the labeller named: {named} of {} ({:.1}%)",
        misses.len(),
        percent(named, misses.len())
    );
}

fn percent(n: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        100.0 * n as f64 / of as f64
    }
}
