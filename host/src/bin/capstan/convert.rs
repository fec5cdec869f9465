//! `capstan convert`: Flux Helm Operator HelmReleases to Capstan's API.

use anyhow::Context;

pub(crate) fn convert(file: &std::path::Path) -> anyhow::Result<()> {
    use std::io::Read;
    let mut text = String::new();
    if file == std::path::Path::new("-") {
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
    } else {
        text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
    }
    let converted =
        capstan::convert::convert(&text).with_context(|| format!("{}", file.display()))?;
    for (i, document) in converted.iter().enumerate() {
        for note in &document.notes {
            eprintln!("note: {note}");
        }
        if i > 0 {
            println!("---");
        }
        print!("{}", serde_yaml_ng::to_string(&document.release)?);
    }
    Ok(())
}
