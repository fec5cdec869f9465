//! The whole of `helm template` for a loaded chart: the chart's `kubeVersion` checked,
//! library charts and missing dependencies refused, dependencies enabled/aliased/imported
//! against the user's values, values coalesced and checked against `values.schema.json`,
//! templates rendered, and the output split into manifests, hooks and notes.

use capstan_gotmpl::value::Value;

use crate::chart::Chart;
use crate::engine::{RenderError, RenderOptions, render, render_values};
use crate::output::{Assembled, OutputError, assemble};

/// Why a chart could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HelmError {
    /// The chart's `kubeVersion` excludes the target cluster.
    #[error(
        "chart requires kubeVersion: {required} which is incompatible with Kubernetes {actual}"
    )]
    KubeVersion {
        /// The chart's constraint.
        required: String,
        /// The cluster version.
        actual: String,
    },
    /// Dependency processing failed.
    #[error("{0}")]
    Dependencies(String),
    /// Values could not be coalesced or failed the schema.
    #[error("{0}")]
    Values(String),
    /// A file of the chart passed unread could not be read when a template asked for it.
    #[error("{0}")]
    Files(String),
    /// A template failed.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// A rendered document is not valid.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The post-renderer failed, or a document could not be sent to it.
    #[error(transparent)]
    PostRender(#[from] crate::postrender::PostRenderError),
}

/// Render `chart` with the user's values (already merged from `-f`/`--set`), as
/// `helm install --dry-run` / `helm template` would.
pub fn render_chart(
    mut chart: Chart,
    user_values: &Value,
    options: &RenderOptions,
    subchart_notes: bool,
) -> Result<Assembled, HelmError> {
    let required = chart.metadata.kube_version.clone();
    let actual = options.capabilities.kube_version.clone();
    if !required.is_empty() && !crate::semver::is_compatible_range(&required, &actual) {
        return Err(HelmError::KubeVersion { required, actual });
    }
    crate::dependencies::check_installable(&chart)
        .map_err(|e| HelmError::Dependencies(e.to_string()))?;
    crate::dependencies::process_dependencies(&mut chart, user_values)
        .map_err(|e| HelmError::Dependencies(e.to_string()))?;
    let values = crate::values::coalesce_values(&chart, user_values)
        .map_err(|e| HelmError::Values(e.to_string()))?;
    crate::schema::validate_against_schema(&chart, &values)
        .map_err(|e| HelmError::Values(e.to_string()))?;
    let top = render_values(&chart, &values, options);
    let rendered = render(&chart, &top, options);
    // A file passed unread that a template asked for and that could not be read: the
    // render saw it empty, so its output is not to be trusted (this wins over a template
    // error the empty file may have caused).
    if let Some(failure) = chart.read_failure() {
        return Err(HelmError::Files(failure));
    }
    let mut files = rendered?;
    if let Some(post_render) = &options.post_render {
        files = crate::postrender::post_render_files(files, post_render)?;
    }
    // Helm 2 rendering (a Tiller version) keeps Helm 2's own hooks.
    let helm2 = options.capabilities.tiller_version.is_some();
    let assembled = assemble(chart.name(), files, subchart_notes, helm2)?;
    if options.skip_teardown {
        std::mem::forget(top);
        std::mem::forget(values);
        std::mem::forget(chart);
    }
    Ok(assembled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::File;

    fn chart(files: &[(&str, &str)]) -> Chart {
        crate::load::load_files(
            files
                .iter()
                .map(|(name, text)| File {
                    name: (*name).to_owned(),
                    data: std::sync::Arc::new(text.as_bytes().to_vec()),
                    unread: None,
                })
                .collect(),
        )
        .unwrap()
    }

    /// Reads from a map and counts what it was asked for; files named in `broken` fail.
    struct CountingReader {
        files: std::collections::BTreeMap<&'static str, &'static str>,
        broken: &'static [&'static str],
        asked: std::sync::Mutex<Vec<String>>,
    }

    impl crate::chart::FileReader for CountingReader {
        fn read(&self, path: &str) -> Result<Vec<u8>, String> {
            self.asked.lock().unwrap().push(path.to_owned());
            if self.broken.contains(&path) {
                return Err("it is gone".to_owned());
            }
            self.files
                .get(path)
                .map(|text| text.as_bytes().to_vec())
                .ok_or_else(|| "no such file".to_owned())
        }
    }

    /// A folder passed in part renders as the whole folder does, reading the unread files
    /// the loader or a template needs and no others; an unread file a template asks for
    /// and that cannot be read fails the render, naming it.
    #[test]
    fn a_folder_in_part_reads_only_what_the_render_needs() {
        use crate::package::{SourceFile, load_folder, load_folder_in_part};
        let all = [
            ("Chart.yaml", "apiVersion: v2\nname: part\nversion: 1.0.0\n"),
            (".helmignore", "ignored.txt\n"),
            ("values.yaml", "greeting: hello\n"),
            ("README.md", "# never read\n"),
            ("ignored.txt", "never read either\n"),
            ("crds/crd.yaml", "kind: CustomResourceDefinition\n"),
            ("files/used.txt", "\u{feff}from a file\n"),
            (
                "charts/sub/Chart.yaml",
                "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
            ),
            (
                "charts/sub/templates/cm.yaml",
                "kind: ConfigMap\ndata:\n  n: {{ len .Files }}\n",
            ),
            ("charts/sub/notes.md", "sub notes\n"),
            (
                "templates/cm.yaml",
                "kind: ConfigMap\ndata:\n  greeting: {{ .Values.greeting }}\n  file: {{ .Files.Get \"files/used.txt\" | trim }}\n  globbed: {{ .Files.Glob \"crds/*\" | len }}\n",
            ),
        ];
        let source = |path: &str, text: &str| SourceFile {
            path: path.to_owned(),
            executable: false,
            contents: text.as_bytes().to_vec(),
        };
        let whole = load_folder(all.iter().map(|(p, t)| source(p, t)).collect()).unwrap();
        let options = RenderOptions::default();
        let expected = render_chart(whole, &Value::new_map(), &options, false).unwrap();
        // Chart.yaml, templates and the subchart's metadata read ahead; the rest unread.
        let ahead = |path: &str| path.ends_with("Chart.yaml") || path.contains("templates/");
        let render_in_part = |broken: &'static [&'static str]| {
            let reader = std::sync::Arc::new(CountingReader {
                files: all.iter().copied().collect(),
                broken,
                asked: Default::default(),
            });
            let chart = load_folder_in_part(
                all.iter()
                    .filter(|(p, _)| ahead(p))
                    .map(|(p, t)| source(p, t))
                    .collect(),
                all.iter()
                    .filter(|(p, _)| !ahead(p))
                    .map(|(p, t)| ((*p).to_owned(), t.len() as u64))
                    .collect(),
                reader.clone(),
            );
            let outcome = chart.and_then(|chart| {
                render_chart(chart, &Value::new_map(), &options, false).map_err(|e| e.to_string())
            });
            let mut asked = reader.asked.lock().unwrap().clone();
            asked.sort();
            (outcome, asked)
        };
        let (rendered, asked) = render_in_part(&[]);
        let rendered = rendered.unwrap();
        assert_eq!(rendered.manifests.len(), expected.manifests.len());
        for (got, want) in rendered.manifests.iter().zip(&expected.manifests) {
            assert_eq!(got.content, want.content);
        }
        assert!(
            rendered.manifests[1].content.contains("file: from a file"),
            "{}",
            rendered.manifests[1].content
        );
        // `len` of `.Files` reads the subchart's files (it counts entries, contents and all).
        assert_eq!(
            asked,
            [
                ".helmignore",
                "charts/sub/notes.md",
                "crds/crd.yaml",
                "files/used.txt",
                "values.yaml"
            ]
        );
        // A file no template reads may be unreadable; one a template reads may not.
        let (rendered, _) = render_in_part(&["README.md", "ignored.txt"]);
        assert!(rendered.is_ok(), "{rendered:?}");
        let (failed, _) = render_in_part(&["files/used.txt"]);
        assert_eq!(
            failed.unwrap_err(),
            "cannot read files/used.txt: it is gone"
        );
        let (failed, _) = render_in_part(&["values.yaml"]);
        let message = failed.unwrap_err();
        assert!(
            message.contains("values.yaml") && message.contains("it is gone"),
            "{message}"
        );
    }

    #[test]
    fn helm_2_rendering_sees_tiller_and_keeps_crd_install_hooks() {
        let files = [
            ("Chart.yaml", "apiVersion: v1\nname: old\nversion: 1.0.0\n"),
            (
                "templates/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  service: {{ .Release.Service }}\n  tiller: {{ .Capabilities.TillerVersion.SemVer }}\n  recent: {{ gt .Release.Time.Seconds 1700000000 }}\n",
            ),
            (
                "templates/crd.yaml",
                "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: a.b\n  annotations:\n    helm.sh/hook: crd-install\n",
            ),
        ];
        let mut options = RenderOptions::default();
        options.capabilities.tiller_version = Some("v2.17.0".into());
        let helm2 = render_chart(chart(&files), &Value::new_map(), &options, false).unwrap();
        let text = &helm2.manifests[0].content;
        assert!(text.contains("service: Tiller"), "{text}");
        assert!(text.contains("tiller: v2.17.0"), "{text}");
        assert!(text.contains("recent: true"), "{text}");
        assert_eq!(helm2.hooks.len(), 1);
        assert_eq!(helm2.hooks[0].events, ["crd-install"]);

        // Helm 3 rendering of the same chart: no Tiller, and the crd-install document
        // is dropped as Helm 3 drops it.
        let helm3 = render_chart(
            chart(&files[..1]),
            &Value::new_map(),
            &RenderOptions::default(),
            false,
        )
        .unwrap();
        assert!(helm3.manifests.is_empty());
        let dropped = render_chart(
            chart(&[files[0], files[2]]),
            &Value::new_map(),
            &RenderOptions::default(),
            false,
        )
        .unwrap();
        assert!(dropped.hooks.is_empty() && dropped.manifests.is_empty());
        let tiller_in_helm3 = render_chart(
            chart(&files),
            &Value::new_map(),
            &RenderOptions::default(),
            false,
        );
        assert!(
            tiller_in_helm3
                .unwrap_err()
                .to_string()
                .contains("can't evaluate field TillerVersion"),
        );
    }
}
