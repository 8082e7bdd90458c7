"""Files in and out of pages (issue 4 item 2; S2-16, S2-105, D-33, D-57): browser_upload, browser_downloads,
browser_pdf.

Uploads take a file input or the chooser a button opens, local sessions only; every download of a
session is saved to its download folder and reported by the action that started it (a PDF that Chromium
shows in its viewer too), and kept after the session ends; a page prints to a PDF file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import BrowserdHome, mcp_client
from tests.e2e.results import failed, ok, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.shared_daemon]
# Besides the agent loop, this module drives the devtools group (off by default since issue 10).
DEVTOOLS = ("--tools", "pages,devtools")

NOTES_BODY = b"contents of notes.txt\n" * 100


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    made = {"a": tmp_path / "alpha.txt", "b": tmp_path / "beta.csv"}
    made["a"].write_bytes(b"a" * 10)
    made["b"].write_bytes(b"b" * 2048)
    return made


async def test_upload_sets_single_and_multiple_file_inputs(
    home: BrowserdHome, site: str, files: dict[str, Path]
) -> None:
    async with mcp_client(home, args=("--codegen",)) as client:  # the answer names the Playwright call
        ok(await client.call_tool("browser_open", {"url": f"{site}/upload.html", "snapshot": "none"}))

        single = ok(await client.call_tool("browser_upload", {"target": "#single", "paths": [str(files["a"])]}))
        assert "single: alpha.txt (10 bytes)" in text_of(single)
        assert "set_input_files" in text_of(single)

        several = ok(
            await client.call_tool(
                "browser_upload", {"target": "#several", "paths": [str(files["a"]), str(files["b"])]}
            )
        )
        assert "several: alpha.txt (10 bytes), beta.csv (2048 bytes)" in text_of(several)

        refused = failed(
            await client.call_tool(
                "browser_upload", {"target": "#single", "paths": [str(files["a"]), str(files["b"])]}
            ),
            "INVALID_PARAMETER",
        )
        assert "takes one file" in refused["error"]


async def test_upload_answers_the_file_chooser_a_button_opens(
    home: BrowserdHome, site: str, files: dict[str, Path]
) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/upload.html", "snapshot": "none"}))
        chosen = ok(
            await client.call_tool(
                "browser_upload", {"target": "#chooser", "paths": [str(files["a"]), str(files["b"])]}
            )
        )
        assert "file chooser" in text_of(chosen)
        assert "chooser: alpha.txt (10 bytes), beta.csv (2048 bytes)" in text_of(chosen)

        none = failed(
            await client.call_tool(
                "browser_upload", {"target": "#nothing", "paths": [str(files["a"])], "timeout": 1000}
            ),
            "EXECUTION_ERROR",
        )
        assert "opened no file chooser" in none["error"]


async def test_upload_refuses_bad_paths_and_keeps_serving(
    home: BrowserdHome, site: str, files: dict[str, Path], tmp_path: Path
) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/upload.html", "snapshot": "none"}))
        for paths, words in (
            ([str(tmp_path / "missing.txt")], "no file at"),
            ([str(tmp_path)], "not a regular file"),
            (["relative.txt"], "not an absolute path"),
        ):
            error = failed(
                await client.call_tool("browser_upload", {"target": "#single", "paths": paths}), "INVALID_PARAMETER"
            )
            assert words in error["error"] and error["details"]["field"] == "paths"
        empty = failed(
            await client.call_tool("browser_upload", {"target": "#single", "paths": []}), "INVALID_PARAMETER"
        )
        assert empty["details"]["field"] == "paths"
        ok(await client.call_tool("browser_upload", {"target": "#single", "paths": [str(files["a"])]}))


async def test_remote_session_uploads_only_from_the_allowed_roots(
    home: BrowserdHome, files: dict[str, Path], tmp_path: Path
) -> None:
    """D-33, S2-105: a remote session uploads files inside `[security] allowed_file_roots` only; a path
    outside them, with `..`, or through a symlink that leads out is refused before the file is looked
    at (a missing file outside answers the same as an existing one)."""
    root = tmp_path / "shared"
    root.mkdir()
    (root / "inside.txt").write_bytes(b"i" * 7)
    (root / "escape.txt").symlink_to(files["a"])
    home.env["BROWSERD_SECURITY_ALLOWED_FILE_ROOTS"] = str(root)
    async with mcp_client(home, args=(*DEVTOOLS, "--trust", "remote")) as client:
        # A data: page: a remote session may not reach the loopback test site at all (DESIGN.md §5).
        page = "data:text/html,<input type=file id=pick multiple>"
        ok(await client.call_tool("browser_open", {"url": page, "snapshot": "none"}))
        for path, rule in (
            (files["a"], "outside-allowed-roots"),
            (tmp_path / "no-such-file.txt", "outside-allowed-roots"),
            (root / "escape.txt", "outside-allowed-roots"),
            (root / ".." / files["a"].name, "dot-dot"),
        ):
            error = failed(
                await client.call_tool("browser_upload", {"target": "#pick", "paths": [str(path)]}),
                "TRUST_LEVEL_NOT_ALLOWED",
            )
            assert error["details"]["rule"] == rule and str(root) in error["recoverHint"], error
        done = ok(await client.call_tool("browser_upload", {"target": "#pick", "paths": [str(root / "inside.txt")]}))
        assert "inside.txt (7 bytes)" in text_of(done)


async def test_click_on_a_download_link_reports_where_the_file_went(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/downloads.html", "snapshot": "none"}))
        clicked = ok(await client.call_tool("browser_click", {"target": "#notes"}))
        [download] = clicked.structured_content["downloads"]
        assert download["state"] == "done" and download["name"] == "notes.txt", download
        assert download["size"] == len(NOTES_BODY) and download["tabId"] == "tab_1"
        assert download["url"] == f"{site}/download?name=notes.txt"
        path = Path(download["path"])
        assert path.read_bytes() == NOTES_BODY
        assert path.parent.name == "downloads" and str(home.root) in str(path)
        assert f"downloaded notes.txt ({len(NOTES_BODY)} bytes)" in text_of(clicked)

        again = ok(await client.call_tool("browser_click", {"target": "#notes"}))
        assert again.structured_content["downloads"][0]["name"] == "notes (2).txt", "a second copy gets its own name"

        listed = ok(await client.call_tool("browser_downloads", {})).structured_content
        assert [d["name"] for d in listed["downloads"]] == ["notes.txt", "notes (2).txt"]
        assert listed["folder"] == str(path.parent)


async def test_open_on_a_file_url_answers_with_the_download(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
        opened = ok(await client.call_tool("browser_open", {"url": f"{site}/download?name=report.csv"}))
        assert "is a file, not a page" in text_of(opened)
        assert opened.structured_content["downloaded"] is True
        assert opened.structured_content["url"] == f"{site}/index.html", "the tab stays on its page"
        [download] = opened.structured_content["downloads"]
        assert download["state"] == "done" and Path(download["path"]).name == "report.csv"
        ok(await client.call_tool("browser_snapshot", {}))


async def test_a_pdf_link_becomes_a_reported_download(home: BrowserdHome, site: str) -> None:
    """Chromium shows PDFs in its viewer, which reads as an empty page: the file is saved as a download."""
    pdf = (Path(__file__).parent.parent / "site" / "sample.pdf").read_bytes()
    async with mcp_client(home, args=DEVTOOLS) as client:
        opened = ok(await client.call_tool("browser_open", {"url": f"{site}/sample.pdf", "snapshot": "none"}))
        [download] = opened.structured_content["downloads"]
        assert download["state"] == "done" and download["name"] == "sample.pdf"
        assert Path(download["path"]).read_bytes() == pdf

        ok(await client.call_tool("browser_open", {"url": f"{site}/downloads.html", "snapshot": "none"}))
        clicked = ok(await client.call_tool("browser_click", {"target": "#pdf"}))
        [again] = clicked.structured_content["downloads"]
        assert again["name"] == "sample (2).pdf" and Path(again["path"]).read_bytes() == pdf
        assert "downloaded sample (2).pdf" in text_of(clicked)


async def test_downloads_wait_for_one_in_progress_and_files_outlive_the_session(home: BrowserdHome, site: str) -> None:
    # Actions answer without waiting for their downloads; the slow one holds back half its body meanwhile.
    home.env["BROWSERD_BROWSER_DOWNLOAD_REPORT_WAIT_MS"] = "0"
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/downloads.html", "snapshot": "none"}))
        clicked = ok(await client.call_tool("browser_click", {"target": "#slow"}))
        [started] = clicked.structured_content["downloads"]
        assert started["state"] == "in_progress" and "wait=true" in text_of(clicked)
        waited = ok(await client.call_tool("browser_downloads", {"wait": True, "id": started["id"]}))
        [done] = waited.structured_content["downloads"]
        assert done["state"] == "done" and done["size"] == len(b"contents of slow.txt\n" * 100)
        assert waited.structured_content["timedOut"] is False

        missing = failed(await client.call_tool("browser_downloads", {"id": "dl_99"}), "INVALID_PARAMETER")
        assert missing["details"]["field"] == "id"
    # The session has ended: what it downloaded stays (user data is never removed).
    assert Path(done["path"]).exists()


async def test_pdf_prints_the_page_to_a_file(home: BrowserdHome, site: str) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/form.html", "snapshot": "none"}))
        printed = ok(await client.call_tool("browser_pdf", {}))
        path = Path(printed.structured_content["path"])
        assert path.read_bytes().startswith(b"%PDF") and path.stat().st_size == printed.structured_content["size"]
        assert path.name == "tab_1-1.pdf"

        named = ok(await client.call_tool("browser_pdf", {"saveTo": "form.pdf", "format": "Letter", "landscape": True}))
        assert Path(named.structured_content["path"]).name == "form.pdf"

        bad = failed(await client.call_tool("browser_pdf", {"saveTo": "../escape.pdf"}), "INVALID_PARAMETER")
        assert bad["details"]["field"] == "saveTo"
        failed(await client.call_tool("browser_pdf", {"format": "B5"}), "INVALID_PARAMETER")


async def test_a_download_cut_short_is_reported_failed_and_leaves_no_partial_file(
    home: BrowserdHome, site: str
) -> None:
    async with mcp_client(home, args=DEVTOOLS) as client:
        ok(await client.call_tool("browser_open", {"url": f"{site}/index.html", "snapshot": "none"}))
        ok(
            await client.call_tool(
                "browser_open", {"url": f"{site}/download?name=cut.txt&broken=1", "snapshot": "none"}
            )
        )
        [record] = ok(await client.call_tool("browser_downloads", {"wait": True})).structured_content["downloads"]
        assert record["state"] == "failed" and record["error"], str(record)
        assert not Path(record["path"]).exists()
