"""A flow as a Playwright Python script (issue 14 item 8): each step on its first candidate.

Variables come from the environment (FLOW_<KEY>), so no value is ever written into the script.
"""

from __future__ import annotations

from browserd.daemon.flows.model import Flow, Step, TargetLocator
from browserd.daemon.flows.templating import variables_in


def _locator(target: TargetLocator) -> str:
    if not target.candidates:
        return "page.locator('body')"
    first = target.candidates[0]
    value = first.value
    if first.type == "testid":
        return f"page.get_by_test_id({value!r})"
    if first.type == "role":
        role, name = value.split("|", 1)
        return f"page.get_by_role({role!r}, name={name!r}, exact=True)"
    if first.type == "label":
        return f"page.get_by_label({value!r}, exact=True)"
    if first.type == "placeholder":
        return f"page.get_by_placeholder({value!r}, exact=True)"
    if first.type == "text":
        return f"page.get_by_text({value!r}, exact=True)"
    if first.type == "xpath":
        return f"page.locator({'xpath=' + value!r})"
    return f"page.locator({value!r})"


def _value(template: str) -> str:
    keys = variables_in(template)
    if template == "{" + (keys[0] if keys else "") + "}" and keys:
        return f"env({keys[0]!r})"
    return repr(template)


def _line(step: Step) -> str:
    target = _locator(step.target) if step.target is not None else ""
    if step.type == "navigate":
        move = (step.url or "").removeprefix("history:")
        return (
            f"page.go_{move}()"
            if move in ("back", "forward")
            else ("page.reload()" if move == "reload" else f"page.goto({step.url!r})")
        )
    if step.type == "fill":
        return f"{target}.fill({_value(step.value or '')})"
    if step.type == "select":
        return f"{target}.select_option(**{step.value})"
    if step.type == "key":
        presses = [f"press({key!r})" for key in (step.keys or "").split()]
        owner = target or "page.keyboard"
        return "; ".join(f"{owner}.{press}" for press in presses)
    if step.type == "drag" and step.end is not None:
        return f"{target}.drag_to({_locator(step.end)})"
    if step.type == "scroll":
        return f"{target}.scroll_into_view_if_needed()" if target else f"page.mouse.wheel(*{step.delta or [0, 0]})"
    if step.type == "extract":
        what = step.value or "text"
        if what.startswith("attribute:"):
            return f"print({target}.get_attribute({what.removeprefix('attribute:')!r}))"
        return f"print({target}.{'input_value' if what == 'value' else 'inner_text'}())"
    if step.type == "openTab":
        return "page = page.context.new_page()" + (f"; page.goto({step.url!r})" if step.url else "")
    if step.type in ("switchTab", "closeTab"):
        base = (step.url or "").split("?")[0].split("#")[0]
        found = f"next(p for p in reversed(page.context.pages) if p.url.startswith({base!r}))" if base else "page"
        if step.type == "switchTab":
            return f"page = {found}; page.bring_to_front()"
        return f"{found}.close(); page = page.context.pages[-1]"
    if step.type == "wait":
        return f"page.get_by_text({step.wait_text or ''!r}).first.wait_for()"
    return f"{target}.{step.type}()"


def playwright_script(flow: Flow) -> str:
    body = "\n".join(f"        {_line(step)}  # {step.id}" for step in flow.steps if not step.disabled)
    start = (
        f"        page.goto({flow.meta.start_url!r})\n"
        if flow.meta.start_url and (not flow.steps or flow.steps[0].type != "navigate")
        else ""
    )
    return (
        f'"""{flow.name} (browserd flow {flow.id} v{flow.version}). Variables: FLOW_<KEY> environment variables."""\n\n'
        "import os\n\nfrom playwright.sync_api import sync_playwright\n\n\n"
        "def env(key: str) -> str:\n    return os.environ['FLOW_' + key.upper()]\n\n\n"
        "def main() -> None:\n    with sync_playwright() as p:\n"
        "        browser = p.chromium.launch()\n        page = browser.new_page()\n"
        f"{start}{body}\n        browser.close()\n\n\nif __name__ == '__main__':\n    main()\n"
    )
