"""A person's input events (daemon/flows/recording/person_input_js.py) as recorded steps, without a browser
(S4-35..S4-43, D-48).

The events are shaped as the page script sends them; the page itself is covered by tests/e2e/test_flow_person.py.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import FloatRect

from browserd.daemon.elements.dragging import _persons_way
from browserd.daemon.flows.recording.tool_recorder import Recorder

PAGE = "http://127.0.0.1:8000/form.html"


def _target(name: str, *, sensitive: bool = False, key: str = "") -> dict[str, Any]:
    """What CAPTURE_JS answers for an element named `name`."""
    fingerprint = {"tag": "input", "role": "textbox", "name": name, "nameAttr": key, "valueKind": "text"}
    candidates = [{"type": "role", "value": f"textbox|{name}"}, {"type": "css", "value": f"input[name={key or 'x'}]"}]
    return {"fingerprint": fingerprint, "candidates": candidates, "sensitive": sensitive, "keyHint": key or name}


def _recorder(keep_values: bool = False) -> Recorder:
    return Recorder("person", None, keep_values)


def test_a_fill_is_a_variable_and_a_sensitive_fields_value_is_never_kept() -> None:
    recorder = _recorder(keep_values=True)
    recorder.person({"k": "fill", "b": 1, "t": _target("Email", key="email"), "v": "ann@example.test", "f": []}, PAGE)
    recorder.person({"k": "fill", "b": 2, "t": _target("Password", key="password", sensitive=True), "f": []}, PAGE)
    assert [s.value for s in recorder.steps] == ["{email}", "{password}"]
    email, password = recorder.variables
    assert email.default == "ann@example.test" and not email.sensitive
    assert password.sensitive and password.default is None
    assert recorder.start_url == PAGE  # the flow is bound to the page the person began on


def test_without_keep_values_a_typed_value_is_no_default() -> None:
    recorder = _recorder()
    recorder.person({"k": "fill", "b": 1, "t": _target("Name", key="name"), "v": "Ann", "f": []}, PAGE)
    assert recorder.variables[0].default is None


def test_a_double_click_replaces_the_two_clicks_before_it_on_the_same_element() -> None:
    recorder = _recorder()
    other, row = _target("Other"), _target("Row")
    for event in ({"k": "click", "t": other}, {"k": "click", "t": row}, {"k": "click", "t": row}):
        recorder.person({**event, "f": []}, PAGE)
    recorder.person({"k": "dblclick", "t": row, "f": []}, PAGE)
    assert [(s.id, s.type) for s in recorder.steps] == [("s1", "click"), ("s2", "dblclick")]


def test_keys_scrolls_selects_checks_and_navigations_become_their_steps() -> None:
    recorder = _recorder()
    frame = ['iframe[name="pay"]']
    events: list[dict[str, Any]] = [
        {"k": "navigate", "url": PAGE},
        {"k": "select", "t": _target("Plan"), "labels": ["Pro"]},
        {"k": "check", "t": _target("Terms")},
        {"k": "key", "keys": "Control+k"},
        {"k": "scroll", "b": 3, "d": [0, 240]},
        {"k": "scroll", "b": 4, "t": _target("Feed"), "d": [0, 120], "f": frame},
        {"k": "navigate", "url": "history:back"},
    ]
    for event in events:
        recorder.person({"f": [], **event}, PAGE)
    steps = recorder.steps
    assert [s.type for s in steps] == ["navigate", "select", "check", "key", "scroll", "scroll", "navigate"]
    assert steps[1].value == '{"labels":["Pro"]}'
    assert steps[3].keys == "Control+k" and steps[3].target is None
    assert steps[4].delta == [0, 240] and steps[4].target is None
    assert steps[5].target is not None and steps[5].target.frame == frame
    assert steps[6].url == "history:back"


def test_an_event_about_an_element_its_frame_could_not_describe_is_no_step() -> None:
    recorder = _recorder()
    recorder.person({"k": "click", "f": []}, PAGE)
    recorder.person({"k": "fill", "b": 1, "f": []}, PAGE)
    assert recorder.steps == [] and recorder.variables == []


def test_a_drag_is_one_step_with_its_drop_target_and_way_and_needs_a_drop_target() -> None:
    recorder = _recorder()
    way = [[-4, 80, 0], [-2, 40, 50], [0, 6, 100]]
    recorder.person({"k": "drag", "t": _target("Song one"), "e": _target("Song three"), "p": way, "f": []}, PAGE)
    recorder.person({"k": "drag", "t": _target("Song two"), "p": way, "f": []}, PAGE)
    [step] = recorder.steps
    assert step.type == "drag" and step.path == way
    assert step.target is not None and step.target.fingerprint.name == "Song one"
    assert step.end is not None and step.end.fingerprint.name == "Song three"


def test_a_persons_way_starts_at_the_press_and_ends_where_they_released_inside_the_target() -> None:
    target: FloatRect = {"x": 100, "y": 200, "width": 40, "height": 20}  # centre (120, 210)
    way = [[0, 100, 0], [5, 50, 50], [3, 4, 100]]
    moves = _persons_way((130, 300), target, way)
    assert moves[-1] == (123, 214)  # 3, 4 from the centre, as the person released
    # The middle point (125, 260) as recorded, moved by half the press's shift (10, -10) from where the person pressed.
    assert moves[0] == (130, 255)
    # A release recorded beyond a box that is smaller now still lands inside it.
    assert _persons_way((0, 0), target, [[0, 0, 0], [90, -90, 40]])[-1] == (139, 201)
