//! Helm's post-render step (`renderResources` with a `--post-renderer`): between rendering
//! and sorting, every rendered document leaves the engine with the template file it came
//! from, a post-renderer may change, add or drop documents, and what it gives back is
//! grouped by file again and sorted as if the templates had rendered it. NOTES, partials
//! and blank files are not sent, as in Helm.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::output::{OutputError, head_of, split_manifests};

/// One rendered document as a post-renderer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The template file it came from.
    pub source: String,
    /// Whether it carries `helm.sh/hook`.
    pub hook: bool,
    /// YAML text.
    pub text: String,
}

/// A post-renderer: the documents in, the documents to sort out; `None` leaves the render
/// as it is (no post-renderer configured).
pub type PostRenderFn = Rc<dyn Fn(Vec<Document>) -> Result<Option<Vec<Document>>, String>>;

/// Why post-rendering failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PostRenderError {
    /// A rendered document could not be read to send it.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The post-renderer refused.
    #[error("error while running post render on files: {0}")]
    Failed(String),
}

fn is_note(path: &str) -> bool {
    path.ends_with("NOTES.txt")
}

fn is_partial_or_blank(path: &str, content: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.starts_with('_') || content.trim().is_empty()
}

/// The documents of rendered `files`, in file then document order.
pub fn documents(files: &BTreeMap<String, String>) -> Result<Vec<Document>, OutputError> {
    let mut documents = Vec::new();
    for (path, content) in files {
        if is_note(path) || is_partial_or_blank(path, content) {
            continue;
        }
        for text in split_manifests(content) {
            if text.trim().is_empty() {
                continue;
            }
            let hook = head_of(path, &text)?
                .annotations
                .contains_key("helm.sh/hook");
            documents.push(Document {
                source: path.clone(),
                hook,
                text,
            });
        }
    }
    Ok(documents)
}

/// Run `post_render` over rendered `files`: the files to sort afterwards (NOTES kept as
/// they were, each other file holding the documents the post-renderer attributed to it).
pub fn post_render_files(
    files: BTreeMap<String, String>,
    post_render: &PostRenderFn,
) -> Result<BTreeMap<String, String>, PostRenderError> {
    let sent = documents(&files)?;
    let Some(returned) = post_render(sent).map_err(PostRenderError::Failed)? else {
        return Ok(files);
    };
    let mut out: BTreeMap<String, String> = files
        .into_iter()
        .filter(|(path, _)| is_note(path))
        .collect();
    for document in returned {
        match out.get_mut(&document.source) {
            Some(existing) => {
                existing.push_str("\n---\n");
                existing.push_str(&document.text);
            }
            None => {
                out.insert(document.source, document.text);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(p, c)| ((*p).to_owned(), (*c).to_owned()))
            .collect()
    }

    #[test]
    fn documents_leave_with_their_file_and_hook_flag_and_notes_stay() {
        let rendered = files(&[
            ("c/templates/NOTES.txt", "hello"),
            ("c/templates/_helpers.tpl", "kind: Ignored"),
            ("c/templates/blank.yaml", "  \n"),
            (
                "c/templates/two.yaml",
                "kind: ConfigMap\nmetadata:\n  name: a\n---\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: pre-install\n",
            ),
        ]);
        let sent = documents(&rendered).unwrap();
        assert_eq!(
            sent.iter()
                .map(|d| (d.source.as_str(), d.hook))
                .collect::<Vec<_>>(),
            [
                ("c/templates/two.yaml", false),
                ("c/templates/two.yaml", true)
            ]
        );
        let renamed: PostRenderFn = Rc::new(|docs: Vec<Document>| {
            Ok(Some(
                docs.into_iter()
                    .map(|mut d| {
                        d.text = d.text.replace("name: a", "name: b");
                        d
                    })
                    .chain([Document {
                        source: "generated-by-postrender-2.yaml".into(),
                        hook: false,
                        text: "kind: Secret\nmetadata:\n  name: s\n".into(),
                    }])
                    .collect(),
            ))
        });
        let out = post_render_files(rendered, &renamed).unwrap();
        assert_eq!(out["c/templates/NOTES.txt"], "hello");
        assert!(!out.contains_key("c/templates/_helpers.tpl"));
        assert!(out["c/templates/two.yaml"].contains("name: b\n---\nkind: Job"));
        assert!(out.contains_key("generated-by-postrender-2.yaml"));
    }

    #[test]
    fn no_post_renderer_keeps_the_files_and_a_refusal_is_named() {
        let rendered = files(&[("c/templates/a.yaml", "kind: ConfigMap\n")]);
        let none: PostRenderFn = Rc::new(|_| Ok(None));
        assert_eq!(
            post_render_files(rendered.clone(), &none).unwrap(),
            rendered
        );
        let refusing: PostRenderFn = Rc::new(|_| Err("patch 0 failed".into()));
        assert_eq!(
            post_render_files(rendered, &refusing)
                .unwrap_err()
                .to_string(),
            "error while running post render on files: patch 0 failed"
        );
    }
}
