"""The `https-url` source kind: its JSON Schema and the validation of a spec.

Pure Python (no component bindings), so it runs under plain CPython in the unit tests.
The host validates every spec against SCHEMA before calling the plugin; `parse` checks
again so that the plugin never trusts its input and can name the offending field.
"""

import json
import re
from dataclasses import dataclass

KIND = "https-url"
SUMMARY = "A chart archive at a plain HTTPS URL pinned by sha256"

URL_PATTERN = "^https?://"
SHA256_PATTERN = "^[0-9a-f]{64}$"

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "https-url source",
    "description": "A packaged chart (.tgz) downloaded from a URL and checked against its sha256.",
    "type": "object",
    "required": ["url", "sha256"],
    "properties": {
        "url": {
            "type": "string",
            "pattern": URL_PATTERN,
            "description": "Where the chart archive is, e.g. https://example.com/charts/app-1.2.3.tgz.",
        },
        "sha256": {
            "type": "string",
            "pattern": SHA256_PATTERN,
            "description": "Lowercase hex sha256 of the archive; a download with another digest is refused.",
        },
        "insecure": {
            "type": "boolean",
            "description": "Also allow plain http to the URL's host.",
        },
    },
    "additionalProperties": False,
}

SCHEMA_JSON = json.dumps(SCHEMA, separators=(",", ":"))


class SpecError(ValueError):
    """A spec that does not match SCHEMA; `field` is a JSON Pointer into the spec."""

    def __init__(self, field: str, message: str):
        super().__init__(f"spec field `{field}`: {message}")
        self.field = field


@dataclass(frozen=True)
class Spec:
    url: str
    sha256: str
    insecure: bool = False

    @property
    def digest(self) -> str:
        """The pinned digest as Capstan writes digests: `sha256:<hex>`."""
        return f"sha256:{self.sha256}"


def parse(document: str) -> Spec:
    """Parse and validate a spec (a JSON object); raises SpecError naming the field."""
    try:
        value = json.loads(document)
    except (ValueError, TypeError) as e:
        raise SpecError("", f"not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise SpecError("", f"must be a JSON object, not {type(value).__name__}")
    unknown = sorted(set(value) - set(SCHEMA["properties"]))
    if unknown:
        raise SpecError(f"/{unknown[0]}", "unknown field (allowed: url, sha256, insecure)")
    for field in SCHEMA["required"]:
        if field not in value:
            raise SpecError(f"/{field}", "required field is missing")

    url = value["url"]
    if not isinstance(url, str):
        raise SpecError("/url", "must be a string")
    if not re.match(URL_PATTERN, url):
        raise SpecError("/url", f"must start with https:// or http://, got {url!r}")
    if not _has_host(url):
        raise SpecError("/url", f"has no host: {url!r}")

    sha256 = value["sha256"]
    if not isinstance(sha256, str):
        raise SpecError("/sha256", "must be a string")
    if not re.fullmatch(r"[0-9a-f]{64}", sha256):
        raise SpecError("/sha256", "must be 64 lowercase hex digits")

    insecure = value.get("insecure", False)
    if not isinstance(insecure, bool):
        raise SpecError("/insecure", "must be a boolean")

    return Spec(url=url, sha256=sha256, insecure=insecure)


def _has_host(url: str) -> bool:
    rest = url.split("://", 1)[1]
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    host = authority.rsplit("@", 1)[-1]
    return host not in ("", ":") and not host.startswith(":")
