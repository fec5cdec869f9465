"""Capstan source plugin `https-url`, written in Python and built with componentize-py.

A chart archive at a plain HTTPS URL, pinned by its sha256. `resolve` needs no network
(the digest is the revision); `fetch` downloads the archive through
`wasi:http/outgoing-handler`, checks the digest and reads the chart's metadata.

Every error is returned as a `capstan:plugin/types.error` value: the exported methods
raise only `Err(Error)`, which the generated bindings turn into the `err` case of the
WIT result. Any other exception would trap the component, so `_errors_as_values` turns
unexpected exceptions into `internal` errors carrying the exception text.
"""

import functools
import hashlib
import traceback
from urllib.parse import urljoin, urlsplit

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.source import (
    Capabilities,
    HttpAccess,
    PluginInfo,
    Revision,
    SourceKind,
    SourceRequest,
)
from wit_world.imports import log, outgoing_handler, streams
from wit_world.imports import wasi_http_types as http
from wit_world.imports.capstan_plugin_types import (
    ChartArtifact,
    ChartMetadata,
    Error,
    ErrorCode,
)

import chartmeta
import spec as specs

# Redirects followed before giving up (Go's http.Client default).
MAX_REDIRECTS = 10
# Bytes asked for per read of the response body.
READ_CHUNK = 1 << 20


class PluginError(Exception):
    """An error meant for the host: carries a capstan error code."""

    def __init__(self, code: ErrorCode, message: str, retryable: bool = False):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable


def _errors_as_values(method):
    """Let nothing but `Err(Error)` leave an exported method."""

    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except Err:
            raise
        except PluginError as e:
            raise Err(Error(code=e.code, message=e.message, retryable=e.retryable))
        except specs.SpecError as e:
            raise Err(Error(code=ErrorCode.INVALID_INPUT, message=str(e), retryable=False))
        except chartmeta.ChartError as e:
            raise Err(Error(code=ErrorCode.INVALID_INPUT, message=str(e), retryable=False))
        except BaseException as e:  # noqa: BLE001 - the component must not trap
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            raise Err(
                Error(
                    code=ErrorCode.INTERNAL,
                    message=f"{method.__name__}: unexpected {detail}",
                    retryable=False,
                )
            )

    return wrapper


def _debug(message: str) -> None:
    log.log(log.Level.DEBUG, message)


def _check_kind(request: SourceRequest) -> None:
    if request.kind != specs.KIND:
        raise PluginError(
            ErrorCode.INVALID_INPUT,
            f"source kind `{request.kind}` is not served by this plugin (only `{specs.KIND}`)",
        )


# --- HTTP -----------------------------------------------------------------------------


def shown(url: str) -> str:
    """A URL as shown in errors and logs: without user information."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


_UNAVAILABLE = (
    http.ErrorCode_DnsError,
    http.ErrorCode_DnsTimeout,
    http.ErrorCode_DestinationNotFound,
    http.ErrorCode_DestinationUnavailable,
    http.ErrorCode_DestinationIpProhibited,
    http.ErrorCode_DestinationIpUnroutable,
    http.ErrorCode_ConnectionRefused,
    http.ErrorCode_ConnectionTerminated,
    http.ErrorCode_ConnectionLimitReached,
    http.ErrorCode_TlsProtocolError,
    http.ErrorCode_TlsCertificateError,
    http.ErrorCode_TlsAlertReceived,
    http.ErrorCode_HttpResponseIncomplete,
    http.ErrorCode_HttpProtocolError,
)
_TIMEOUT = (
    http.ErrorCode_ConnectionTimeout,
    http.ErrorCode_ConnectionReadTimeout,
    http.ErrorCode_ConnectionWriteTimeout,
    http.ErrorCode_HttpResponseTimeout,
)


def _http_failure(code, url: str) -> PluginError:
    """Map a wasi:http error-code to a capstan error naming the URL."""
    where = shown(url)
    name = type(code).__name__.removeprefix("ErrorCode_")
    if isinstance(code, http.ErrorCode_HttpRequestDenied):
        authority = urlsplit(url).netloc.rsplit("@", 1)[-1]
        return PluginError(
            ErrorCode.DENIED,
            f"request to {where} refused by the host: `{authority}` is not granted to this source",
        )
    if isinstance(code, http.ErrorCode_HttpResponseBodySize):
        limit = f" of {code.value} bytes" if code.value is not None else ""
        return PluginError(
            ErrorCode.INVALID_INPUT, f"response from {where} is larger than the size cap{limit}"
        )
    if isinstance(code, _TIMEOUT):
        return PluginError(ErrorCode.TIMEOUT, f"request to {where} timed out: {name}", True)
    if isinstance(code, http.ErrorCode_InternalError) and code.value:
        return PluginError(ErrorCode.UNAVAILABLE, f"request to {where} failed: {code.value}", True)
    if isinstance(code, _UNAVAILABLE):
        return PluginError(ErrorCode.UNAVAILABLE, f"cannot reach {where}: {name}", True)
    return PluginError(ErrorCode.UNAVAILABLE, f"request to {where} failed: {name}", True)


def _send(url: str):
    """One GET: (status, location header or None, body bytes)."""
    parts = urlsplit(url)
    scheme = {"https": http.Scheme_Https(), "http": http.Scheme_Http()}.get(
        parts.scheme, http.Scheme_Other(parts.scheme)
    )
    authority = parts.netloc.rsplit("@", 1)[-1]
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    request = http.OutgoingRequest(http.Fields())
    try:
        request.set_method(http.Method_Get())
        request.set_scheme(scheme)
        request.set_authority(authority)
        request.set_path_with_query(path)
    except Err:
        raise PluginError(ErrorCode.INVALID_INPUT, f"{shown(url)} cannot be sent as a request")

    try:
        future = outgoing_handler.handle(request, None)
    except Err as e:
        raise _http_failure(e.value, url)

    with future:
        with future.subscribe() as pollable:
            pollable.block()
        outcome = future.get()
    if outcome is None or isinstance(outcome, Err):
        raise PluginError(ErrorCode.INTERNAL, f"request to {shown(url)}: response not ready")
    if isinstance(outcome.value, Err):
        raise _http_failure(outcome.value.value, url)

    # Children (headers, body, stream) are dropped before their parents.
    with outcome.value.value as response:
        status = response.status()
        with response.headers() as headers:
            values = headers.get("location")
        location = values[0].decode("utf-8", "replace") if values else None
        chunks = []
        with response.consume() as body:
            with body.stream() as stream:
                while True:
                    try:
                        chunks.append(stream.blocking_read(READ_CHUNK))
                    except Err as e:
                        if isinstance(e.value, streams.StreamError_Closed):
                            break
                        failure = e.value.value
                        code = http.http_error_code(failure)
                        if code is not None:
                            raise _http_failure(code, url)
                        raise PluginError(
                            ErrorCode.UNAVAILABLE,
                            f"reading the response from {shown(url)}: {failure.to_debug_string()}",
                            True,
                        )
    return status, location, b"".join(chunks)


def http_get(url: str) -> tuple[str, bytes]:
    """GET `url`, following up to MAX_REDIRECTS redirects: (final URL, body)."""
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        status, location, body = _send(current)
        if 200 <= status <= 299:
            return current, body
        if status in (301, 302, 303, 307, 308):
            if not location:
                raise PluginError(
                    ErrorCode.UNAVAILABLE, f"{shown(current)} answered {status} without a Location"
                )
            _debug(f"{shown(current)} redirects ({status}) to {shown(urljoin(current, location))}")
            current = urljoin(current, location)
            continue
        if status in (404, 410):
            raise PluginError(ErrorCode.NOT_FOUND, f"GET {shown(current)} answered HTTP {status} (not found)")
        if status >= 500 or status == 429:
            # The server's trouble, not the spec's: worth retrying later.
            raise PluginError(
                ErrorCode.UNAVAILABLE, f"GET {shown(current)} answered HTTP {status}", True
            )
        raise PluginError(ErrorCode.INVALID_INPUT, f"GET {shown(current)} answered HTTP {status}")
    raise PluginError(
        ErrorCode.UNAVAILABLE, f"GET {shown(url)} redirected more than {MAX_REDIRECTS} times"
    )


# --- The exported interface -----------------------------------------------------------


class Source(exports.Source):
    def describe(self) -> PluginInfo:
        return PluginInfo(
            kinds=[
                SourceKind(
                    name=specs.KIND,
                    summary=specs.SUMMARY,
                    spec_schema=specs.SCHEMA_JSON,
                    capabilities=Capabilities(
                        git_url_field=None,
                        http=[
                            HttpAccess(
                                url_field="/url",
                                insecure_field="/insecure",
                                send_credentials=True,
                                shared_document=None,
                            )
                        ],
                        secret_keys=[],
                    ),
                )
            ]
        )

    @_errors_as_values
    def resolve(self, request: SourceRequest) -> Revision:
        _check_kind(request)
        spec = specs.parse(request.spec)
        # The digest pins the content: the revision is known without any request.
        return Revision(id=spec.digest, content_id=spec.digest)

    @_errors_as_values
    def fetch(self, request: SourceRequest, at: Revision) -> ChartArtifact:
        _check_kind(request)
        spec = specs.parse(request.spec)
        if at.id != spec.digest:
            raise PluginError(
                ErrorCode.INVALID_INPUT,
                f"revision {at.id} is not the spec's pinned digest {spec.digest}",
            )
        final_url, archive = http_get(spec.url)
        actual = hashlib.sha256(archive).hexdigest()
        if actual != spec.sha256:
            raise PluginError(
                ErrorCode.INVALID_INPUT,
                f"{shown(final_url)} has sha256:{actual}, but the spec pins sha256:{spec.sha256}",
            )
        meta = chartmeta.read_archive(archive)
        _debug(
            f"downloaded {shown(final_url)}: {len(archive)} bytes, sha256:{actual}, "
            f"chart {meta.name} {meta.version}"
        )
        return ChartArtifact(
            archive=archive,
            digest=f"sha256:{actual}",
            metadata=ChartMetadata(
                name=meta.name, version=meta.version, app_version=meta.app_version
            ),
        )
