"""Reading a packaged chart (`helm package` output): find `<name>/Chart.yaml` in the
gzipped tar archive, in memory, and read `name`, `version` and `appVersion`.

Pure Python (no component bindings), so it runs under plain CPython in the unit tests.
The Chart.yaml reader is deliberately tiny (no PyYAML in the component): it reads plain
and quoted scalars of top-level keys, which is what `helm create` and `helm package` write.
"""

import gzip
import io
import tarfile
import zlib
from dataclasses import dataclass
from typing import Optional

# Chart.yaml larger than this is refused rather than read into memory.
MAX_CHART_YAML = 1 << 20

_KEYS = {"name", "version", "appVersion"}


class ChartError(ValueError):
    """The archive is not a packaged chart, or its Chart.yaml cannot be read."""


@dataclass(frozen=True)
class ChartMeta:
    name: str
    version: str
    app_version: Optional[str]


def parse_chart_yaml(text: str) -> ChartMeta:
    """Read `name`, `version` and `appVersion` from the top level of a Chart.yaml."""
    found = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        # Only top-level mapping keys: no indentation, not a comment, not a list item.
        if not line or line[0] in " \t#-" or line in ("---", "..."):
            continue
        key, sep, rest = line.partition(":")
        if not sep or key not in _KEYS:
            continue
        if key in found:
            raise ChartError(f"Chart.yaml line {number}: `{key}` appears twice")
        found[key] = _scalar(rest, key, number)

    for key in ("name", "version"):
        if not found.get(key):
            raise ChartError(f"Chart.yaml has no `{key}`")
    return ChartMeta(
        name=found["name"],
        version=found["version"],
        app_version=found.get("appVersion") or None,
    )


def _scalar(rest: str, key: str, number: int) -> str:
    value = rest.strip()
    if not value or value.startswith("#"):
        return ""
    if value[0] == '"':
        end = 1
        out = []
        while end < len(value):
            c = value[end]
            if c == "\\" and end + 1 < len(value):
                out.append({"n": "\n", "t": "\t"}.get(value[end + 1], value[end + 1]))
                end += 2
                continue
            if c == '"':
                _only_comment_after(value[end + 1 :], key, number)
                return "".join(out)
            out.append(c)
            end += 1
        raise ChartError(f"Chart.yaml line {number}: unterminated string for `{key}`")
    if value[0] == "'":
        end = 1
        out = []
        while end < len(value):
            c = value[end]
            if c == "'":
                if value[end + 1 : end + 2] == "'":
                    out.append("'")
                    end += 2
                    continue
                _only_comment_after(value[end + 1 :], key, number)
                return "".join(out)
            out.append(c)
            end += 1
        raise ChartError(f"Chart.yaml line {number}: unterminated string for `{key}`")
    if value[0] in "|>[{&*!":
        raise ChartError(
            f"Chart.yaml line {number}: `{key}` must be a plain or quoted scalar, not {value[0]!r}"
        )
    # Plain scalar: a comment starts at " #".
    comment = value.find(" #")
    if comment >= 0:
        value = value[:comment].rstrip()
    return value


def _only_comment_after(tail: str, key: str, number: int) -> None:
    tail = tail.strip()
    if tail and not tail.startswith("#"):
        raise ChartError(f"Chart.yaml line {number}: unexpected text after `{key}`'s value")


def read_archive(archive: bytes) -> ChartMeta:
    """Find `<top>/Chart.yaml` in a gzipped tar archive and parse it.

    The archive is read as a stream, once: gzip is opened explicitly (tarfile's "r:gz"
    imports gzip lazily, and componentize-py bundles only the modules the app imports).
    """
    found = {}
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(archive), mode="rb") as unzipped:
            with tarfile.open(fileobj=unzipped, mode="r|") as tar:
                for member in tar:
                    parts = [p for p in member.name.split("/") if p not in ("", ".")]
                    if len(parts) != 2 or parts[1] != "Chart.yaml" or not member.isfile():
                        continue
                    if member.size > MAX_CHART_YAML:
                        raise ChartError(f"{member.name} is larger than {MAX_CHART_YAML} bytes")
                    # A later entry of the same path replaces an earlier one, as on extraction.
                    found["/".join(parts)] = tar.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
        raise ChartError(f"not a gzipped tar archive: {e}") from None
    if not found:
        raise ChartError("the archive has no <chart>/Chart.yaml at its top folder")
    if len(found) > 1:
        raise ChartError(f"the archive holds more than one chart: {', '.join(sorted(found))}")
    ((path, data),) = found.items()
    try:
        # Not "utf-8-sig": codecs are imported lazily, so componentize-py would not bundle it.
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise ChartError(f"{path} is not UTF-8: {e}") from None
    try:
        return parse_chart_yaml(text)
    except ChartError as e:
        raise ChartError(f"{path}: {e}") from None
