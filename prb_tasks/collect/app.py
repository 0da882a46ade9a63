"""The web app participants use: a profile form, then one pair at a time.

Every URL carries the participant's private token (``/p/<token>/...``); a token
reaches only its own journal. Forms carry a token derived from the link token and the
collection's secret (CSRF), cross-origin posts are refused, bodies are size-limited,
and every text is escaped by Jinja's autoescaping (no page builds HTML from strings).
"""

from __future__ import annotations

import hashlib
import hmac
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, abort, redirect, render_template, request

from prb_tasks.collect.export import build_export, write_atomic
from prb_tasks.collect.journal import NO_PREFERENCE, JournalError, ParticipantState, append_event, heal, torn_copy
from prb_tasks.collect.store import CollectStore, Participant

WEB = Path(__file__).resolve().parent / "web"
MAX_BODY = 32 * 1024  # bytes of one request body: a reason and a few tags fit many times over
MAX_REASON = 4000  # characters
_HEADERS = {
    # No inline script or style anywhere, so the policy can forbid them: a string that
    # slipped through escaping still could not run.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    # The link token is in the URL: never send it to another site.
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Collection:
    """The server's view of a collection: replayed states kept in memory, one lock per participant.

    Args:
        store: the collection on disk.
        on_answer: called after each saved event (tests and the CLI use it to log).
    """

    def __init__(self, store: CollectStore, on_answer: Callable[[str], None] | None = None) -> None:
        self.store = store
        # A torn last line (a crash mid-write) is cut now, so the next answer starts a clean line.
        self.healed: dict[str, Path] = {}
        for person in store.participants:
            path = store.journal_path(person.name)
            if heal(path):
                self.healed[person.name] = torn_copy(path)
        self.states: dict[str, ParticipantState] = {p.name: store.state(p.name) for p in store.participants}
        self._locks = {p.name: threading.Lock() for p in store.participants}
        self._export_lock = threading.Lock()
        self._on_answer = on_answer

    def record(self, person: Participant, event: dict[str, Any]) -> None:
        """Append one event to the participant's journal (fsync'd), then rewrite the export.

        Raises OSError or JournalError when the journal could not take the event (the
        participant is told it was not saved); the export failing after that is only logged:
        the answer is safe in the journal and the next answer or ``prb collect export``
        rewrites the file.
        """
        with self._locks[person.name]:
            append_event(self.store.journal_path(person.name), event)
            self.states[person.name] = self.store.state(person.name)
        try:
            self.export()
        except OSError as exc:
            print(f"prb collect: {person.name}'s answer is saved in the journal, but {self.store.out} could not "
                  f"be rewritten ({exc.strerror or exc}); it is rewritten after the next answer, or run "
                  f"`prb collect export {self.store.out}`", file=sys.stderr, flush=True)
        if self._on_answer:
            self._on_answer(person.name)

    def export(self) -> None:
        """Rewrite the export file from the states in memory (atomically)."""
        with self._export_lock:
            users, _ = build_export(dict(self.states), self.store.pairs)
            write_atomic(self.store.out, users)

    def next_position(self, name: str) -> int:
        """1-based position of the first unanswered pair (len + 1 when all are answered)."""
        answers = self.states[name].answers
        for i, pair in enumerate(self.store.pairs, start=1):
            if pair.pair_id not in answers:
                return i
        return len(self.store.pairs) + 1

    def form_token(self, person: Participant) -> str:
        """The CSRF token of this participant's forms."""
        key = bytes.fromhex(self.store.session.secret)
        return hmac.new(key, f"form:{person.token}".encode(), hashlib.sha256).hexdigest()


def create_app(collection: Collection) -> Any:
    """The Flask app serving one collection.

    Args:
        collection: the collection and its in-memory states.
    """
    app = Flask(__name__, template_folder=str(WEB / "templates"), static_folder=str(WEB / "static"))
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    store = collection.store
    form = store.session.form
    total = len(store.pairs)

    @app.after_request
    def _headers(response):
        response.headers.update(_HEADERS)
        return response

    def person_or_404(token: str) -> Participant:
        person = store.by_token(token)
        if person is None:
            abort(404)
        return person

    def check_post(person: Participant) -> None:
        # A browser names the page a post comes from; it must be this server (host and
        # port: the scheme may differ behind an HTTPS proxy).
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            abort(403)
        sent = request.form.get("csrf", "")
        if not hmac.compare_digest(sent.encode(), collection.form_token(person).encode()):
            abort(403)

    def page(name: str, person: Participant, **values: Any) -> str:
        return render_template(name, token=person.token, csrf=collection.form_token(person), total=total,
                               answered=len(collection.states[person.name].answers), **values)

    @app.errorhandler(404)
    def _missing(_):
        return render_template("message.html", title="Link not found",
                               text="This link is not valid. Open the private link you were given."), 404

    @app.errorhandler(403)
    def _refused(_):
        return render_template("message.html", title="Form expired",
                               text="This form could not be accepted. Reload the page and answer again."), 403

    @app.errorhandler(413)
    def _too_big(_):
        return render_template("message.html", title="Too long",
                               text="That answer is too long to save. "
                                    "Go back, shorten the reason and send it again."), 413

    @app.errorhandler(OSError)
    @app.errorhandler(JournalError)
    def _disk(exc):
        # Nothing was kept (the journal is cut back to its last whole line), so asking
        # again is safe: the participant's next try is a fresh append.
        print(f"prb collect: could not save an answer: {exc}", file=sys.stderr, flush=True)
        return render_template("message.html", title="Not saved",
                               text="Your answer was not saved. Go back and send it again in a moment; if it "
                               "keeps failing, tell the person who sent you the link."), 503

    @app.get("/favicon.ico")
    def _icon():
        return "", 204

    @app.get("/")
    def _root():
        abort(404)

    @app.get("/p/<token>/")
    def start(token: str):
        person = person_or_404(token)
        if collection.states[person.name].profile is None:
            return redirect(f"/p/{token}/profile", 303)
        position = collection.next_position(person.name)
        return redirect(f"/p/{token}/done" if position > total else f"/p/{token}/pair/{position}", 303)

    @app.route("/p/<token>/profile", methods=["GET", "POST"])
    def profile(token: str):
        person = person_or_404(token)
        current = collection.states[person.name].profile or {}
        problem = None
        if request.method == "POST":
            check_post(person)
            kept, problem = form.clean_profile({k: request.form.get(k, "") for k in (f.name for f in form.profile)})
            if problem is None:
                collection.record(person, {"event": "profile", "fields": kept})
                return redirect(f"/p/{token}/", 303)
            current = kept
        return page("profile.html", person, fields=form.profile, current=current, problem=problem)

    @app.route("/p/<token>/pair/<int:position>", methods=["GET", "POST"])
    def pair(token: str, position: int):
        person = person_or_404(token)
        state = collection.states[person.name]
        if state.profile is None:
            return redirect(f"/p/{token}/profile", 303)
        # Answered pairs and the next one are open; later ones are not skipped to.
        if not 1 <= position <= min(collection.next_position(person.name), total):
            return redirect(f"/p/{token}/", 303)
        item = store.pairs[position - 1]
        left = store.left_of(person.name, item.pair_id)
        right = "response_B" if left == "response_A" else "response_A"
        problem = None
        if request.method == "POST":
            check_post(person)
            side = request.form.get("choice", "")
            reason = request.form.get("reason", "").strip()
            tags = [t for t in form.value_tags if t in request.form.getlist("tag")]
            if side not in ("left", "right", "none"):
                problem = "Pick A, B or no preference."
            elif len(reason) > MAX_REASON:
                problem = f"The reason is too long (at most {MAX_REASON} characters)."
            else:
                choice = {"left": left, "right": right, "none": NO_PREFERENCE}[side]
                collection.record(person, {"event": "answer", "pair": item.pair_id, "left": left,
                                           "choice": choice, "reason": reason, "tags": tags})
                return redirect(f"/p/{token}/", 303)
        previous = state.answers.get(item.pair_id)
        chosen_side = None
        if previous is not None:
            chosen_side = ("none" if previous.choice == NO_PREFERENCE
                           else "left" if previous.choice == left else "right")
        texts = {"response_A": item.response_A, "response_B": item.response_B}
        return page("pair.html", person, position=position, item=item, left_text=texts[left],
                    right_text=texts[right], chosen_side=chosen_side,
                    reason=previous.reason if previous else "", ticked=set(previous.tags) if previous else set(),
                    value_tags=form.value_tags, problem=problem)

    @app.get("/p/<token>/done")
    def done(token: str):
        person = person_or_404(token)
        if collection.next_position(person.name) <= total:
            return redirect(f"/p/{token}/", 303)
        return page("done.html", person)

    return app
