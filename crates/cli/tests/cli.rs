//! The `triskele` binary: outputs, exit codes and messages (ARCHITECTURE.md CLI contract).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

fn triskele(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_triskele"))
        .args(args)
        .output()
        .expect("run triskele")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const KEY128: &str = "000102030405060708090a0b0c0d0e0f";
const PT: &str = "00112233445566778899aabbccddeeff";
/// The FIPS-197 C.1 (AES-128) ciphertext; C.3 (AES-256): key and ciphertext.
const CT128: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";
const KEY256: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
const CT256: &str = "8ea2b7ca516745bfeafc49904b496089";

#[test]
fn aes_fips197_c1_prints_the_ciphertext() {
    let o = triskele(&["aes", "--protocol", "chida", "--key", KEY128, "--input", PT]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "69c4e0d86a7b0430d8cdb78070b4c55a\n");
}

#[test]
fn aes256_decrypt_and_several_blocks() {
    let key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    let o = triskele(&[
        "aes",
        "--protocol",
        "chida",
        "--aes256",
        "--decrypt",
        "--key",
        key,
        "--input",
        "8ea2b7ca516745bfeafc49904b496089",
        "--input",
        "8ea2b7ca516745bfeafc49904b496089",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{PT}\n{PT}\n"));
}

#[test]
fn bad_input_exits_1_with_a_message() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["aes", "--protocol", "chida", "--key", "zz", "--input", PT],
            "not valid hex",
        ),
        (
            &["aes", "--protocol", "chida", "--key", "0011", "--input", PT],
            "expected 16 bytes",
        ),
        (
            &[
                "aes",
                "--protocol",
                "chida",
                "--key",
                KEY128,
                "--input",
                "00",
            ],
            "input block 1",
        ),
        (
            &["aes", "--protocol", "nope", "--key", KEY128, "--input", PT],
            "unknown protocol 'nope'",
        ),
        (
            &["bench", "--local", "--simd", "1", "nope"],
            "unknown protocol",
        ),
    ];
    for (args, msg) in cases {
        let o = triskele(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn usage_errors_exit_1() {
    let o = triskele(&["bench", "--simd", "1", "chida"]);
    assert_eq!(o.status.code(), Some(1));
    let o = triskele(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(1));
    let o = triskele(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn bench_warm_up_runs_are_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("w");
    let prefix = prefix.to_str().unwrap();
    for (warmup, note) in [("3", "3 untimed warm-up runs per row"), ("0", "no warm-up")] {
        let o = triskele(&[
            "bench", "--local", "--simd", "2", "--rep", "1", "--warmup", warmup, "--csv", prefix,
            "lut16",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains(note), "{}", stdout(&o));
        for p in 1..=3 {
            let text = std::fs::read_to_string(format!("{prefix}-p{p}.csv")).unwrap();
            assert_eq!(text.lines().count(), 2, "{text}");
        }
    }
}

/// `--interleave` takes turns between the rows; the CSV rows alternate and the summary (of
/// `bench` and of `report`) still has one row per target with all its repetitions.
#[test]
fn bench_interleave_takes_turns_and_summarises_per_target() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("i");
    let prefix = prefix.to_str().unwrap();
    let o = triskele(&[
        "bench",
        "--local",
        "--simd",
        "3",
        "--rep",
        "2",
        "--interleave",
        "--csv",
        prefix,
        "chida",
        "lut16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("repetitions interleaved"), "{out}");
    for p in 1..=3 {
        let text = std::fs::read_to_string(format!("{prefix}-p{p}.csv")).unwrap();
        let names: Vec<&str> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap())
            .collect();
        assert_eq!(names, ["\"chida\"", "\"lut16\"", "\"chida\"", "\"lut16\""]);
    }
    let files: Vec<String> = (1..=3).map(|p| format!("{prefix}-p{p}.csv")).collect();
    let o = triskele(&["report", &files[0], &files[1], &files[2]]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for summary in [out, stdout(&o)] {
        let rows: Vec<&str> = summary
            .lines()
            .filter(|l| l.starts_with("chida ") || l.starts_with("lut16 "))
            .collect();
        assert_eq!(rows.len(), 2, "{summary}");
        for r in rows {
            assert_eq!(r.split_whitespace().nth(2), Some("2"), "{r}");
        }
    }
}

#[test]
fn bench_local_writes_three_csv_files_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("r");
    let prefix = prefix.to_str().unwrap();
    let o = triskele(&[
        "bench", "--local", "--simd", "1", "10", "--rep", "2", "--csv", prefix, "chida",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("ops/s") && out.contains("chida"), "{out}");
    assert!(out.contains("1 untimed warm-up run per row"), "{out}");
    for p in 1..=3 {
        let text = std::fs::read_to_string(format!("{prefix}-p{p}.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // Header and 2 × 2 timed rows; the warm-up runs are not written.
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(lines[0].split(',').count(), 23);
        let row: Vec<&str> = lines[3].split(',').collect();
        assert_eq!(row.len(), 23);
        assert_eq!(row[0], "\"chida\"");
        assert_eq!(row[1], "10");
        // chida: 640 B per block online, to next only (P_i's column 11 = online sent to next).
        assert_eq!(row[11], "6400");
        assert_eq!(row[14], "0");
    }
    let files: Vec<String> = (1..=3).map(|p| format!("{prefix}-p{p}.csv")).collect();
    let o = triskele(&["report", &files[0], &files[1], &files[2]]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("chida"));
    // --plot draws the same summary as an SVG; other formats are refused.
    let svg = format!("{prefix}.svg");
    let o = triskele(&["report", &files[0], &files[1], &files[2], "--plot", &svg]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("chida"));
    let png = format!("{prefix}.png");
    let o = triskele(&["report", &files[0], &files[1], &files[2], "--plot", &png]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(".svg"), "{}", stderr(&o));
}

/// `triskele keygen` into `dir` for three parties on 127.0.0.1, on ports picked by the OS
/// and released just before use, three different ones that no other test of this binary (they
/// run in parallel) was given.
fn keygen_on_free_ports(dir: &str) {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let mut given = GIVEN.lock().unwrap();
    let given = given.get_or_insert_with(HashSet::new);
    let mut ports: Vec<u16> = Vec::with_capacity(3);
    let mut held = Vec::new();
    while ports.len() < 3 {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if given.insert(port) {
            ports.push(port);
        }
        held.push(l);
    }
    drop(held);
    let hosts = format!(
        "127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
        ports[0], ports[1], ports[2]
    );
    let o = triskele(&["keygen", "--dir", dir, "--hosts", &hosts]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `triskele bench --config DIR/pP.toml --simd 4 --csv PREFIX --timeout 20 ARGS...` for the
/// three parties at once (`args(p)` for party `p`); their outputs in party order.
fn bench_three_configs(
    dir: &str,
    prefix: &str,
    args: impl Fn(usize) -> Vec<&'static str>,
) -> Vec<Output> {
    let children: Vec<_> = (1..=3)
        .map(|p| {
            let config = format!("{dir}/p{p}.toml");
            let mut a = vec!["bench", "--config", &config, "--simd", "4", "--csv", prefix];
            a.extend(["--timeout", "20"]);
            a.extend(args(p));
            Command::new(env!("CARGO_BIN_EXE_triskele"))
                .args(a)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn party")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

#[test]
fn keygen_then_three_config_processes_form_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    keygen_on_free_ports(d);
    let prefix = dir.path().join("run");
    let prefix = prefix.to_str().unwrap().to_string();
    for o in bench_three_configs(d, &prefix, |_| vec!["chida"]) {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let files: Vec<String> = (1..=3).map(|p| format!("{prefix}-p{p}.csv")).collect();
    let o = triskele(&["report", &files[0], &files[1], &files[2]]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("chida"), "{out}");
}

/// Runs the three `--config` parties with `args(p)` and checks that every one exits 2 with a
/// message containing `needle`.
fn assert_config_processes_refuse(args: impl Fn(usize) -> Vec<&'static str>, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    keygen_on_free_ports(d);
    let prefix = dir.path().join("run");
    let prefix = prefix.to_str().unwrap().to_string();
    for o in bench_three_configs(d, &prefix, args) {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(needle), "{err}");
    }
}

/// Parties started with different `--verify-segment` values refuse to run together: every
/// party exits 2 at setup with a message naming the mismatch, instead of desynchronising.
#[test]
fn config_processes_with_different_verify_segments_refuse_to_run() {
    assert_config_processes_refuse(
        |p| {
            let segment = if p == 3 { "1" } else { "32" };
            vec!["--verify-segment", segment, "mal-chida-rec-check"]
        },
        "verification segment",
    );
}

/// Parties started with different numbers of runs (here `--warmup`) refuse to start: every
/// party exits 2 naming the plan, instead of one waiting for peers that have finished.
#[test]
fn config_processes_with_different_run_counts_refuse_to_run() {
    assert_config_processes_refuse(
        |p| {
            let warmup = if p == 2 { "0" } else { "1" };
            vec!["--warmup", warmup, "chida"]
        },
        "bench plan",
    );
}

#[test]
fn ot_bench_reports_time_rate_bytes_and_memory() {
    for proto in ["rot", "ec", "iknp"] {
        let o = triskele(&[
            "ot",
            "bench",
            "--local",
            "--protocol",
            proto,
            "--count",
            "200",
        ]);
        assert_eq!(o.status.code(), Some(0), "{proto}: {}", stderr(&o));
        let out = stdout(&o);
        for needle in [
            "us per OT",
            "OTs per second",
            "bytes sent per OT",
            "peak memory",
        ] {
            assert!(out.contains(needle), "{proto}: {out}");
        }
    }
    let o = triskele(&[
        "ot",
        "bench",
        "--local",
        "--protocol",
        "nope",
        "--count",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unknown OT protocol"));
}

/// `ot bench --rep N`: one line per run, then the median and range; `--rep 0` is refused.
#[test]
fn ot_bench_repetitions_report_the_median() {
    let args = [
        "ot",
        "bench",
        "--local",
        "--protocol",
        "iknp",
        "--count",
        "3000",
    ];
    let o = triskele(&[&args[..], &["--rep", "3"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches("iknp: 3000 OTs in").count(), 3, "{out}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.starts_with("iknp: median of 3 runs: "), "{out}");
    assert!(last.contains("OTs per second (runs: "), "{out}");
    let o = triskele(&args);
    assert!(!stdout(&o).contains("median"), "{}", stdout(&o));
    let o = triskele(&[&args[..], &["--rep", "0"]].concat());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--rep must be at least 1"));
}

/// The eight malicious variants and their semi-honest twins.
const MALICIOUS: [(&str, &str); 8] = [
    ("mal-chida", "chida"),
    ("mal-chida-rec-check", "chida"),
    ("mal-gf4-circuit", "gf4-circuit"),
    ("mal-gf4-circuit-opt", "gf4-circuit"),
    ("mal-lut16-bitstring", "lut16"),
    ("mal-lut16-ohv", "lut16"),
    ("mal-lut256-ss", "lut256-ss"),
    ("mal-lut256-ss-opt", "lut256-ss"),
];

/// `triskele aes` on FIPS-197 C.1 or C.3 with `extra` arguments.
fn fips(protocol: &str, aes256: bool, extra: &[&str]) -> Output {
    let mut args = vec!["aes", "--protocol", protocol, "--input", PT, "--key"];
    args.push(if aes256 { KEY256 } else { KEY128 });
    if aes256 {
        args.push("--aes256");
    }
    args.extend_from_slice(extra);
    triskele(&args)
}

/// ARCHITECTURE.md's cheating party through the CLI, for every malicious variant, AES-128
/// and AES-256, each party as the cheater: exit code 3, an abort message, no output on
/// stdout; the same `--tamper` on the semi-honest twin completes and says the tamper went
/// undetected.
#[test]
fn tamper_aborts_malicious_and_goes_unnoticed_in_semi_honest() {
    for aes256 in [false, true] {
        let ct = if aes256 { CT256 } else { CT128 };
        for (mal, twin) in MALICIOUS {
            let what = format!("{mal} aes256={aes256}");
            let ok = fips(mal, aes256, &[]);
            assert_eq!(ok.status.code(), Some(0), "{what}: {}", stderr(&ok));
            assert_eq!(stdout(&ok), format!("{ct}\n"), "{what}");
            for party in ["1", "2", "3"] {
                for seed in ["0", "5"] {
                    let o = fips(mal, aes256, &["--tamper", party, "--tamper-seed", seed]);
                    let what = format!("{what} P{party} seed {seed}");
                    assert_eq!(o.status.code(), Some(3), "{what}: {}", stderr(&o));
                    assert!(stdout(&o).is_empty(), "{what}: no output may be released");
                    assert!(stderr(&o).contains("abort"), "{what}: {}", stderr(&o));
                }
                // The semi-honest twin completes: the tamper goes undetected.
                let o = fips(twin, aes256, &["--tamper", party]);
                assert_eq!(o.status.code(), Some(0), "{twin} P{party}: {}", stderr(&o));
                assert_eq!(stdout(&o).trim().len(), 32);
                assert!(stderr(&o).contains("did not detect"), "{}", stderr(&o));
            }
        }
    }
    let o = triskele(&[
        "aes",
        "--protocol",
        "chida",
        "--key",
        KEY128,
        "--input",
        PT,
        "--tamper",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn prf_legendre_reproduces_the_challenge_prefix_and_hash() {
    // The Ethereum Legendre PRF challenge's "test" instance (crates/prf/testdata/LEGENDRE.md).
    let base = [
        "prf",
        "--prf",
        "legendre",
        "--modulus",
        "0xffffffffa9",
        "--key",
        "0x4e2dea1f3c",
    ];
    let mut args = base.to_vec();
    args.extend(["--input", "0", "--count", "128"]);
    let o = triskele(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "782408b40187dec329043bcf60b4d976\n");
    // --sha256 over 8 bits is the hash of the first byte, 0x78.
    let mut args = base.to_vec();
    args.extend(["--count", "8", "--sha256"]);
    let o = triskele(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
    );
}

#[test]
fn prf_mimc_encrypts_decrypts_and_aborts_on_cheating() {
    let o = triskele(&["prf", "--prf", "mimc", "--key", "42", "--input", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = stdout(&o).trim().to_string();
    for (prf, mal) in [("mimc", false), ("mimc-cube", true)] {
        let mut args = vec![
            "prf",
            "--prf",
            prf,
            "--key",
            "42",
            "--decrypt",
            "--input",
            &c,
        ];
        if mal {
            args.push("--malicious");
        }
        let o = triskele(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), "1\n");
    }
    let o = triskele(&[
        "prf",
        "--prf",
        "mimc",
        "--malicious",
        "--key",
        "42",
        "--input",
        "1",
        "--tamper",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    assert!(stderr(&o).contains("security abort"), "{}", stderr(&o));
}

#[test]
fn prf_bad_input_exits_1() {
    for args in [
        vec!["prf", "--prf", "aes", "--key", "1"],
        vec!["prf", "--prf", "mimc", "--key", "0x1zz", "--input", "1"],
        vec![
            "prf",
            "--prf",
            "mimc",
            "--key",
            "1",
            "--input",
            "1",
            "--modulus",
            "100",
        ],
        // p = 2^40 - 87 is 1 mod 3: no MiMC.
        vec![
            "prf",
            "--prf",
            "mimc",
            "--key",
            "1",
            "--input",
            "1",
            "--modulus",
            "0xffffffffa9",
        ],
        // Too small for the malicious check.
        vec![
            "prf",
            "--prf",
            "legendre",
            "--malicious",
            "--key",
            "1",
            "--modulus",
            "0xffffffffa9",
        ],
        // Key not below p.
        vec![
            "prf",
            "--prf",
            "legendre",
            "--key",
            "0xffffffffa9",
            "--modulus",
            "0xffffffffa9",
        ],
        vec![
            "prf",
            "--prf",
            "nr",
            "--malicious",
            "--key",
            "1",
            "--input",
            "1",
        ],
        vec![
            "prf", "--prf", "hydra", "--key", "1,2,3", "--input", "1,1,1",
        ],
    ] {
        let o = triskele(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).starts_with("error: "),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// PRF targets in `bench` (CSV rows and bytes), and a malicious variant beside its
/// semi-honest twin: the summary gives the share of the twin's throughput and (on Linux)
/// each row's peak memory; `report` gives the share from the CSV files. `chida` has no
/// malicious variant in the run, so no share against it.
#[test]
fn bench_runs_prf_targets_beside_their_twins() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("p");
    let prefix = prefix.to_str().unwrap();
    let o = triskele(&[
        "bench",
        "--local",
        "--simd",
        "16",
        "--rep",
        "1",
        "--csv",
        prefix,
        "mimc",
        "legendre",
        "mal-legendre",
        "chida",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let text = std::fs::read_to_string(format!("{prefix}-p1.csv")).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(
        names,
        ["\"mimc\"", "\"legendre\"", "\"mal-legendre\"", "\"chida\""]
    );
    // mimc: 162 products of 16 bytes per block, all to prev (column 14: online sent to prev).
    assert_eq!(rows[0][14], (16 * 162 * 16).to_string());
    assert!(
        out.contains("malicious variants against their semi-honest twins"),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("mal-legendre") && l.contains("% of legendre"))
        .unwrap_or_else(|| panic!("{out}"));
    if cfg!(target_os = "linux") {
        assert!(
            line.contains("; peak ") && line.contains(" MiB against "),
            "{line}"
        );
        // One peak line per row under the process peak.
        let rows = out
            .lines()
            .filter(|l| l.starts_with("  ") && l.contains(" MiB"));
        assert_eq!(rows.count(), 4, "{out}");
    }
    assert!(
        !out.contains("% of chida") && !out.contains("% of mimc"),
        "{out}"
    );
    let files: Vec<String> = (1..=3).map(|p| format!("{prefix}-p{p}.csv")).collect();
    let o = triskele(&["report", &files[0], &files[1], &files[2]]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.lines()
            .any(|l| l.starts_with("mal-legendre") && l.contains("% of legendre")),
        "{out}"
    );
    assert!(!out.contains("peak"), "{out}");
}

/// `report` on the files of two runs (`--csv r1`, `--csv r2`): the repetitions of both
/// together, each protocol's throughput and the variant's share of its twin over the runs;
/// runs with unequal file counts are refused.
#[test]
fn report_sums_up_several_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for run in ["r1", "r2"] {
        let prefix = dir.path().join(run);
        let prefix = prefix.to_str().unwrap();
        let o = triskele(&[
            "bench",
            "--local",
            "--simd",
            "4",
            "--rep",
            "1",
            "--warmup",
            "0",
            "--csv",
            prefix,
            "chida",
            "mal-chida-rec-check",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        files.extend((1..=3).map(|p| format!("{prefix}-p{p}.csv")));
    }
    let mut args = vec!["report"];
    args.extend(files.iter().map(String::as_str));
    let o = triskele(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("all runs' repetitions together (2 runs)"),
        "{out}"
    );
    // The pooled table: two repetitions per row.
    assert!(
        out.lines()
            .any(|l| l.starts_with("chida ") && l.split_whitespace().nth(2) == Some("2")),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.starts_with("mal-chida-rec-check")
            && l.contains(" 2 runs ")
            && l.contains("%) of chida; finalize ")),
        "{out}"
    );
    let o = triskele(&args[..6]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("different numbers of CSV files"),
        "{}",
        stderr(&o)
    );
}

/// `ot bench --config`: two processes (P1 sender, P2 receiver) over TLS from keygen's
/// configuration; party 3 is refused with a usage error.
#[test]
fn ot_bench_two_config_processes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    keygen_on_free_ports(d);
    let p3 = format!("{d}/p3.toml");
    let o = triskele(&[
        "ot",
        "bench",
        "--config",
        &p3,
        "--protocol",
        "rot",
        "--count",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("party 3"), "{}", stderr(&o));
    let children: Vec<_> = (1..=2)
        .map(|p| {
            Command::new(env!("CARGO_BIN_EXE_triskele"))
                .args([
                    "ot",
                    "bench",
                    "--config",
                    &format!("{d}/p{p}.toml"),
                    "--protocol",
                    "rot",
                    "--count",
                    "50",
                    "--timeout",
                    "20",
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn party")
        })
        .collect();
    let outs: Vec<String> = children
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            stdout(&o)
        })
        .collect();
    assert!(outs[0].contains("rot (sender): 50 OTs"), "{}", outs[0]);
    assert!(outs[1].contains("rot (receiver): 50 OTs"), "{}", outs[1]);
    for o in &outs {
        assert!(o.contains("us per OT") && o.contains("peak memory"), "{o}");
    }
}

/// `TRISKELE_BACKEND` names of the field backends and of the OT crate's ring backends are
/// accepted without a warning (whether or not this CPU has them); other values are warned
/// about, and the run goes on with detection.
#[test]
fn backend_variable_warns_only_about_unknown_names() {
    let run = |value: &str| {
        Command::new(env!("CARGO_BIN_EXE_triskele"))
            .args(["aes", "--protocol", "chida", "--key", KEY128, "--input", PT])
            .env("TRISKELE_BACKEND", value)
            .output()
            .expect("run triskele")
    };
    for value in ["portable", "avx2", "gfni-avx512", "avx512", "auto", ""] {
        let o = run(value);
        assert_eq!(o.status.code(), Some(0), "{value}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("names no backend"),
            "{value}: {}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), "69c4e0d86a7b0430d8cdb78070b4c55a\n");
    }
    let o = run("no-such-backend");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("names no backend"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "69c4e0d86a7b0430d8cdb78070b4c55a\n");
}

/// `ot bench` first names the ring backend it runs on and the noise, so that runs under
/// different `TRISKELE_BACKEND` values can be told apart.
#[test]
fn ot_bench_names_its_ring_backend() {
    let run = |value: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_triskele"));
        c.args([
            "ot",
            "bench",
            "--local",
            "--protocol",
            "rot",
            "--count",
            "20",
            "--noise",
            "binomial",
        ]);
        if let Some(v) = value {
            c.env("TRISKELE_BACKEND", v);
        }
        let o = c.output().expect("run triskele");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let forced = run(Some("portable"));
    let first = forced.lines().next().unwrap_or_default();
    assert!(first.starts_with("triskele "), "{forced}");
    assert!(
        first.ends_with("OT ring backend portable, binomial noise"),
        "{forced}"
    );
    assert!(forced.contains("rot: 20 OTs"), "{forced}");
    let detected = run(None);
    assert!(detected.contains("OT ring backend "), "{detected}");
}
