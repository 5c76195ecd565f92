//! The model's weights: the text file training writes (one feature a line, reviewable in a
//! diff) and the table a running classifier looks features up in.

use super::tokens::hash_key;
use crate::model::Category;
use std::fmt::Write as _;

/// The categories in the order of the weight columns.
pub const CLASSES: [Category; 5] = Category::ALL;
const K: usize = CLASSES.len();

/// The weights file as text: what training writes and the build embeds.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelText {
    /// One line on how it was made.
    pub comment: String,
    /// Probabilities are `softmax(logits / temperature)`; fitted so confidences are calibrated.
    pub temperature: f64,
    /// How its probabilities become a category.
    pub decision: Decision,
    /// Each class's bias.
    pub bias: [f64; K],
    /// Each feature key's weights, sorted by key.
    pub weights: Vec<(String, [f64; K])>,
}

/// Weights are kept to four decimals: the text then reads back exactly as written.
fn round4(v: f64) -> f64 {
    let r = (v * 10_000.0).round() / 10_000.0;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

impl ModelText {
    /// The same model with every number rounded as the text keeps it, and features whose
    /// weights all round to zero left out.
    pub fn rounded(mut self) -> ModelText {
        self.temperature = round4(self.temperature);
        self.decision = Decision {
            thresholds: self.decision.thresholds.map(round4),
            offsets: self.decision.offsets.map(round4),
            stance_offsets: self.decision.stance_offsets.map(|o| o.map(round4)),
            stance_financial: self.decision.stance_financial.map(|o| o.map(round4)),
            pooled: self.decision.pooled,
        };
        self.bias = self.bias.map(round4);
        self.weights = std::mem::take(&mut self.weights)
            .into_iter()
            .map(|(k, w)| (k, w.map(round4)))
            .filter(|(_, w)| w.iter().any(|v| *v != 0.0))
            .collect();
        self
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.weights.len() * 48);
        let _ = writeln!(
            out,
            "# mcprisk tool classifier weights, made by scripts/train-model.sh; do not edit."
        );
        let _ = writeln!(out, "# {}", self.comment.replace('\n', " "));
        out.push_str("# columns: key");
        for c in CLASSES {
            let _ = write!(out, "\t{c}");
        }
        out.push('\n');
        let _ = writeln!(out, "temperature\t{:.4}", self.temperature);
        let row = |out: &mut String, key: &str, w: &[f64; K]| {
            out.push_str(key);
            for v in w {
                let _ = write!(out, "\t{v:.4}");
            }
            out.push('\n');
        };
        row(&mut out, "thresholds", &self.decision.thresholds);
        row(&mut out, "offsets", &self.decision.offsets);
        if let Some(o) = self.decision.stance_offsets {
            // Silent, Write, other: three numbers, not five (see `Stance`).
            let _ = writeln!(out, "stance_offsets\t{:.4}\t{:.4}\t{:.4}", o[0], o[1], o[2]);
        }
        if self.decision.pooled {
            let _ = writeln!(out, "pooled\t1");
        }
        row(&mut out, "bias", &self.bias);
        for (k, w) in &self.weights {
            row(&mut out, k, w);
        }
        out
    }

    /// Reads the file's text back.
    pub fn parse(text: &str) -> Result<ModelText, String> {
        let mut m = ModelText {
            comment: String::new(),
            temperature: 1.0,
            decision: Decision::thresholds(DEFAULT_THRESHOLDS),
            bias: [0.0; K],
            weights: Vec::new(),
        };
        for (n, line) in text.lines().enumerate() {
            let at = || format!("weights line {}", n + 1);
            if let Some(c) = line.strip_prefix("# ") {
                if m.comment.is_empty() && n == 1 {
                    m.comment = c.to_string();
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let mut cols = line.split('\t');
            let key = cols.next().unwrap_or_default();
            let nums: Vec<f64> = cols
                .map(|c| {
                    c.parse::<f64>()
                        .map_err(|e| format!("{}: {c:?}: {e}", at()))
                })
                .collect::<Result<_, _>>()?;
            match key {
                "temperature" if nums.len() == 1 => m.temperature = nums[0],
                "pooled" if nums.len() == 1 => m.decision.pooled = nums[0] != 0.0,
                "stance_offsets" if nums.len() == 3 => {
                    m.decision.stance_offsets = Some([nums[0], nums[1], nums[2]]);
                }
                _ if nums.len() == K => {
                    let w: [f64; K] = std::array::from_fn(|c| nums[c]);
                    if key == "bias" {
                        m.bias = w;
                    } else if key == "thresholds" {
                        m.decision.thresholds = w;
                    } else if key == "offsets" {
                        m.decision.offsets = w;
                    } else {
                        m.weights.push((key.to_string(), w));
                    }
                }
                _ => return Err(format!("{}: expected a key and {K} numbers", at())),
            }
        }
        if m.temperature.is_nan() || m.temperature <= 0.0 {
            return Err("weights: temperature must be positive".into());
        }
        Ok(m)
    }
}

/// Thresholds that choose the likeliest category (a probability above one half wins).
pub const DEFAULT_THRESHOLDS: [f64; K] = [0.5; K];

/// How a model's probabilities become a category (see [`Decision::choose`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// The probability at which each category is chosen outright, checked from the most
    /// dangerous down (Financial, Destructive, Execute, Write); above 1, never outright.
    pub thresholds: [f64; K],
    /// When no threshold is reached: added to each category's log-probability before the
    /// likeliest is taken, so a dangerous category can win against a likelier benign one
    /// without its probability being changed (confidences stay calibrated).
    pub offsets: [f64; K],
    /// For experiments (`model cv stance=1`): the dangerous categories' offset by where the
    /// rules stand on the tool ([`Stance`]: silent, Write, another verdict), in place of
    /// `offsets` when [`Decision::choose_in`] is told the stance. In the weights' text as the
    /// row `stance_offsets` (three numbers), when there are any.
    pub stance_offsets: Option<[f64; 3]>,
    /// For experiments (`model cv stance=2`): the Financial threshold by stance as well. Not
    /// in the weights' text either.
    pub stance_financial: Option<[f64; 3]>,
    /// For experiments (`model cv decision=pooled`): when no threshold is reached, the
    /// dangerous categories' pooled probability, weighed up by their offset, is set against
    /// the pooled probability of Read and Write, and the likeliest category of the side that
    /// wins is chosen. In the weights' text as the row `pooled\t1`, when set.
    pub pooled: bool,
}

/// Where the rules stand on a tool the model decides: the group a stance offset belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stance {
    /// No rule decided ("Write by caution").
    Silent = 0,
    /// The rules' verdict is Write.
    Write = 1,
    /// The rules' verdict is another category.
    Other = 2,
}

impl Stance {
    /// The stance of the rules' verdict (`None`: no rule decided).
    pub fn of(verdict: Option<Category>) -> Stance {
        match verdict {
            None => Stance::Silent,
            Some(Category::Write) => Stance::Write,
            Some(_) => Stance::Other,
        }
    }
}

impl Decision {
    /// Thresholds alone: no offsets.
    pub fn thresholds(thresholds: [f64; K]) -> Decision {
        Decision {
            thresholds,
            offsets: [0.0; K],
            stance_offsets: None,
            stance_financial: None,
            pooled: false,
        }
    }

    /// [`Decision::choose`], with the stance's own offset when there are stance offsets.
    pub fn choose_in(&self, p: &[f64; K], stance: Stance) -> Category {
        match self.stance_offsets {
            Some(o) => {
                let b = o[stance as usize];
                let mut thresholds = self.thresholds;
                if let Some(f) = self.stance_financial {
                    thresholds[Category::Financial as usize] = f[stance as usize];
                }
                Decision {
                    thresholds,
                    offsets: [0.0, 0.0, b, b, b],
                    stance_offsets: None,
                    stance_financial: None,
                    pooled: self.pooled,
                }
                .choose(p)
            }
            None => self.choose(p),
        }
    }

    /// One offset for the three dangerous categories, and Financial also chosen outright at
    /// `financial` (above 1: never); no other threshold. The form calibration fits.
    pub fn offset(offset: f64, financial: f64) -> Decision {
        let never = 1.01;
        Decision {
            thresholds: [never, never, never, never, financial],
            offsets: [0.0, 0.0, offset, offset, offset],
            stance_offsets: None,
            stance_financial: None,
            pooled: false,
        }
    }

    /// The category chosen for these probabilities: the first, from the most dangerous down,
    /// whose probability reaches its threshold; else the one of highest log-probability plus
    /// offset (the less dangerous on a tie).
    pub fn choose(&self, p: &[f64; K]) -> Category {
        for c in [
            Category::Financial,
            Category::Destructive,
            Category::Execute,
            Category::Write,
        ] {
            if p[c as usize] >= self.thresholds[c as usize] {
                return c;
            }
        }
        let ln = |v: f64| v.max(f64::MIN_POSITIVE).ln();
        // Pooled: the side is chosen on the summed probabilities, then the likeliest of it.
        let (candidates, offsets) = if self.pooled {
            let dangerous =
                ln(p[2] + p[3] + p[4]) + self.offsets[Category::Execute as usize] > ln(p[0] + p[1]);
            (if dangerous { 2..K } else { 0..2 }, [0.0; K])
        } else {
            (0..K, self.offsets)
        };
        let score = |c: usize| ln(p[c]) + offsets[c];
        let best = candidates
            .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a)))
            .unwrap_or(0);
        CLASSES[best]
    }
}

/// Weights ready for lookup: sorted by the hash of their key.
#[derive(Debug, PartialEq)]
pub struct Table {
    temperature: f64,
    /// See [`ModelText::decision`].
    pub decision: Decision,
    bias: [f32; K],
    hashes: Vec<u64>,
    rows: Vec<[f32; K]>,
    /// Every row's key, back to back in row order, and where each ends.
    keys: String,
    key_ends: Vec<u32>,
    /// Where the hashes with each value of their top `BUCKET_BITS` bits start: the hashes are
    /// spread evenly, so a lookup scans a few entries instead of searching them all.
    starts: Vec<u32>,
}

/// See [`Table::starts`].
const BUCKET_BITS: u32 = 12;

impl Table {
    /// Builds the lookup table from the text's weights.
    pub fn new(m: &ModelText) -> Table {
        let mut rows: Vec<(u64, [f32; K], &str)> = m
            .weights
            .iter()
            .map(|(k, w)| (hash_key(k), w.map(|v| v as f32), k.as_str()))
            .collect();
        rows.sort_by_key(|r| r.0);
        let keys: String = rows.iter().map(|r| r.2).collect();
        let key_ends = rows
            .iter()
            .scan(0u32, |end, r| {
                *end += r.2.len() as u32;
                Some(*end)
            })
            .collect();
        Table::from_sorted(
            m.temperature,
            m.decision,
            m.bias.map(|v| v as f32),
            rows.iter().map(|r| r.0).collect(),
            rows.iter().map(|r| r.1).collect(),
            (keys, key_ends),
        )
    }

    /// Reads the table `build.rs` packs from the shipped weights (its layout is described
    /// there), or says what is wrong with the bytes.
    pub fn from_packed(b: &[u8]) -> Result<Table, String> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&[u8], String> {
            let s = b
                .get(at..at + n)
                .ok_or_else(|| format!("packed weights: cut short at byte {at}"))?;
            at += n;
            Ok(s)
        };
        if take(4)? != b"MRW4" {
            return Err("packed weights: not a weights table".into());
        }
        let f64_at = |s: &[u8]| f64::from_le_bytes(s.try_into().expect("8 bytes"));
        let f32_at = |s: &[u8]| f32::from_le_bytes(s.try_into().expect("4 bytes"));
        let temperature = f64_at(take(8)?);
        let mut decision = Decision::thresholds([0.0; K]);
        for v in decision.thresholds.iter_mut().chain(&mut decision.offsets) {
            *v = f64_at(take(8)?);
        }
        match take(1)? {
            [0] => {}
            [1] => {
                let mut o = [0.0; 3];
                for v in &mut o {
                    *v = f64_at(take(8)?);
                }
                decision.stance_offsets = Some(o);
            }
            _ => return Err("packed weights: bad stance offsets flag".into()),
        }
        let mut bias = [0.0; K];
        for v in &mut bias {
            *v = f32_at(take(4)?);
        }
        let n = u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")) as usize;
        let hashes: Vec<u64> = take(n * 8)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let rows: Vec<[f32; K]> = take(n * 4 * K)?
            .chunks_exact(4 * K)
            .map(|c| std::array::from_fn(|i| f32_at(&c[i * 4..i * 4 + 4])))
            .collect();
        let key_ends: Vec<u32> = take(n * 4)?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        let len = key_ends.last().map_or(0, |&e| e as usize);
        let keys = std::str::from_utf8(take(len)?)
            .map_err(|_| "packed weights: keys are not UTF-8".to_string())?
            .to_string();
        let ends_fit =
            key_ends.is_sorted() && key_ends.iter().all(|&e| keys.is_char_boundary(e as usize));
        if at != b.len() || !hashes.is_sorted() || !ends_fit {
            return Err("packed weights: bad layout".into());
        }
        Ok(Table::from_sorted(
            temperature,
            decision,
            bias,
            hashes,
            rows,
            (keys, key_ends),
        ))
    }

    /// A table from hashes in ascending order, their rows, and their keys (back to back, and
    /// where each ends).
    fn from_sorted(
        temperature: f64,
        decision: Decision,
        bias: [f32; K],
        hashes: Vec<u64>,
        rows: Vec<[f32; K]>,
        (keys, key_ends): (String, Vec<u32>),
    ) -> Table {
        let mut starts = vec![0u32; (1 << BUCKET_BITS) + 1];
        for (i, s) in starts.iter_mut().enumerate() {
            let first = (i as u64) << (64 - BUCKET_BITS);
            *s = if i == 1 << BUCKET_BITS {
                hashes.len() as u32
            } else {
                hashes.partition_point(|&h| h < first) as u32
            };
        }
        Table {
            starts,
            temperature,
            decision,
            bias,
            hashes,
            rows,
            keys,
            key_ends,
        }
    }

    /// The index of a feature's row, if the model knows it. Rows are in the order of their
    /// hashes, so summing rows in index order sums them in hash order.
    pub fn find(&self, hash: u64) -> Option<u32> {
        let b = (hash >> (64 - BUCKET_BITS)) as usize;
        let (start, end) = (self.starts[b] as usize, self.starts[b + 1] as usize);
        self.hashes[start..end]
            .iter()
            .position(|&h| h == hash)
            .map(|i| (start + i) as u32)
    }

    /// Row `i`'s key (an index [`Table::find`] gave).
    pub fn key(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 {
            0
        } else {
            self.key_ends[i - 1] as usize
        };
        &self.keys[start..self.key_ends[i] as usize]
    }

    /// Row `i`'s weights (an index [`Table::find`] gave).
    pub fn row(&self, i: u32) -> &[f32; K] {
        &self.rows[i as usize]
    }

    /// The class probabilities of a tool whose known features have these rows (each once, in
    /// ascending order).
    pub fn probabilities_of_rows(&self, rows: impl Iterator<Item = u32>) -> [f64; K] {
        softmax(self.logits_of_rows(rows), self.temperature)
    }

    /// The class scores before the softmax of a tool with these feature hashes (each counted
    /// once, in ascending order).
    pub fn logits(&self, hashes: &[u64]) -> [f64; K] {
        self.logits_of_rows(hashes.iter().filter_map(|&h| self.find(h)))
    }

    /// The class scores before the softmax, from the rows of the known features.
    fn logits_of_rows(&self, rows: impl Iterator<Item = u32>) -> [f64; K] {
        let mut z: [f64; K] = self.bias.map(f64::from);
        for i in rows {
            for (zc, wc) in z.iter_mut().zip(self.row(i)) {
                *zc += f64::from(*wc);
            }
        }
        z
    }

    /// How many features it knows.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when it knows no feature (an untrained model).
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }
}

/// `softmax(z / t)`.
pub fn softmax(z: [f64; K], t: f64) -> [f64; K] {
    let max = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e = z.map(|v| ((v - max) / t).exp());
    let sum: f64 = e.iter().sum();
    e.map(|v| v / sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_reads_back_exactly() {
        // With and without stance offsets (their row is written only when there are some).
        for stance_offsets in [None, Some([1.2, 0.35, 1.4])] {
            let m = ModelText {
                comment: "test".into(),
                temperature: 1.25,
                decision: Decision {
                    thresholds: [0.5, 0.45, 0.4, 0.35, 0.3],
                    offsets: [0.0, -0.25, 1.5, 1.5, 1.5],
                    stance_offsets,
                    stance_financial: None,
                    pooled: stance_offsets.is_none(),
                },
                bias: [0.1, -0.2, 0.0, 0.3, -1.0],
                weights: vec![
                    ("n0:delet".into(), [-1.0, -0.5, 0.0, 2.5, 0.0]),
                    ("nn:clos+position".into(), [0.0, 0.0, 0.0, 0.0, 1.2345]),
                ],
            }
            .rounded();
            let text = m.to_text();
            assert_eq!(text.contains("stance_offsets"), stance_offsets.is_some());
            assert_eq!(text.contains("\npooled\t1\n"), stance_offsets.is_none());
            let back = ModelText::parse(&text).unwrap();
            assert_eq!(back, m);
            assert_eq!(back.to_text(), text);
        }
    }

    #[test]
    fn offsets_weigh_dangerous_readings_up_and_thresholds_choose_outright() {
        let never = [1.01; K];
        let up = Decision {
            thresholds: never,
            offsets: [0.0, 0.0, 1.4, 1.4, 1.4],
            stance_offsets: None,
            stance_financial: None,
            pooled: false,
        };
        // Execute a quarter as likely as Read and more: weighed up (e^1.4 is about 4), it wins.
        assert_eq!(up.choose(&[0.7, 0.1, 0.2, 0.0, 0.0]), Category::Execute);
        // Read far likelier: it stays Read however low Execute's probability is.
        assert_eq!(up.choose(&[0.85, 0.0, 0.15, 0.0, 0.0]), Category::Read);
        // Without offsets, the likeliest; a threshold reached chooses outright first.
        assert_eq!(
            Decision::thresholds(never).choose(&[0.7, 0.1, 0.2, 0.0, 0.0]),
            Category::Read
        );
        let financial = Decision {
            thresholds: [1.01, 1.01, 1.01, 1.01, 0.07],
            ..up
        };
        assert_eq!(
            financial.choose(&[0.9, 0.02, 0.0, 0.0, 0.08]),
            Category::Financial
        );
        // Pooled: the three dangerous categories' mass against Read's and Write's, then the
        // likeliest of the side that wins. Execute 0.15 alone loses to Read 0.5 at offset 1;
        // with Destructive 0.1 and Financial 0.05 beside it (0.3 against 0.7), it wins.
        let pooled = Decision {
            offsets: [0.0, 0.0, 1.0, 1.0, 1.0],
            pooled: true,
            ..up
        };
        assert_eq!(pooled.choose(&[0.5, 0.35, 0.15, 0.0, 0.0]), Category::Read);
        assert_eq!(
            pooled.choose(&[0.5, 0.2, 0.15, 0.1, 0.05]),
            Category::Execute
        );
        assert_eq!(
            Decision {
                offsets: [0.0, 0.0, 1.0, 1.0, 1.0],
                ..up
            }
            .choose(&[0.5, 0.35, 0.15, 0.0, 0.0]),
            Category::Read
        );
        // A probability of zero is no error: it never wins.
        assert_eq!(up.choose(&[0.0, 1.0, 0.0, 0.0, 0.0]), Category::Write);
        // Stance offsets: the same prediction weighed up where the rules are silent only.
        let staged = Decision {
            stance_offsets: Some([1.4, 0.0, 0.0]),
            ..up
        };
        let p = [0.7, 0.1, 0.2, 0.0, 0.0];
        assert_eq!(staged.choose_in(&p, Stance::Silent), Category::Execute);
        assert_eq!(staged.choose_in(&p, Stance::Write), Category::Read);
        assert_eq!(up.choose_in(&p, Stance::Write), Category::Execute);
        assert_eq!(Stance::of(Some(Category::Write)), Stance::Write);
        assert_eq!(Stance::of(None), Stance::Silent);
        assert_eq!(Stance::of(Some(Category::Read)), Stance::Other);
        // And a Financial threshold by stance: outright at 0.05 where the rules are silent only.
        let money = Decision {
            stance_financial: Some([0.05, 1.01, 1.01]),
            ..staged
        };
        let q = [0.9, 0.04, 0.0, 0.0, 0.06];
        assert_eq!(money.choose_in(&q, Stance::Silent), Category::Financial);
        assert_eq!(money.choose_in(&q, Stance::Write), Category::Read);
    }

    #[test]
    fn bad_lines_are_named() {
        let err = ModelText::parse("temperature\t1\nbias\t1\t2\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
    }
}
