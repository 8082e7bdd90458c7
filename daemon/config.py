"""Every setting and its default, in one place (DESIGN.md §3, D-19).

Values come from, lowest to highest precedence: the defaults below, the TOML file
(`~/.config/browserd/config.toml`, one table per section; keys in snake_case or kebab-case), and
environment variables `BROWSERD_<SECTION>_<KEY>` (e.g. `BROWSERD_DAEMON_IDLE_EXIT_S=5`).
"""

from __future__ import annotations

import logging
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from browserd.protocol import paths

log = logging.getLogger(__name__)

NonNegative = Annotated[float, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]


class DaemonConfig(msgspec.Struct, forbid_unknown_fields=True):
    # Seconds the daemon lingers after its last session, run or publish ends; 0 keeps it forever.
    idle_exit_s: NonNegative = 60.0
    # Bounds the wait for a daemon a client spawned; one that fails to start is reported as it exits.
    spawn_timeout_s: NonNegative = 30.0
    max_frame_bytes: Positive = 64 * 1024 * 1024
    # Outer deadline of any single request, so no call can hang a client forever.
    request_timeout_s: NonNegative = 600.0
    # The highest trust level a client may have; `remote` forces every session to remote (DESIGN §5).
    max_trust_level: Literal["local", "remote"] = "local"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_max_bytes: Positive = 5 * 1024 * 1024
    log_backups: Annotated[int, msgspec.Meta(ge=0)] = 3
    use_uvloop: bool = True


class EndpointConfig(msgspec.Struct, forbid_unknown_fields=True):
    """One remote browser server of the pool (docs/pool.md)."""

    # How listings, pins (`browser_windows` endpoint) and errors name it.
    name: Annotated[str, msgspec.Meta(pattern=r"^[a-zA-Z0-9._-]{1,64}$")]
    # playwright: a `playwright run-server` (BrowserType.connect); cdp: a Chromium's debugging endpoint or a
    # CDP service (connect_over_cdp); webdriver: a W3C WebDriver endpoint (chromedriver, a Selenium Grid 4
    # router) asked for one Chromium session per window or worker.
    kind: Literal["playwright", "cdp", "webdriver"]
    url: str
    # Browser contexts it may hold at once: windows plus scrape and crawl pages.
    capacity: Positive = 4
    labels: list[str] = msgspec.field(default_factory=list)
    # Sent with the connection (an Authorization header, a cloud provider's key...).
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    # An environment variable holding a secret token, never the token itself: sent as `token_param` in the
    # URL's query when that is set (browserless: "token"), else as `Authorization: Bearer <token>`.
    token_env: str = ""
    token_param: str = ""
    # playwright: the server's launch options (x-playwright-launch-options), e.g. {headless = true}; an
    # executablePath needs a server started with --unsafe.
    launch_options: dict[str, Any] = msgspec.field(default_factory=dict)
    # webdriver: capabilities merged over {browserName = "chrome"}, e.g. {"goog:chromeOptions" = {args = [...]}}.
    capabilities: dict[str, Any] = msgspec.field(default_factory=dict)


class BrowserConfig(msgspec.Struct, forbid_unknown_fields=True):
    # Path of the Chromium executable; empty means discover it (runtime/chromium.py).
    executable: str = ""
    headless: bool = True
    # Headless pages in Chromium's headless shell when one is installed (runtime/chromium.py): 2.4x less CPU
    # per page. False keeps the full browser's headless mode, which shows pages the desktop browser's
    # features (a PDF viewer and its plugins), for sites that treat the shell as a bot.
    headless_shell: bool = True
    # Chromium flags for a machine that may have no network and no user namespace sandbox. Tried for CPU per
    # page and left out (tests/bench/chromium_cpu.py, issue 10): --disable-threaded-compositing saves a
    # quarter only because no frame is drawn any more (requestAnimationFrame never fires: pages and
    # Playwright's stability wait hang); --renderer-process-limit, --disable-site-isolation-trials and
    # --process-per-site start fewer renderers for the same CPU; --kiosk, --start-fullscreen,
    # --in-process-gpu and --num-raster-threads=1 change nothing measurable.
    # SpareRendererForSitePerProcess off: Chromium keeps a renderer process started ahead for the browser
    # context that navigated last; with several sessions (contexts) in one browser it is mostly the wrong
    # context, so it is thrown away and started again on every navigation. On the full browser 4 sessions
    # cost 206 against 133 ms of CPU per page with it (7.3 against 10.4 pages/s; the headless shell is
    # unaffected), and a lone session's navigation to another site was no slower without it (issue 23).
    # WebUIOmnibox*Popup off: the full browser gives every browser context (session) its own omnibox popup
    # pages (chrome://omnibox-popup.top-chrome, two documents in a renderer of their own), built when the
    # session opens and kept up to date on each of its navigations although nobody ever types into that
    # omnibox. Without them, plain Playwright on the full browser: a navigation with its snapshot 63 against
    # 100 ms, a new context with its first page 167 against 229 ms, and 4 contexts 119 against 149 ms of CPU
    # per page (renderers 58 against 83). Translate off: no language detection of each page's text for a
    # translate bar nobody sees (another 2-3 ms of CPU per page, within the noise on its own). The headless
    # shell has none of these.
    # RenderDocument off: a navigation within a site keeps its frame's host in the browser and its frame in the
    # renderer, as Chromium did before RenderDocument, instead of building both anew for each document. Plain
    # Playwright, goto + aria_snapshot within one site (60 rounds in turns): 49 against 57 ms on the shell, 61
    # against 73 on the full browser; 4 contexts 64 against 73 and 104 against 118 ms of CPU per page.
    # runtime/chromium.py merges this switch with Playwright's own list, since Chromium keeps only one.
    args: list[str] = msgspec.field(
        default_factory=lambda: [
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
            "--disable-features=SpareRendererForSitePerProcess,WebUIOmniboxPopup,WebUIOmniboxAimPopup,"
            "WebUIOmniboxFullPopup,Translate,RenderDocument",
        ]
    )
    # Playwright's driver loads browserd's preload (runtime/node/driver_preload.js): the script Playwright
    # injects into each document keeps its text on every navigation, so that V8 reuses its compiled code,
    # and its module crosses to the renderer once per page; the driver writes each message in one write; an
    # element handle in a page's main world builds no injected script there for its preview, so a document's
    # first click or hover goes at rest. About 15 ms less CPU per navigation with its snapshot, and a first click
    # on a document about 20 ms sooner. False keeps Playwright as it is.
    driver_preload: bool = True
    launch_timeout_ms: Positive = 30_000
    # Launch Chromium as soon as the daemon starts, so the first call finds a warm browser.
    prewarm: bool = True
    navigation_timeout_ms: Positive = 30_000
    action_timeout_ms: Positive = 10_000
    viewport_width: Positive = 1280
    viewport_height: Positive = 800
    # Browser tasks running at once in this process, and how many may wait before BUSY (D-20).
    workers: Positive = 4
    queue_size: Annotated[int, msgspec.Meta(ge=0)] = 200
    # Tabs open at once in one session and in the daemon's whole Chromium; one more is LIMIT_EXCEEDED
    # (S1-74, S1-77, D-20): maxConcurrentRuns runs of many tabs each must still fit in the browser.
    max_tabs_per_session: Positive = 20
    max_total_tabs: Positive = 50
    snapshot_max_chars: Positive = 40_000
    # A snapshot of a very large page takes seconds; longer than an action may wait.
    snapshot_timeout_ms: Positive = 30_000
    # After an action the page settles before its snapshot: what the action started (timers its input
    # handlers set, such as a suggestion list's debounce, requests, a navigation) has finished and the DOM
    # has not changed for settle_quiet_ms since; at most settle_max_ms (daemon/snapshots/settle.py).
    settle_quiet_ms: Annotated[int, msgspec.Meta(ge=0)] = 50
    settle_max_ms: Annotated[int, msgspec.Meta(ge=0)] = 1_500
    # Screenshots larger than this many pixels on their long edge are scaled down.
    screenshot_max_px: Positive = 2_000
    # An action that starts a download waits this long for it to finish, so its answer can say where it went.
    download_report_wait_ms: Annotated[int, msgspec.Meta(ge=0)] = 3_000
    # Longest answer of browser_evaluate and of a browser_storage export, in characters.
    evaluate_max_chars: Positive = 20_000
    storage_max_chars: Positive = 50_000
    # Requests each tab's network log keeps (browser_network), the oldest going first; 0 turns the
    # log off, and with it the per-request events it costs.
    network_log_size: Annotated[int, msgspec.Meta(ge=0, le=100_000)] = 500
    # How a new session answers alert/confirm/prompt until browser_dialogs changes it (D-31).
    dialog_policy: Literal["accept", "dismiss"] = "accept"
    # A response or post body shown by browser_network is cut after this many characters by default.
    network_body_max_chars: Positive = 20_000
    # An HTTP(S) proxy for all of the browser's traffic and the scrape fast path, for users behind one:
    # "http://host:3128" (credentials as "http://user:password@host:3128"); empty: connect directly.
    # Remote sessions refuse to run with one: their URL guard must make the connections itself.
    proxy: str = ""
    # Hosts that skip the proxy, comma-separated (Playwright's proxy.bypass), e.g. ".internal, localhost".
    proxy_bypass: str = ""
    # The browser pool (docs/pool.md): remote browser servers windows, scrapes and crawl pages are placed on,
    # by most free capacity. The daemon's own Chromium is one more member ("local") unless `local` is false.
    endpoints: list[EndpointConfig] = msgspec.field(default_factory=list)
    local: bool = True
    # Windows plus scrape pages at once in the daemon's own Chromium: by default above what max_total_tabs
    # and workers allow, so those bind first; lower it to send work to remote members sooner (placement
    # goes by free capacity).
    local_capacity: Positive = 64
    # A full pool queues a new window or page this long, then answers BUSY.
    pool_wait_s: NonNegative = 30.0
    # Members are checked this often; a down one is tried again after 1, 2, 4... s, at most pool_retry_max_s.
    health_interval_s: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    pool_retry_max_s: Annotated[float, msgspec.Meta(gt=0)] = 60.0


class McpConfig(msgspec.Struct, forbid_unknown_fields=True):
    # Tool groups a client sees unless `browserd mcp --tools` says otherwise; `core` is always on. The
    # default stays under 15k characters of tools/list (issue 10): devtools, scrape and runs are asked for.
    tools: list[str] = msgspec.field(default_factory=lambda: ["pages"])
    # Answers of actions end with the Playwright Python code they ran (`browserd mcp --codegen` per client).
    # Off by default: most agents never read it, and every answer would pay its tokens.
    codegen: bool = False


class RunsConfig(msgspec.Struct, forbid_unknown_fields=True):
    """Task runs (reference/001): limits, retention and where their records live (D-08, D-20, D-36..D-40)."""

    max_concurrent_runs: Positive = 5
    max_run_timeout_ms: Positive = 900_000
    max_artifact_inline_bytes: Positive = 262_144
    # runs.db and the artifact files; records outlive the daemon so a result can be collected later.
    root: str = msgspec.field(default_factory=lambda: str(paths.data_dir() / "runs"))
    # Runs and their artifacts are kept this long after the run becomes terminal (S1-38).
    ttl_s: NonNegative = 86_400.0
    # An expired artifact leaves a tombstone this long, so ARTIFACT_EXPIRED differs from NOT_FOUND (D-40).
    tombstone_s: NonNegative = 7 * 86_400.0
    cleanup_interval_s: Annotated[float, msgspec.Meta(gt=0)] = 3_600.0
    # Used when a template that supports partial success declares no threshold of its own (S1-43, D-37).
    partial_success_threshold: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.5
    # mode=auto runs batch_extract_pages in sync up to this many URLs, and only when the effective
    # timeout is at most auto_sync_max_timeout_ms, so a client's request timeout is not hit (D-38).
    auto_sync_max_urls: Annotated[int, msgspec.Meta(ge=0)] = 5
    auto_sync_max_timeout_ms: Positive = 120_000
    # A session login_keep_session kept lives this long once no client or run uses it; every run in it
    # (and its client's disconnect) starts the count again (D-10). Kept sessions hold idle exit (D-06).
    kept_session_idle_s: NonNegative = 300.0


class ScrapeConfig(msgspec.Struct, forbid_unknown_fields=True):
    """Keys of the scrape tool only; browser-runtime keys live under [browser] (reference/000 §2.8)."""

    # smartWait (D-21, daemon/scrape/smartwait.py): after DOM content loaded, wait while the main content's
    # text still changes (it must stand still this long) or the page's scripts have requests or short
    # timers pending, all within the cap.
    smart_wait_max_ms: Annotated[int, msgspec.Meta(ge=0)] = 10_000
    smart_wait_quiet_ms: Annotated[int, msgspec.Meta(ge=0)] = 200
    # Scrapes, batch_extract_pages and crawl load no images, media or fonts, and nothing EasyList or
    # EasyPrivacy lists (daemon/scrape/resources.py), unless a call passes blockResources=false.
    block_resources: bool = True
    # More filter lists (Adblock Plus syntax, or one host per line), paths of files the daemon reads.
    block_lists: list[str] = msgspec.field(default_factory=list)
    # The fast path (render auto/never, daemon/scrape/fetch.py): a page's HTML larger than this goes to
    # the browser; and below this many characters of extracted text, a page with scripts is rendered.
    fetch_max_bytes: Positive = 5 * 1024 * 1024
    fetch_min_chars: Annotated[int, msgspec.Meta(ge=0)] = 200
    timeout_ms: Positive = 30_000
    # A page ending on one of these paths of a profile that never logged in is reported as "log in first".
    login_url_patterns: list[str] = msgspec.field(default_factory=lambda: ["/login", "/signin", "/auth"])
    # Kept for configuration files of the seed project, which set runtime keys under [scrape]: these
    # are read as legacy aliases of their [browser] keys, which win when both are set (TC-18).
    worker_pool_size_per_process: Positive | None = None
    request_queue_capacity: Annotated[int, msgspec.Meta(ge=0)] | None = None
    snapshot_refresh_interval_ms: Positive | None = None
    snapshot_refresh_debounce_ms: Annotated[int, msgspec.Meta(ge=0)] | None = None
    snapshot_publish_lock_timeout_ms: Annotated[int, msgspec.Meta(ge=0)] | None = None


class CrawlConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The `crawl` tool and template: defaults of its parameters and the largest values allowed."""

    default_limit: Positive = 100
    max_limit: Positive = 10_000
    default_max_depth: Annotated[int, msgspec.Meta(ge=0)] = 10
    # Pages loading at once per crawl; every page also goes through [browser] workers, shared by all.
    default_concurrency: Positive = 3
    max_concurrency: Positive = 5
    # A robots.txt Crawl-delay above this is clamped, so a site cannot stall a crawl for minutes per page.
    max_crawl_delay_s: NonNegative = 10.0


# Legacy [scrape] key -> the (section, key) that holds it now.
LEGACY_SCRAPE_KEYS = {
    "worker_pool_size_per_process": ("browser", "workers"),
    "request_queue_capacity": ("browser", "queue_size"),
    "snapshot_refresh_interval_ms": ("profiles", "refresh_interval_ms"),
    "snapshot_refresh_debounce_ms": ("profiles", "refresh_debounce_ms"),
    "snapshot_publish_lock_timeout_ms": ("profiles", "publish_lock_timeout_ms"),
}


class ProfilesConfig(msgspec.Struct, forbid_unknown_fields=True):
    """Login profiles: where their state snapshots live and how often they are published (DESIGN §3)."""

    snapshot_root: str = msgspec.field(default_factory=lambda: str(paths.snapshot_root()))
    # Persistent Chromium profiles of the headed `browserd login`, never opened by the daemon (S0-20).
    user_data_root: str = msgspec.field(default_factory=lambda: str(paths.user_data_root()))
    default_profile_id: str = "master"
    publish_lock_timeout_ms: Annotated[int, msgspec.Meta(ge=0)] = 500
    # Publishes requested within this window after the first one are coalesced into one (TC-11).
    refresh_debounce_ms: Annotated[int, msgspec.Meta(ge=0)] = 500
    # Periodic publish of a live profile-bound context, and of the login's context (D-16, S0-40).
    refresh_interval_ms: Positive = 30_000
    login_refresh_interval_ms: Positive = 5_000
    # 0: the login waits for the person however long it takes (S0-43).
    login_timeout_ms: Annotated[int, msgspec.Meta(ge=0)] = 0
    include_indexed_db: bool = False


class SecurityConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The URL policy (DESIGN §5, D-33); origin patterns as in daemon/policy/origins.py."""

    # When non-empty, sessions of both trust levels reach only these origins.
    allowed_origins: list[str] = msgspec.field(default_factory=list)
    # Never reachable, whatever the trust level; wins over every other list.
    blocked_origins: list[str] = msgspec.field(default_factory=list)
    # Reachable by remote sessions although they resolve to private or loopback addresses: an intranet
    # service the operator vouches for. The blocked and allowed lists still apply.
    remote_exempt_origins: list[str] = msgspec.field(default_factory=list)
    # Refuse private, loopback and link-local addresses to local sessions too (remote ones always are).
    block_private_networks: bool = False
    # How long an answer of the resolver is trusted by the URL guard.
    dns_cache_s: NonNegative = 10.0
    # browser_connect_cdp attaches only to a browser on this machine unless this is set.
    cdp_allow_remote_hosts: bool = False
    # Folders remote sessions may upload files from (after resolving symlinks); local sessions upload
    # any file the daemon can read.
    allowed_file_roots: list[str] = msgspec.field(default_factory=lambda: [str(paths.upload_root())])
    # Login profiles remote sessions may open, read and write back (default none): a remote session's call
    # without profileId works in a fresh anonymous context, never in `master` (daemon/policy/trust.py).
    remote_profiles: list[str] = msgspec.field(default_factory=list)
    # What remote sessions may do with flows beyond running their own (default none): `publish` them as tools,
    # `schedule` them (cron, systemd timers, onPage triggers), reach `local-flows` (see, run, export, import over
    # and delete flows, datasets and schedules local sessions made; list and call the tools they published).
    # daemon/policy/trust.py decides.
    remote_flows: list[Literal["publish", "schedule", "local-flows"]] = msgspec.field(default_factory=list)


class BridgeConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The extension bridge (DESIGN §3 "bridge/", D-45): the daemon's WebSocket for extension-bridge/."""

    # The daemon listens on 127.0.0.1:port only while this is set.
    enabled: bool = False
    port: Annotated[int, msgspec.Meta(ge=1, le=65535)] = 3026
    # Remote (untrusted) sessions may open windows in the user's own Chrome only when this is set (§5).
    allow_remote: bool = False
    # How long the one-time code of `browserd bridge pair` stays valid.
    pair_code_ttl_s: Annotated[float, msgspec.Meta(gt=0)] = 120.0


class HttpConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The daemon's HTTP server (DESIGN §7, docs/http.md): MCP over streamable HTTP and the console."""

    # The daemon opens its HTTP port only while this is set (or `browserd daemon --http ADDR`).
    enabled: bool = False
    # host:port. Anything but a loopback host needs tokens (`browserd tokens create`), and TLS from
    # tls_cert/tls_key or from a reverse proxy in front (docs/http.md).
    listen: str = "127.0.0.1:3027"
    # PEM files; both set: the server speaks HTTPS itself.
    tls_cert: str = ""
    tls_key: str = ""
    # Origins (scheme://host[:port]) a browser page may call /mcp from, beside the server's own address;
    # any other Origin header is refused (DNS rebinding). Requests without an Origin are not from a page.
    allowed_origins: list[str] = msgspec.field(default_factory=list)
    # Host headers accepted beside the listen address (and localhost on loopback): the public name a TLS
    # reverse proxy in front forwards, e.g. "browser.example.com". Any other Host is refused (DNS rebinding).
    allowed_hosts: list[str] = msgspec.field(default_factory=list)
    # The bearer tokens' hashes (`browserd tokens`); default <data>/http-tokens.json.
    tokens_file: str = ""
    # A browser session of an HTTP client (an Mcp-Session-Id, or a handle of the stateless protocol)
    # closes after this long without a call.
    session_idle_s: Annotated[float, msgspec.Meta(gt=0)] = 1800.0
    # Browser sessions one token holds at once; a new one closes the token's least recently used idle one
    # (a stateless client that never passes `session` back would otherwise pile them up).
    max_sessions_per_token: Positive = 32
    # Requests per minute one token may make (a burst of that many, refilled evenly); more get 429.
    rate_per_minute: Positive = 600
    # Long calls (crawl, run_task_template, flow_run) made as MCP tasks: how long a finished task's result
    # is kept for tasks/get.
    task_ttl_s: Annotated[float, msgspec.Meta(gt=0)] = 3600.0


class FlowsConfig(msgspec.Struct, forbid_unknown_fields=True):
    """Record and replay (reference/004, issue 14)."""

    # Flow JSON files and flows.db (the index); sensitive values never land here (S4-83).
    root: str = msgspec.field(default_factory=lambda: str(paths.data_dir() / "flows"))
    # A step's wait for its element, when the step names none (S4-08).
    step_timeout_ms: Positive = 10_000
    # A step whose element does not win clearly stops once its page has been still this long (loaded; no DOM
    # or style change, no animation frame asked for, no request in flight, no timer due within 5 s), not at
    # the end of its step_timeout_ms: waiting on a page that does nothing changes nothing. 0 always waits.
    still_page_ms: Annotated[int, msgspec.Meta(ge=0)] = 1000
    # Replay acts only on an element scoring at least this against the recorded fingerprint, ahead of
    # the next element by at least the margin; otherwise it stops and lists what it found (issue 14 item 3).
    match_threshold: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.8
    match_margin: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.1
    # After a step that can change the page, the same settle as the browser tools (snapshots/settle.py),
    # with a shorter quiet window: replay's next step waits for its own element anyway.
    settle_quiet_ms: Annotated[int, msgspec.Meta(ge=0)] = 30
    # Keep what was typed into non-sensitive fields as the variables' defaults (D-48: off by default).
    keep_non_sensitive_values: bool = False
    # When a step's elements stay weak or ambiguous, ask the model ([llm], else the client's sampling) to choose
    # among them; its choice is acted on only if nothing on the page is against it (docs/flows.md). Never for a
    # sensitive step. The question has its own deadline: the step's own time has run out by then.
    llm_fallback: bool = False
    llm_fallback_timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 30.0


class LlmConfig(msgspec.Struct, forbid_unknown_fields=True):
    """The model of `scrape format=json` and of agent runs (docs/llm.md): any OpenAI-compatible chat-completions
    endpoint (hosted, or local: Ollama, llama.cpp's server, vLLM, LM Studio), else the calling client's own model
    through MCP sampling. The API key is never in this text: it comes from an environment variable or a file."""

    # e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1" (Ollama); empty: no endpoint.
    base_url: str = ""
    model: str = ""
    # The name of the environment variable holding the key (the daemon's own environment), e.g. "OPENAI_API_KEY".
    api_key_env: str = ""
    # A file holding only the key, readable by its owner alone (mode 0600), e.g. "~/.config/browserd/llm.key".
    api_key_file: str = ""
    # Most tokens one answer of the model may have.
    max_tokens: Positive = 4_096
    # One request to the endpoint; a slow local model on a CPU may need minutes.
    request_timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 120.0
    connect_timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 10.0
    # Ask the calling MCP client's model (sampling) even when an endpoint is configured.
    prefer_sampling: bool = False
    # Characters of a page's main content given to the model for `scrape format=json`; the rest is cut.
    max_content_chars: Positive = 60_000


class SearchConfig(msgspec.Struct, forbid_unknown_fields=True):
    """web_search (docs/llm.md): a SearXNG instance's JSON API, or a results page read through the browser."""

    # e.g. "http://127.0.0.1:8888" (the instance must enable the json format in its settings.yml).
    searxng_url: str = ""
    # A results page with {query} where the words go, e.g. "https://duckduckgo.com/html/?q={query}".
    results_url_template: str = ""
    timeout_s: Annotated[float, msgspec.Meta(gt=0)] = 20.0


class Config(msgspec.Struct, forbid_unknown_fields=True):
    daemon: DaemonConfig = msgspec.field(default_factory=DaemonConfig)
    browser: BrowserConfig = msgspec.field(default_factory=BrowserConfig)
    mcp: McpConfig = msgspec.field(default_factory=McpConfig)
    runs: RunsConfig = msgspec.field(default_factory=RunsConfig)
    scrape: ScrapeConfig = msgspec.field(default_factory=ScrapeConfig)
    crawl: CrawlConfig = msgspec.field(default_factory=CrawlConfig)
    profiles: ProfilesConfig = msgspec.field(default_factory=ProfilesConfig)
    security: SecurityConfig = msgspec.field(default_factory=SecurityConfig)
    bridge: BridgeConfig = msgspec.field(default_factory=BridgeConfig)
    flows: FlowsConfig = msgspec.field(default_factory=FlowsConfig)
    http: HttpConfig = msgspec.field(default_factory=HttpConfig)
    llm: LlmConfig = msgspec.field(default_factory=LlmConfig)
    search: SearchConfig = msgspec.field(default_factory=SearchConfig)


class ConfigError(Exception):
    pass


_LIST_SEPARATOR = ","


def _normalise_keys(table: dict[str, Any]) -> dict[str, Any]:
    return {
        key.replace("-", "_"): _normalise_keys(value) if isinstance(value, dict) else value
        for key, value in table.items()
    }


def _env_overrides(environ: dict[str, str] | os._Environ[str]) -> dict[str, dict[str, Any]]:
    sections = {name: getattr(Config(), name) for name in Config.__struct_fields__}
    overrides: dict[str, dict[str, Any]] = {}
    for section, defaults in sections.items():
        for key in type(defaults).__struct_fields__:
            value = environ.get(f"BROWSERD_{section.upper()}_{key.upper()}")
            if value is None:
                continue
            if isinstance(getattr(defaults, key), list):
                overrides.setdefault(section, {})[key] = _env_list(value)
            else:
                overrides.setdefault(section, {})[key] = value
    return overrides


def _env_list(value: str) -> Any:
    """A JSON array (for items holding commas, such as Chromium flags), else comma-separated items."""
    if value.lstrip().startswith("["):
        try:
            return msgspec.json.decode(value)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"invalid JSON list {value!r}: {exc}") from exc
    return [item.strip() for item in value.split(_LIST_SEPARATOR) if item.strip()]


def _apply_legacy_scrape_keys(merged: dict[str, dict[str, Any]]) -> None:
    """A key's own table wins over its legacy [scrape] copy; the copy fills in when the table is silent."""
    scrape = merged.get("scrape", {})
    for legacy, (section, key) in LEGACY_SCRAPE_KEYS.items():
        if legacy in scrape:
            table = merged.setdefault(section, {})
            if key in table:
                log.warning("[scrape] %s is ignored: [%s] %s is set", legacy, section, key)
            else:
                log.warning("[scrape] %s is deprecated; set [%s] %s", legacy, section, key)
                table[key] = scrape[legacy]


def load(path: Path | None = None, environ: dict[str, str] | None = None) -> Config:
    """The effective configuration; a bad file or value raises ConfigError naming the key."""
    path = path or paths.config_file()
    merged: dict[str, dict[str, Any]] = {}
    if path.exists():
        try:
            merged = _normalise_keys(tomllib.loads(path.read_text()))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from exc
    _apply_legacy_scrape_keys(merged)
    for section, values in _env_overrides(os.environ if environ is None else environ).items():
        merged.setdefault(section, {}).update(values)
    try:
        # strict=False lets environment strings such as "5" or "true" stand for numbers and booleans.
        return msgspec.convert(merged, Config, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"invalid configuration ({path} or BROWSERD_* variables): {exc}") from exc
