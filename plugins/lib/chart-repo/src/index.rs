//! Reading a repository's `index.yaml` and choosing a chart version as Helm does
//! (`repo.IndexFile.Get`): an exact version string wins; otherwise the highest version
//! satisfying the Masterminds constraint (empty means `*`, the latest stable version);
//! pre-releases match only when the constraint names one.
//!
//! Only the entries of the wanted chart are kept in memory: every other chart's list is
//! skipped while parsing, so a large index costs little more than reading it.

use std::fmt;

use capstan_helm::semver::{Constraints, Version};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

/// One version of a chart as listed in the index.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ChartVersion {
    /// Chart name.
    #[serde(default, deserialize_with = "scalar")]
    pub name: String,
    /// Chart version (any YAML scalar, as written).
    #[serde(default, deserialize_with = "scalar")]
    pub version: String,
    /// Where the archive can be downloaded (absolute, or relative to the repository).
    #[serde(default)]
    pub urls: Vec<String>,
    /// Hex sha256 of the archive, if the index records it.
    #[serde(default, deserialize_with = "scalar")]
    pub digest: String,
    /// Version of the packaged application.
    #[serde(default, rename = "appVersion", deserialize_with = "scalar")]
    pub app_version: String,
}

/// Why the index cannot answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexError {
    /// The document is not a Helm repository index.
    Parse(String),
    /// The chart is not in the index.
    NoChart(String),
    /// The constraint does not parse.
    BadConstraint(String, String),
    /// No version matches.
    NoVersion {
        /// Chart name.
        chart: String,
        /// The requested version or constraint.
        wanted: String,
        /// How many versions the index lists for the chart.
        listed: usize,
    },
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::Parse(message) => {
                write!(f, "index.yaml is not a Helm repository index: {message}")
            }
            IndexError::NoChart(chart) => {
                write!(f, "chart `{chart}` is not in the repository index")
            }
            IndexError::BadConstraint(wanted, message) => {
                write!(f, "invalid version constraint `{wanted}`: {message}")
            }
            IndexError::NoVersion {
                chart,
                wanted,
                listed,
            } if wanted.is_empty() => write!(
                f,
                "no stable version of chart `{chart}` in the repository index ({listed} versions listed, none stable)"
            ),
            IndexError::NoVersion {
                chart,
                wanted,
                listed,
            } => write!(
                f,
                "no version of chart `{chart}` matches `{wanted}` ({listed} versions listed)"
            ),
        }
    }
}

/// Any YAML scalar as text (`version: 1.0` is a float to YAML but a version to Helm).
fn scalar<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    struct Scalar;
    impl Visitor<'_> for Scalar {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a scalar")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_owned())
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_unit<E: de::Error>(self) -> Result<String, E> {
            Ok(String::new())
        }
    }
    deserializer.deserialize_any(Scalar)
}

/// Deserializes an index document keeping only `entries[chart]`.
struct OneChart<'a>(&'a str);

struct EntriesOf<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for EntriesOf<'_> {
    type Value = Option<Vec<ChartVersion>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntriesOf<'_> {
    type Value = Option<Vec<ChartVersion>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of chart names to versions")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == self.0 {
                let versions: Option<Vec<Option<ChartVersion>>> = map.next_value()?;
                found = Some(versions.unwrap_or_default().into_iter().flatten().collect());
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

impl<'de> DeserializeSeed<'de> for OneChart<'_> {
    type Value = (bool, Option<Vec<ChartVersion>>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OneChart<'_> {
    type Value = (bool, Option<Vec<ChartVersion>>);
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Helm repository index (a map with `apiVersion` and `entries`)")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut api_version = false;
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "entries" => found = map.next_value_seed(EntriesOf(self.0))?,
                "apiVersion" => {
                    let value: IgnoredAny = map.next_value()?;
                    let _ = value;
                    api_version = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok((api_version, found))
    }
}

/// The versions of `chart` listed in an `index.yaml` document.
pub fn chart_versions(document: &[u8], chart: &str) -> Result<Vec<ChartVersion>, IndexError> {
    let deserializer = serde_yaml_ng::Deserializer::from_slice(document);
    let (api_version, found) = OneChart(chart)
        .deserialize(deserializer)
        .map_err(|e| IndexError::Parse(e.to_string()))?;
    if !api_version {
        // Helm refuses an index without apiVersion ("no API version specified").
        return Err(IndexError::Parse("no API version specified".into()));
    }
    match found {
        Some(versions) if !versions.is_empty() => Ok(versions),
        _ => Err(IndexError::NoChart(chart.to_owned())),
    }
}

/// The entry Helm would pick for `wanted` (an exact version or a constraint; empty means
/// the latest stable version).
pub fn select<'a>(
    chart: &str,
    versions: &'a [ChartVersion],
    wanted: &str,
) -> Result<&'a ChartVersion, IndexError> {
    let wanted = wanted.trim();
    if !wanted.is_empty()
        && let Some(exact) = versions.iter().find(|v| v.version == wanted)
    {
        return Ok(exact);
    }
    let constraint = Constraints::parse(if wanted.is_empty() { "*" } else { wanted })
        .map_err(|e| IndexError::BadConstraint(wanted.to_owned(), e.to_string()))?;
    let mut best: Option<(Version, &ChartVersion)> = None;
    for entry in versions {
        let Ok(version) = Version::parse(&entry.version) else {
            continue;
        };
        if !constraint.check(&version) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|(b, _)| version.compare(b) == std::cmp::Ordering::Greater)
        {
            best = Some((version, entry));
        }
    }
    best.map(|(_, entry)| entry)
        .ok_or_else(|| IndexError::NoVersion {
            chart: chart.to_owned(),
            wanted: wanted.to_owned(),
            listed: versions.len(),
        })
}

/// What the `repository_index` fuzz target (`fuzz/`) and its corpus replay run on one
/// input: parse it as an index, then select over whatever parsed. Errors are answers; only a
/// panic is a finding.
pub fn exercise(bytes: &[u8]) {
    if let Ok(versions) = chart_versions(bytes, "web") {
        for wanted in ["", "1.2.3", ">=1.0.0 <2", "~0.1", "not a version"] {
            let _ = select("web", &versions, wanted);
        }
    }
}

// `as_text` serves the fuzz targets that take text; this one takes bytes.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../../../../fuzz/fuzz_targets/replay.rs"]
mod fuzz_replay;

#[cfg(test)]
mod tests {
    use super::*;

    use super::fuzz_replay as replay;

    /// The committed fuzz corpus (`make fuzz` found it) replayed on the stable toolchain.
    #[test]
    fn fuzz_corpus_replays_without_a_panic() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
        replay::replay(&root, "repository_index", 100, exercise);
    }

    const INDEX: &str = "apiVersion: v1\nentries:\n  other:\n  - {name: other, version: 9.9.9, urls: [o.tgz]}\n  demo:\n  - name: demo\n    version: 1.10.0-rc.1\n    urls: [demo-1.10.0-rc.1.tgz]\n    digest: aa\n  - name: demo\n    version: 1.2.0\n    urls: [demo-1.2.0.tgz]\n    digest: bb\n    appVersion: 2.0\n  - name: demo\n    version: 1.9.3\n    urls: [https://cdn.example.com/demo-1.9.3.tgz]\n    digest: cc\n  - name: demo\n    version: not-a-version\n    urls: [x.tgz]\ngenerated: \"2026-01-01T00:00:00Z\"\n";

    fn pick(wanted: &str) -> Result<String, IndexError> {
        let versions = chart_versions(INDEX.as_bytes(), "demo")?;
        select("demo", &versions, wanted).map(|v| v.version.clone())
    }

    #[test]
    fn keeps_only_the_wanted_chart_and_reads_scalars_as_text() {
        let versions = chart_versions(INDEX.as_bytes(), "demo").unwrap();
        assert_eq!(versions.len(), 4);
        assert_eq!(versions[1].app_version, "2");
        assert_eq!(versions[2].urls, ["https://cdn.example.com/demo-1.9.3.tgz"]);
    }

    #[test]
    fn picks_as_helm_does() {
        assert_eq!(pick("").unwrap(), "1.9.3", "latest stable");
        assert_eq!(pick("~1.2").unwrap(), "1.2.0");
        assert_eq!(pick(">=1.0.0 <1.9").unwrap(), "1.2.0");
        assert_eq!(
            pick(">=1.10.0-0").unwrap(),
            "1.10.0-rc.1",
            "asked for pre-releases"
        );
        assert_eq!(pick("1.10.0-rc.1").unwrap(), "1.10.0-rc.1", "exact");
        assert_eq!(
            pick("not-a-version").unwrap(),
            "not-a-version",
            "exact string"
        );
        assert!(matches!(
            pick(">=2"),
            Err(IndexError::NoVersion { listed: 4, .. })
        ));
        assert!(matches!(pick(">>1"), Err(IndexError::BadConstraint(..))));
    }

    #[test]
    fn missing_chart_and_non_index_are_errors() {
        assert_eq!(
            chart_versions(INDEX.as_bytes(), "nope").unwrap_err(),
            IndexError::NoChart("nope".into())
        );
        assert!(matches!(
            chart_versions(b"<html>not found</html>", "demo"),
            Err(IndexError::Parse(_))
        ));
        assert!(matches!(
            chart_versions(b"entries: {}\n", "demo"),
            Err(IndexError::Parse(_))
        ));
    }
}
