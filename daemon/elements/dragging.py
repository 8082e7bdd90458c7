"""Dragging as a person drags, so that every kind of drag-and-drop library sees it.

Playwright's drag_to presses, makes one move to the target's centre and releases. Pointer-event
libraries (dnd-kit, react-beautiful-dnd, SortableJS's fallback) start a drag only once the pointer has
moved a few pixels with the button down, and decide where the item goes on the moves after that; one
move is then no drag at all. A sortable list also puts the item before or after the one under the
pointer by which half it is in, so the centre is a coin toss. Here the pointer moves in small steps,
first past the libraries' start threshold, then to the part of the target beyond its middle in the
direction of travel (the item takes the target's place; a drop zone is still hit well inside).

A person's drag replayed from a flow (S4-40) goes their own way instead: the recorded points, bent so
they start where this press is and end where the person released within the target.
"""

from __future__ import annotations

from collections.abc import Sequence

from playwright.async_api import ElementHandle, FloatRect, Locator, Page, ViewportSize

# Past every common activation distance (dnd-kit and react-beautiful-dnd use 5 px, SortableJS 1-3 px).
START_MOVE_PX = 10
STEPS = 8


async def drag(
    page: Page,
    source: Locator | ElementHandle,
    target: Locator | ElementHandle,
    timeout_ms: float,
    way: Sequence[Sequence[int]] = (),
) -> None:
    """`way`: a person's path ([x, y, ...] from the target's centre, the press first, the release last)."""
    await source.scroll_into_view_if_needed(timeout=timeout_ms)
    # The hover waits for the source to be visible, stable and uncovered, as a click would.
    await source.hover(timeout=timeout_ms)
    start = _centre(await _box(source, timeout_ms))
    end_box = await _box(target, timeout_ms)
    end = _centre(end_box)
    down = 1 if end[1] > start[1] else -1 if end[1] < start[1] else 0
    right = 1 if end[0] > start[0] and not down else -1 if end[0] < start[0] and not down else 0
    await page.mouse.down()
    toward = (down or right or 1) * START_MOVE_PX
    await page.mouse.move(start[0] + (toward if right else 0), start[1] + (toward if not right else 0), steps=2)
    scrolled = False
    if not _in_window(end, page.viewport_size):
        # A target beyond the window (a far column, the bottom of a long list) is scrolled to with the item
        # held, as a person wheels during a drag: the page scrolls, the drag goes on, from its new place.
        await target.scroll_into_view_if_needed(timeout=timeout_ms)
        end_box, before = await _box(target, timeout_ms), end_box
        end, scrolled = _centre(end_box), end_box != before
    if len(way) >= 2:
        moves = _persons_way(start, end_box, way)
        # After a scroll the way's start lies where the press was before it, out of the window now: only
        # where it ends still holds.
        for point in moves[-1:] if scrolled else moves:
            await page.mouse.move(*point, steps=STEPS if scrolled else 2)
            end = point
    else:
        # A quarter of the target's size beyond its middle: the half a sortable list reads as "its place".
        end = (end[0] + right * end_box["width"] / 4, end[1] + down * end_box["height"] / 4)
        await page.mouse.move(*end, steps=STEPS)
    # Chromium accepts an HTML5 drop only once the page's dragover answer has reached it: one more move.
    await page.mouse.move(end[0] + 1, end[1])
    await page.mouse.up()


def _in_window(point: tuple[float, float], window: ViewportSize | None) -> bool:
    # A page without a set viewport has a size only the page knows: the scroll, a no-op when in view, decides.
    return window is not None and 0 <= point[0] < window["width"] and 0 <= point[1] < window["height"]


def _persons_way(
    press: tuple[float, float], target: FloatRect, way: Sequence[Sequence[int]]
) -> list[tuple[float, float]]:
    """The moves after the press along a person's way: each point from the target's centre as recorded, shifted
    by an amount that fades from where the press is now (vs. where the person pressed) to where the release
    lands now, inside the target even if its box shrank."""
    centre = _centre(target)
    last = way[-1]
    release = (
        min(max(centre[0] + last[0], target["x"] + 1), target["x"] + target["width"] - 1),
        min(max(centre[1] + last[1], target["y"] + 1), target["y"] + target["height"] - 1),
    )
    at_press = (press[0] - centre[0] - way[0][0], press[1] - centre[1] - way[0][1])
    at_release = (release[0] - centre[0] - last[0], release[1] - centre[1] - last[1])
    moves = []
    for i, point in enumerate(way[1:], start=1):
        f = i / (len(way) - 1)
        moves.append(
            (
                centre[0] + point[0] + at_press[0] * (1 - f) + at_release[0] * f,
                centre[1] + point[1] + at_press[1] * (1 - f) + at_release[1] * f,
            )
        )
    return moves


async def _box(locator: Locator | ElementHandle, timeout_ms: float) -> FloatRect:
    box = await (locator.bounding_box(timeout=timeout_ms) if isinstance(locator, Locator) else locator.bounding_box())
    if box is None:
        raise ValueError("element has no box")  # hover() above has already waited for it to be visible
    return box


def _centre(box: FloatRect) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
