//! `mirror://` chart getter, a Helm 4 Wasm plugin (`getter/v1` on the `extism/v1` runtime).
//!
//! `mirror://HOST[:PORT]/PATH` is fetched as `<upstreamScheme>://HOST[:PORT]/PATH` through
//! the Extism host's HTTP function, so the host decides which hosts the plugin may reach
//! (`allowedHosts`). Helm's `--username`/`--password` (Capstan: the release's Secret) become
//! basic auth. The answer must be a gzip archive; anything else is refused with a message
//! naming the URL, so a mirror serving an HTML error page does not reach Helm as a chart.

use base64::Engine as _;
use extism_pdk::{Error, FnResult, HttpRequest, Json, WithReturnCode, config, http, plugin_fn};
use serde::{Deserialize, Serialize};

/// What Helm sends a getter: the URL, its scheme and Helm's getter options (Go field
/// names, as Helm marshals its options struct without JSON tags).
#[derive(Deserialize)]
struct GetterInput {
    href: String,
    protocol: String,
    #[serde(default)]
    options: GetterOptions,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct GetterOptions {
    #[serde(rename = "Username")]
    username: String,
    #[serde(rename = "Password")]
    password: String,
}

/// What a getter returns: the file's bytes (Go `[]byte`, so standard padded base64).
#[derive(Serialize)]
struct GetterOutput {
    data: String,
}

const PROTOCOL: &str = "mirror";

fn failure(message: String) -> WithReturnCode<Error> {
    WithReturnCode::new(Error::msg(message), 1)
}

/// The upstream URL for `href`, or why there is none.
fn upstream_url(href: &str, scheme: &str) -> Result<String, String> {
    let rest = href
        .strip_prefix(PROTOCOL)
        .and_then(|r| r.strip_prefix("://"))
        .ok_or_else(|| format!("`{href}` is not a {PROTOCOL}:// URL"))?;
    let (host, path) = rest
        .split_once('/')
        .ok_or_else(|| format!("`{href}` names no file after the host"))?;
    if host.is_empty() || path.is_empty() {
        return Err(format!("`{href}` needs a host and a path"));
    }
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "config upstreamScheme must be http or https, not `{scheme}`"
        ));
    }
    Ok(format!("{scheme}://{host}/{path}"))
}

#[plugin_fn]
pub fn helm_plugin_main(Json(input): Json<GetterInput>) -> FnResult<Json<GetterOutput>> {
    if input.protocol != PROTOCOL {
        return Err(failure(format!(
            "mirror-getter serves {PROTOCOL}://, not {}://",
            input.protocol
        )));
    }
    let scheme = config::get("upstreamScheme")?.unwrap_or_else(|| "https".to_owned());
    let url = upstream_url(&input.href, &scheme).map_err(failure)?;
    let mut request = HttpRequest::new(&url).with_method("GET");
    if !input.options.username.is_empty() {
        let token = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            input.options.username, input.options.password
        ));
        request = request.with_header("Authorization", format!("Basic {token}"));
    }
    let response = http::request::<()>(&request, None)
        .map_err(|e| failure(format!("GET {url} failed: {e}")))?;
    let status = response.status_code();
    if status != 200 {
        return Err(failure(format!("GET {url} answered HTTP {status}")));
    }
    let body = response.body();
    if !body.starts_with(&[0x1f, 0x8b]) {
        return Err(failure(format!(
            "GET {url} did not return a gzip chart archive ({} bytes)",
            body.len()
        )));
    }
    Ok(Json(GetterOutput {
        data: base64::engine::general_purpose::STANDARD.encode(body),
    }))
}

#[cfg(test)]
mod tests {
    use super::upstream_url;

    #[test]
    fn mirror_urls_map_to_the_upstream_scheme() {
        assert_eq!(
            upstream_url("mirror://127.0.0.1:8080/charts/web-1.0.0.tgz", "http").as_deref(),
            Ok("http://127.0.0.1:8080/charts/web-1.0.0.tgz")
        );
        assert!(upstream_url("https://h/x.tgz", "http").is_err());
        assert!(upstream_url("mirror://h", "http").is_err());
        assert!(upstream_url("mirror:///x.tgz", "http").is_err());
        assert!(upstream_url("mirror://h/x.tgz", "ftp").is_err());
    }
}
