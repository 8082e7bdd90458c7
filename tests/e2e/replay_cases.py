"""Replay on a later release of a page (issue 23 part 1): the recorded targets and the mutated pages.

Each target is recorded once on its page in tests/site/replay/ (one step: a click, a fill or a check);
each case replays it on the page after `ops` (tests/site/replay/mutate.js) and says what must happen:
the recorded element acted on (`expect` is its data-who), or a refusal (`expect` None). Cases come in
four classes, after what real sites change between releases:

- name: the visible name changed a little (a count, case, punctuation, a word added, a common synonym);
- testid: a test id or id removed or renamed, everything else as it was;
- lookalike: an element with the same role and name inserted before the target (a promo, a new row),
  the target keeping its container, row, label and neighbours;
- negative: the replay must refuse (removed with a look-alike left, disabled, same place but another
  meaning, a synonym while the recorded name is still on the page).

tests/e2e/replay_heldout.py holds a second, held-out set on other pages, with one more class (`structure`).

tests/e2e/test_flow_mutations.py asserts every case; tests/bench/flows.py --mutations prints the shares.
"""

# One case a line, with the markup it inserts and the typography real sites use (arrows, signs): a table.
# ruff: noqa: E501, RUF001

from __future__ import annotations

import json
import urllib.parse
from dataclasses import dataclass
from typing import Any, Literal

Op = list[Any]
Kind = Literal["name", "testid", "lookalike", "structure", "negative"]


@dataclass(frozen=True)
class Target:
    page: str  # under tests/site/replay/
    css: str
    who: str
    action: Literal["click", "fill", "check"] = "click"


@dataclass(frozen=True)
class Case:
    target: Target
    kind: Kind
    what: str
    ops: tuple[Op, ...]
    expect: str | None  # data-who of the element that must be acted on; None: the replay must refuse

    def url(self, site: str) -> str:
        query = f"?m={urllib.parse.quote(json.dumps(list(self.ops)))}" if self.ops else ""
        return f"{site}/replay/{self.target.page}{query}"

    @property
    def label(self) -> str:
        return f"{self.target.page}:{self.target.who}:{self.kind}:{self.what}"


def outcome(case: Case, succeeded: bool, log: list[str]) -> Literal["correct", "wrong", "refused"]:
    """`correct` only when the expected element and nothing else was acted on; an action on any other
    element (or a replay that says it succeeded without acting) is `wrong`."""
    acted = {line.split(":", 1)[1] for line in log if line.startswith(("click:", "input:"))}
    if not succeeded:
        return "wrong" if acted else "refused"
    return "correct" if case.expect is not None and acted == {case.expect} else "wrong"


def text(css: str, words: str) -> Op:
    return ["text", css, words]


def attr(css: str, name: str, value: str | None) -> Op:
    return ["attr", css, name, value]


def html(css: str, where: str, markup: str) -> Op:
    return ["html", css, where, markup]


def remove(css: str) -> Op:
    return ["remove", css]


def _each(css: str, count: int, op: str, *args: Any) -> tuple[Op, ...]:
    """The same operation on `count` elements, `css` formatted with 1..count (a template change that hits
    every row)."""
    return tuple([op, css.format(i), *args] for i in range(1, count + 1))


ARCHIVE = Target("mail.html", "[data-who=archive]", "archive")
COMPOSE = Target("mail.html", "#compose", "compose")
STAR_BEN = Target("mail.html", "[data-who=star-ben]", "star-ben")
OPEN_CLEO = Target("mail.html", "[data-who=open-cleo]", "open-cleo")
SENT = Target("mail.html", "[data-who=nav-sent]", "nav-sent")
SIGNUP = Target("signup.html", "#signup-submit", "signup")
EMAIL = Target("signup.html", "#email", "email", "fill")
LOGIN = Target("signup.html", "#login-link", "login")
SUBSCRIBE = Target("signup.html", "[data-who=subscribe]", "subscribe")
DELETE_BEN = Target("team.html", "[data-who=delete-ben]", "delete-ben")
EDIT_CLEO = Target("team.html", "[data-who=edit-cleo]", "edit-cleo")
INVITE = Target("team.html", "#invite-btn", "invite")
NEXT = Target("team.html", "[data-who=next]", "next")
ADD_MUG = Target("shop.html", "[data-who=add-mug]", "add-mug")
FEEDBACK = Target("shop.html", "#feedback-submit", "feedback-submit")
CART = Target("shop.html", "#cart-button", "cart")
SEARCH_GO = Target("shop.html", "[data-who=search-go]", "search-go")
SAVE_NOTIFICATIONS = Target("settings.html", "[data-who=save-notifications]", "save-notifications")
LOGOUT = Target("settings.html", "#logout", "logout")
REPLIES = Target("settings.html", "[data-who=replies]", "replies", "check")
DISPLAY_NAME = Target("settings.html", "#display-name", "display-name", "fill")
# checkout.html: nothing but classes and text, as many shops are built.
REMOVE_MUG = Target("checkout.html", "[data-who=remove-mug]", "remove-mug")
CHANGE_PAYMENT = Target("checkout.html", "[data-who=change-payment]", "change-payment")
APPLY = Target("checkout.html", "[data-who=apply]", "apply")
PLACE_ORDER = Target("checkout.html", "[data-who=place-order]", "place-order")
COUPON = Target("checkout.html", "[data-who=coupon]", "coupon", "fill")

# repo.html: written after the scorer, as held-out cases; the first run's figures are in docs/flows.md.
STAR = Target("repo.html", "[data-who=star]", "star")
ISSUES = Target("repo.html", "[data-who=issues]", "issues")
COPY_TESTS = Target("repo.html", "[data-who=copy-tests]", "copy-tests")
TITLE = Target("repo.html", "[data-who=title]", "title", "fill")
SUBMIT_ISSUE = Target("repo.html", "[data-who=submit-issue]", "submit-issue")
DIALOG_DELETE = Target("repo.html", "[data-who=dialog-delete]", "dialog-delete")
# projects.html: a second held-out page, written and run once before any change the run suggested.
NEW_PROJECT = Target("projects.html", "[data-who=new-project]", "new-project")
VIEW_BOREALIS = Target("projects.html", "[data-who=view-borealis]", "view-borealis")
ARCHIVE_CYGNUS = Target("projects.html", "[data-who=archive-cygnus]", "archive-cygnus")
READ_ROADMAP = Target("projects.html", "[data-who=read-roadmap]", "read-roadmap")
SORT_DATE = Target("projects.html", "[data-who=sort-date]", "sort-date", "check")
APPLY_FILTERS = Target("projects.html", "[data-who=apply-filters]", "apply-filters")
# forum.html: a third held-out page, written and run once before any change the run suggested.
NEW_TOPIC = Target("forum.html", "#new-topic", "new-topic")
FOLLOW_T2 = Target("forum.html", "[data-who=follow-t2]", "follow-t2")
USER = Target("forum.html", "#user", "user", "fill")
LOGIN_BUTTON = Target("forum.html", "#login-btn", "login")
PAGE_2 = Target("forum.html", "[data-who=p2]", "p2")
ACCEPT = Target("forum.html", "[data-who=accept]", "accept")

TARGETS = (
    ARCHIVE, COMPOSE, STAR_BEN, OPEN_CLEO, SENT, SIGNUP, EMAIL, LOGIN, SUBSCRIBE, DELETE_BEN, EDIT_CLEO, INVITE,
    NEXT, ADD_MUG, FEEDBACK, CART, SEARCH_GO, SAVE_NOTIFICATIONS, LOGOUT, REPLIES, DISPLAY_NAME, REMOVE_MUG,
    CHANGE_PAYMENT, APPLY, PLACE_ORDER, COUPON, STAR, ISSUES, COPY_TESTS, TITLE, SUBMIT_ISSUE, DIALOG_DELETE,
    NEW_PROJECT, VIEW_BOREALIS, ARCHIVE_CYGNUS, READ_ROADMAP, SORT_DATE, APPLY_FILTERS,
    NEW_TOPIC, FOLLOW_T2, USER, LOGIN_BUTTON, PAGE_2, ACCEPT,
)  # fmt: skip

TEAM_DELETES = "tbody tr:nth-of-type({}) [data-testid^=delete]"
TEAM_ROWS = 4
DECOY = 'data-who="decoy"'


def _named(target: Target, what: str, *ops: Op) -> Case:
    return Case(target, "name", what, ops, target.who)


def _ids(target: Target, what: str, *ops: Op) -> Case:
    return Case(target, "testid", what, ops, target.who)


def _lookalike(target: Target, what: str, *ops: Op) -> Case:
    return Case(target, "lookalike", what, ops, target.who)


def _refused(target: Target, what: str, *ops: Op) -> Case:
    return Case(target, "negative", what, ops, None)


# fmt: off
CASES: tuple[Case, ...] = (
    # -- name: what a person still reads as the same control ------------------------------------------------
    _named(ARCHIVE, "count appended", text(ARCHIVE.css, "Archive (12)")),
    _named(ARCHIVE, "lower case", text(ARCHIVE.css, "archive")),
    _named(ARCHIVE, "badge count", html(ARCHIVE.css, "beforeend", ' <span class="badge">3</span>')),
    _named(COMPOSE, "ellipsis", text(COMPOSE.css, "Compose…")),
    _named(COMPOSE, "icon glyph", text(COMPOSE.css, "+ Compose")),
    _named(SENT, "count appended", text(SENT.css, "Sent (3)")),
    _named(SENT, "upper case", text(SENT.css, "SENT")),
    _named(STAR_BEN, "aria label grew a word", attr(STAR_BEN.css, "aria-label", "Star message")),
    _named(OPEN_CLEO, "arrow appended", text(OPEN_CLEO.css, "Open →")),
    _named(SIGNUP, "case", text(SIGNUP.css, "Sign Up")),
    _named(SIGNUP, "punctuation", text(SIGNUP.css, "Sign up!")),
    _named(SIGNUP, "hyphen", text(SIGNUP.css, "Sign-up")),
    _named(SIGNUP, "synonym create account", text(SIGNUP.css, "Create account")),
    _named(SIGNUP, "synonym register", text(SIGNUP.css, "Register")),
    _named(LOGIN, "one word", text(LOGIN.css, "Login")),
    _named(LOGIN, "synonym sign in", text(LOGIN.css, "Sign in")),
    _named(EMAIL, "label grew a word", text("label[for=email]", "Email address")),
    _named(EMAIL, "label hyphen", text("label[for=email]", "E-mail")),
    _named(SUBSCRIBE, "word appended", text(SUBSCRIBE.css, "Subscribe now")),
    _named(DELETE_BEN, "synonym remove in every row", *_each(TEAM_DELETES, TEAM_ROWS, "text", "Remove")),
    _named(DELETE_BEN, "count in the row", text(DELETE_BEN.css, "Delete (2)")),
    _named(EDIT_CLEO, "synonym modify in every row", *_each("tbody tr:nth-of-type({}) [data-testid^=edit]", TEAM_ROWS, "text", "Modify")),
    _named(INVITE, "plural", text(INVITE.css, "Invite members")),
    _named(INVITE, "whitespace", text(INVITE.css, "  Invite\n   member ")),
    _named(NEXT, "chevron", text(NEXT.css, "Next ›")),
    _named(NEXT, "word appended", text(NEXT.css, "Next page")),
    _named(ADD_MUG, "synonym add to bag on every product", *_each(".product:nth-of-type({}) button", 3, "text", "Add to bag")),
    _named(ADD_MUG, "count", text(ADD_MUG.css, "Add to cart (1)")),
    _named(FEEDBACK, "synonym send", text(FEEDBACK.css, "Send")),
    _named(FEEDBACK, "word appended", text(FEEDBACK.css, "Submit feedback")),
    _named(FEEDBACK, "upper case", text(FEEDBACK.css, "SUBMIT")),
    _named(CART, "aria label with a count", attr(CART.css, "aria-label", "Cart (2 items)")),
    _named(SEARCH_GO, "icon glyph", text(SEARCH_GO.css, "🔍 Search")),
    _named(SAVE_NOTIFICATIONS, "word appended", text(SAVE_NOTIFICATIONS.css, "Save changes")),
    _named(LOGOUT, "synonym sign out", text(LOGOUT.css, "Sign out")),
    _named(LOGOUT, "one word", text(LOGOUT.css, "Logout")),
    _named(DISPLAY_NAME, "label case", text("label[for=display-name]", "Display Name")),
    _named(PLACE_ORDER, "price appended", text(PLACE_ORDER.css, "Place order · $71.00")),
    _named(PLACE_ORDER, "word inserted", text(PLACE_ORDER.css, "Place your order")),
    _named(REMOVE_MUG, "synonym delete in every row", *_each(".line:nth-of-type({}) button", 3, "text", "Delete")),
    _named(CHANGE_PAYMENT, "synonym edit in both boxes", text(CHANGE_PAYMENT.css, "Edit"), text("[data-who=change-address]", "Edit")),
    _named(APPLY, "word appended", text(APPLY.css, "Apply code")),
    _named(COUPON, "placeholder grew", attr(COUPON.css, "placeholder", "Coupon code (optional)")),
    _named(STAR, "count went up", text("[data-who=star] .count", "341")),
    _named(ISSUES, "count went up", text("[data-who=issues] .count", "8")),
    _named(COPY_TESTS, "label grew a word in every row", *_each(".file-row:nth-of-type({}) button", 3, "attr", "aria-label", "Copy file path")),
    _named(TITLE, "placeholder grew", attr(TITLE.css, "placeholder", "Issue title"), attr(TITLE.css, "aria-label", "Issue title")),
    _named(SUBMIT_ISSUE, "case and punctuation", text(SUBMIT_ISSUE.css, "Submit New Issue")),
    _named(DIALOG_DELETE, "word appended", text(DIALOG_DELETE.css, "Delete branch")),
    _named(DIALOG_DELETE, "synonym remove", text(DIALOG_DELETE.css, "Remove")),
    _named(NEW_PROJECT, "plus sign", text(NEW_PROJECT.css, "+ New project")),
    _named(NEW_PROJECT, "case", text(NEW_PROJECT.css, "New Project")),
    _named(VIEW_BOREALIS, "word appended in every row", *_each("[role=row]:nth-of-type({}) button:last-child", 3, "text", "View details")),
    _named(ARCHIVE_CYGNUS, "title case in every row", *_each("[role=row]:nth-of-type({}) button[title]", 3, "attr", "title", "Archive Project")),
    _named(READ_ROADMAP, "arrow", text(READ_ROADMAP.css, "Read more →")),
    _named(READ_ROADMAP, "word appended on both", text(READ_ROADMAP.css, "Read more about it"), text("[data-who=read-notes]", "Read more about it")),
    _named(SORT_DATE, "label grew a word", html("label:has([data-who=sort-date])", "afterend", '<label><input type="radio" name="sort" value="date" data-who="sort-date"> Date created</label>'), remove("label:has([data-who=sort-date])")),
    _named(APPLY_FILTERS, "upper case", text(APPLY_FILTERS.css, "APPLY FILTERS")),
    _named(APPLY_FILTERS, "word dropped", text(APPLY_FILTERS.css, "Apply")),
    _named(SUBMIT_ISSUE, "word dropped", text(SUBMIT_ISSUE.css, "Submit issue")),
    _named(NEW_TOPIC, "case", text(NEW_TOPIC.css, "New Topic")),
    _named(NEW_TOPIC, "words added", text(NEW_TOPIC.css, "Start a new topic")),
    _named(FOLLOW_T2, "word added in every row", *_each(".thread:nth-of-type({}) button", 3, "text", "Follow thread")),
    _named(USER, "label spacing", text("label[for=user]", "User name")),
    _named(LOGIN_BUTTON, "synonym sign in", text(LOGIN_BUTTON.css, "Sign in")),
    _named(ACCEPT, "word added", text(ACCEPT.css, "Accept all cookies")),
    _named(ACCEPT, "case and punctuation", text(ACCEPT.css, "Accept All!")),
    # -- testid: ids and test ids removed or renamed, everything else kept --------------------------------------
    _ids(ARCHIVE, "testid removed", attr(ARCHIVE.css, "data-testid", None)),
    _ids(ARCHIVE, "testid renamed", attr(ARCHIVE.css, "data-testid", "archive-button")),
    _ids(ARCHIVE, "testid hashed", attr(ARCHIVE.css, "data-testid", "tb-x81k")),
    _ids(ARCHIVE, "testid attribute renamed", attr(ARCHIVE.css, "data-testid", None), attr(ARCHIVE.css, "data-qa", "archive-btn")),
    _ids(COMPOSE, "id removed", attr(COMPOSE.css, "id", None)),
    _ids(COMPOSE, "id renamed", attr(COMPOSE.css, "id", "compose-btn")),
    _ids(COMPOSE, "id and testid removed", attr(COMPOSE.css, "data-testid", None), attr(COMPOSE.css, "id", None)),
    _ids(COMPOSE, "id and testid renamed", attr(COMPOSE.css, "data-testid", "new-mail"), attr(COMPOSE.css, "id", "mail-new")),
    _ids(SIGNUP, "data-qa removed", attr(SIGNUP.css, "data-qa", None)),
    _ids(SIGNUP, "id renamed", attr(SIGNUP.css, "id", "submit")),
    _ids(SIGNUP, "id and data-qa gone, class rehashed", attr(SIGNUP.css, "data-qa", None), attr(SIGNUP.css, "class", "btn-k2p9q"), attr(SIGNUP.css, "id", None)),
    _ids(EMAIL, "id renamed with its label", attr("label[for=email]", "for", "user-email"), attr(EMAIL.css, "id", "user-email")),
    _ids(EMAIL, "data-test removed", attr(EMAIL.css, "data-test", None)),
    _ids(EMAIL, "name attribute renamed", attr(EMAIL.css, "name", "user_email"), attr(EMAIL.css, "data-test", None)),
    _ids(LOGIN, "id removed", attr(LOGIN.css, "id", None)),
    _ids(INVITE, "id and testid removed", attr(INVITE.css, "data-testid", None), attr(INVITE.css, "id", None)),
    _ids(DELETE_BEN, "row test ids renamed", *(attr(TEAM_DELETES.format(i), "data-testid", f"row-{i}-delete") for i in range(1, 5))),
    _ids(DELETE_BEN, "row test ids removed", *_each(TEAM_DELETES, TEAM_ROWS, "attr", "data-testid", None)),
    _ids(ADD_MUG, "data-test removed", attr(ADD_MUG.css, "data-test", None)),
    _ids(ADD_MUG, "data-test renamed", attr(ADD_MUG.css, "data-test", "product-2-add")),
    _ids(FEEDBACK, "id renamed", attr(FEEDBACK.css, "id", "send-feedback")),
    _ids(CART, "id removed", attr(CART.css, "id", None)),
    _ids(SAVE_NOTIFICATIONS, "data-qa removed", attr(SAVE_NOTIFICATIONS.css, "data-qa", None)),
    _ids(SAVE_NOTIFICATIONS, "data-qa renamed", attr(SAVE_NOTIFICATIONS.css, "data-qa", "notifications-save")),
    _ids(LOGOUT, "id renamed", attr(LOGOUT.css, "id", "signout")),
    _ids(DISPLAY_NAME, "id renamed with its label", attr("label[for=display-name]", "for", "name-input"), attr(DISPLAY_NAME.css, "id", "name-input")),
    _ids(REPLIES, "name renamed", attr(REPLIES.css, "name", "notify_replies")),
    _ids(PLACE_ORDER, "class renamed", attr(PLACE_ORDER.css, "class", "btn-cta")),
    _ids(REMOVE_MUG, "class renamed in every row", *_each(".line:nth-of-type({}) button", 3, "attr", "class", "btn-text")),
    _ids(STAR, "testid removed", attr(STAR.css, "data-testid", None)),
    _ids(STAR, "testids renamed", attr(STAR.css, "data-testid", "repo-star"), attr("[data-who=fork]", "data-testid", "repo-fork"), attr("[data-who=watch]", "data-testid", "repo-watch")),
    _ids(SUBMIT_ISSUE, "class renamed", attr(SUBMIT_ISSUE.css, "class", "Button--primary")),
    _ids(TITLE, "aria label removed", attr(TITLE.css, "aria-label", None)),
    _ids(NEW_PROJECT, "data-cy removed", attr(NEW_PROJECT.css, "data-cy", None)),
    _ids(NEW_PROJECT, "data-cy renamed", attr(NEW_PROJECT.css, "data-cy", "create-project-btn")),
    _ids(NEW_TOPIC, "id and testid renamed", attr(NEW_TOPIC.css, "data-testid", "create-topic"), attr(NEW_TOPIC.css, "id", "create-topic-btn")),
    _ids(LOGIN_BUTTON, "id renamed", attr(LOGIN_BUTTON.css, "id", "signin-btn")),
    _ids(USER, "name renamed", attr(USER.css, "name", "username")),
    # -- lookalike: the same role and name inserted before the target -----------------------------------------
    _lookalike(ARCHIVE, "promo box before the toolbar", html("#message-actions", "beforebegin", f'<div class="promo"><p>Clean up your inbox</p><button {DECOY}>Archive</button></div>')),
    _lookalike(COMPOSE, "floating button first in main", html("main", "afterbegin", f'<button class="fab" {DECOY}>Compose</button>')),
    _lookalike(STAR_BEN, "new message first", html("ul.messages", "afterbegin", f'<li class="row"><strong>Bea Orton</strong> <span>Hello</span> <button aria-label="Star" {DECOY}>&#9734;</button></li>')),
    _lookalike(OPEN_CLEO, "new message first", html("ul.messages", "afterbegin", f'<li class="row"><strong>Cleo Parker</strong> <span>Invoice</span> <button {DECOY}>Open</button></li>')),
    _lookalike(SIGNUP, "promo with the same button", html("section.card", "beforebegin", f'<div class="promo"><h2>Get 20% off</h2><button {DECOY}>Sign up</button></div>')),
    _lookalike(LOGIN, "header link", html("header", "beforeend", f' <a href="#login" {DECOY}>Log in</a>')),
    _lookalike(SUBSCRIBE, "another newsletter box first", html("section.newsletter", "beforebegin", f'<section class="promo"><h2>Deals</h2><form><input type="email" aria-label="Deals email"><button type="submit" {DECOY}>Subscribe</button></form></section>')),
    _lookalike(DELETE_BEN, "new row first", html("tbody", "afterbegin", f'<tr><td>Bea Orton</td><td>bea@example.test</td><td>Admin</td><td><button {DECOY}>Edit</button> <button {DECOY}>Delete</button></td></tr>')),
    _lookalike(DELETE_BEN, "new row just before", html("tbody tr:nth-of-type(2)", "beforebegin", f'<tr><td>Ben Ortega</td><td>bortega@example.test</td><td>Admin</td><td><button {DECOY}>Edit</button> <button {DECOY}>Delete</button></td></tr>')),
    _lookalike(EDIT_CLEO, "similar name row before", html("tbody tr:nth-of-type(3)", "beforebegin", f'<tr><td>Cleo Parker</td><td>parker@example.test</td><td>Member</td><td><button {DECOY}>Edit</button> <button {DECOY}>Delete</button></td></tr>')),
    _lookalike(INVITE, "banner button", html("h1", "afterend", f'<div class="banner"><p>Your team is growing</p><button {DECOY}>Invite member</button></div>')),
    _lookalike(NEXT, "carousel before the table", html("table", "beforebegin", f'<div class="carousel"><h2>Featured</h2><button {DECOY}>Previous</button><button {DECOY}>Next</button></div>')),
    _lookalike(ADD_MUG, "sponsored product first", html("#products", "afterbegin", f'<div class="product"><h3>Travel mug</h3><p class="price">$12.00</p><button class="add" {DECOY}>Add to cart</button></div>')),
    _lookalike(FEEDBACK, "survey form before", html("section.feedback", "beforebegin", f'<section class="survey"><h2>Quick survey</h2><form><label>Rating <input name="rating"></label><button type="submit" {DECOY}>Submit</button></form></section>')),
    _lookalike(SEARCH_GO, "help search first", html("main", "afterbegin", f'<div class="help"><input aria-label="Search help"><button {DECOY}>Search</button></div>')),
    _lookalike(SAVE_NOTIFICATIONS, "new panel before", html("#notifications", "beforebegin", f'<div class="panel"><h2>Privacy</h2><label><input type="checkbox"> Show my email</label><button class="save" {DECOY}>Save</button></div>')),
    _lookalike(LOGOUT, "account menu first", html(".layout", "beforebegin", f'<div class="account-menu"><span>Ann Lee</span> <a href="#logout" {DECOY}>Log out</a></div>')),
    _lookalike(EMAIL, "newsletter email field first", html("section.card", "beforebegin", f'<div class="promo"><label>Email <input type="email" {DECOY}></label></div>')),
    _lookalike(REPLIES, "new checkbox before", html("#notifications h2", "afterend", f'<label><input type="checkbox" name="mentions" {DECOY}> Email me about mentions</label>')),
    _lookalike(PLACE_ORDER, "sticky copy atop its box", html(".summary h3", "afterend", f'<button class="primary sticky" {DECOY}>Place order</button>')),
    _lookalike(PLACE_ORDER, "upsell box before", html(".summary", "beforebegin", f'<div class="box upsell"><h3>Add insurance</h3><div>Only $3.00</div><button class="primary" {DECOY}>Place order</button></div>')),
    _lookalike(CHANGE_PAYMENT, "gift box before", html(".payment", "beforebegin", f'<div class="box gift"><h3>Gift options</h3><div>No gift message</div><button class="link" {DECOY}>Change</button></div>')),
    _lookalike(REMOVE_MUG, "similar item before", html(".line:nth-of-type(2)", "beforebegin", f'<div class="line"><span class="title">Mug lid</span> <span>× 1</span> <span>$4.00</span> <button class="link" {DECOY}>Remove</button></div>')),
    _lookalike(APPLY, "gift card box before", html(".coupon", "beforebegin", f'<div class="box"><input placeholder="Gift card number"><button class="apply" {DECOY}>Apply</button></div>')),
    _lookalike(COUPON, "partner code box before", html(".coupon", "beforebegin", f'<div class="box partner"><h3>Partner offer</h3><input placeholder="Coupon code" {DECOY}><button>Redeem</button></div>')),
    _lookalike(STAR, "sponsor banner first", html(".repo-head", "afterbegin", f'<div class="sponsor"><p>Like widgets?</p><button {DECOY}>Star</button></div>')),
    _lookalike(COPY_TESTS, "recently viewed list first", html(".file-list", "beforebegin", f'<div class="recent"><h2>Recently viewed</h2><div class="file-row"><a href="#t">tests</a><span>Fix flaky test</span><button aria-label="Copy path" {DECOY}>&#10697;</button></div></div>')),
    _lookalike(SUBMIT_ISSUE, "template chooser before", html(".issue-form", "beforebegin", f'<div class="templates"><h2>Bug report</h2><p>Create a report to help us improve</p><button {DECOY}>Submit new issue</button></div>')),
    _lookalike(DIALOG_DELETE, "another dialog before", html(".modal", "beforebegin", f'<div role="dialog" aria-label="Delete tag"><p>Delete tag v1.0?</p><button>Cancel</button><button {DECOY}>Delete</button></div>')),
    _lookalike(ISSUES, "footer link first", html("main", "afterbegin", f'<p class="tip">Found a bug? <a href="#issues" {DECOY}>Issues</a></p>')),
    _lookalike(NEW_PROJECT, "empty-state banner before", html(".page-head", "beforebegin", f'<div class="banner"><p>Start something new</p><button {DECOY}>New project</button></div>')),
    _lookalike(VIEW_BOREALIS, "new row first", html("[role=grid]", "afterbegin", f'<div role="row"><div role="gridcell">Andromeda</div><div role="gridcell">Active</div><div role="gridcell"><button title="Archive project">&#128452;</button><button {DECOY}>View</button></div></div>')),
    _lookalike(READ_ROADMAP, "pinned post first", html(".post", "beforebegin", f'<article class="post pinned"><h2>Welcome</h2><p>Start here.</p><a href="#welcome" {DECOY}>Read more</a></article>')),
    _lookalike(ARCHIVE_CYGNUS, "new row just before", html("[role=row]:nth-of-type(3)", "beforebegin", f'<div role="row"><div role="gridcell">Centaur</div><div role="gridcell">Active</div><div role="gridcell"><button title="Archive project" {DECOY}>&#128452;</button><button>View</button></div></div>')),
    _lookalike(APPLY_FILTERS, "search form before", html(".filters", "beforebegin", f'<form class="search"><input aria-label="Search projects"><button type="submit" {DECOY}>Apply filters</button></form>')),
    _lookalike(FOLLOW_T2, "pinned thread first", html(".threads", "afterbegin", f'<li class="thread pinned"><a href="#t0">Forum rules</a> <span>by mod</span> <span>1 reply</span> <button class="follow" {DECOY}>Follow</button></li>')),
    _lookalike(LOGIN_BUTTON, "quick login bar on top", html(".layout", "beforebegin", f'<form class="quick"><input aria-label="Email"> <button type="submit" {DECOY}>Log in</button></form>')),
    _lookalike(NEW_TOPIC, "empty category with its own button", html(".threads", "beforebegin", f'<div class="empty"><p>No pinned topics yet.</p><button {DECOY}>New topic</button></div>')),
    _lookalike(ACCEPT, "newsletter box before the banner", html(".cookie-banner", "beforebegin", f'<div class="newsletter"><p>Get our digest?</p><button {DECOY}>Accept all</button></div>')),
    # -- negative: a person would not act --------------------------------------------------------------------
    _refused(ARCHIVE, "removed, promo look-alike left", remove(ARCHIVE.css), html("#message-actions", "beforebegin", f'<div class="promo"><p>Clean up your inbox</p><button {DECOY}>Archive</button></div>')),
    _refused(ARCHIVE, "disabled", attr(ARCHIVE.css, "disabled", "")),
    _refused(ARCHIVE, "same place, opposite meaning", text(ARCHIVE.css, "Unarchive")),
    _refused(SIGNUP, "same place, another meaning", text(SIGNUP.css, "Log in")),
    _refused(SIGNUP, "synonym while the recorded name is elsewhere", text(SIGNUP.css, "Create account"), html("section.card", "beforebegin", f'<div class="promo"><h2>Get 20% off</h2><button {DECOY}>Sign up</button></div>')),
    _refused(LOGIN, "same place, another meaning", text(LOGIN.css, "Forgot password?")),
    _refused(DELETE_BEN, "row removed, other rows left", remove("tbody tr:nth-of-type(2)")),
    _refused(DELETE_BEN, "disabled", attr(DELETE_BEN.css, "disabled", "")),
    _refused(STAR_BEN, "row removed, other rows left", remove("ul.messages li:nth-of-type(2)")),
    _refused(FEEDBACK, "synonym while the recorded name is elsewhere", text(FEEDBACK.css, "Send"), html("section.feedback", "beforebegin", f'<section class="survey"><h2>Quick survey</h2><form><button type="submit" {DECOY}>Submit</button></form></section>')),
    _refused(ADD_MUG, "product removed, others left", remove("#products .product:nth-of-type(2)")),
    _refused(SAVE_NOTIFICATIONS, "removed, the other panel's Save left", remove(SAVE_NOTIFICATIONS.css)),
    _refused(LOGOUT, "same place, opposite meaning", text(LOGOUT.css, "Log in")),
    _refused(NEXT, "same place, opposite meaning", text(NEXT.css, "Previous")),
    _refused(COMPOSE, "hidden, look-alike in the footer", attr(COMPOSE.css, "style", "display:none"), html("p.footer-links", "beforeend", f' <button {DECOY}>Compose</button>')),
    _refused(EMAIL, "field removed, newsletter email left", remove("#email")),
    _refused(INVITE, "same place, another meaning", text(INVITE.css, "Remove member")),
    _refused(SUBSCRIBE, "same place, opposite meaning", text(SUBSCRIBE.css, "Unsubscribe")),
    _refused(FEEDBACK, "synonym with a second such button in its form", text(FEEDBACK.css, "Send"), html(FEEDBACK.css, "beforebegin", f'<button type="button" {DECOY}>Send</button> ')),
    _refused(EDIT_CLEO, "synonym in one row, the recorded name in the others", text(EDIT_CLEO.css, "Modify")),
    _refused(STAR, "same place, opposite meaning", text(STAR.css, "Unstar 341")),
    _refused(COPY_TESTS, "row removed, other rows left", remove(".file-row:nth-of-type(2)")),
    _refused(DIALOG_DELETE, "same place, another scope", text(DIALOG_DELETE.css, "Delete all branches")),
    _refused(SUBMIT_ISSUE, "disabled", attr(SUBMIT_ISSUE.css, "disabled", "")),
    _refused(TITLE, "field removed, the comment box left", remove(TITLE.css)),
    _refused(DIALOG_DELETE, "same place, the other button's meaning", text(DIALOG_DELETE.css, "Cancel")),
    _refused(VIEW_BOREALIS, "row removed, other rows left", remove("[role=row]:nth-of-type(2)")),
    _refused(VIEW_BOREALIS, "same place, another meaning", text(VIEW_BOREALIS.css, "Delete")),
    _refused(NEW_PROJECT, "same place, another object", text(NEW_PROJECT.css, "New folder")),
    _refused(READ_ROADMAP, "post removed, the other post left", remove(".post:nth-of-type(2)")),
    _refused(SORT_DATE, "option removed, the other left", remove("label:has([data-who=sort-date])")),
    _refused(FOLLOW_T2, "thread removed, the others left", remove(".thread:nth-of-type(2)")),
    _refused(LOGIN_BUTTON, "same place, opposite meaning", text(LOGIN_BUTTON.css, "Log out")),
    _refused(ACCEPT, "same place, opposite meaning", text(ACCEPT.css, "Reject all")),
    _refused(PAGE_2, "pager moved on", text(PAGE_2.css, "3"), text("[data-who=p3]", "4")),
    _refused(NEW_TOPIC, "disabled", attr(NEW_TOPIC.css, "disabled", "")),
    _refused(USER, "field removed, the password left", remove(USER.css)),
    _refused(SAVE_NOTIFICATIONS, "same place, another scope", text(SAVE_NOTIFICATIONS.css, "Save as draft")),
    _refused(CHANGE_PAYMENT, "removed, the address's Change left", remove(CHANGE_PAYMENT.css)),
    _refused(REMOVE_MUG, "item removed, other items left", remove(".line:nth-of-type(2)")),
    _refused(PLACE_ORDER, "same place, another meaning", text(PLACE_ORDER.css, "Continue shopping")),
    _refused(LOGOUT, "synonym while the recorded name is elsewhere", text(LOGOUT.css, "Sign out"), html(".layout", "beforebegin", f'<div class="account-menu"><span>Ann Lee</span> <a href="#logout" {DECOY}>Log out</a></div>')),
)
# fmt: on
