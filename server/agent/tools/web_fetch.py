"""web_fetch: one web page, as Markdown, fetched from a public address only.

The model chooses the URL, and the model may be steered by what it read (a README, a tool
result), so the fetch is treated as hostile (docs/security.md, "web_fetch"):
- only http(s), no credentials in the URL, no privileged port but 80 and 443;
- the host is resolved here (without blocking the event loop) and every address it resolves to
  must be a public unicast one: loopback, private, link-local (the cloud metadata service at
  169.254.169.254), shared, reserved and multicast ranges are refused, IPv4 inside IPv6 too;
- the connection goes to the address that was checked (the URL carries the address, the `Host`
  header and TLS's server name the host), so a DNS answer that changes between the check and the
  connect (DNS rebinding) cannot swap in a private address; no proxy from the environment;
- a redirect is followed only to a host the user allowed (`webFetchAllowedDomains`) or the host
  the user approved for this call, and is checked like the first URL;
- the body is capped in bytes and the whole fetch in time; HTML becomes Markdown (markdownify),
  in a thread: a big page must not hold up the event loop.

Approval: a host in `webFetchAllowedDomains` (a user setting; a project file cannot set it before
trust, project_settings.py) is fetched unasked; any other URL is asked about, under `approvals:
auto` too (a fetch can carry data out in its URL).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable
from typing import Annotated, Any
from urllib.parse import urljoin, urlsplit

import msgspec
from msgspec import UNSET, Meta, UnsetType

from .base import Tool, ToolError, ToolHost, ToolResult
from .output_cap import cap_output

DEFAULT_CHARS = 20_000
MAX_CHARS = 100_000
MAX_BYTES = 2 * 1024 * 1024  # of the body as sent (after content decoding)
TIMEOUT_S = 20.0  # the whole fetch, redirects included
MAX_REDIRECTS = 5
_ALLOWED_PORTS_BELOW_1024 = (80, 443)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port -> the addresses it resolves to. A seam for tests only (tests/unit/test_web_fetch.py):
# never reachable from a setting, so no workspace can point a host elsewhere.
Resolver = Callable[[str, int], Awaitable[list[str]]]


async def system_resolve(host: str, port: int) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ToolError(f"web_fetch: the host {host!r} cannot be resolved ({exc.strerror})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def public_address(address: Address) -> bool:
    """True for a public unicast address; IPv4 carried inside IPv6 is judged as IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
        if inner is not None:
            return public_address(inner)
    return address.is_global and not address.is_multicast


class WebFetchArgs(msgspec.Struct, forbid_unknown_fields=True):
    url: Annotated[str, Meta(description="The http(s) URL to fetch.")]
    max_chars: Annotated[
        int, Meta(ge=1, le=MAX_CHARS, description=f"Characters of the page to return. Default {DEFAULT_CHARS}.")
    ] | UnsetType = UNSET


class _Target(msgspec.Struct, frozen=True):
    url: str
    scheme: str
    host: str  # lower case, IDNA-encoded, without brackets
    port: int


def parse_url(raw: str) -> _Target:
    """The URL's parts, or a ToolError saying what is refused and why."""
    try:
        parts = urlsplit(raw.strip())
        port = parts.port
    except ValueError as exc:
        raise ToolError(f"web_fetch: {raw!r} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ToolError(f"web_fetch: only http and https URLs are fetched, not {scheme or 'a URL without a scheme'!r}")
    if parts.username is not None or parts.password is not None:
        raise ToolError("web_fetch: a URL with credentials (user:password@) is refused; fetch a public URL")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise ToolError(f"web_fetch: {raw!r} names no host")
    try:
        host = host.encode("idna").decode("ascii").lower() if not _is_ip(host) else host.lower()
    except UnicodeError:
        raise ToolError(f"web_fetch: the host {host!r} is not a valid domain name") from None
    port = port or (443 if scheme == "https" else 80)
    if port < 1024 and port not in _ALLOWED_PORTS_BELOW_1024:
        raise ToolError(f"web_fetch: port {port} is refused; only 80, 443 and ports from 1024 up are fetched")
    return _Target(raw.strip(), scheme, host, port)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def host_allowed(host: str, domains: tuple[str, ...]) -> bool:
    """`host` is one of `domains` or below one (`docs.python.org` is below `python.org`)."""
    for domain in domains:
        domain = domain.strip().lower().rstrip(".")
        if domain.startswith("*."):
            domain = domain[2:]
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


async def checked_address(target: _Target, resolve: Resolver, allow: Callable[[Address], bool]) -> str:
    """The address to connect to: every address the host resolves to must pass `allow` (one bad
    answer among good ones is how a rebinding attack hides)."""
    literal = _is_ip(target.host)
    addresses = [target.host] if literal else await resolve(target.host, target.port)
    if not addresses:
        raise ToolError(f"web_fetch: the host {target.host!r} resolves to no address")
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # a scoped IPv6 address keeps its scope after %
        if not allow(address):
            shown = target.host if literal else f"{target.host} ({address})"
            raise ToolError(
                f"web_fetch: {shown} is a private, loopback, link-local or otherwise non-public address; "
                "web_fetch only reaches public hosts (use run_command for a local server)"
            )
    return addresses[0]


def _to_text(body: bytes, content_type: str, url: str) -> str:
    """The body as the model reads it: HTML as Markdown, other text as it is."""
    kind, _, params = content_type.partition(";")
    kind = kind.strip().lower()
    charset = "utf-8"
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip('"')
    try:
        text = body.decode(charset, errors="replace")
    except LookupError:
        text = body.decode("utf-8", errors="replace")
    if kind in ("text/html", "application/xhtml+xml") or (not kind and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))):
        from markdownify import markdownify  # noqa: PLC0415 - imported on the first fetch only

        return str(markdownify(text, heading_style="ATX", strip=["img"])).strip()
    if kind.startswith("text/") or kind.endswith(("json", "xml", "javascript")) or not kind:
        return text
    raise ToolError(f"web_fetch: {url} is {kind}, not text; web_fetch returns text and HTML pages only")


def _host_header(target: _Target) -> str:
    default = 443 if target.scheme == "https" else 80
    host = f"[{target.host}]" if ":" in target.host else target.host
    return host if target.port == default else f"{host}:{target.port}"


async def _fetch_once(client: Any, target: _Target, address: str) -> tuple[int, dict[str, str], bytes, bool]:
    """(status, headers, body, cut) from `address`, speaking to it as `target.host`."""
    import httpx2  # noqa: PLC0415

    direct = httpx2.URL(target.url).copy_with(host=address.split("%", 1)[0])
    extensions = {"sni_hostname": target.host} if target.scheme == "https" and not _is_ip(target.host) else {}
    request = client.build_request(
        "GET", direct, headers={"Host": _host_header(target)}, extensions=extensions)
    response = await client.send(request, stream=True)
    try:
        body = bytearray()
        cut = False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_BYTES:
                del body[MAX_BYTES:]
                cut = True
                break
        return response.status_code, {k.lower(): v for k, v in response.headers.items()}, bytes(body), cut
    finally:
        await response.aclose()


async def fetch(url: str, max_chars: int, *, approved_host: str, domains: tuple[str, ...],
                resolve: Resolver = system_resolve, allow: Callable[[Address], bool] = public_address,
                verify: ssl.SSLContext | None = None) -> ToolResult:
    import httpx2  # noqa: PLC0415 - the SDK's client; imported on the first fetch only

    target = parse_url(url)
    async with httpx2.AsyncClient(
        follow_redirects=False, trust_env=False, timeout=httpx2.Timeout(TIMEOUT_S), verify=verify or True,
        headers={"User-Agent": "shiro-neko web_fetch", "Accept": "text/html, text/*;q=0.9, */*;q=0.5"},
    ) as client:
        try:
            async with asyncio.timeout(TIMEOUT_S):
                for _ in range(MAX_REDIRECTS + 1):
                    address = await checked_address(target, resolve, allow)
                    status, headers, body, cut = await _fetch_once(client, target, address)
                    location = headers.get("location")
                    if status in (301, 302, 303, 307, 308) and location:
                        following = parse_url(urljoin(target.url, location))
                        if following.host != approved_host and not host_allowed(following.host, domains):
                            return ToolResult(
                                f"web_fetch: {target.url} redirects to {following.url}, on another host that was "
                                "neither approved nor allowed; call web_fetch with that URL to ask the user for it",
                                is_error=True)
                        target = following
                        continue
                    break
                else:
                    raise ToolError(f"web_fetch: more than {MAX_REDIRECTS} redirects from {url}")
        except TimeoutError:
            raise ToolError(f"web_fetch: {url} did not answer within {TIMEOUT_S:.0f} s") from None
        except httpx2.HTTPError as exc:
            raise ToolError(f"web_fetch: fetching {target.url} failed: {type(exc).__name__}: {exc}") from None
    text = await asyncio.to_thread(_to_text, body, headers.get("content-type", ""), target.url)
    head = f"{target.url} (HTTP {status}{', body cut at 2 MiB' if cut else ''})\n\n"
    return ToolResult(head + cap_output(text, max_chars), is_error=status >= 400)


def web_fetch_tool(domains: tuple[str, ...], *, resolve: Resolver = system_resolve,
                   allow: Callable[[Address], bool] = public_address, verify: ssl.SSLContext | None = None) -> Tool:
    """web_fetch with the user's `webFetchAllowedDomains`; `resolve`, `allow` and `verify` (the
    certificates trusted; default the system's) are for tests."""

    async def run(host: ToolHost, args: WebFetchArgs) -> ToolResult:
        max_chars = DEFAULT_CHARS if isinstance(args.max_chars, UnsetType) else args.max_chars
        approved = parse_url(args.url).host
        return await fetch(args.url, max_chars, approved_host=approved, domains=domains, resolve=resolve, allow=allow,
                           verify=verify)

    def unasked(args: dict[str, Any]) -> bool:
        try:
            return isinstance(args.get("url"), str) and host_allowed(parse_url(args["url"]).host, domains)
        except ToolError:
            return False  # refused when it runs; asking first costs nothing

    return Tool(
        name="web_fetch",
        description=(
            "Fetch a public web page (http or https) and return it as Markdown (HTML converted; other "
            f"text as is), at most max_chars characters (default {DEFAULT_CHARS}). Private, local and "
            "cloud-metadata addresses are refused; redirects to other hosts must be fetched by a new call. "
            "The user may be asked to approve the URL."
        ),
        arguments=WebFetchArgs,
        run=run,
        approval="command",
        summary=lambda args: f"fetch {args.get('url', '')}",
        always_ask=lambda args: None if unasked(args) else "a host not in webFetchAllowedDomains",
        unasked=unasked,
        read_only=True,  # a GET; nothing on this machine changes
    )
