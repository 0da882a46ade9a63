"""``prb collect serve | export | status``."""

from __future__ import annotations

import argparse
import ipaddress
import signal
import sys
from datetime import datetime
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.common.install_hint import pip_install

INSTALL_LINE = f"prb collect: the web app needs Flask and waitress: {pip_install('collect')}"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``collect`` and its actions to the ``prb`` parser.

    Args:
        sub: the ``prb`` subcommand table.
    """
    collect = sub.add_parser("collect", help="gather users' preferences in a browser, in the format "
                             "personalized_custom reads")
    actions = collect.add_subparsers(dest="collect_command", metavar="ACTION", required=True)
    serve = actions.add_parser(
        "serve", help="start the web app and print one private link per participant",
        description="Serve PAIRS (a .jsonl of {prompt, response_A, response_B}) to participants, one pair at a "
        "time, and keep FILE (.json or .jsonl, the format personalized_custom reads) up to date after every "
        "answer. Answers are journalled in FILE's .collect folder; run the same command again to resume.")
    serve.add_argument("pairs", type=Path, metavar="PAIRS", help="a .jsonl file: one prompt and two answers per line")
    serve.add_argument("--out", type=Path, required=True, metavar="FILE",
                       help="the preference file to write (.json or .jsonl)")
    serve.add_argument("--participants", default="1", metavar="N|NAMES",
                       help="how many participants (p1, p2, ...) or their names, comma-separated (default 1); "
                       "on a resumed collection, new names are added")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    serve.add_argument("--connections-per-address", type=int, default=None, metavar="N",
                       help="open connections one client address may hold (default 0: no cap; when all 500 "
                            "are open, a new one replaces the one idle longest, whatever its address: "
                            "docs/your-data.md)")
    serve.add_argument("--form", type=Path, metavar="YAML",
                       help="profile fields and value tags (default: age group, region, interests)")
    serve.add_argument("--seed", type=int, help="seeds each participant's left/right order (default 0)")
    serve.add_argument("--generate", metavar="MODEL_A,MODEL_B",
                       help="PAIRS holds prompts only: write response_A with MODEL_A and response_B with MODEL_B "
                       "through prb-judge (cached)")
    serve.add_argument("--model-args", default="", metavar="ARGS",
                       help="prb-judge model arguments for --generate, e.g. api_base=http://localhost:8000/v1,max_tokens=400")
    export = actions.add_parser("export", help="rewrite FILE from the participants' journals")
    export.add_argument("out", type=Path, metavar="FILE", help="the --out file of `prb collect serve`")
    status = actions.add_parser("status", help="each participant's progress")
    status.add_argument("out", type=Path, metavar="FILE", help="the --out file of `prb collect serve`")


def run(args: argparse.Namespace) -> int:
    """Run one ``prb collect`` action; user errors are one line and exit 2."""
    try:
        if args.collect_command == "serve":
            return serve(args)
        if args.collect_command == "export":
            return export(args.out)
        return status(args.out)
    except PRBError as exc:
        print(str(exc), file=sys.stderr)
        return 2


def _load_pairs(args: argparse.Namespace):
    from prb_tasks.collect.pairs import read_pairs

    if args.generate:
        from prb_tasks.collect.generate import generate_pairs

        return generate_pairs(args.pairs, args.generate, args.model_args, args.out)
    return read_pairs(args.pairs)


def serve(args: argparse.Namespace) -> int:
    """``prb collect serve``: resume or start a collection and serve it until Ctrl-C."""
    try:
        import waitress  # noqa: F401 - the extra's other half: say what to install before anything starts

        from prb_tasks.collect.app import MAX_BODY, Collection, create_app
        from prb_tasks.collect.serving import PER_ADDRESS_LIMIT, create_bounded_server
    except ImportError:
        print(INSTALL_LINE, file=sys.stderr)
        return 2
    from prb_tasks.collect.form import load_form
    from prb_tasks.collect.store import CollectStore, participant_names

    if not 0 <= args.port <= 65535:
        raise PRBError(f"prb collect: --port {args.port}: use 0 (any free port) to 65535")
    per_address = PER_ADDRESS_LIMIT if args.connections_per_address is None else args.connections_per_address
    if per_address < 0:
        raise PRBError(f"prb collect: --connections-per-address {per_address}: use 0 (no cap) or more")
    names = participant_names(args.participants)
    form = load_form(args.form)
    out = args.out.expanduser()
    if out.suffix not in (".json", ".jsonl"):
        raise PRBError(f"prb collect: --out {out}: name a .json or .jsonl file (the format personalized_custom reads)")
    if not out.parent.is_dir():
        raise PRBError(f"prb collect: --out {out}: folder {out.parent} does not exist; create it first")
    pairs = _load_pairs(args)
    store = CollectStore.open_or_create(out, args.pairs, pairs, form, names, args.seed or 0)
    # A resumed collection keeps what its first answers were given under; say so rather
    # than silently ignoring a changed option.
    kept = [name for name, changed in (("--form", args.form is not None and store.session.form != form),
                                       ("--seed", args.seed is not None and store.session.seed != args.seed))
            if changed]
    if kept:
        print(f"prb collect: resuming {store.folder}: it keeps the {' and '.join(o[2:] for o in kept)} it started with "
              f"({', '.join(kept)} ignored; use a new --out to change them)", flush=True)
    store.lock()
    collection = Collection(store)
    for name, copy in collection.healed.items():
        print(f"prb collect: {name}'s journal ended in a line cut short (a crash or a full disk while writing; "
              f"never acknowledged): cut off and kept in {copy}", flush=True)
    try:
        collection.export()  # the file exists (possibly empty) from the start, and is current after a crash
    except OSError as exc:
        raise PRBError(f"prb collect: cannot write {out}: {exc.strerror or exc}; free some space "
                       "(or fix the folder's permissions) and run the same command again") from None
    try:
        server = create_bounded_server(create_app(collection), args.host, args.port, MAX_BODY, per_address)
    except OSError as exc:
        raise PRBError(f"prb collect: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}; "
                       "choose another --port") from None
    host = args.host if ":" not in args.host else f"[{args.host}]"
    base = f"http://{host}:{server.effective_port}"
    n_pairs, n_people = len(store.pairs), len(store.participants)
    print(f"prb collect: {n_pairs} pair{'s' * (n_pairs != 1)}, {n_people} participant{'s' * (n_people != 1)}; "
          f"answers go to {out} (journals in {store.folder})", flush=True)
    if not _loopback(args.host):
        print(f"prb collect: WARNING: listening on {args.host}: anyone who can reach this machine and has a "
              "link can answer as that participant, and plain HTTP does not hide links or answers on the "
              "network", flush=True)
    for person in store.participants:
        state = collection.states[person.name]
        done = f"  ({len(state.answers)}/{len(store.pairs)} answered)" if state.answers else ""
        print(f"  {person.name}: {base}/p/{person.token}/{done}", flush=True)
    print("Send each person their own link (it is private: it lets its holder answer as that person). "
          "Ctrl-C stops; run the same command to resume.", flush=True)
    signal.signal(signal.SIGTERM, _stop)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print(f"prb collect: stopped; every answer is saved in {out}", file=sys.stderr)
    return 0


def _stop(signum: int, frame: object) -> None:
    """SIGTERM (``kill``, a service manager) stops like Ctrl-C: answers are saved as they come anyway."""
    raise KeyboardInterrupt


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def export(out: Path) -> int:
    """``prb collect export FILE``: rebuild FILE from the journals."""
    from prb_tasks.collect.export import build_export, write_atomic
    from prb_tasks.collect.store import CollectStore

    store = CollectStore.open(out.expanduser())
    users, summary = build_export({p.name: store.state(p.name) for p in store.participants}, store.pairs)
    write_atomic(store.out, users)
    print(f"{store.out}: {summary.users} users, {summary.preferences} preferences; "
          f"{summary.no_preference} answered 'no preference' (kept under no_preference, not evaluated)")
    if summary.skipped:
        print(f"  not in the file yet: {', '.join(summary.skipped)}")
    if not users:
        print("  nobody has chosen A or B yet: the file holds no users, so it cannot be evaluated yet")
    return 0


def status(out: Path) -> int:
    """``prb collect status FILE``: per-participant progress."""
    from prb_tasks.collect.journal import NO_PREFERENCE
    from prb_tasks.collect.store import CollectStore

    store = CollectStore.open(out.expanduser())
    total = len(store.pairs)
    print(f"{store.out}: {total} pairs from {store.session.pairs_file}")
    print(f"{'participant':<20} {'profile':<8} {'answered':>9} {'A/B':>5} {'none':>5}  last activity")
    for person in store.participants:
        state = store.state(person.name)
        none = sum(a.choice == NO_PREFERENCE for a in state.answers.values())
        last = datetime.fromtimestamp(state.last_at).strftime("%Y-%m-%d %H:%M") if state.last_at else "-"
        answered = f"{len(state.answers)}/{total}"
        print(f"{person.name:<20} {'yes' if state.profile is not None else 'no':<8} {answered:>9} "
              f"{len(state.answers) - none:>5} {none:>5}  {last}")
    return 0
