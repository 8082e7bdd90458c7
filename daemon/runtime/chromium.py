"""Finding a Chromium executable: this machine cannot download one, so look where browsers live.

A headless browser is Chromium's headless shell when one is installed: the same engine (Blink, V8, the
network service) without the desktop browser's windows and their compositor, it costs a page 2.4x less
CPU (tests/bench/chromium_cpu.py --full: 62 against 148 ms per navigate + snapshot), and it is what
Playwright launches for headless Chromium too. Extensions and windows need the full browser, so a headed
launch, and an executable someone named, are never swapped for it."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio

# Debian, Ubuntu's snap, Google's packages, in the order a Linux user most likely has them.
_SYSTEM_CANDIDATES = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/snap/bin/chromium",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
)
# Debian's chromium-headless-shell, its binary first: the /usr/bin wrapper keeps a shell between the
# driver and the browser (no exec), so a signal to the browser would reach only the shell. Playwright's own
# shells lie under PLAYWRIGHT_BROWSERS_PATH.
_SYSTEM_HEADLESS_SHELLS = ("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell")
_HEADLESS_SHELL_NAMES = {"chromium-headless-shell", "headless_shell"}


@dataclass(frozen=True)
class ChromiumFound:
    path: str
    source: str  # which rule found it: config, env, playwright, system

    @property
    def headless_shell(self) -> bool:
        """A headless shell (Debian's or Playwright's), which has no PDF viewer and cannot show a window."""
        return Path(self.path).name in _HEADLESS_SHELL_NAMES


def _playwright_browsers(pattern: str) -> list[str]:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    if not root.is_dir():
        return []
    found = sorted(root.glob(pattern), reverse=True)
    return [str(path) for path in found if os.access(path, os.X_OK)]


def _installed(pattern: str, system_paths: tuple[str, ...]) -> list[ChromiumFound]:
    """Playwright's browsers matching `pattern` (newest first), then the executable ones of `system_paths`."""
    return [ChromiumFound(path, "playwright") for path in _playwright_browsers(pattern)] + [
        ChromiumFound(path, "system") for path in system_paths if os.access(path, os.X_OK)
    ]


def find_chromium(configured: str = "", *, headless: bool = False) -> ChromiumFound | None:
    """The first executable of: config, $BROWSERD_CHROMIUM, then (for a headless launch) a headless shell,
    Playwright's own browsers, system paths."""
    for path, source in ((configured, "config"), (os.environ.get("BROWSERD_CHROMIUM", ""), "env")):
        if path:
            resolved = shutil.which(path) or path
            if os.access(resolved, os.X_OK):
                return ChromiumFound(resolved, source)
    installed = _installed("chromium-*/chrome-linux*/chrome", _SYSTEM_CANDIDATES)
    if headless:
        shells = "chromium_headless_shell-*/chrome-linux*/headless_shell"
        installed = _installed(shells, _SYSTEM_HEADLESS_SHELLS) + installed
    return installed[0] if installed else None


def accept_languages(environ: Mapping[str, str]) -> str:
    """The Accept-Language a desktop Chromium would send for the user's locale (`de_DE.UTF-8`: `de-DE,de`).

    A headless shell sends none unless told, and a request without one reads as a bot to many sites;
    the full browser derives it from the locale, falling back to US English as it does."""
    name = next((environ[key] for key in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(key)), "")
    language, _, region = name.split(".")[0].split("@")[0].partition("_")
    if not language.isalpha() or language.upper() in ("C", "POSIX"):
        return "en-US,en"
    return f"{language}-{region},{language}" if region.isalpha() else language


# Playwright's own feature lists (playwright-core's chromiumSwitches.ts, Playwright 1.65). Chromium honours
# only the LAST --disable-features (and --enable-features) switch on its command line, and Playwright puts
# the configured flags after its own: a configured list would silently re-enable everything Playwright
# turns off. So a configured list is merged with these into one switch. tests/e2e/test_browser_flags.py
# reads the launched browser's command line and fails when Playwright's list names one this lacks.
PLAYWRIGHT_DISABLED_FEATURES = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
PLAYWRIGHT_ENABLED_FEATURES = ("CDPScreenshotNewSurface", "SkipListAccountsWithoutGaiaCookies")
_FEATURE_SWITCHES = {
    "--disable-features": PLAYWRIGHT_DISABLED_FEATURES,
    "--enable-features": PLAYWRIGHT_ENABLED_FEATURES,
}


def launch_args(configured: list[str], found: ChromiumFound) -> list[str]:
    """The configured flags plus what this user and executable need to start and to look like a browser."""
    args = merged_feature_switches(configured)
    if os.geteuid() == 0 and "--no-sandbox" not in args:
        args.append("--no-sandbox")  # Chromium refuses to start its sandbox as root.
    if found.headless_shell and not any(arg.startswith("--accept-lang=") for arg in args):
        args.append(f"--accept-lang={accept_languages(os.environ)}")
    return args


def merged_feature_switches(configured: list[str]) -> list[str]:
    """`configured` with each feature switch it holds made one, which also carries Playwright's own names."""
    args = list(configured)
    for switch, playwrights in _FEATURE_SWITCHES.items():
        given = [arg for arg in args if arg.startswith(switch + "=")]
        if not given:
            continue
        names = [name for arg in given for name in arg.partition("=")[2].split(",") if name]
        args = [arg for arg in args if arg not in given]
        args.append(f"{switch}={','.join(dict.fromkeys([*playwrights, *names]))}")
    return args


VERSION_TIMEOUT_S = 10.0


async def chromium_version(path: str) -> str:
    """`Chromium 156.0...` as the executable prints it, or '' when it cannot say within VERSION_TIMEOUT_S.

    A child process awaited, never run on the event loop: a slow or hung executable (a first start that
    unpacks itself, a wrapper script waiting on something) must not stop every session of the daemon."""
    try:
        with anyio.fail_after(VERSION_TIMEOUT_S):
            result = await anyio.run_process([path, "--version"], check=False, stderr=subprocess.DEVNULL)
    except (OSError, TimeoutError):  # anyio kills the child when the deadline cancels the wait
        return ""
    return result.stdout.decode(errors="replace").strip()
