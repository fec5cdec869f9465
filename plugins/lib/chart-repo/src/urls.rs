//! Repository URLs as Helm builds them: the index lives at `<repository>/index.yaml`
//! (query kept), and a chart URL from the index is used as is when absolute, otherwise
//! resolved against the repository URL taken as a folder, keeping the repository's query
//! (`repo.ResolveReferenceURL`).

use url::Url;

/// Parse the repository URL (http or https only).
pub fn repository(text: &str) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("invalid repository URL: {e}"))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(format!(
            "unsupported repository URL scheme `{other}` (only http and https)"
        )),
    }
}

/// `<repository>/index.yaml`.
pub fn index(repository: &Url) -> Url {
    let mut url = repository.clone();
    let path = format!("{}/index.yaml", repository.path().trim_end_matches('/'));
    url.set_path(&path);
    url
}

/// Where the index says a chart archive is, resolved against the repository.
pub fn chart(repository: &Url, reference: &str) -> Result<Url, String> {
    if let Ok(absolute) = Url::parse(reference) {
        return Ok(absolute);
    }
    let mut base = repository.clone();
    let folder = format!("{}/", repository.path().trim_end_matches('/'));
    base.set_path(&folder);
    let mut resolved = base
        .join(reference)
        .map_err(|e| format!("invalid chart URL `{reference}` in the index: {e}"))?;
    resolved.set_query(repository.query());
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(text: &str) -> Url {
        repository(text).unwrap()
    }

    #[test]
    fn index_url_keeps_the_query() {
        assert_eq!(
            index(&repo("http://h:8/charts")).as_str(),
            "http://h:8/charts/index.yaml"
        );
        assert_eq!(
            index(&repo("http://h/charts/")).as_str(),
            "http://h/charts/index.yaml"
        );
        assert_eq!(index(&repo("https://h")).as_str(), "https://h/index.yaml");
        assert_eq!(
            index(&repo("https://h/c?token=1")).as_str(),
            "https://h/c/index.yaml?token=1"
        );
    }

    #[test]
    fn chart_urls_resolve_like_helm() {
        let base = repo("http://h:8/charts?sig=x");
        assert_eq!(
            chart(&base, "demo-1.0.0.tgz").unwrap().as_str(),
            "http://h:8/charts/demo-1.0.0.tgz?sig=x"
        );
        assert_eq!(
            chart(&base, "sub/demo.tgz").unwrap().as_str(),
            "http://h:8/charts/sub/demo.tgz?sig=x"
        );
        assert_eq!(
            chart(&base, "/root/demo.tgz").unwrap().as_str(),
            "http://h:8/root/demo.tgz?sig=x"
        );
        assert_eq!(
            chart(&base, "../up/demo.tgz").unwrap().as_str(),
            "http://h:8/up/demo.tgz?sig=x"
        );
        assert_eq!(
            chart(&base, "https://cdn.example.com/demo.tgz")
                .unwrap()
                .as_str(),
            "https://cdn.example.com/demo.tgz"
        );
    }

    #[test]
    fn only_http_schemes() {
        assert!(
            repository("oci://registry/charts")
                .unwrap_err()
                .contains("oci")
        );
        assert!(repository("not a url").is_err());
    }
}
