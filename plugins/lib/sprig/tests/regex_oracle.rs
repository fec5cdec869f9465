//! Capstan's Sprig regular-expression functions against Go's own answers.
//!
//! `regex_oracle/go-answers.jsonl.gz` holds cases from the seeded generator
//! (`regex_oracle/generate.rs`) with what Go answered for each (`tests/cluster/regex-oracle`:
//! Sprig v3.3.0 on Go's `regexp`): `regexMatch`, `regexFind`, `regexFindAll` with n,
//! `regexReplaceAll`, `regexReplaceAllLiteral`, `regexSplit`, and for a pattern Go refuses
//! the `mustRegex*` error and the plain functions' panic. Every answer must be equal, and
//! both of Capstan's engines must find the same groups on every case's text.
//!
//! - `cargo test --test regex_oracle` replays a bounded sample (every case of one pattern
//!   in `SAMPLE_EVERY`); `CAPSTAN_REGEX_ORACLE_ALL=1` replays them all.
//! - `make regex-oracle` records the file again (generator seed `RECORDED_SEED`, at least
//!   `RECORDED_PATTERNS` patterns) with the Go program built by `tests/cluster`.
//! - `make fuzz` runs `CAPSTAN_REGEX_ORACLE_GROW=<seed>`: a new seed's cases asked of Go and
//!   compared live; cases that differ are appended to the recorded file (which then fails
//!   until Capstan is mended).

#[path = "regex_oracle/generate.rs"]
mod generate;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use capstan_gotmpl::funcs::{FuncError, Runtime};
use capstan_gotmpl::value::Value;
use generate::{Case, Generator};
use serde::{Deserialize, Serialize};

const RECORDED_SEED: u64 = 43;
const RECORDED_PATTERNS: usize = 100_000;
/// `make test` replays the cases of one pattern in this many.
const SAMPLE_EVERY: usize = 8;

/// What the functions answered for one case (the Go program's JSON shape).
/// Empty fields are left out of the recorded file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Answer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    err: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    panic: Option<String>,
    #[serde(rename = "match", default, skip_serializing_if = "is_false")]
    matched: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    find: String,
    #[serde(
        default,
        deserialize_with = "null_is_empty",
        skip_serializing_if = "Vec::is_empty"
    )]
    all: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    repl: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    lit: String,
    #[serde(
        default,
        deserialize_with = "null_is_empty",
        skip_serializing_if = "Vec::is_empty"
    )]
    split: Vec<String>,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn null_is_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<Vec<String>>::deserialize(d)?.unwrap_or_default())
}

/// One recorded line: the case and Go's answer.
#[derive(Debug, Serialize, Deserialize)]
struct Recorded {
    #[serde(flatten)]
    case: Case,
    go: Answer,
}

fn recorded_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regex_oracle/go-answers.jsonl.gz")
}

struct NoRuntime;

impl Runtime for NoRuntime {
    fn execute_named(&mut self, name: &str, _data: Value) -> Result<String, FuncError> {
        Err(FuncError::new(format!("no template {name}")))
    }
    fn execute_text(&mut self, _text: &str, _data: Value) -> Result<String, FuncError> {
        Err(FuncError::new("no runtime"))
    }
    fn template_name(&self) -> String {
        "regex-oracle".into()
    }
}

/// Capstan's answer for a case, through the registered template functions.
fn capstan_answer(funcs: &capstan_gotmpl::funcs::FuncMap, case: &Case) -> Answer {
    let call = |name: &str, args: &[Value]| -> Result<Value, String> {
        let func = funcs
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not registered"));
        (func.body)(&mut NoRuntime, args).map_err(|e| e.0)
    };
    let text = |v: Result<Value, String>| match v {
        Ok(Value::String(s)) => s.to_string(),
        other => panic!("expected a string, got {other:?}"),
    };
    let list = |v: Result<Value, String>| match v {
        Ok(Value::List(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => s.to_string(),
                other => panic!("expected strings, got {other:?}"),
            })
            .collect(),
        other => panic!("expected a list, got {other:?}"),
    };
    let (p, s, n, r) = (
        Value::from(case.p.as_str()),
        Value::from(case.s.as_str()),
        Value::Int(case.n),
        Value::from(case.r.as_str()),
    );
    let matched = match call("regexMatch", &[p.clone(), s.clone()]) {
        Ok(Value::Bool(b)) => b,
        other => panic!("regexMatch gave {other:?}"),
    };
    if let Err(err) = call("mustRegexFind", &[p.clone(), s.clone()]) {
        let panic = call("regexFind", &[p.clone(), s.clone()]).err();
        return Answer {
            err: Some(err),
            panic,
            matched,
            find: String::new(),
            all: Vec::new(),
            repl: String::new(),
            lit: String::new(),
            split: Vec::new(),
        };
    }
    Answer {
        err: None,
        panic: None,
        matched,
        find: text(call("regexFind", &[p.clone(), s.clone()])),
        all: list(call("regexFindAll", &[p.clone(), s.clone(), n.clone()])),
        repl: text(call("regexReplaceAll", &[p.clone(), s.clone(), r.clone()])),
        lit: text(call("regexReplaceAllLiteral", &[p.clone(), s.clone(), r])),
        split: list(call("regexSplit", &[p, s, n])),
    }
}

/// Where Capstan differs from Go on the cases of one pattern, if it does: each case's
/// answers, then its two engines on all the cases' texts.
fn differences(funcs: &capstan_gotmpl::funcs::FuncMap, cases: &[(&Case, &Answer)]) -> Vec<String> {
    let mut found = Vec::new();
    for (case, go) in cases {
        let ours = capstan_answer(funcs, case);
        if &ours != *go {
            found.push(format!("{case:?}\n  Go:      {go:?}\n  Capstan: {ours:?}"));
        }
    }
    let Some((first, _)) = cases.first() else {
        return found;
    };
    let texts: Vec<&str> = cases.iter().map(|(c, _)| c.s.as_str()).collect();
    if let Ok(Some(how)) = capstan_sprig::regex_engines_disagree(&first.p, &texts) {
        found.push(format!("pattern {:?}: engines differ {how}", first.p));
    }
    found
}

/// Consecutive cases grouped by pattern.
fn by_pattern<'a>(
    cases: impl Iterator<Item = (&'a Case, &'a Answer)>,
) -> Vec<Vec<(&'a Case, &'a Answer)>> {
    let mut groups: Vec<Vec<(&Case, &Answer)>> = Vec::new();
    for (case, go) in cases {
        match groups.last_mut() {
            Some(group) if group[0].0.p == case.p => group.push((case, go)),
            _ => groups.push(vec![(case, go)]),
        }
    }
    groups
}

fn read_recorded() -> Vec<Recorded> {
    let path = recorded_path();
    let file = std::fs::File::open(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (record it with `make regex-oracle`)",
            path.display()
        )
    });
    BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let line = line.unwrap_or_else(|e| panic!("{}: line {}: {e}", path.display(), i + 1));
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("{}: line {}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Ask the Go program for the answers to `cases`.
fn ask_go(cases: &[Case]) -> Vec<Answer> {
    let binary = std::env::var("CAPSTAN_REGEX_ORACLE_BIN").expect(
        "CAPSTAN_REGEX_ORACLE_BIN: the Go oracle built by tests/cluster/build-regex-oracle",
    );
    let mut child = Command::new(&binary)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{binary}: {e}"));
    let mut stdin = child.stdin.take().unwrap();
    let input: Vec<u8> = cases
        .iter()
        .flat_map(|c| {
            let mut line = serde_json::to_vec(c).unwrap();
            line.push(b'\n');
            line
        })
        .collect();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut output = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut output)
        .unwrap();
    writer.join().unwrap().unwrap();
    assert!(child.wait().unwrap().success(), "{binary} failed");
    let answers: Vec<Answer> = output
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), cases.len(), "{binary} answered every case");
    answers
}

/// The cases of the first `patterns` distinct patterns from `seed`.
fn generate(seed: u64, patterns: usize) -> Vec<Case> {
    let mut generator = Generator::new(seed);
    let mut seen = std::collections::HashSet::new();
    let mut cases = Vec::new();
    while seen.len() < patterns {
        let next = generator.cases();
        if seen.insert(next[0].p.clone()) {
            cases.extend(next);
        }
    }
    cases
}

fn write_recorded(records: &[Recorded], append: bool) {
    let path = recorded_path();
    let mut lines = if append { read_recorded() } else { Vec::new() };
    lines.extend(records.iter().map(|r| Recorded {
        case: r.case.clone(),
        go: r.go.clone(),
    }));
    let file = std::fs::File::create(&path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::best());
    for record in &lines {
        serde_json::to_writer(&mut gz, record).unwrap();
        gz.write_all(b"\n").unwrap();
    }
    gz.finish().unwrap();
}

fn report(failures: &[String], compared: usize) {
    assert!(
        failures.is_empty(),
        "{} of {compared} cases differ from Go; the first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn go_answers_replayed() {
    if std::env::var_os("CAPSTAN_REGEX_ORACLE_WRITE").is_some() {
        let cases = generate(RECORDED_SEED, RECORDED_PATTERNS);
        let answers = ask_go(&cases);
        // A refused pattern is refused whatever the text: its first case is enough.
        let mut refused = std::collections::HashSet::new();
        let records: Vec<Recorded> = cases
            .into_iter()
            .zip(answers)
            .filter(|(case, go)| go.err.is_none() || refused.insert(case.p.clone()))
            .map(|(case, go)| Recorded { case, go })
            .collect();
        write_recorded(&records, false);
    }
    let recorded = read_recorded();
    let patterns: std::collections::HashSet<&str> =
        recorded.iter().map(|r| r.case.p.as_str()).collect();
    assert!(
        patterns.len() >= RECORDED_PATTERNS,
        "{}: {} patterns recorded, expected at least {RECORDED_PATTERNS}",
        recorded_path().display(),
        patterns.len()
    );
    let all = std::env::var_os("CAPSTAN_REGEX_ORACLE_ALL").is_some();
    let funcs = capstan_sprig::functions();
    let mut failures = Vec::new();
    let mut compared = 0;
    let groups = by_pattern(recorded.iter().map(|r| (&r.case, &r.go)));
    for (index, group) in groups.iter().enumerate() {
        if !all && index % SAMPLE_EVERY != 0 {
            continue;
        }
        compared += group.len();
        failures.extend(differences(&funcs, group));
    }
    eprintln!(
        "regex oracle: {compared} of {} recorded cases ({} patterns) compared",
        recorded.len(),
        patterns.len()
    );
    report(&failures, compared);
}

#[test]
fn a_new_seed_agrees_with_go() {
    let Some(seed) = std::env::var("CAPSTAN_REGEX_ORACLE_GROW").ok() else {
        return;
    };
    let seed: u64 = seed
        .parse()
        .expect("CAPSTAN_REGEX_ORACLE_GROW is a number (the seed)");
    let cases = generate(seed, RECORDED_PATTERNS);
    let answers = ask_go(&cases);
    let funcs = capstan_sprig::functions();
    let mut failures = Vec::new();
    let mut grown = Vec::new();
    for group in by_pattern(cases.iter().zip(&answers)) {
        let found = differences(&funcs, &group);
        if !found.is_empty() {
            failures.extend(found);
            grown.extend(group.iter().map(|(case, go)| Recorded {
                case: (*case).clone(),
                go: (*go).clone(),
            }));
        }
    }
    if !grown.is_empty() {
        write_recorded(&grown, true);
    }
    eprintln!(
        "regex oracle: seed {seed}: {} cases compared, {} differ",
        cases.len(),
        failures.len()
    );
    report(&failures, cases.len());
}
