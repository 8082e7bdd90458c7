"""Files in and out of pages: browser_upload, browser_downloads, browser_pdf."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from playwright.async_api import TimeoutError as PlaywrightTimeout

from browserd.daemon.elements.file_inputs import FileInput, file_input
from browserd.daemon.elements.usable import usable
from browserd.daemon.errors import ExecutionError, InvalidParameter, NotSupported
from browserd.daemon.sessions.downloads import DownloadRecord
from browserd.daemon.sessions.files import output_file, upload_files
from browserd.daemon.sessions.page_errors import action_errors, page_errors
from browserd.daemon.snapshots.tab_call import TabCall
from browserd.daemon.tools.context import ToolContext
from browserd.daemon.tools.response import Response
from browserd.daemon.tools.tabtool import ActionParams, TabParams, TargetText, TimeoutMs, tab_tool
from browserd.daemon.tools.tool_registry import Params, Tool, tool

MAX_UPLOAD_FILES = 100
# A click meant to open a file chooser: how long to wait for the chooser, unless the call says.
CHOOSER_WAIT_MS = 5_000
DEFAULT_DOWNLOAD_WAIT_MS = 30_000


class UploadParams(ActionParams, kw_only=True):
    target: Annotated[TargetText, msgspec.Meta(description="A file input, or the button that opens a file chooser.")]
    paths: Annotated[
        list[str], msgspec.Meta(min_length=1, max_length=MAX_UPLOAD_FILES, description="Absolute file paths.")
    ]
    timeout: TimeoutMs | None = None


class DownloadsParams(Params, kw_only=True):
    wait: Annotated[bool, msgspec.Meta(description="Wait for downloads still in progress.")] = False
    id: Annotated[str, msgspec.Meta(description="Only this download (dl_N).")] | None = None
    timeout: Annotated[int, msgspec.Meta(ge=1, le=300_000, description="ms to wait (wait=true).")] = (
        DEFAULT_DOWNLOAD_WAIT_MS
    )
    limit: Annotated[int, msgspec.Meta(ge=1, le=200)] = 50


class PdfParams(TabParams, kw_only=True):
    save_to: (
        Annotated[str, msgspec.Meta(description="File name in the session's output folder; default <tab>-N.pdf.")]
        | None
    ) = None
    format: Literal["A4", "A3", "A5", "Letter", "Legal", "Tabloid"] = "A4"
    landscape: bool = False
    print_background: Annotated[bool, msgspec.Meta(description="Print background colours and images.")] = True


def _sizes(files: list[Any]) -> str:
    return ", ".join(f"{f.name} ({f.stat().st_size} bytes)" for f in files)


@tab_tool(
    "browser_upload",
    "pages",
    "Put local files in a file input, or in the file chooser a button opens.",
    UploadParams,
)
async def browser_upload(ctx: ToolContext, call: TabCall, params: UploadParams, response: Response) -> None:
    tab = call.tab
    files = upload_files(params.paths, ctx.session.trust.upload_roots())
    target = await call.locate(params.target)
    with action_errors("upload", target.described):
        kind = await file_input(target.locator, params.timeout)
    if kind is not FileInput.NONE:
        if len(files) > 1 and kind is FileInput.ONE:
            raise InvalidParameter(
                f"{target.described} takes one file, not {len(files)}",
                hint="Pass one path, or pick an input that accepts several (multiple).",
                field="paths",
            )
        with action_errors("upload", target.described):
            await target.locator.set_input_files(files, timeout=params.timeout)
        response.text(f"Set {_sizes(files)} on {target.described}")
        response.code(f"await {target.code}.set_input_files({[str(f) for f in files]!r})")
        return
    await usable(target, "click")
    try:
        async with tab.page.expect_file_chooser(timeout=params.timeout or CHOOSER_WAIT_MS) as chooser_info:
            with action_errors("click", target.described):
                await target.locator.click(timeout=params.timeout)
        chooser = await chooser_info.value
    except PlaywrightTimeout as exc:
        raise ExecutionError(
            f"clicking {target.described} opened no file chooser",
            hint="Target the file input itself (browser_snapshot shows it as a button named after its label) or "
            "the button that opens the chooser.",
            target=target.described,
        ) from exc
    if len(files) > 1 and not chooser.is_multiple():
        raise InvalidParameter(
            f"the file chooser of {target.described} takes one file, not {len(files)}",
            hint="Pass one path.",
            field="paths",
        )
    with page_errors("upload"):
        await chooser.set_files(files)
    response.text(f"Clicked {target.described} and chose {_sizes(files)} in its file chooser")
    response.code(
        f"async with page.expect_file_chooser() as info:\n    await {target.code}.click()\n"
        f"await (await info.value).set_files({[str(f) for f in files]!r})"
    )


@tool(
    "browser_downloads",
    "devtools",
    "The session's downloads (name, size, path, source url, state); wait=true waits for those in progress.",
    DownloadsParams,
    read_only=True,
)
async def browser_downloads(ctx: ToolContext, params: DownloadsParams, response: Response) -> None:
    downloads = ctx.session.downloads
    records: list[DownloadRecord] = list(downloads.records)
    if params.id is not None:
        found = downloads.find(params.id)
        if found is None:
            raise InvalidParameter(
                f"no download {params.id} in this session",
                hint="Call browser_downloads without id for the session's downloads.",
                field="id",
            )
        records = [found]
    pending = [r for r in records if r.state == "in_progress"]
    timed_out = False
    if params.wait and pending:
        await ctx.progress(0, len(pending), f"waiting for {len(pending)} download(s)")
        timed_out = not await downloads.wait(pending, params.timeout / 1000)
    shown = records[-params.limit :]
    response.data(
        {
            "folder": str(downloads.folder),
            "downloads": [r.info() for r in shown],
            "total": len(records),
            "timedOut": timed_out,
        }
    )
    if not records:
        response.text(
            f"No download in this session yet; files that pages download are saved to {downloads.folder} and kept "
            "after the session ends."
        )
        return
    lines = [
        f"- {r.id} {r.state}: {r.name}"
        + (f" ({r.size} bytes)" if r.size is not None else "")
        + f" from {r.url} in {r.tab_id} -> {r.path}"
        + (f" ({r.error})" if r.error else "")
        for r in shown
    ]
    note = (
        f"\nStill in progress after {params.timeout} ms; call again with wait=true to keep waiting."
        if timed_out
        else ""
    )
    response.text(
        f"{len(records)} download(s), saved to {downloads.folder} (kept after the session ends):\n"
        + "\n".join(lines)
        + note
    )


@tab_tool(
    "browser_pdf",
    "devtools",
    "Print the tab to a PDF file in the session's output folder; answers its path and size.",
    PdfParams,
    read_only=True,
)
async def browser_pdf(ctx: ToolContext, call: TabCall, params: PdfParams, response: Response) -> None:
    tab = call.tab
    if not ctx.services.config.browser.headless:
        raise NotSupported(
            "Chromium prints PDFs only when headless, and this daemon runs a headed browser",
            hint="Use browser_screenshot with fullPage=true, or run the daemon headless (browser.headless=true).",
        )
    path = output_file(ctx.session.output_dir, params.save_to, tab.id, ".pdf")
    try:
        with page_errors("pdf"):
            await tab.page.pdf(
                path=path,
                format=params.format,
                landscape=params.landscape,
                print_background=params.print_background,
            )
    except OSError as exc:
        raise ExecutionError(
            f"could not write {path}: {exc}", hint="Check the free space of the output folder."
        ) from exc
    size = path.stat().st_size
    response.data({"path": str(path), "size": size, "tabId": tab.id, "url": tab.page.url})
    response.text(
        f"Printed {tab.page.url} to {path} ({size} bytes, {params.format}{', landscape' if params.landscape else ''})"
    )
    response.code(
        f"await page.pdf(path={str(path)!r}, format={params.format!r}, landscape={params.landscape}, "
        f"print_background={params.print_background})"
    )


TOOLS: list[Tool[Any]] = [browser_upload, browser_downloads, browser_pdf]
