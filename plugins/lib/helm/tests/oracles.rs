//! capstan-helm against the rendering oracles recorded from real Helm
//! (`tests/oracles/*.yaml`: Go's number syntax, CRLF charts, library charts): each case is
//! written as a chart folder, loaded and rendered as `helm template rel CHART --namespace ns`
//! would, and must print exactly Helm's output, or fail with exactly Helm's message.
//! No Helm is needed here; the tool-stage test keeps the recordings true to the real Helm.

use capstan_helm::oracles::{Case, oracle_files, read_cases};

#[test]
fn capstan_helm_prints_what_real_helm_printed() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in oracle_files().unwrap() {
        let (_, cases) = read_cases(&file).unwrap();
        for case in cases {
            let dir = tempfile::tempdir().unwrap();
            case.write_chart(dir.path()).unwrap();
            let ours = Case::render_folder(dir.path());
            let verdict = match case.recorded() {
                None => Some("no oracle recorded: run `make oracles`".to_owned()),
                Some(helm) if helm == ours => None,
                Some(helm) => Some(format!("Helm gave {helm:?}, we {ours:?}")),
            };
            checked += 1;
            if let Some(why) = verdict {
                failures.push(format!("{} [{}]: {why}", file.display(), case.name));
            }
        }
    }
    assert!(checked > 0, "no oracle cases found");
    assert!(
        failures.is_empty(),
        "{} of {checked} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
