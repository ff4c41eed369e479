"""web_fetch (issue 37): what it refuses (SSRF), and a real fetch from a real local HTTP server.

The local server listens on 127.0.0.1, which web_fetch refuses. The fetch tests reach it only
through the tool's test seams (`resolve`, `allow`: arguments of `web_fetch_tool`, which the
service never passes and no setting reaches): names under `.example.test` resolve to addresses
the test picks, and only 127.0.0.1 is let through besides public addresses. So the same code
path checks the address, connects to the checked address with the name in `Host`, follows
redirects and converts the page; the refusals below run with the real resolver and checks.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import run_tool
from shiro_neko.agent.tools.web_fetch import Address, MAX_BYTES, public_address, web_fetch_tool


class _Handler(BaseHTTPRequestHandler):
    hosts: list[str] = []

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        type(self).hosts.append(self.headers.get("Host", ""))
        port = self.server.server_address[1]
        if self.path == "/page":
            self._send(200, "text/html; charset=utf-8",
                       b"<html><head><script>steal()</script></head><body><h1>Title</h1>"
                       b"<p>Some <b>bold</b> text and <a href='/x'>a link</a>.</p></body></html>")
        elif self.path == "/same-host":
            self._redirect("/page")
        elif self.path == "/to-private":
            self._redirect(f"http://internal.example.test:{port}/page")
        elif self.path == "/to-other":
            self._redirect(f"http://other.example.test:{port}/page")
        elif self.path == "/huge":
            self._send(200, "text/plain", b"x" * (MAX_BYTES + 100_000))
        elif self.path == "/binary":
            self._send(200, "application/octet-stream", b"\x00\x01")
        else:
            self._send(404, "text/plain", b"not here")

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def server() -> Iterator[int]:
    _Handler.hosts = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


NAMES = {"docs.example.test": ["127.0.0.1"], "other.example.test": ["127.0.0.1"],
         "internal.example.test": ["10.0.0.5"], "rebind.example.test": ["93.184.215.14", "10.0.0.5"]}
resolved: list[str] = []


async def _resolve(host: str, port: int) -> list[str]:
    resolved.append(host)
    return NAMES[host]


def _local_too(address: Address) -> bool:
    return public_address(address) or address == ipaddress.ip_address("127.0.0.1")


async def _fetch(tmp_path: Path, url: str, domains: tuple[str, ...] = (), seams: bool = True, **extra: object) -> tuple[str, bool]:
    tool = web_fetch_tool(domains, resolve=_resolve, allow=_local_too) if seams else web_fetch_tool(domains)
    result = await run_tool(tool, DiskToolHost(tmp_path), {"url": url, **extra})
    return result.output, result.is_error


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://127.0.0.1:8080/x", "http://[::1]/", "http://10.1.2.3/", "http://192.168.0.1/",
    "http://172.16.0.1/", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]/",
    "http://[fd00:ec2::254]/", "http://100.64.0.1/", "http://0.0.0.0/", "http://localhost/",
    "http://LOCALHOST.:8000/", "http://[fe80::1]/",
])
async def test_private_and_local_addresses_are_refused(tmp_path: Path, url: str) -> None:
    output, is_error = await _fetch(tmp_path, url, seams=False)
    assert is_error and "non-public address" in output, output


@pytest.mark.parametrize(("url", "says"), [
    ("file:///etc/passwd", "only http and https"), ("ftp://example.com/", "only http and https"),
    ("gopher://example.com/", "only http and https"), ("http://user:pw@example.com/", "credentials"),
    ("http://example.com:22/", "port 22"), ("http:///nohost", "names no host"), ("example.com", "only http"),
])
async def test_other_schemes_credentials_and_odd_ports_are_refused(tmp_path: Path, url: str, says: str) -> None:
    output, is_error = await _fetch(tmp_path, url, seams=False)
    assert is_error and says in output, output


async def test_a_page_becomes_markdown_fetched_from_the_checked_address(tmp_path: Path, server: int) -> None:
    resolved.clear()
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/page")
    assert not is_error, output
    assert "# Title" in output and "**bold**" in output and "[a link](/x)" in output
    assert "steal" not in output and "<p>" not in output
    # One lookup, and the server was reached by address with the name in Host: nothing resolved
    # the name again between the check and the connect.
    assert resolved == ["docs.example.test"] and _Handler.hosts == [f"docs.example.test:{server}"]


async def test_a_redirect_on_the_same_host_is_followed(tmp_path: Path, server: int) -> None:
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/same-host")
    assert not is_error and "# Title" in output and output.startswith(f"http://docs.example.test:{server}/page")


async def test_a_redirect_to_another_host_is_not_followed_unless_allowed(tmp_path: Path, server: int) -> None:
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/to-other")
    assert is_error and "redirects to" in output and "neither approved nor allowed" in output
    assert len(_Handler.hosts) == 1
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/to-other", ("example.test",))
    assert not is_error and "# Title" in output


async def test_a_redirect_to_a_private_address_is_refused_even_to_an_allowed_host(tmp_path: Path, server: int) -> None:
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/to-private", ("example.test",))
    assert is_error and "internal.example.test (10.0.0.5)" in output and "non-public" in output


async def test_one_private_answer_among_public_ones_is_refused(tmp_path: Path) -> None:
    """A name that resolves to a public and a private address (how a rebinding attack hides) is
    refused, whichever address comes first."""
    output, is_error = await _fetch(tmp_path, "http://rebind.example.test/")
    assert is_error and "rebind.example.test (10.0.0.5)" in output


async def test_caps_and_content_types(tmp_path: Path, server: int) -> None:
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/huge", max_chars=1000)
    assert not is_error and "body cut at 2 MiB" in output and "truncated" in output and len(output) < 1500
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/binary")
    assert is_error and "application/octet-stream, not text" in output
    output, is_error = await _fetch(tmp_path, f"http://docs.example.test:{server}/missing")
    assert is_error and "HTTP 404" in output


def test_a_project_file_cannot_allow_domains_before_trust() -> None:
    from shiro_neko.project_settings import project_view

    view = project_view({"webFetchAllowedDomains": ["attacker.example"]})
    assert view.safe == {} and view.held == ["webFetchAllowedDomains"]


def _certificate(folder: Path, name: str) -> tuple[Path, Path]:
    import subprocess

    key, cert = folder / f"{name}.key", folder / f"{name}.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}"],
                   check=True, capture_output=True)
    return key, cert


@pytest.mark.parametrize("served_as", ["docs.example.test", "other.example.test"])
async def test_https_checks_the_certificate_against_the_name_not_the_address(tmp_path: Path, served_as: str) -> None:
    """The connection goes to the checked address, yet TLS still verifies the certificate for the
    host in the URL (the server name sent is the host): a certificate for another name fails."""
    import ssl

    key, cert = _certificate(tmp_path, served_as)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    _Handler.hosts = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.socket = server_context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        trusted = ssl.create_default_context(cafile=str(cert))
        tool = web_fetch_tool((), resolve=_resolve, allow=_local_too, verify=trusted)
        result = await run_tool(tool, DiskToolHost(tmp_path), {"url": f"https://docs.example.test:{httpd.server_address[1]}/page"})
    finally:
        httpd.shutdown()
        httpd.server_close()
    if served_as == "docs.example.test":
        assert not result.is_error and "# Title" in result.output, result.output
    else:
        assert result.is_error and "CERTIFICATE_VERIFY_FAILED" in result.output and "docs.example.test" in result.output, result.output
