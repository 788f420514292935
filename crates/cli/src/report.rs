//! CSV rows (ARCHITECTURE.md, "CSV contract") and the summary table.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use triskele_aes::{PhaseMeasure, RunReport};
use triskele_prf::PrfReport;

use crate::args::ReportArgs;
use crate::error::CliError;

/// One row of a party's CSV file: one repetition. Field order = column order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsvRow {
    pub protocol: String,
    pub simd: usize,
    #[serde(rename = "pre-processing-time")]
    pub pre_time: f64,
    #[serde(rename = "online-time")]
    pub online_time: f64,
    #[serde(rename = "finalize-time")]
    pub finalize_time: f64,
    #[serde(rename = "pre-processing-bytes-sent-to-next")]
    pub pre_sent_next: u64,
    #[serde(rename = "pre-processing-bytes-received-from-next")]
    pub pre_recv_next: u64,
    #[serde(rename = "pre-processing-bytes-rounds-next")]
    pub pre_rounds_next: u64,
    #[serde(rename = "pre-processing-bytes-sent-to-prev")]
    pub pre_sent_prev: u64,
    #[serde(rename = "pre-processing-bytes-received-from-prev")]
    pub pre_recv_prev: u64,
    #[serde(rename = "pre-processing-bytes-rounds-prev")]
    pub pre_rounds_prev: u64,
    #[serde(rename = "online-bytes-sent-to-next")]
    pub online_sent_next: u64,
    #[serde(rename = "online-bytes-received-from-next")]
    pub online_recv_next: u64,
    #[serde(rename = "online-bytes-rounds-next")]
    pub online_rounds_next: u64,
    #[serde(rename = "online-bytes-sent-to-prev")]
    pub online_sent_prev: u64,
    #[serde(rename = "online-bytes-received-from-prev")]
    pub online_recv_prev: u64,
    #[serde(rename = "online-bytes-rounds-prev")]
    pub online_rounds_prev: u64,
    #[serde(rename = "finalize-bytes-sent-to-next")]
    pub fin_sent_next: u64,
    #[serde(rename = "finalize-bytes-received-from-next")]
    pub fin_recv_next: u64,
    #[serde(rename = "finalize-bytes-rounds-next")]
    pub fin_rounds_next: u64,
    #[serde(rename = "finalize-bytes-sent-to-prev")]
    pub fin_sent_prev: u64,
    #[serde(rename = "finalize-bytes-received-from-prev")]
    pub fin_recv_prev: u64,
    #[serde(rename = "finalize-bytes-rounds-prev")]
    pub fin_rounds_prev: u64,
}

/// The 23 column names, in order.
pub const HEADER: [&str; 23] = [
    "protocol",
    "simd",
    "pre-processing-time",
    "online-time",
    "finalize-time",
    "pre-processing-bytes-sent-to-next",
    "pre-processing-bytes-received-from-next",
    "pre-processing-bytes-rounds-next",
    "pre-processing-bytes-sent-to-prev",
    "pre-processing-bytes-received-from-prev",
    "pre-processing-bytes-rounds-prev",
    "online-bytes-sent-to-next",
    "online-bytes-received-from-next",
    "online-bytes-rounds-next",
    "online-bytes-sent-to-prev",
    "online-bytes-received-from-prev",
    "online-bytes-rounds-prev",
    "finalize-bytes-sent-to-next",
    "finalize-bytes-received-from-next",
    "finalize-bytes-rounds-next",
    "finalize-bytes-sent-to-prev",
    "finalize-bytes-received-from-prev",
    "finalize-bytes-rounds-prev",
];

fn cols(m: &PhaseMeasure) -> [u64; 6] {
    let s = &m.stats;
    [
        s.next.bytes_sent,
        s.next.bytes_received,
        s.next.messages,
        s.prev.bytes_sent,
        s.prev.bytes_received,
        s.prev.messages,
    ]
}

impl CsvRow {
    /// A row from one party's measurements of the three timed phases.
    pub fn new(
        protocol: &str,
        simd: usize,
        pre: &PhaseMeasure,
        online: &PhaseMeasure,
        fin: &PhaseMeasure,
    ) -> Self {
        let [a0, a1, a2, a3, a4, a5] = cols(pre);
        let [b0, b1, b2, b3, b4, b5] = cols(online);
        let [c0, c1, c2, c3, c4, c5] = cols(fin);
        CsvRow {
            protocol: protocol.to_string(),
            simd,
            pre_time: pre.time.as_secs_f64(),
            online_time: online.time.as_secs_f64(),
            finalize_time: fin.time.as_secs_f64(),
            pre_sent_next: a0,
            pre_recv_next: a1,
            pre_rounds_next: a2,
            pre_sent_prev: a3,
            pre_recv_prev: a4,
            pre_rounds_prev: a5,
            online_sent_next: b0,
            online_recv_next: b1,
            online_rounds_next: b2,
            online_sent_prev: b3,
            online_recv_prev: b4,
            online_rounds_prev: b5,
            fin_sent_next: c0,
            fin_recv_next: c1,
            fin_rounds_next: c2,
            fin_sent_prev: c3,
            fin_recv_prev: c4,
            fin_rounds_prev: c5,
        }
    }
}

impl From<&RunReport> for CsvRow {
    fn from(r: &RunReport) -> Self {
        CsvRow::new(
            r.target.csv_name(),
            r.simd,
            &r.preprocessing,
            &r.online,
            &r.finalize,
        )
    }
}

impl From<&PrfReport> for CsvRow {
    fn from(r: &PrfReport) -> Self {
        CsvRow::new(
            r.target.name(),
            r.simd,
            &r.preprocessing,
            &r.online,
            &r.finalize,
        )
    }
}

impl CsvRow {
    fn sent(&self) -> [u64; 3] {
        [
            self.pre_sent_next + self.pre_sent_prev,
            self.online_sent_next + self.online_sent_prev,
            self.fin_sent_next + self.fin_sent_prev,
        ]
    }

    fn times(&self) -> [f64; 3] {
        [self.pre_time, self.online_time, self.finalize_time]
    }
}

/// A CSV writer for one party's file; rows are flushed as they come so partial runs survive.
pub struct CsvOut {
    path: String,
    w: csv::Writer<std::fs::File>,
}

impl CsvOut {
    pub fn create(path: &Path) -> Result<Self, CliError> {
        let p = path.display().to_string();
        let io_err = |source| CliError::File {
            path: p.clone(),
            source,
        };
        let mut file = std::fs::File::create(path).map_err(io_err)?;
        // The header is written plain; rows quote the protocol name (PROTOCOLS.md §6.3).
        std::io::Write::write_all(&mut file, format!("{}\n", HEADER.join(",")).as_bytes())
            .map_err(io_err)?;
        let w = csv::WriterBuilder::new()
            .has_headers(false)
            .quote_style(csv::QuoteStyle::NonNumeric)
            .from_writer(file);
        Ok(CsvOut { path: p, w })
    }

    pub fn write(&mut self, row: &CsvRow) -> Result<(), CliError> {
        let path = &self.path;
        self.w.serialize(row).map_err(|source| CliError::Csv {
            path: path.clone(),
            source,
        })?;
        self.w.flush().map_err(|source| CliError::File {
            path: path.clone(),
            source,
        })
    }
}

/// Reads one party's CSV file, checking the header.
pub fn read_csv(path: &Path) -> Result<Vec<CsvRow>, CliError> {
    let p = path.display().to_string();
    let mut r = csv::Reader::from_path(path).map_err(|source| CliError::Csv {
        path: p.clone(),
        source,
    })?;
    let header = r
        .headers()
        .map_err(|source| CliError::Csv {
            path: p.clone(),
            source,
        })?
        .clone();
    if header.iter().collect::<Vec<_>>() != HEADER {
        return Err(CliError::Input(format!(
            "{p}: not a triskele/MAESTRO CSV file (expected the 23-column header)"
        )));
    }
    r.deserialize()
        .map(|row| {
            row.map_err(|source| CliError::Csv {
                path: p.clone(),
                source,
            })
        })
        .collect()
}

/// One line of the summary: a protocol at a batch size, averaged over repetitions of the
/// per-repetition maximum over parties.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub protocol: String,
    pub simd: usize,
    pub reps: usize,
    /// Mean seconds per phase (pre-processing, online, finalize).
    pub time: [f64; 3],
    /// Mean bytes sent by the busiest party per phase.
    pub bytes: [f64; 3],
    /// Each repetition's total seconds (per phase the slowest party's time), in the order run.
    pub totals: Vec<f64>,
}

impl Summary {
    pub fn total_time(&self) -> f64 {
        self.time.iter().sum()
    }

    pub fn blocks_per_sec(&self) -> f64 {
        let t = self.total_time();
        if t > 0.0 {
            self.simd as f64 / t
        } else {
            0.0
        }
    }
}

/// Summarises rows of several parties: `parties[p][k]` is party p's k-th row. Rows with the same
/// index are the same repetition. Groups consecutive rows of the same protocol and batch size.
pub fn summarise(parties: &[Vec<CsvRow>]) -> Result<Vec<Summary>, CliError> {
    let Some(first) = parties.first() else {
        return Ok(Vec::new());
    };
    if parties.iter().any(|p| p.len() != first.len()) {
        return Err(CliError::Input(
            "the CSV files have different numbers of rows; pass the files of one run".into(),
        ));
    }
    let mut out: Vec<Summary> = Vec::new();
    for k in 0..first.len() {
        let rows: Vec<&CsvRow> = parties.iter().map(|p| &p[k]).collect();
        let (proto, simd) = (&rows[0].protocol, rows[0].simd);
        if rows.iter().any(|r| &r.protocol != proto || r.simd != simd) {
            return Err(CliError::Input(format!(
                "row {}: the files disagree on protocol or batch size",
                k + 2
            )));
        }
        let mut time = [0.0f64; 3];
        let mut bytes = [0.0f64; 3];
        for r in &rows {
            for (t, v) in time.iter_mut().zip(r.times()) {
                *t = t.max(v);
            }
            for (b, v) in bytes.iter_mut().zip(r.sent()) {
                *b = b.max(v as f64);
            }
        }
        // Rows of one protocol and batch size need not be adjacent (`bench --interleave`).
        match out
            .iter_mut()
            .find(|s| &s.protocol == proto && s.simd == simd)
        {
            Some(s) => {
                let n = s.reps as f64;
                for i in 0..3 {
                    s.time[i] = (s.time[i] * n + time[i]) / (n + 1.0);
                    s.bytes[i] = (s.bytes[i] * n + bytes[i]) / (n + 1.0);
                }
                s.reps += 1;
                s.totals.push(time.iter().sum());
            }
            None => out.push(Summary {
                protocol: proto.clone(),
                simd,
                reps: 1,
                time,
                bytes,
                totals: vec![time.iter().sum()],
            }),
        }
    }
    Ok(out)
}

/// Formats the summary table.
pub fn format_table(rows: &[Summary]) -> String {
    let mut s = format!(
        "{:<22} {:>8} {:>4} {:>10} {:>10} {:>10} {:>10} {:>12} {:>9} {:>9} {:>9}\n",
        "protocol",
        "simd",
        "reps",
        "prep s",
        "online s",
        "final s",
        "total s",
        "ops/s",
        "prep B/b",
        "onl B/b",
        "fin B/b"
    );
    for r in rows {
        let per = |b: f64| b / r.simd.max(1) as f64;
        s.push_str(&format!(
            "{:<22} {:>8} {:>4} {:>10.4} {:>10.4} {:>10.4} {:>10.4} {:>12.0} {:>9.1} {:>9.1} {:>9.1}\n",
            r.protocol,
            r.simd,
            r.reps,
            r.time[0],
            r.time[1],
            r.time[2],
            r.total_time(),
            r.blocks_per_sec(),
            per(r.bytes[0]),
            per(r.bytes[1]),
            per(r.bytes[2]),
        ));
    }
    s
}

/// The CSV name of the semi-honest twin of the malicious variant whose CSV name is `csv`;
/// `None` for semi-honest protocols and unknown names.
pub fn twin_of(csv: &str) -> Option<&'static str> {
    if let Some(t) = triskele_aes::Target::ALL
        .iter()
        .find(|t| t.csv_name() == csv)
    {
        return t.is_malicious().then(|| t.semi_honest().csv_name());
    }
    triskele_prf::PrfTarget::ALL
        .iter()
        .find(|t| t.name() == csv && t.is_malicious())
        .map(|t| t.semi_honest().name())
}

/// The share of the twin's throughput repetition by repetition, `twin[i] / mine[i]` for the
/// `i`-th repetitions of both (with `bench --interleave`, those of one round), as `[median,
/// lowest, highest]` in percent; `None` unless both ran the same number of at least three
/// repetitions, all of positive time. The median of such pairs is what drift between
/// rounds on a shared machine moves least: a slow spell falls on both runs of a round, where
/// the means of all repetitions take it on one side only if it came at one's turn.
pub fn paired_shares(mine: &[f64], twin: &[f64]) -> Option<[f64; 3]> {
    if mine.len() != twin.len() || mine.len() < 3 {
        return None;
    }
    let mut shares: Vec<f64> = mine
        .iter()
        .zip(twin)
        .map(|(&m, &t)| (m > 0.0 && t > 0.0).then(|| 100.0 * t / m))
        .collect::<Option<_>>()?;
    median_range(&mut shares)
}

/// `[median, lowest, highest]` of `v` (sorted in place); `None` if it is empty.
pub fn median_range(v: &mut [f64]) -> Option<[f64; 3]> {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = match n {
        0 => return None,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    };
    Some([median, v[0], v[n - 1]])
}

/// `mine`'s throughput as a percentage of `twin`'s; `None` if the twin's is not positive.
fn share_of(mine: &Summary, twin: &Summary) -> Option<f64> {
    let theirs = twin.blocks_per_sec();
    (theirs > 0.0).then(|| 100.0 * mine.blocks_per_sec() / theirs)
}

/// For each malicious row whose semi-honest twin has a row of the same batch size: its
/// throughput as a share of the twin's, and with `peaks` (per row, in the order of `rows`)
/// both peaks. Empty when no such pair ran.
pub fn format_twins(rows: &[Summary], peaks: Option<&[Option<u64>]>) -> String {
    let peak = |i: usize| peaks.and_then(|p| p.get(i).copied().flatten());
    let mut s = String::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(name) = twin_of(&r.protocol) else {
            continue;
        };
        let Some((j, twin)) = rows
            .iter()
            .enumerate()
            .find(|(_, t)| t.protocol == name && t.simd == r.simd)
        else {
            continue;
        };
        let (mine, theirs) = (r.blocks_per_sec(), twin.blocks_per_sec());
        let share = share_of(r, twin).unwrap_or(0.0);
        s.push_str(&format!(
            "{:<22} {:>8} {:>12.0} ops/s = {:>5.1}% of {} ({:.0} ops/s)",
            r.protocol, r.simd, mine, share, twin.protocol, theirs
        ));
        if let Some([median, low, high]) = paired_shares(&r.totals, &twin.totals) {
            s.push_str(&format!(
                "; repetition by repetition {median:.1}% ({low:.1}-{high:.1}%)"
            ));
        }
        if let (Some(a), Some(b)) = (peak(i), peak(j)) {
            s.push_str(&format!(
                "; peak {} against {}",
                crate::ot_cmd::mib(Some(a)),
                crate::ot_cmd::mib(Some(b))
            ));
        }
        s.push('\n');
    }
    if s.is_empty() {
        return s;
    }
    format!("malicious variants against their semi-honest twins (same run):\n{s}")
}

/// The files of `files` by run: `bench --csv PREFIX` names a run's files `PREFIX-p1.csv` ..
/// `PREFIX-p3.csv`, so the files with one prefix (directory included) are one run, the runs in
/// the order of their first file. Files not named that way form one run together.
pub fn group_runs(files: &[PathBuf]) -> Vec<Vec<PathBuf>> {
    let mut runs: Vec<(Option<&str>, Vec<PathBuf>)> = Vec::new();
    for f in files {
        let key = run_prefix(f);
        match runs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, run)) => run.push(f.clone()),
            None => runs.push((key, vec![f.clone()])),
        }
    }
    runs.into_iter().map(|(_, run)| run).collect()
}

/// `PREFIX` of a file named `PREFIX-pN.csv` (`N` one digit).
fn run_prefix(f: &Path) -> Option<&str> {
    let (prefix, party) = f.to_str()?.strip_suffix(".csv")?.rsplit_once("-p")?;
    (party.len() == 1 && party.bytes().all(|b| b.is_ascii_digit())).then_some(prefix)
}

/// The rows of several runs of the same targets (rounds) as one: party `p`'s rows of every run
/// in turn, so that [`summarise`] averages over all their repetitions. Refused unless every
/// run has as many files as the first.
pub fn pool_runs(runs: &[Vec<Vec<CsvRow>>]) -> Result<Vec<Vec<CsvRow>>, CliError> {
    let Some(first) = runs.first() else {
        return Ok(Vec::new());
    };
    if runs.iter().any(|r| r.len() != first.len()) {
        return Err(CliError::Input(
            "the runs have different numbers of CSV files; pass every party's file of each run"
                .into(),
        ));
    }
    Ok((0..first.len())
        .map(|p| runs.iter().flat_map(|r| r[p].iter().cloned()).collect())
        .collect())
}

/// Several runs (rounds) side by side, each summarised on its own: every protocol's
/// throughput as the median and range over the runs of each run's mean, and every malicious
/// variant's share of its twin's throughput in the same run (as [`format_twins`] gives it) as
/// the median and range over the runs that ran both, with the medians of the variant's
/// finalize phase and of the twin's whole run. This is how the README's rounds are summed up;
/// one slow run moves a median less than it moves a mean.
pub fn format_rounds(runs: &[Vec<Summary>]) -> String {
    // Protocols and batch sizes in the order they first ran.
    let mut keys: Vec<(&str, usize)> = Vec::new();
    for r in runs.iter().flatten() {
        if !keys.contains(&(r.protocol.as_str(), r.simd)) {
            keys.push((&r.protocol, r.simd));
        }
    }
    fn find<'a>(run: &'a [Summary], proto: &str, simd: usize) -> Option<&'a Summary> {
        run.iter().find(|s| s.protocol == proto && s.simd == simd)
    }
    let mut s = format!(
        "throughput run by run ({} runs; median and range of the runs' means):\n",
        runs.len()
    );
    for &(proto, simd) in &keys {
        let mut rates: Vec<f64> = runs
            .iter()
            .filter_map(|run| find(run, proto, simd))
            .map(Summary::blocks_per_sec)
            .collect();
        let n = rates.len();
        if let Some([median, low, high]) = median_range(&mut rates) {
            s.push_str(&format!(
                "{proto:<22} {simd:>8} {n:>4} runs {median:>12.0} ops/s ({low:.0}-{high:.0})\n"
            ));
        }
    }
    let mut twins = String::new();
    for &(proto, simd) in &keys {
        let Some(twin) = twin_of(proto) else {
            continue;
        };
        let (mut shares, mut finals, mut totals) = (Vec::new(), Vec::new(), Vec::new());
        for run in runs {
            let (Some(mine), Some(theirs)) = (find(run, proto, simd), find(run, twin, simd)) else {
                continue;
            };
            if let Some(share) = share_of(mine, theirs) {
                shares.push(share);
                finals.push(mine.time[2]);
                totals.push(theirs.total_time());
            }
        }
        let n = shares.len();
        let (Some([median, low, high]), Some([fin, ..]), Some([total, ..])) = (
            median_range(&mut shares),
            median_range(&mut finals),
            median_range(&mut totals),
        ) else {
            continue;
        };
        twins.push_str(&format!(
            "{proto:<22} {simd:>8} {n:>4} runs {median:>5.1}% ({low:.1}-{high:.1}%) of {twin}; \
             finalize {fin:.4} s, {twin}'s total {total:.4} s\n"
        ));
    }
    if !twins.is_empty() {
        s.push_str(
            "malicious variants against their semi-honest twins, run by run (median and range of \
             the runs' shares; medians of the variant's finalize and of the twin's whole run):\n",
        );
        s.push_str(&twins);
    }
    s
}

pub fn run(a: ReportArgs) -> Result<(), CliError> {
    let runs = group_runs(&a.files)
        .iter()
        .map(|files| files.iter().map(|f| read_csv(f)).collect())
        .collect::<Result<Vec<Vec<Vec<CsvRow>>>, CliError>>()?;
    let rows = if let [one] = &runs[..] {
        let rows = summarise(one)?;
        print!("{}", format_table(&rows));
        print!("{}", format_twins(&rows, None));
        rows
    } else {
        let each = runs
            .iter()
            .map(|r| summarise(r))
            .collect::<Result<Vec<_>, _>>()?;
        let pooled = summarise(&pool_runs(&runs)?)?;
        println!("all runs' repetitions together ({} runs):", runs.len());
        print!("{}", format_table(&pooled));
        print!("{}", format_rounds(&each));
        pooled
    };
    if let Some(out) = &a.plot {
        crate::plot::write_svg(out, &rows)?;
        eprintln!("plot written to {}", out.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(proto: &str, simd: usize, t: f64, sent: u64) -> CsvRow {
        CsvRow {
            protocol: proto.into(),
            simd,
            pre_time: 0.0,
            online_time: t,
            finalize_time: 0.0,
            pre_sent_next: 0,
            pre_recv_next: 0,
            pre_rounds_next: 0,
            pre_sent_prev: 0,
            pre_recv_prev: 0,
            pre_rounds_prev: 0,
            online_sent_next: sent,
            online_recv_next: 0,
            online_rounds_next: 30,
            online_sent_prev: 0,
            online_recv_prev: sent,
            online_rounds_prev: 30,
            fin_sent_next: 0,
            fin_recv_next: 0,
            fin_rounds_next: 0,
            fin_sent_prev: 0,
            fin_recv_prev: 0,
            fin_rounds_prev: 0,
        }
    }

    /// Shares against the twin of the same batch size only, with the peaks where given; CSV
    /// names (`mal-gf4-circuit-gf4p4`, `lut256_ss`) map to their twins.
    #[test]
    fn twins_share_and_peaks() {
        assert_eq!(twin_of("mal-chida"), Some("chida"));
        assert_eq!(twin_of("mal-gf4-circuit-gf4p4"), Some("gf4-circuit"));
        assert_eq!(twin_of("mal-lut256-ss-opt"), Some("lut256_ss"));
        assert_eq!(twin_of("mal-mimc-cube"), Some("mimc-cube"));
        assert_eq!(twin_of("chida"), None);
        assert_eq!(twin_of("nonsense"), None);
        let one = |p: &str, simd, t| summarise(&[vec![row(p, simd, t, 0)]]).unwrap_or_default();
        let mut rows = one("chida", 10, 1.0);
        rows.extend(one("mal-chida", 10, 4.0));
        rows.extend(one("mal-chida", 20, 4.0));
        let plain = format_twins(&rows, None);
        assert_eq!(plain.lines().count(), 2, "{plain}");
        assert!(plain.contains("25.0% of chida (10 ops/s)"), "{plain}");
        assert!(!plain.contains("peak"));
        let peaks = [Some(1 << 20), Some(3 << 20), None];
        let with = format_twins(&rows, Some(&peaks));
        assert!(with.contains("; peak 3.0 MiB against 1.0 MiB"), "{with}");
        assert_eq!(format_twins(&rows[..1], None), "");
    }

    /// Three or more repetitions of both add the median and range of the shares round by
    /// round: each repetition of the variant against the twin's of the same index, not the
    /// ratio of the means.
    #[test]
    fn twins_share_by_repetition() {
        let reps = |p: &str, times: &[f64]| {
            let rows: Vec<CsvRow> = times.iter().map(|&t| row(p, 10, t, 0)).collect();
            summarise(&[rows]).unwrap_or_default()
        };
        // Shares 50%, 20% (a slow spell on the variant's turn), 40%: median 40, means 1.0/3.0.
        let mut rows = reps("chida", &[1.0, 1.0, 1.0]);
        rows.extend(reps("mal-chida", &[2.0, 5.0, 2.5]));
        let s = format_twins(&rows, None);
        assert!(s.contains(" 31.6% of chida (10 ops/s);"), "{s}");
        assert!(
            s.contains("; repetition by repetition 40.0% (20.0-50.0%)"),
            "{s}"
        );
        // The twin's slow round moves its pair only.
        let mut rows = reps("chida", &[1.0, 3.0, 1.0, 1.0]);
        rows.extend(reps("mal-chida", &[2.0, 2.0, 2.0, 4.0]));
        let s = format_twins(&rows, None);
        assert!(
            s.contains("repetition by repetition 50.0% (25.0-150.0%)"),
            "{s}"
        );
        // Two repetitions, or counts that differ: the means only.
        let mut rows = reps("chida", &[1.0, 1.0]);
        rows.extend(reps("mal-chida", &[2.0, 2.0]));
        assert!(!format_twins(&rows, None).contains("repetition by"));
        let mut rows = reps("chida", &[1.0, 1.0, 1.0]);
        rows.extend(reps("mal-chida", &[2.0, 2.0, 2.0, 2.0]));
        assert!(!format_twins(&rows, None).contains("repetition by"));
        assert_eq!(paired_shares(&[1.0, 0.0, 1.0], &[1.0, 1.0, 1.0]), None);
    }

    #[test]
    fn summary_takes_max_over_parties_and_mean_over_reps() {
        let p = vec![
            vec![row("chida", 10, 1.0, 6400), row("chida", 10, 3.0, 6400)],
            vec![row("chida", 10, 2.0, 6400), row("chida", 10, 1.0, 6400)],
            vec![row("chida", 10, 0.5, 6400), row("chida", 10, 0.5, 6400)],
        ];
        let s = summarise(&p).unwrap_or_default();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].reps, 2);
        assert!((s[0].time[1] - 2.5).abs() < 1e-12);
        assert!((s[0].blocks_per_sec() - 4.0).abs() < 1e-12);
        assert!((s[0].bytes[1] - 6400.0).abs() < 1e-12);
        assert!(format_table(&s).contains("chida"));
    }

    #[test]
    fn csv_round_trip_and_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r-p1.csv");
        let mut w = CsvOut::create(&path).unwrap();
        let r = row("chida", 7, 0.25, 4480);
        w.write(&r).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(first, HEADER.join(","));
        assert!(text
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("\"chida\",7,"));
        assert_eq!(read_csv(&path).unwrap(), vec![r]);
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        assert!(read_csv(&path).is_err());
    }

    /// `bench --csv PREFIX` names the files of a run `PREFIX-pN.csv`: files with one prefix
    /// are one run, in the order of their first file; other names are one run together.
    #[test]
    fn files_are_grouped_by_run() {
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        let files = paths(&[
            "out/r1-p1.csv",
            "out/r2-p1.csv",
            "out/r1-p2.csv",
            "out/r2-p2.csv",
            "r1-p3.csv",
        ]);
        assert_eq!(
            group_runs(&files),
            vec![
                paths(&["out/r1-p1.csv", "out/r1-p2.csv"]),
                paths(&["out/r2-p1.csv", "out/r2-p2.csv"]),
                paths(&["r1-p3.csv"]),
            ]
        );
        let odd = paths(&["a.csv", "b-p12.csv", "c-px.csv", "d-p1.txt"]);
        assert_eq!(group_runs(&odd), vec![odd.clone()]);
        assert_eq!(run_prefix(Path::new("x-y-p3.csv")), Some("x-y"));
        assert!(group_runs(&[]).is_empty());
    }

    /// Several runs: each protocol's throughput and each variant's share as medians over the
    /// runs, a run without the twin left out of the variant's line; the pooled rows average
    /// over every repetition, and runs with unequal file counts are refused.
    #[test]
    fn runs_side_by_side() {
        let run = |chida: f64, mal: Option<f64>| {
            let mut rows = vec![row("chida", 10, chida, 0)];
            if let Some(t) = mal {
                rows.push(row("mal-chida", 10, t, 0));
            }
            summarise(&[rows]).unwrap_or_default()
        };
        // Shares 50%, 25%, 40%; the fourth run has no mal-chida.
        let runs = vec![
            run(1.0, Some(2.0)),
            run(1.0, Some(4.0)),
            run(2.0, Some(5.0)),
            run(0.5, None),
        ];
        let s = format_rounds(&runs);
        assert!(s.contains("(4 runs;"), "{s}");
        // chida: 10, 10, 5, 20 blocks/s, median 10.
        assert!(
            s.contains("chida                        10    4 runs           10 ops/s (5-20)"),
            "{s}"
        );
        assert!(
            s.contains("mal-chida                    10    3 runs  40.0% (25.0-50.0%) of chida"),
            "{s}"
        );
        // Finalize phases are zero here; the twin's totals 1, 1, 2 have median 1.
        assert!(
            s.contains("finalize 0.0000 s, chida's total 1.0000 s"),
            "{s}"
        );
        assert!(!format_rounds(&[run(1.0, None)]).contains("twins"));

        let files = |t: f64| vec![vec![row("chida", 10, t, 0)], vec![row("chida", 10, t, 0)]];
        let pooled = pool_runs(&[files(1.0), files(3.0)]).unwrap_or_default();
        let sums = summarise(&pooled).unwrap_or_default();
        assert_eq!((sums.len(), sums[0].reps), (1, 2));
        assert!((sums[0].time[1] - 2.0).abs() < 1e-12);
        assert!(pool_runs(&[files(1.0), vec![vec![row("chida", 10, 1.0, 0)]]]).is_err());
    }

    #[test]
    fn mismatched_files_are_an_error() {
        let p = vec![vec![row("chida", 10, 1.0, 1)], vec![]];
        assert!(summarise(&p).is_err());
        let p = vec![
            vec![row("chida", 10, 1.0, 1)],
            vec![row("chida", 11, 1.0, 1)],
        ];
        assert!(summarise(&p).is_err());
    }
}
