"""The replay benchmark's held-out set (issue 23 part 1): pages and changes modelled on real sites between
deploys, written before their engineer read the scorer, and run once before any change to it (the last 19,
"late", were written after reading it, and also run once before the changes they led to; docs/flows.md has
both first runs).

The pages in tests/site/replay/ are `inbox.html` (a webmail list: icon buttons named only by aria-label,
css-module classes, React ids such as `:r3:`), `product.html` (a shop theme's product form and cart drawer),
`board.html` (an issue board: columns of cards, each with a "More actions" button), `admin.html` (a users
table with row actions, sortable headers and a pager), `prefs.html` (switches in two fieldsets, a radio
group, a danger zone, a dialog) and `components.html` (a toolbar inside a shadow root, a payment form in an
iframe, a filter drawer). Besides the four classes of replay_cases.py, `structure` holds changes of the
markup around an element a person does not even see: rows sorted or shuffled, a column or a row added,
wrappers, a button that became `<a role="button">`, a design system's shadow-DOM button.
"""

# One case a line, with the markup it inserts and the typography real sites use: a table.
# ruff: noqa: E501, RUF001

from __future__ import annotations

from tests.e2e.replay_cases import Case, Kind, Op, Target, attr, html, remove, text

FRAME = "iframe >> internal:control=enter-frame >> "  # a recorded target inside the page's iframe


def move(css: str, where: str, anchor: str) -> Op:
    return ["move", css, where, anchor]


def wrap(css: str, wrapper: str) -> Op:
    return ["wrap", css, wrapper]


def retag(css: str, tag: str) -> Op:
    return ["retag", css, tag]


def framed(op: Op) -> Op:
    """The operation applied inside the iframe's page (mutate.js)."""
    return [op[0], f"frame>>> {op[1]}", *op[2:]]


def _case(kind: Kind, target: Target, what: str, *ops: Op) -> Case:
    return Case(target, kind, what, ops, None if kind == "negative" else target.who)


# inbox.html
I_ARCHIVE = Target("inbox.html", "[data-who=archive]", "archive")
I_COMPOSE = Target("inbox.html", "[data-who=compose]", "compose")
I_INBOX = Target("inbox.html", "[data-who=nav-inbox]", "nav-inbox")
I_STAR_DANA = Target("inbox.html", "[data-who=star-dana]", "star-dana")
I_SELECT_OLIVER = Target("inbox.html", "[data-who=select-oliver]", "select-oliver", "check")
I_SEARCH = Target("inbox.html", "[data-who=search]", "search", "fill")
I_OLDER = Target("inbox.html", "[data-who=older]", "older")
# product.html
P_ADD = Target("product.html", "[data-who=add-to-cart]", "add-to-cart")
P_SIZE_M = Target("product.html", "[data-who=size-m]", "size-m", "check")
P_QTY = Target("product.html", "[data-who=quantity]", "quantity", "fill")
P_CHECKOUT = Target("product.html", "[data-who=checkout]", "checkout")
P_REMOVE_SCARF = Target("product.html", "[data-who=remove-scarf]", "remove-scarf")
P_PLUS_TOTE = Target("product.html", "[data-who=plus-tote]", "plus-tote")
P_CART = Target("product.html", "[data-who=cart-icon]", "cart-icon")
# board.html
B_CREATE_DOING = Target("board.html", "[data-who=create-doing]", "create-doing")
B_MORE_14 = Target("board.html", "[data-who=more-14]", "more-14")
B_ONLY_MINE = Target("board.html", "[data-who=only-mine]", "only-mine")
B_SEARCH = Target("board.html", "[data-who=board-search]", "board-search", "fill")
B_CREATE = Target("board.html", "[data-who=create]", "create")
# admin.html
A_EDIT_CARMEN = Target("admin.html", "[data-who=edit-carmen]", "edit-carmen")
A_DEACTIVATE_DMITRI = Target("admin.html", "[data-who=deactivate-dmitri]", "deactivate-dmitri")
A_NEXT = Target("admin.html", "[data-who=next]", "next")
A_PAGE_3 = Target("admin.html", "[data-who=page-3]", "page-3")
A_SORT_EMAIL = Target("admin.html", "[data-who=sort-email]", "sort-email")
A_EXPORT = Target("admin.html", "[data-who=export]", "export")
A_FILTER = Target("admin.html", "[data-who=filter]", "filter", "fill")
# prefs.html
S_PUSH_MENTIONS = Target("prefs.html", "[data-who=push-mentions]", "push-mentions")
S_DARK = Target("prefs.html", "[data-who=theme-dark]", "theme-dark", "check")
S_SAVE = Target("prefs.html", "[data-who=save]", "save")
S_BIO = Target("prefs.html", "[data-who=bio]", "bio", "fill")
S_ARCHIVE_WS = Target("prefs.html", "[data-who=archive-ws]", "archive-ws")
S_LEAVE = Target("prefs.html", "[data-who=dlg-leave]", "dlg-leave")
# components.html
C_BOLD = Target("components.html", "[data-who=bold]", "bold")
C_POST = Target("components.html", "[data-who=post]", "post")
C_SUBSCRIBE = Target("components.html", "[data-who=newsletter]", "newsletter")
C_CARD = Target("components.html", f"{FRAME}[data-who=card-number]", "card-number", "fill")
C_PAY = Target("components.html", f"{FRAME}[data-who=pay]", "pay")
C_SHOW = Target("components.html", "[data-who=show-results]", "show-results")

HELD_OUT_TARGETS = (
    I_ARCHIVE, I_COMPOSE, I_INBOX, I_STAR_DANA, I_SELECT_OLIVER, I_SEARCH, I_OLDER,
    P_ADD, P_SIZE_M, P_QTY, P_CHECKOUT, P_REMOVE_SCARF, P_PLUS_TOTE, P_CART,
    B_CREATE_DOING, B_MORE_14, B_ONLY_MINE, B_SEARCH, B_CREATE,
    A_EDIT_CARMEN, A_DEACTIVATE_DMITRI, A_NEXT, A_PAGE_3, A_SORT_EMAIL, A_EXPORT, A_FILTER,
    S_PUSH_MENTIONS, S_DARK, S_SAVE, S_BIO, S_ARCHIVE_WS, S_LEAVE,
    C_BOLD, C_POST, C_SUBSCRIBE, C_CARD, C_PAY, C_SHOW,
)  # fmt: skip

DECOY = 'data-who="decoy"'
TOOLBAR = "[role=toolbar] button:nth-of-type({})"
DANA_ROW = "tr:has([data-who=star-dana])"
CARD_14 = "div:has(> [data-who=card-14])"
CARMEN_ROW = "tr:has([data-who=edit-carmen])"
USERS = ("Alvaro Ruiz", "Carmen Diaz", "Dmitri Volkov", "Hana Sato")
SIZES = ("S", "M", "L")


def _inbox_rerender() -> tuple[Op, ...]:
    """A React release: every toolbar button's css-module class rehashed and its generated id renumbered."""
    return tuple(
        op
        for i in range(1, 6)
        for op in (attr(TOOLBAR.format(i), "class", "Icon_btn__9zQ2w"), attr(TOOLBAR.format(i), "id", f":r{i + 10}:"))
    )


def _user_row(name: str, mail: str) -> str:
    return f'<tr><td>{name}</td><td>{mail}</td><td>Editor</td><td>Active</td><td><a href="#u/9/edit" class="btn btn-sm" {DECOY}>Edit</a> <button class="btn btn-sm btn-danger" {DECOY}>Deactivate</button></td></tr>'


def _card(key: str, title: str) -> str:
    return f'<div class="css-ab12cd"><a href="#{key}">{key}</a> <span>{title}</span> <button class="css-mn0p1q" aria-label="More actions" {DECOY}>&#8943;</button></div>'


# fmt: off
HELD_OUT: tuple[Case, ...] = (
    # -- inbox.html ----------------------------------------------------------------------------------------------
    _case("testid", I_ARCHIVE, "re-render: classes rehashed, generated ids renumbered", *_inbox_rerender()),
    _case("structure", I_ARCHIVE, "tooltip wrapper added", wrap(I_ARCHIVE.css, '<span class="Tooltip_anchor__u7i8o"></span>')),
    _case("name", I_ARCHIVE, "aria-label moved to title", attr(I_ARCHIVE.css, "aria-label", None), attr(I_ARCHIVE.css, "title", "Archive")),
    _case("name", I_ARCHIVE, "i18n: visible label translated, aria-label kept", html(I_ARCHIVE.css, "beforeend", " Archivar"), attr("html", "lang", "es")),
    _case("name", I_COMPOSE, "text moved into aria-label and tooltip", text(I_COMPOSE.css, "✎"), attr(I_COMPOSE.css, "aria-label", "Compose"), attr(I_COMPOSE.css, "data-tooltip", "Compose")),
    _case("name", I_COMPOSE, "text moved into title only", text(I_COMPOSE.css, ""), attr(I_COMPOSE.css, "title", "Compose")),
    _case("testid", I_COMPOSE, "generated id renumbered, class rehashed", attr(I_COMPOSE.css, "id", ":r0:"), attr(I_COMPOSE.css, "class", "Compose_btn__Qm3x1")),
    _case("name", I_INBOX, "unread count went up", text("[data-who=nav-inbox] span", "13")),
    _case("name", I_INBOX, "count said in words", text("[data-who=nav-inbox] span", "13 unread")),
    _case("lookalike", I_STAR_DANA, "new mail on top", html("tbody", "afterbegin", f'<tr class="List_row__r1s2t"><td><input type="checkbox" aria-label="Select"></td><td><button class="Icon_btn__p0q1z" aria-label="Not starred" {DECOY}>&#9734;</button></td><td>Sam Lee</td><td>Your receipt</td><td>10:02 AM</td></tr>')),
    _case("structure", I_STAR_DANA, "sorted by sender", move(DANA_ROW, "beforebegin", "#msg-1")),
    _case("structure", I_SELECT_OLIVER, "rows shuffled", move("#msg-3", "beforebegin", "#msg-1"), move("#msg-4", "beforebegin", "#msg-2")),
    _case("lookalike", I_SELECT_OLIVER, "another mail from the same sender above", html("#msg-1", "beforebegin", f'<tr class="List_row__r1s2t"><td><input type="checkbox" aria-label="Select" {DECOY}></td><td><button class="Icon_btn__p0q1z" aria-label="Not starred">&#9734;</button></td><td>Oliver Chen</td><td>Lunch today?</td><td>10:30 AM</td></tr>')),
    _case("testid", I_SEARCH, "generated id renumbered", attr(I_SEARCH.css, "id", ":rb:"), attr(I_SEARCH.css, "class", "Search_input__Zz81q")),
    _case("name", I_SEARCH, "placeholder and label reworded", attr(I_SEARCH.css, "placeholder", "Search in mail"), attr(I_SEARCH.css, "aria-label", "Search in mail")),
    _case("structure", I_OLDER, "button became a div with role=button", retag(I_OLDER.css, "div"), attr(I_OLDER.css, "role", "button"), attr(I_OLDER.css, "tabindex", "0")),
    _case("negative", I_ARCHIVE, "same place, another meaning", attr(I_ARCHIVE.css, "aria-label", "Move to")),
    _case("negative", I_ARCHIVE, "aria-disabled", attr(I_ARCHIVE.css, "aria-disabled", "true")),
    _case("negative", I_STAR_DANA, "conversation gone, the others left", remove(DANA_ROW)),
    _case("negative", I_OLDER, "disabled on the last page", attr(I_OLDER.css, "disabled", "")),
    _case("negative", I_COMPOSE, "removed, a Compose link left in an empty state", remove(I_COMPOSE.css), html("main", "afterbegin", f'<p class="empty">No drafts. <a href="#compose" {DECOY}>Compose</a></p>')),
    # -- product.html --------------------------------------------------------------------------------------------
    _case("testid", P_ADD, "theme update renamed the section ids", attr(P_ADD.css, "id", "ProductSubmitButton-template--16204__main"), attr("form.form", "id", "product-form-template--16204__main")),
    _case("name", P_ADD, "price appended", text(P_ADD.css, "Add to cart · $48.00")),
    _case("name", P_ADD, "upper case by CSS", attr(P_ADD.css, "style", "text-transform: uppercase")),
    _case("structure", P_ADD, "wrapped in a buttons div", wrap(P_ADD.css, '<div class="product-form__buttons"></div>')),
    _case("lookalike", P_ADD, "bundle offer before the form", html("product-form", "beforebegin", f'<div class="bundle"><h2>Frequently bought together</h2><p>Linen Shirt + Canvas Tote, $68.00</p><button class="button" {DECOY}>Add to cart</button></div>')),
    _case("name", P_SIZE_M, "stock note in the label", text("label[for='template--15328__main-1-1']", "M — only 2 left")),
    _case("testid", P_SIZE_M, "variant ids renumbered", *(op for i, size in enumerate(SIZES) for op in (attr(f"input[value={size}]", "id", f"template--16204__main-1-{i}"), attr(f"label[for='template--15328__main-1-{i}']", "for", f"template--16204__main-1-{i}")))),
    _case("structure", P_SIZE_M, "size XS added first", html("fieldset legend", "afterend", '<input type="radio" id="xs-1" name="Size" value="XS"><label for="xs-1">XS</label>')),
    _case("testid", P_QTY, "id renumbered with its label", attr("label[for='Quantity-template--15328__main']", "for", "Quantity-template--16204__main"), attr(P_QTY.css, "id", "Quantity-template--16204__main")),
    _case("name", P_QTY, "label abbreviated", text("label[for='Quantity-template--15328__main']", "Qty")),
    _case("name", P_CHECKOUT, "one word", text(P_CHECKOUT.css, "Checkout")),
    _case("name", P_CHECKOUT, "lock glyph", text(P_CHECKOUT.css, "🔒 Check out")),
    _case("structure", P_REMOVE_SCARF, "cart lines reordered", move("#CartDrawer-Item-2", "beforebegin", "#CartDrawer-Item-1")),
    _case("lookalike", P_REMOVE_SCARF, "another colour of the scarf added above", html(".cart-items", "afterbegin", f'<div class="cart-item"><a href="#wool-scarf-grey" class="cart-item__name">Wool Scarf - Grey</a><span>$32.00</span><button class="quantity__button" name="minus" aria-label="Decrease quantity for Wool Scarf - Grey">−</button><input class="quantity__input" value="1" aria-label="Quantity for Wool Scarf - Grey"><button class="quantity__button" name="plus" aria-label="Increase quantity for Wool Scarf - Grey">+</button><button class="button button--tertiary" aria-label="Remove Wool Scarf - Grey" {DECOY}>&#128465;</button></div>')),
    _case("testid", P_PLUS_TOTE, "name attribute dropped, classes renamed", *(op for n in (1, 2) for op in (attr(f"#CartDrawer-Item-{n} [name=plus]", "class", "qty-btn"), attr(f"#CartDrawer-Item-{n} [name=plus]", "name", None)))),
    _case("name", P_CART, "count in its hidden text", text("[data-who=cart-icon] .visually-hidden", "Cart, 3 items")),
    _case("negative", P_ADD, "sold out: same place, disabled", text(P_ADD.css, "Sold out"), attr(P_ADD.css, "disabled", "")),
    _case("negative", P_ADD, "same place, another meaning", text(P_ADD.css, "Notify me when available")),
    _case("negative", P_REMOVE_SCARF, "scarf removed, the tote's Remove left", remove("#CartDrawer-Item-1")),
    _case("negative", P_SIZE_M, "size M dropped, S and L left", remove(P_SIZE_M.css), remove("label[for='template--15328__main-1-1']")),
    _case("negative", P_CHECKOUT, "disabled", attr(P_CHECKOUT.css, "disabled", "")),
    # -- board.html ----------------------------------------------------------------------------------------------
    _case("lookalike", B_CREATE_DOING, "column added before", html("section[aria-labelledby=col-doing-h]", "beforebegin", f'<section class="css-8fj2kq" aria-labelledby="col-review-h"><h2 id="col-review-h">Review <span>1</span></h2>{_card("PROJ-9", "Audit log export")}<button class="css-cr3t4e" {DECOY}>+ Create issue</button></section>')),
    _case("testid", B_CREATE_DOING, "css-in-js classes rehashed", *(attr(f"section:nth-of-type({i})", "class", "css-q81zx0") for i in (1, 2, 3)), *(attr(f"section:nth-of-type({i}) > button", "class", "css-7hh2ka") for i in (1, 2, 3))),
    _case("name", B_CREATE_DOING, "plus sign dropped in every column", *(text(f"section:nth-of-type({i}) > button", "Create issue") for i in (1, 2, 3))),
    _case("structure", B_MORE_14, "card moved to the top of its column", move(CARD_14, "afterend", "#col-doing-h")),
    _case("lookalike", B_MORE_14, "new card above in its column", html("div:has(> [data-who=card-13])", "beforebegin", _card("PROJ-16", "Session timeout banner"))),
    _case("name", B_MORE_14, "aria-label names the card in every card", *(attr(f"[data-who=more-{n}]", "aria-label", f"More actions for PROJ-{n}") for n in (10, 11, 12, 13, 14, 15))),
    _case("name", B_ONLY_MINE, "avatar glyph and title case", text(B_ONLY_MINE.css, "👤 Only My Issues")),
    _case("testid", B_SEARCH, "generated id renumbered", attr(B_SEARCH.css, "id", "ak-search-9"), attr(B_SEARCH.css, "class", "css-0pq1a2")),
    _case("name", B_SEARCH, "placeholder shortened", attr(B_SEARCH.css, "placeholder", "Search board"), attr(B_SEARCH.css, "aria-label", "Search board")),
    _case("name", B_CREATE, "plus glyph", text(B_CREATE.css, "+ Create")),
    _case("testid", B_CREATE, "test id renamed", attr(B_CREATE.css, "data-testid", "navigation.create-button")),
    _case("negative", B_MORE_14, "card gone, the others left", remove(CARD_14)),
    _case("negative", B_CREATE_DOING, "column removed, the others' Create issue left", remove("section[aria-labelledby=col-doing-h]")),
    _case("negative", B_CREATE, "same place, another meaning", text(B_CREATE.css, "Import")),
    # -- admin.html ----------------------------------------------------------------------------------------------
    _case("structure", A_EDIT_CARMEN, "sorted by role", move(CARMEN_ROW, "afterbegin", "tbody")),
    _case("structure", A_EDIT_CARMEN, "column added", html("thead th:nth-of-type(5)", "beforebegin", "<th>Last login</th>"), *(html(f"tbody tr:nth-of-type({i}) td:nth-of-type(5)", "beforebegin", f"<td>{i} days ago</td>") for i in (1, 2, 3, 4))),
    _case("lookalike", A_EDIT_CARMEN, "user added on top", html("tbody", "afterbegin", _user_row("Bruno Costa", "bruno@example.test"))),
    _case("lookalike", A_EDIT_CARMEN, "user with a similar name just above", html(CARMEN_ROW, "beforebegin", _user_row("Carla Diaz", "carla@example.test"))),
    _case("name", A_EDIT_CARMEN, "links name their user", *(attr(f"tbody tr:nth-of-type({i}) a", "aria-label", f"Edit {user}") for i, user in enumerate(USERS, 1))),
    _case("structure", A_EDIT_CARMEN, "link became a button", retag(A_EDIT_CARMEN.css, "button")),
    _case("structure", A_DEACTIVATE_DMITRI, "rows shuffled", move("tr:has([data-who=edit-dmitri])", "afterbegin", "tbody"), move("tr:has([data-who=edit-hana])", "afterbegin", "tbody")),
    _case("testid", A_DEACTIVATE_DMITRI, "classes renamed in every row", *(attr(f"tbody tr:nth-of-type({i}) button", "class", "sc-bdVaJa kXyZp") for i in (1, 2, 3, 4))),
    _case("name", A_NEXT, "chevron with an aria-label", text(A_NEXT.css, "›"), attr(A_NEXT.css, "aria-label", "Next page")),
    _case("name", A_NEXT, "arrow", text(A_NEXT.css, "Next →")),
    _case("structure", A_PAGE_3, "page 4 added, page 1 marked current", html(A_PAGE_3.css, "afterend", ' <a href="#p4" class="page-link">4</a>'), attr("[data-who=page-1]", "aria-current", "page")),
    _case("name", A_SORT_EMAIL, "sort arrow in the name", text(A_SORT_EMAIL.css, "Email ↑")),
    _case("name", A_EXPORT, "upper case by CSS", attr(A_EXPORT.css, "style", "text-transform: uppercase")),
    _case("name", A_EXPORT, "download glyph", text(A_EXPORT.css, "⤓ Export CSV")),
    _case("name", A_FILTER, "label grew", text("label[for=user-filter]", "Filter users by name")),
    _case("testid", A_FILTER, "id renamed with its label", attr("label[for=user-filter]", "for", "users-q"), attr(A_FILTER.css, "id", "users-q")),
    _case("negative", A_EDIT_CARMEN, "user filtered out, the others left", remove(CARMEN_ROW)),
    _case("negative", A_DEACTIVATE_DMITRI, "same place, opposite meaning", text(A_DEACTIVATE_DMITRI.css, "Reactivate")),
    _case("negative", A_PAGE_3, "only two pages now", remove(A_PAGE_3.css)),
    _case("negative", A_NEXT, "aria-disabled on the last page", attr(A_NEXT.css, "aria-disabled", "true"), attr(A_NEXT.css, "class", "page-link disabled")),
    _case("negative", A_EXPORT, "same place, another meaning", text(A_EXPORT.css, "Import CSV")),
    # -- prefs.html ----------------------------------------------------------------------------------------------
    _case("structure", S_PUSH_MENTIONS, "fieldsets swapped", move("#push-notifications", "beforebegin", "#email-notifications")),
    _case("lookalike", S_PUSH_MENTIONS, "a Slack group added above", html("#email-notifications", "beforebegin", f'<fieldset id="slack"><legend>Slack notifications</legend><div class="switch"><span id="s-mentions">Mentions</span><button type="button" role="switch" aria-checked="false" aria-labelledby="s-mentions" {DECOY}></button></div></fieldset>')),
    _case("name", S_PUSH_MENTIONS, "labels gained an @ in both groups", text("#e-mentions", "@mentions"), text("#p-mentions", "@mentions")),
    _case("structure", S_PUSH_MENTIONS, "switch wrapped in a track", wrap(S_PUSH_MENTIONS.css, '<span class="Switch_track__a1b2c"></span>')),
    _case("name", S_DARK, "label grew a word", html("label:has([data-who=theme-dark])", "beforeend", " mode")),
    _case("structure", S_DARK, "System moved first", move("label:has([data-who=theme-system])", "afterend", "#theme legend")),
    _case("name", S_SAVE, "word appended", text(S_SAVE.css, "Save preferences")),
    _case("structure", S_SAVE, "sticky footer wrappers", wrap(S_SAVE.css, '<div class="sticky-footer"></div>'), wrap(".sticky-footer", '<div class="sticky-footer__outer"></div>')),
    _case("name", S_SAVE, "i18n: text translated, aria-label keeps the English", text(S_SAVE.css, "Guardar"), attr(S_SAVE.css, "aria-label", "Save")),
    _case("name", S_BIO, "label grew (optional)", text("label[for=bio-7f3a]", "Bio (optional)")),
    _case("testid", S_BIO, "generated ids renumbered", attr("label[for=bio-7f3a]", "for", "bio-91cc"), attr(S_BIO.css, "id", "bio-91cc"), attr("label[for=site-7f3a]", "for", "site-91cc"), attr("#site-7f3a", "id", "site-91cc")),
    _case("name", S_ARCHIVE_WS, "word dropped", text(S_ARCHIVE_WS.css, "Archive")),
    _case("name", S_LEAVE, "word appended", text(S_LEAVE.css, "Leave workspace")),
    _case("lookalike", S_LEAVE, "an unsaved-changes dialog before", html(".modal", "beforebegin", f'<div role="dialog" aria-modal="true" aria-labelledby="u-title"><h2 id="u-title">Unsaved changes</h2><p>Leave this page?</p><button>Stay</button><button {DECOY}>Leave</button></div>')),
    _case("negative", S_PUSH_MENTIONS, "push group removed, the email Mentions left", remove("#push-notifications")),
    _case("negative", S_ARCHIVE_WS, "same place, Delete where Archive was", text(S_ARCHIVE_WS.css, "Delete workspace")),
    _case("negative", S_DARK, "option removed, the others left", remove("label:has([data-who=theme-dark])")),
    _case("negative", S_SAVE, "disabled", attr(S_SAVE.css, "disabled", "")),
    _case("negative", S_LEAVE, "same dialog, the button now deletes", text(S_LEAVE.css, "Delete")),
    # -- components.html -----------------------------------------------------------------------------------------
    _case("structure", C_POST, "became a design system's shadow-DOM button", retag(C_POST.css, "ds-button")),
    _case("structure", C_POST, "became a link with role=button", retag(C_POST.css, "a"), attr(C_POST.css, "role", "button"), attr(C_POST.css, "href", "#post")),
    _case("structure", C_POST, "became a div with role=button", retag(C_POST.css, "div"), attr(C_POST.css, "role", "button"), attr(C_POST.css, "tabindex", "0")),
    _case("name", C_BOLD, "shortcut in the shadow button's label", attr("editor-toolbar >>> [data-who=bold]", "aria-label", "Bold (Ctrl+B)")),
    _case("structure", C_BOLD, "shadow toolbar gained a button first", html("editor-toolbar >>> [role=toolbar]", "afterbegin", '<button aria-label="Heading">H</button>')),
    _case("lookalike", C_SUBSCRIBE, "promo with its own Subscribe first in main", html("main", "afterbegin", f'<div class="promo"><p>Get new docs by email</p><button {DECOY}>Subscribe</button></div>')),
    _case("structure", C_SUBSCRIBE, "became a design system's shadow-DOM button", retag(C_SUBSCRIBE.css, "ds-button")),
    _case("testid", C_CARD, "ids renamed inside the iframe", framed(attr("label[for=cc-number]", "for", "card-num")), framed(attr("#cc-number", "id", "card-num"))),
    _case("name", C_CARD, "label case inside the iframe", framed(text("label[for=cc-number]", "Card Number"))),
    _case("name", C_PAY, "amount changed inside the iframe", framed(text(".pay", "Pay $61.00"))),
    _case("name", C_SHOW, "count inserted", text(C_SHOW.css, "Show 24 results")),
    _case("structure", C_SHOW, "drawer moved to the end of the page", move(".drawer", "beforebegin", "#log")),
    _case("negative", C_POST, "same place, another meaning", text(C_POST.css, "Save draft")),
    _case("negative", C_PAY, "disabled inside the iframe", framed(attr(".pay", "disabled", ""))),
    _case("negative", C_SHOW, "drawer hidden, a Show results look-alike left", attr(".drawer", "hidden", ""), html("main", "afterbegin", f'<p>Nothing filtered. <button {DECOY}>Show results</button></p>')),
    _case("negative", C_BOLD, "Bold gone from the shadow toolbar, Italic left", remove("editor-toolbar >>> [data-who=bold]")),
    # -- late: written after the scorer was read, on the pages above, and run once before any change -----------
    _case("name", I_COMPOSE, "synonym new message", text(I_COMPOSE.css, "New message")),
    _case("name", I_OLDER, "aria-label moved to title", attr(I_OLDER.css, "aria-label", None), attr(I_OLDER.css, "title", "Older")),
    _case("name", A_NEXT, "chevron only", text(A_NEXT.css, "»")),
    _case("name", P_CHECKOUT, "synonym proceed to checkout", text(P_CHECKOUT.css, "Proceed to checkout")),
    _case("name", A_EXPORT, "a word inserted", text(A_EXPORT.css, "Export as CSV")),
    _case("structure", S_SAVE, "became an input type=submit", retag(S_SAVE.css, "input"), attr(S_SAVE.css, "type", "submit"), attr(S_SAVE.css, "value", "Save")),
    _case("testid", P_ADD, "id renamed and price appended", attr(P_ADD.css, "id", "ProductSubmitButton-template--16204__main"), text(P_ADD.css, "Add to cart - $48.00")),
    _case("name", A_DEACTIVATE_DMITRI, "icon buttons with aria-labels in every row", *(op for i in (1, 2, 3, 4) for op in (text(f"tbody tr:nth-of-type({i}) button", "⏻"), attr(f"tbody tr:nth-of-type({i}) button", "aria-label", "Deactivate")))),
    _case("testid", I_SELECT_OLIVER, "row ids renumbered", *(attr(f"#msg-{i}", "id", f"thread-a{i}") for i in (1, 2, 3, 4))),
    _case("name", S_DARK, "label upper case", attr("label:has([data-who=theme-dark])", "style", "text-transform: uppercase")),
    _case("lookalike", C_SHOW, "results bar above with its own Show results", html("main", "afterbegin", f'<div class="bar"><span>24 items</span> <button {DECOY}>Show results</button></div>')),
    _case("name", B_CREATE_DOING, "verb changed in every column", *(text(f"section:nth-of-type({i}) > button", "+ Add issue") for i in (1, 2, 3))),
    _case("structure", S_LEAVE, "a native dialog element now", retag(".modal", "dialog"), attr("dialog.modal", "open", "")),
    _case("negative", I_OLDER, "same place, the other direction", attr(I_OLDER.css, "aria-label", "Newer")),
    _case("negative", P_PLUS_TOTE, "tote line removed, the scarf's + left", remove("#CartDrawer-Item-2")),
    _case("negative", A_EDIT_CARMEN, "same place, another meaning", text(A_EDIT_CARMEN.css, "View")),
    _case("negative", B_ONLY_MINE, "same place, another filter", text(B_ONLY_MINE.css, "All issues")),
    _case("negative", A_NEXT, "same place, now the previous-page glyph", text(A_NEXT.css, "«")),
    _case("negative", C_SUBSCRIBE, "same place, opposite meaning", text(C_SUBSCRIBE.css, "Unsubscribe")),
)
# fmt: on
