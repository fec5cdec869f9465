"""Unit tests of the `https-url` plugin under plain CPython: `python3 -m pytest`.

`spec.py` and `chartmeta.py` are pure Python and are tested directly. `app.py` imports
the component bindings (`wit_world`), so its tests generate the stub bindings with
`componentize-py bindings` into a temporary folder (skipped when componentize-py is not
installed) and replace the few imported host functions they reach (`outgoing_handler`,
`log`, and the wasi:http resource constructors) with fakes.
"""

import hashlib
import importlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import chartmeta
import spec as specs

HERE = Path(__file__).resolve().parent
# The repository root (its wit/ holds capstan:plugin); CAPSTAN_ROOT overrides.
ROOT = Path(os.environ.get("CAPSTAN_ROOT") or HERE.parents[min(2, len(HERE.parents) - 1)])
DIGEST = "0123456789abcdef" * 4


def spec_json(**fields):
    value = {"url": "https://charts.example.com/hello-0.3.0.tgz", "sha256": DIGEST}
    value.update(fields)
    return json.dumps({k: v for k, v in value.items() if v is not ...})


def chart_archive(files, mode="w:gz"):
    """A tarball of (path, bytes) entries, as `helm package` writes it."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


HELM_CREATE_CHART_YAML = b"""\
apiVersion: v2
name: hello
description: A Helm chart for Kubernetes

# A chart can be either an 'application' or a 'library' chart.
type: application

# This is the chart version.
version: 0.3.0

# This is the version number of the application being deployed.
appVersion: "1.16.0"
"""


# --- spec.py ---------------------------------------------------------------------------


class TestSpec:
    def test_valid_spec(self):
        parsed = specs.parse(spec_json())
        assert parsed == specs.Spec(
            url="https://charts.example.com/hello-0.3.0.tgz", sha256=DIGEST, insecure=False
        )
        assert parsed.digest == f"sha256:{DIGEST}"

    def test_insecure_http(self):
        parsed = specs.parse(spec_json(url="http://127.0.0.1:8080/c.tgz", insecure=True))
        assert parsed.insecure is True
        assert parsed.url == "http://127.0.0.1:8080/c.tgz"

    @pytest.mark.parametrize(
        "document, field, words",
        [
            (spec_json(url=...), "/url", "required"),
            (spec_json(sha256=...), "/sha256", "required"),
            (spec_json(url="ftp://example.com/c.tgz"), "/url", "https://"),
            (spec_json(url="HTTPS://example.com/c.tgz"), "/url", "https://"),
            (spec_json(url="https://"), "/url", "no host"),
            (spec_json(url="https://:443/c.tgz"), "/url", "no host"),
            (spec_json(url=42), "/url", "string"),
            (spec_json(sha256=DIGEST.upper()), "/sha256", "64 lowercase hex"),
            (spec_json(sha256=DIGEST[:-1]), "/sha256", "64 lowercase hex"),
            (spec_json(sha256=DIGEST + "\n"), "/sha256", "64 lowercase hex"),
            (spec_json(sha256=f"sha256:{DIGEST}"), "/sha256", "64 lowercase hex"),
            (spec_json(sha256=None), "/sha256", "string"),
            (spec_json(insecure="yes"), "/insecure", "boolean"),
            (spec_json(insecure=1), "/insecure", "boolean"),
            (spec_json(version="1.0.0"), "/version", "unknown field"),
            ("[]", "", "object"),
            ("{not json", "", "JSON"),
        ],
    )
    def test_invalid_spec_names_the_field(self, document, field, words):
        with pytest.raises(specs.SpecError) as caught:
            specs.parse(document)
        assert caught.value.field == field
        assert f"`{field}`" in str(caught.value)
        assert words in str(caught.value)

    def test_schema_document(self):
        schema = json.loads(specs.SCHEMA_JSON)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["type"] == "object"
        assert schema["required"] == ["url", "sha256"]
        assert schema["additionalProperties"] is False
        assert schema["properties"]["url"] == {
            "type": "string",
            "pattern": "^https?://",
            "description": schema["properties"]["url"]["description"],
        }
        assert schema["properties"]["sha256"]["pattern"] == "^[0-9a-f]{64}$"
        assert schema["properties"]["insecure"]["type"] == "boolean"

    def test_schema_agrees_with_parse(self):
        jsonschema = pytest.importorskip("jsonschema")
        validator = jsonschema.Draft202012Validator(specs.SCHEMA)
        jsonschema.Draft202012Validator.check_schema(specs.SCHEMA)
        for document in [
            spec_json(),
            spec_json(insecure=False),
            spec_json(url=...),
            spec_json(sha256=DIGEST.upper()),
            spec_json(url="ftp://x"),
            spec_json(extra=1),
            spec_json(insecure="no"),
        ]:
            valid = validator.is_valid(json.loads(document))
            try:
                specs.parse(document)
                parsed = True
            except specs.SpecError:
                parsed = False
            assert valid == parsed, document


# --- chartmeta.py ----------------------------------------------------------------------


class TestChartYaml:
    def test_helm_create_chart_yaml(self):
        meta = chartmeta.parse_chart_yaml(HELM_CREATE_CHART_YAML.decode())
        assert meta == chartmeta.ChartMeta(name="hello", version="0.3.0", app_version="1.16.0")

    def test_without_app_version(self):
        meta = chartmeta.parse_chart_yaml("name: hello\nversion: 1.2.3\n")
        assert meta.app_version is None

    def test_quotes_comments_and_documents(self):
        text = (
            "---\n"
            "name: 'it''s'   # a comment\n"
            'version: "1.0.0-rc.1+build.5"\n'
            "appVersion: v2.0 #comment\n"
            "...\n"
        )
        meta = chartmeta.parse_chart_yaml(text)
        assert meta == chartmeta.ChartMeta(
            name="it's", version="1.0.0-rc.1+build.5", app_version="v2.0"
        )

    def test_plain_hash_without_space_is_part_of_the_value(self):
        meta = chartmeta.parse_chart_yaml("name: a#b\nversion: 1.0.0\n")
        assert meta.name == "a#b"

    def test_nested_keys_are_not_top_level(self):
        text = (
            "apiVersion: v2\n"
            "name: parent\n"
            "version: 1.0.0\n"
            "dependencies:\n"
            "  - name: child\n"
            "    version: 9.9.9\n"
            "maintainers:\n"
            "- name: someone\n"
            "annotations:\n"
            "  appVersion: nested\n"
        )
        meta = chartmeta.parse_chart_yaml(text)
        assert meta == chartmeta.ChartMeta(name="parent", version="1.0.0", app_version=None)

    def test_crlf_line_endings(self):
        meta = chartmeta.parse_chart_yaml("name: hello\r\nversion: 0.1.0\r\n")
        assert (meta.name, meta.version) == ("hello", "0.1.0")

    @pytest.mark.parametrize(
        "text, words",
        [
            ("version: 1.0.0\n", "no `name`"),
            ("name: hello\n", "no `version`"),
            ("name: hello\nversion:\n", "no `version`"),
            ("name: a\nname: b\nversion: 1.0.0\n", "appears twice"),
            ("name: >\n  folded\nversion: 1.0.0\n", "plain or quoted scalar"),
            ('name: "open\nversion: 1.0.0\n', "unterminated"),
            ("name: 'a' b\nversion: 1.0.0\n", "unexpected text"),
        ],
    )
    def test_bad_chart_yaml(self, text, words):
        with pytest.raises(chartmeta.ChartError) as caught:
            chartmeta.parse_chart_yaml(text)
        assert words in str(caught.value)


class TestArchive:
    def test_reads_chart_yaml_of_the_top_folder(self):
        archive = chart_archive(
            [
                ("hello/Chart.yaml", HELM_CREATE_CHART_YAML),
                ("hello/values.yaml", b"message: hi\n"),
                ("hello/templates/cm.yaml", b"kind: ConfigMap\n"),
                ("hello/charts/sub/Chart.yaml", b"name: sub\nversion: 9.0.0\n"),
            ]
        )
        meta = chartmeta.read_archive(archive)
        assert meta == chartmeta.ChartMeta(name="hello", version="0.3.0", app_version="1.16.0")

    def test_dot_slash_prefix_and_bom(self):
        archive = chart_archive(
            [("./hello/Chart.yaml", "\ufeffname: hello\nversion: 0.1.0\n".encode())]
        )
        assert chartmeta.read_archive(archive).name == "hello"

    def test_no_chart_yaml(self):
        archive = chart_archive([("Chart.yaml", b"name: a\nversion: 1.0.0\n"), ("x/y", b"")])
        with pytest.raises(chartmeta.ChartError, match="no <chart>/Chart.yaml"):
            chartmeta.read_archive(archive)

    def test_two_charts(self):
        archive = chart_archive(
            [
                ("a/Chart.yaml", b"name: a\nversion: 1.0.0\n"),
                ("b/Chart.yaml", b"name: b\nversion: 1.0.0\n"),
            ]
        )
        with pytest.raises(chartmeta.ChartError, match="more than one chart: a/Chart.yaml, b/"):
            chartmeta.read_archive(archive)

    def test_bad_chart_yaml_names_the_file(self):
        archive = chart_archive([("hello/Chart.yaml", b"name: hello\n")])
        with pytest.raises(chartmeta.ChartError, match="hello/Chart.yaml: Chart.yaml has no"):
            chartmeta.read_archive(archive)

    def test_too_large_chart_yaml(self, monkeypatch):
        monkeypatch.setattr(chartmeta, "MAX_CHART_YAML", 10)
        archive = chart_archive([("hello/Chart.yaml", HELM_CREATE_CHART_YAML)])
        with pytest.raises(chartmeta.ChartError, match="larger than 10 bytes"):
            chartmeta.read_archive(archive)

    @pytest.mark.parametrize(
        "data",
        [
            b"",
            b"<html>not found</html>",
            chart_archive([("hello/Chart.yaml", b"name: a\nversion: 1\n")], mode="w"),
            chart_archive([("hello/Chart.yaml", HELM_CREATE_CHART_YAML)])[:40],
        ],
        ids=["empty", "html", "uncompressed-tar", "truncated"],
    )
    def test_not_a_gzipped_tar(self, data):
        with pytest.raises(chartmeta.ChartError, match="not a gzipped tar archive"):
            chartmeta.read_archive(data)


# --- app.py, against the generated stub bindings ---------------------------------------


def _componentize_py():
    for candidate in (
        os.environ.get("COMPONENTIZE_PY"),
        str(ROOT / "target" / "python-venv" / "bin" / "componentize-py"),
        shutil.which("componentize-py"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def app(tmp_path_factory):
    tool = _componentize_py()
    if tool is None:
        pytest.skip("componentize-py not installed (run build.sh once)")
    if not (ROOT / "wit" / "worlds.wit").is_file():
        pytest.skip(f"no capstan WIT at {ROOT / 'wit'} (set CAPSTAN_ROOT)")
    work = tmp_path_factory.mktemp("bindings")
    shutil.copytree(HERE / "wit", work / "wit", ignore=shutil.ignore_patterns("capstan"))
    (work / "wit" / "deps" / "capstan").mkdir()
    for wit in (ROOT / "wit").glob("*.wit"):
        shutil.copy(wit, work / "wit" / "deps" / "capstan")
    subprocess.run(
        [tool, "-d", "wit", "-w", "url-source", "bindings", "out"],
        cwd=work,
        check=True,
        capture_output=True,
    )
    sys.path.insert(0, str(work / "out"))
    try:
        yield importlib.import_module("app")
    finally:
        sys.path.remove(str(work / "out"))


def _types():
    """The generated `componentize_py_types` (Ok, Err), importable once `app` is."""
    return importlib.import_module("componentize_py_types")


class FakeFields:
    def __init__(self, entries=()):
        self.entries = list(entries)

    def get(self, name):
        return [v for k, v in self.entries if k.lower() == name.lower()]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


class FakeRequest:
    def __init__(self, headers):
        self.headers = headers

    def set_method(self, method):
        self.method = method

    def set_scheme(self, scheme):
        self.scheme = scheme

    def set_authority(self, authority):
        self.authority = authority

    def set_path_with_query(self, path):
        self.path = path


class Server:
    """Answers FakeRequests from a table: (authority, path) -> response or error."""

    def __init__(self, app, routes):
        self.app = app
        self.routes = routes
        self.requests = []
        self.dropped = []

    def handle(self, request, options):
        self.requests.append(request)
        answer = self.routes[(request.authority, request.path)]
        if isinstance(answer, BaseException):
            raise answer
        return FakeFuture(self, answer)


class Closes:
    def __init__(self, server, name):
        self.server, self.name = server, name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.dropped.append(self.name)


class FakeFuture(Closes):
    def __init__(self, server, answer):
        super().__init__(server, "future")
        self.answer = answer

    def subscribe(self):
        pollable = Closes(self.server, "pollable")
        pollable.block = lambda: None
        return pollable

    def get(self):
        Ok, Err = _types().Ok, _types().Err
        if not isinstance(self.answer, tuple):  # a wasi:http error-code
            return Ok(Err(self.answer))
        return Ok(Ok(FakeResponse(self.server, *self.answer)))


class FakeResponse(Closes):
    def __init__(self, server, status, headers=(), chunks=()):
        super().__init__(server, "response")
        self._status, self._headers, self.chunks = status, headers, list(chunks)

    def status(self):
        return self._status

    def headers(self):
        return FakeFields(self._headers)

    def consume(self):
        body = Closes(self.server, "body")
        body.stream = lambda: FakeStream(self.server, self.chunks)
        return body


class FakeStream(Closes):
    def __init__(self, server, chunks):
        super().__init__(server, "stream")
        self.chunks = list(chunks)

    def blocking_read(self, length):
        streams = self.server.app.streams
        if not self.chunks:
            raise self.server.app.Err(streams.StreamError_Closed())
        chunk = self.chunks.pop(0)
        if isinstance(chunk, BaseException):
            raise chunk
        return chunk


@pytest.fixture
def serve(app, monkeypatch):
    logs = []
    monkeypatch.setattr(app.log, "log", lambda level, message: logs.append((level, message)))
    monkeypatch.setattr(app.http, "Fields", FakeFields)
    monkeypatch.setattr(app.http, "OutgoingRequest", FakeRequest)

    def start(routes):
        server = Server(app, routes)
        server.logs = logs
        monkeypatch.setattr(app.outgoing_handler, "handle", server.handle)
        return server

    return start


@pytest.fixture
def ok_archive():
    archive = chart_archive([("hello/Chart.yaml", HELM_CREATE_CHART_YAML)])
    return archive, hashlib.sha256(archive).hexdigest()


def request(app, **fields):
    return app.SourceRequest(kind="https-url", spec=spec_json(**fields))


def revision(app, sha256):
    return app.Revision(id=f"sha256:{sha256}", content_id=f"sha256:{sha256}")


def error_of(app, call):
    with pytest.raises(app.Err) as caught:
        call()
    error = caught.value.value
    assert isinstance(error, app.Error)
    return error


class TestApp:
    def test_describe(self, app):
        (kind,) = app.Source().describe().kinds
        assert kind.name == "https-url"
        assert kind.summary == "A chart archive at a plain HTTPS URL pinned by sha256"
        assert json.loads(kind.spec_schema) == specs.SCHEMA
        caps = kind.capabilities
        assert caps.git_url_field is None
        assert caps.secret_keys == []
        assert caps.http == [
            app.HttpAccess(
                url_field="/url",
                insecure_field="/insecure",
                send_credentials=True,
                shared_document=None,
            )
        ]

    def test_resolve_needs_no_network(self, app, serve):
        server = serve({})
        got = app.Source().resolve(request(app))
        assert got == revision(app, DIGEST)
        assert server.requests == []

    def test_resolve_refuses_bad_spec(self, app):
        error = error_of(app, lambda: app.Source().resolve(request(app, sha256="abc")))
        assert error.code == app.ErrorCode.INVALID_INPUT
        assert "/sha256" in error.message
        assert error.retryable is False

    def test_resolve_refuses_other_kinds(self, app):
        other = app.SourceRequest(kind="s3", spec=spec_json())
        error = error_of(app, lambda: app.Source().resolve(other))
        assert error.code == app.ErrorCode.INVALID_INPUT
        assert "`s3`" in error.message

    def test_fetch_follows_redirects_and_reads_chunks(self, app, serve, ok_archive):
        archive, sha = ok_archive
        server = serve(
            {
                ("charts.example.com", "/hello-0.3.0.tgz"): (
                    302,
                    [("Location", b"/dl/hello.tgz?sig=1")],
                ),
                ("charts.example.com", "/dl/hello.tgz?sig=1"): (
                    200,
                    [],
                    [archive[:100], archive[100:]],
                ),
            }
        )
        artifact = app.Source().fetch(request(app, sha256=sha), revision(app, sha))
        assert artifact.archive == archive
        assert artifact.digest == f"sha256:{sha}"
        assert artifact.metadata == app.ChartMetadata(
            name="hello", version="0.3.0", app_version="1.16.0"
        )
        first, second = server.requests
        assert isinstance(first.method, app.http.Method_Get)
        assert isinstance(first.scheme, app.http.Scheme_Https)
        assert second.path == "/dl/hello.tgz?sig=1"
        # Every child resource is dropped, and before its parent.
        assert server.dropped.count("response") == 2
        assert server.dropped[-3:] == ["stream", "body", "response"]
        level, message = server.logs[-1]
        assert level == app.log.Level.DEBUG
        assert f"downloaded https://charts.example.com/dl/hello.tgz?sig=1: {len(archive)} bytes" in message
        assert "chart hello 0.3.0" in message

    def test_fetch_sends_no_user_info(self, app, serve, ok_archive):
        archive, sha = ok_archive
        server = serve({("h.example:8443", "/"): (200, [], [archive])})
        spec = request(app, url="http://user:pw@h.example:8443", sha256=sha)
        app.Source().fetch(spec, revision(app, sha))
        (sent,) = server.requests
        assert sent.authority == "h.example:8443"
        assert isinstance(sent.scheme, app.http.Scheme_Http)

    def test_fetch_refuses_a_digest_mismatch(self, app, serve, ok_archive):
        archive, sha = ok_archive
        serve({("charts.example.com", "/hello-0.3.0.tgz"): (200, [], [archive])})
        error = error_of(
            app, lambda: app.Source().fetch(request(app), revision(app, DIGEST))
        )
        assert error.code == app.ErrorCode.INVALID_INPUT
        assert f"sha256:{sha}" in error.message and f"sha256:{DIGEST}" in error.message

    def test_fetch_refuses_a_revision_of_another_digest(self, app, serve):
        serve({})
        error = error_of(
            app, lambda: app.Source().fetch(request(app), revision(app, "f" * 64))
        )
        assert error.code == app.ErrorCode.INVALID_INPUT

    @pytest.mark.parametrize(
        "status, code, retryable",
        [
            (404, "NOT_FOUND", False),
            (410, "NOT_FOUND", False),
            (401, "INVALID_INPUT", False),
            (403, "INVALID_INPUT", False),
            (500, "UNAVAILABLE", True),
            (503, "UNAVAILABLE", True),
        ],
    )
    def test_fetch_maps_http_status(self, app, serve, status, code, retryable):
        serve({("charts.example.com", "/hello-0.3.0.tgz"): (status, [], [b"nope"])})
        error = error_of(app, lambda: app.Source().fetch(request(app), revision(app, DIGEST)))
        assert error.code == getattr(app.ErrorCode, code)
        assert f"HTTP {status}" in error.message
        assert error.retryable is retryable

    def test_fetch_maps_denied_request(self, app, serve):
        denied = app.Err(app.http.ErrorCode_HttpRequestDenied())
        serve({("charts.example.com", "/hello-0.3.0.tgz"): denied})
        error = error_of(app, lambda: app.Source().fetch(request(app), revision(app, DIGEST)))
        assert error.code == app.ErrorCode.DENIED
        assert "charts.example.com" in error.message

    def test_fetch_maps_connection_problems(self, app, serve):
        serve({("charts.example.com", "/hello-0.3.0.tgz"): app.http.ErrorCode_ConnectionRefused()})
        error = error_of(app, lambda: app.Source().fetch(request(app), revision(app, DIGEST)))
        assert error.code == app.ErrorCode.UNAVAILABLE
        assert "ConnectionRefused" in error.message
        assert error.retryable is True

    def test_fetch_maps_timeouts(self, app, serve):
        serve({("charts.example.com", "/hello-0.3.0.tgz"): app.http.ErrorCode_ConnectionTimeout()})
        error = error_of(app, lambda: app.Source().fetch(request(app), revision(app, DIGEST)))
        assert error.code == app.ErrorCode.TIMEOUT

    def test_fetch_gives_up_after_ten_redirects(self, app, serve):
        routes = {
            ("charts.example.com", f"/r{i}"): (301, [("location", f"/r{i + 1}".encode())])
            for i in range(20)
        }
        routes[("charts.example.com", "/hello-0.3.0.tgz")] = (
            307,
            [("location", b"https://charts.example.com/r0")],
        )
        server = serve(routes)
        error = error_of(app, lambda: app.Source().fetch(request(app), revision(app, DIGEST)))
        assert error.code == app.ErrorCode.UNAVAILABLE
        assert "more than 10" in error.message
        assert len(server.requests) == 11

    def test_fetch_refuses_a_non_chart(self, app, serve):
        body = b"<html>hello</html>"
        sha = hashlib.sha256(body).hexdigest()
        serve({("charts.example.com", "/hello-0.3.0.tgz"): (200, [], [body])})
        error = error_of(
            app, lambda: app.Source().fetch(request(app, sha256=sha), revision(app, sha))
        )
        assert error.code == app.ErrorCode.INVALID_INPUT
        assert "not a gzipped tar archive" in error.message

    def test_unexpected_exceptions_become_internal_errors(self, app, serve):
        serve({("charts.example.com", "/hello-0.3.0.tgz"): (200, [], [RuntimeError("boom")])})
        error = error_of(app, lambda: app.Source().fetch(request(app), revision(app, DIGEST)))
        assert error.code == app.ErrorCode.INTERNAL
        assert "RuntimeError: boom" in error.message
