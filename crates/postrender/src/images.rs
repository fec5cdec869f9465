//! Kustomize's `images`: every `image` of the items of any `containers` or
//! `initContainers` list in an object (Pods, pod templates, CronJob job templates,
//! custom resources alike, as Kustomize's image transformer finds them) whose name matches
//! gets a new name, tag or digest.

use serde_json::Value;

use capstan_api::ImageOverride;

/// An image reference split as Kustomize splits it: `name`, `tag`, `digest` (a registry
/// port before the first `/` is part of the name).
fn split(image: &str) -> (&str, &str, &str) {
    let search_from = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let rest = &image[search_from..];
    let at = rest.find('@').map(|i| i + search_from);
    let colon = rest.find(':').map(|i| i + search_from);
    if let Some(at) = at
        && colon.is_none_or(|c| at < c)
    {
        return (&image[..at], "", &image[at + 1..]);
    }
    match (colon, at) {
        (Some(colon), Some(at)) => (&image[..colon], &image[colon + 1..at], &image[at + 1..]),
        (Some(colon), None) => (&image[..colon], &image[colon + 1..], ""),
        (None, _) => (image, "", ""),
    }
}

/// The image after `rule`, or `None` when the rule does not name it.
fn apply(image: &str, rule: &ImageOverride) -> Option<String> {
    let (name, tag, digest) = split(image);
    if name != rule.name {
        return None;
    }
    let non_empty = |s: &Option<String>| s.as_deref().filter(|s| !s.is_empty()).map(str::to_owned);
    let name = non_empty(&rule.new_name).unwrap_or_else(|| name.to_owned());
    let (tag, digest) = match (non_empty(&rule.new_tag), non_empty(&rule.digest)) {
        (Some(t), Some(d)) => (t, d),
        (Some(t), None) => (t, String::new()),
        (None, Some(d)) => (String::new(), d),
        (None, None) => (tag.to_owned(), digest.to_owned()),
    };
    let mut out = name;
    if !tag.is_empty() {
        out.push(':');
        out.push_str(&tag);
    }
    if !digest.is_empty() {
        out.push('@');
        out.push_str(&digest);
    }
    Some(out)
}

/// Apply every rule to every container image found in `value`.
pub fn override_images(value: &mut Value, rules: &[ImageOverride]) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if matches!(key.as_str(), "containers" | "initContainers")
                    && let Value::Array(items) = child
                {
                    for item in items.iter_mut() {
                        if let Some(Value::String(image)) = item.get_mut("image") {
                            for rule in rules {
                                if let Some(new) = apply(image, rule) {
                                    *image = new;
                                }
                            }
                        }
                    }
                }
                override_images(child, rules);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| override_images(i, rules)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(
        name: &str,
        new_name: Option<&str>,
        tag: Option<&str>,
        digest: Option<&str>,
    ) -> ImageOverride {
        ImageOverride {
            name: name.into(),
            new_name: new_name.map(Into::into),
            new_tag: tag.map(Into::into),
            digest: digest.map(Into::into),
        }
    }

    #[test]
    fn references_split_as_kustomize_splits_them() {
        assert_eq!(split("nginx"), ("nginx", "", ""));
        assert_eq!(split("nginx:1.25"), ("nginx", "1.25", ""));
        assert_eq!(split("reg:5000/app:v1"), ("reg:5000/app", "v1", ""));
        assert_eq!(
            split("reg:5000/app@sha256:ab"),
            ("reg:5000/app", "", "sha256:ab")
        );
        assert_eq!(split("app:v1@sha256:ab"), ("app", "v1", "sha256:ab"));
    }

    #[test]
    fn name_tag_and_digest_are_replaced_where_containers_are() {
        let mut cronjob = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "initContainers": [{"name": "i", "image": "busybox:1.36"}],
            "containers": [{"name": "a", "image": "nginx:1.25"}, {"name": "b", "image": "nginxinc/nginx:1"}]
        }}}}}});
        override_images(
            &mut cronjob,
            &[
                rule("nginx", Some("reg.example/nginx"), Some("1.27"), None),
                rule("busybox", None, None, Some("sha256:00ff")),
            ],
        );
        let spec = &cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"];
        assert_eq!(spec["containers"][0]["image"], "reg.example/nginx:1.27");
        assert_eq!(spec["containers"][1]["image"], "nginxinc/nginx:1");
        assert_eq!(spec["initContainers"][0]["image"], "busybox@sha256:00ff");
        assert_eq!(
            apply("app:v1@sha256:1", &rule("app", None, Some("v2"), None)).unwrap(),
            "app:v2"
        );
        assert_eq!(
            apply("app:v1", &rule("app", None, None, None)).unwrap(),
            "app:v1"
        );
    }
}
