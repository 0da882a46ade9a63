"""Re-run of the reliability audit's checks on ``prb collect`` and the hostile files (issue 33).

    python benchmarks/audit_reliability.py [--only full_disk,kill9,slow,hostile,hostile_iv]

* ``full_disk``: a collection on a 1 MiB tmpfs (needs root to mount; skipped otherwise)
  served by a real ``prb collect serve``; three participants answer with long reasons
  until the disk is full, then space is freed, they answer again, the server is killed
  with SIGKILL and restarted: every acknowledged answer must be in the export.
* ``kill9``: 20 participants answer at once; the server is killed with SIGKILL while
  they answer and restarted on the same port; each participant re-sends what was not
  acknowledged. Nothing acknowledged may be lost.
* ``slow``: 105 loopback connections trickle a header a byte at a time (100) or send
  nothing (5) while a participant answers; how long the participant waited, and how long
  until the server had closed every slow connection.
* ``hostile``: each hostile file of the audit through the command a user would run: the
  exit status, the number of lines printed, whether a traceback appeared, the time.
* ``hostile_iv``: issue 48's new surface the same way: ``prb validity --scores`` files
  (scores near 1e308, JSON 100,000 deep, ``[1,2]``, ``[[]]``, a 50 MB cell, ``/dev/zero``, a
  FIFO, 10^6 unmatched names), replies 100,000 deep or 64 MiB long from a judge
  (``transport=direct``) and from a served RM (``endpoint=``), an RM-Bench file 200,000
  deep, an endless trickle on ``transport=litellm`` with ``timeout=3``, and a key in
  ``api_base``'s query (where its value turns up).

Prints one line per measurement; numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import errno
import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1",
       "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}


def write_pairs(folder: Path, count: int) -> Path:
    path = folder / "pairs.jsonl"
    rows = [{"id": f"q{i}", "prompt": f"Question {i}?", "response_A": f"Short answer {i}.",
             "response_B": f"A much longer answer to question {i}, with details."} for i in range(count)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A ``prb collect serve`` subprocess and its links."""

    def __init__(self, pairs: Path, out: Path, names: list[str], port: int, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "prb_tasks", "collect", "serve", str(pairs), "--out", str(out),
             "--participants", ",".join(names), "--port", str(port), *extra],
            cwd=out.parent, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.links: dict[str, str] = {}
        self.banner: list[str] = []
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server stopped:\n" + "".join(self.banner))
            self.banner.append(line)
            found = re.match(r"\s+(\S+): (http://\S+/p/\S+/)", line)
            if found:
                self.links[found.group(1)] = found.group(2)
            if line.startswith("Send each person"):
                threading.Thread(target=self._drain, daemon=True).start()
                return
        self.proc.kill()
        raise RuntimeError("no links")

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.banner.append(line)

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


class Person:
    """A participant over plain HTTP: profile, then answers; says whether each was acknowledged."""

    def __init__(self, link: str) -> None:
        self.link = link
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def _open(self, url: str, data: bytes | None = None, timeout: float = 30) -> tuple[int, str, str]:
        try:
            with self.opener.open(urllib.request.Request(url, data=data), timeout=timeout) as reply:
                return reply.status, reply.geturl(), reply.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            return exc.code, url, exc.read().decode("utf-8", "replace")

    def csrf(self, page: str) -> str:
        return re.search(r'name="csrf" value="([0-9a-f]+)"', page).group(1)

    def profile(self) -> int:
        _, url, page = self._open(self.link)
        data = urllib.parse.urlencode([("csrf", self.csrf(page)), ("region", "Oslo")]).encode()
        return self._open(url, data)[0]

    def answer(self, position: int, reason: str) -> tuple[int, int]:
        """Answer pair ``position`` if it is open, else the next unanswered one; (HTTP status
        of the answer, the position answered). 200 (after the server's redirect) = saved; the
        refusal is a 503 page."""
        status, url, page = self._open(urllib.parse.urljoin(self.link, f"pair/{position}"))
        found = re.search(r"/pair/(\d+)$", url)
        if status != 200 or found is None or 'name="csrf"' not in page:
            return status, 0
        data = urllib.parse.urlencode([("csrf", self.csrf(page)), ("choice", "left"), ("reason", reason)]).encode()
        return self._open(url, data)[0], int(found.group(1))


def exported_reasons(out: Path) -> dict[str, set[str]]:
    users = json.loads(out.read_text(encoding="utf-8")) if out.exists() else []
    return {u["user_id"]: {p["reason"] for p in u["preferences"]} for u in users}


def check_full_disk() -> None:
    if os.geteuid() != 0:
        print("full_disk: skipped (mounting a tmpfs needs root)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        disk = root / "disk"
        disk.mkdir()
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            print(f"full_disk: skipped (mount refused: {mounted.stderr.strip()})")
            return
        server = None
        try:
            pairs = write_pairs(root, 6)
            out = disk / "prefs.json"
            names = ["ana", "ben", "eve"]
            port = free_port()
            server = Server(pairs, out, names, port)
            people = {n: Person(server.links[n]) for n in names}
            for person in people.values():
                person.profile()
            filler = disk / "filler"
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                while True:
                    os.write(fd, b"\0" * 65536)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
            finally:
                os.close(fd)
            # Leave room for a few answers, so the disk fills up in the middle of the answering.
            os.truncate(filler, filler.stat().st_size - 24 * 1024)
            acked: dict[str, dict[int, str]] = {n: {} for n in names}
            codes: dict[int, int] = {}
            for round_ in range(12):
                for name, person in people.items():
                    position = round_ % 6 + 1
                    reason = f"{name} round {round_} " + "x" * 3000
                    status, answered = person.answer(position, reason)
                    codes[status] = codes.get(status, 0) + 1
                    if status == 200:  # redirected to the next page: saved (a refusal is a 503 page)
                        acked[name][answered] = reason
            refused = sum(v for k, v in codes.items() if k != 200)
            filler.unlink()
            for name, person in people.items():
                reason = f"{name} after space"
                status, answered = person.answer(1, reason)
                if status == 200:
                    acked[name][answered] = reason
            server.kill9()
            server = Server(pairs, out, names, port)
            server.stop()
            server = None
            got = exported_reasons(out)
            lost = sum(1 for n in names for r in acked[n].values() if r not in got.get(n, set()))
            journals_ok = all((disk / "prefs.collect" / "journals" / f"{n}.jsonl").read_bytes().endswith(b"\n")
                              for n in names)
            total = sum(len(a) for a in acked.values())
            print(f"full_disk: 1 MiB tmpfs, 3 participants x 12 answers of ~3 KB with 24 KB free: HTTP statuses "
                  f"{dict(sorted(codes.items()))}; {refused} refused ('not saved, send it again'), "
                  f"acknowledged answers kept after freeing space, kill -9 and restart: {total - lost}/{total} "
                  f"(lost {lost}); journals end in a whole line: {journals_ok}")
        finally:
            if server is not None:
                server.kill9()
            subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def check_kill9(participants: int = 20, pairs_count: int = 12) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pairs = write_pairs(root, pairs_count)
        out = root / "prefs.json"
        names = [f"p{i}" for i in range(1, participants + 1)]
        port = free_port()
        server = Server(pairs, out, names, port)
        acked: dict[str, dict[int, str]] = {n: {} for n in names}
        failures = {"connection": 0, "http": 0}
        lock = threading.Lock()
        restarted = threading.Event()

        def walk(name: str, link: str) -> None:
            person = Person(link)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if person.profile() in (200, 303):
                        break
                except OSError:
                    with lock:
                        failures["connection"] += 1
                    time.sleep(0.2)
            for position in range(1, pairs_count + 1):
                reason = f"{name}-{position}"
                while time.monotonic() < deadline:
                    try:
                        status, answered = person.answer(position, reason)
                    except OSError:  # the server is down: try again, as a participant would
                        with lock:
                            failures["connection"] += 1
                        time.sleep(0.2)
                        continue
                    if status == 200 and answered == position:
                        with lock:
                            acked[name][position] = reason
                        break
                    with lock:
                        failures["http"] += 1
                    time.sleep(0.2)

        started = time.monotonic()
        threads = [threading.Thread(target=walk, args=(n, server.links[n])) for n in names]
        for t in threads:
            t.start()
        while sum(len(a) for a in acked.values()) < participants * pairs_count // 3:
            time.sleep(0.01)
        before = sum(len(a) for a in acked.values())
        server.kill9()
        killed_at = time.monotonic()
        server = Server(pairs, out, names, port)
        restarted.set()
        down = time.monotonic() - killed_at
        for t in threads:
            t.join(timeout=180)
        server.stop()
        elapsed = time.monotonic() - started
        got = exported_reasons(out)
        total = sum(len(a) for a in acked.values())
        lost = sum(1 for n in names for r in acked[n].values() if r not in got.get(n, set()))
        print(f"kill9: {participants} participants x {pairs_count} answers at once, server killed with SIGKILL "
              f"after {before} acknowledged answers and restarted ({down:.1f} s down): {total}/"
              f"{participants * pairs_count} acknowledged, {total - lost} in the export (lost {lost}); "
              f"{failures['connection']} requests met the dead server and were re-sent, {failures['http']} "
              f"HTTP errors; {elapsed:.1f} s in all")


def check_slow(count: int = 105) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pairs = write_pairs(root, 4)
        out = root / "prefs.json"
        # The slow connections stand for many clients but all come from 127.0.0.1, as the
        # participant does: the cap per address (which would refuse her) is lifted here.
        server = Server(pairs, out, ["ana"], free_port(), "--connections-per-address", "0")
        address = urllib.parse.urlsplit(server.links["ana"])
        sockets: list[socket.socket] = []
        stop = threading.Event()

        def trickle() -> None:
            sent = 0
            while not stop.wait(0.5):
                for sock in sockets[:count - 5]:
                    try:
                        sock.send((b"GET /x HTTP/1.1\r\n"
                                   b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")[sent % 40:sent % 40 + 1])
                    except OSError:
                        pass
                sent += 1

        try:
            for _ in range(count):
                sockets.append(socket.create_connection((address.hostname, address.port), timeout=10))
            thread = threading.Thread(target=trickle, daemon=True)
            thread.start()
            time.sleep(1.0)
            began = time.monotonic()
            person = Person(server.links["ana"])
            person.profile()
            status, _ = person.answer(1, "while trickling")
            waited = time.monotonic() - began
            open_ = list(sockets)
            while open_ and time.monotonic() - began < 60:
                time.sleep(0.25)
                still = []
                for sock in open_:
                    sock.setblocking(False)
                    try:
                        if sock.recv(64) != b"":
                            still.append(sock)
                    except BlockingIOError:
                        still.append(sock)
                    except OSError:
                        pass
                open_ = still
            closed_after = time.monotonic() - began
            print(f"slow: {count} slow loopback connections ({count - 5} trickling a header, 5 silent): the "
                  f"participant's profile + answer took {waited:.2f} s (HTTP {status}); the server had closed "
                  f"{count - len(open_)}/{count} of them {closed_after:.1f} s after the participant started")
        finally:
            stop.set()
            for sock in sockets:
                sock.close()
            server.stop()


def check_hostile() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        user = json.loads((REPO / "prb_tasks/data/custom/example.jsonl").read_text(encoding="utf-8").splitlines()[0])
        row = json.dumps(user)[:-1] + ', "extra": ' + "9" * 100_000 + "}"
        (root / "huge.jsonl").write_text(row + "\n", encoding="utf-8")
        (root / "latin1.json").write_bytes(json.dumps([user], ensure_ascii=False).encode().replace(b"[", b"[\xe9", 1))
        (root / "deep.jinja").write_text("{{ " + "(" * 100_000 + "question" + ")" * 100_000 + " }}", encoding="utf-8")
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "fullsize_data.py"), str(root / "copy"),
                        "--scale", "0.01"], env=ENV, capture_output=True, check=True)
        for kind in ("zero", "fifo"):
            copy = root / f"copy_{kind}"
            subprocess.run(["cp", "-r", str(root / "copy"), str(copy)], check=True)
            target = next((copy / "Society_and_Culture").iterdir())
            target.unlink()
            data = target.with_suffix(".jsonl")
            if kind == "fifo":
                os.mkfifo(data)
            else:
                data.symlink_to("/dev/zero")
        results = {"empty": b"", "not_utf8": b'{"results": "\xff"}', "list": b"[1, 2]",
                   "deep": b"[" * 200_000 + b"]" * 200_000}
        for name, content in results.items():
            (root / f"results_{name}.json").write_bytes(content)
        rm = ["eval", "--model", "prb-rm", "--model_args", "scorer=length"]
        cases = [
            ("100,000-digit integer, prb data validate", ["data", "validate", str(root / "huge.jsonl")]),
            ("100,000-digit integer, prb eval", rm + ["--tasks", "personalized_custom_scalar", "--metadata",
                                                     json.dumps({"data_path": str(root / "huge.jsonl")})]),
            ("non-UTF-8 .json user file, prb eval", rm + ["--tasks", "personalized_custom_scalar", "--metadata",
                                                         json.dumps({"data_path": str(root / "latin1.json")})]),
            ("template 100,000 parentheses deep, prb eval",
             rm + ["--tasks", "personalized_rb_scalar_profile", "--metadata",
                   json.dumps({"data_dir": "sample", "user_template": str(root / "deep.jinja")})]),
            ("data file -> /dev/zero, prb data validate", ["data", "validate", str(root / "copy_zero")]),
            ("data file -> /dev/zero, prb eval", rm + ["--tasks", "personalized_rb_scalar", "--metadata",
                                                      json.dumps({"data_dir": str(root / "copy_zero")})]),
            ("FIFO data file, prb data validate", ["data", "validate", str(root / "copy_fifo")]),
            ("FIFO data file, prb eval", rm + ["--tasks", "personalized_rb_scalar", "--metadata",
                                              json.dumps({"data_dir": str(root / "copy_fifo")})]),
            *[(f"results file {name}, prb validity", ["validity", str(root / f"results_{name}.json")])
              for name in results],
            ("results file deep, prb compare", ["compare", str(root / "results_deep.json")]),
        ]
        for label, args in cases:
            run_case("hostile", label, args, root)


def run_case(section: str, label: str, args: list[str], cwd: Path, limit: float = 120) -> str | None:
    """Run ``python -m prb_tasks ARGS`` and print one line: exit status, stderr lines, whether
    a traceback appeared, the time and the last thing prb said. Returns stdout and stderr
    together (None when it hung past ``limit`` seconds and was killed)."""
    began = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "prb_tasks", *args], cwd=cwd, env=ENV,
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        print(f"{section}: {label}: HANG: still running after {limit:g} s (killed)")
        return None
    took = time.monotonic() - began
    text = proc.stderr if proc.returncode == 2 else proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip() and "INFO" not in line
             and "WARNING" not in line and "it/s]" not in line and "req/s" not in line]
    said = [line.strip() for line in (proc.stdout + proc.stderr).splitlines() if "prb" in line and ": " in line
            and "INFO" not in line]
    last = (said or lines or text.strip().splitlines() or [""])[-1]
    print(f"{section}: {label}: exit {proc.returncode}, {len(lines)} stderr line(s), traceback "
          f"{'Traceback' in proc.stdout + proc.stderr}, {took:.1f} s: {last[:150]}")
    return proc.stdout + proc.stderr


def _validity_runs(root: Path) -> Path:
    """Eight contestants' results (a PersonalLLM Best-of-N run and a rewardbench2 score each)."""
    for i in range(8):
        folder = root / "runs" / f"rm-{i}"
        folder.mkdir(parents=True)
        stamp = f"2026-11-26T00-00-0{i}"
        (folder / f"results_{stamp}.json").write_text(json.dumps({
            "config": {"model": "prb-rm", "model_args": f"pretrained=org/rm-{i}"},
            "results": {"personalllm_bon": {"bon_reward_n8,none": 0.5}, "rewardbench2": {"score,none": 0.3 + i / 20}},
            "configs": {"personalllm_bon": {"task": "personalllm_bon", "dataset_kwargs": {"variant": "bon"},
                                            "output_type": "multiple_choice"}}}), encoding="utf-8")
        samples = [json.dumps({"doc_id": u, "doc": {"variant": "bon", "user_id": f"user{u:04d}",
                                                    "group_key": f"user{u:04d}/p0",
                                                    "user_rewards": [0.1 * u] + [0.0] * 7},
                               "bon_reward_n8": 0.1 * u + i / 10}) for u in range(4)]
        (folder / f"samples_personalllm_bon_{stamp}.jsonl").write_text("\n".join(samples) + "\n", encoding="utf-8")
    return root / "runs"


class _RawRM:
    """A served reward model answering every POST with the same 200 body (in a thread)."""

    def __init__(self, body: bytes) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def check_hostile_iv() -> None:
    sys.path.insert(0, str(REPO))
    from prb_tasks.testing.fake_server import FakeLLMServer

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = _validity_runs(root)
        files = {
            "scores near 1e308": ("big.csv", "model,other\n" + "".join(f"rm-{i},{(-1) ** i * 1e308}\n"
                                                                       for i in range(8))),
            "JSON 100,000 deep": ("deep.json", '{"rm-0": ' + "[" * 100_000 + "]" * 100_000 + "}"),
            "JSON [1,2]": ("list.json", "[1, 2]"),
            "JSON [[]]": ("lists.json", "[[]]"),
            "a 50 MB cell": ("cell.csv", "model,other\nrm-0," + "1" * 50_000_000 + "\n"),
            "10^6 unmatched names": ("many.csv", "model,other\n" + "".join(f"x{i},{i}\n" for i in range(10**6))),
        }
        for label, (name, text) in files.items():
            (root / name).write_text(text, encoding="utf-8")
        os.mkfifo(root / "fifo.csv")
        scores = [(label, str(root / name)) for label, (name, _) in files.items()]
        scores += [("/dev/zero", "/dev/zero"), ("a FIFO", str(root / "fifo.csv"))]
        for label, path in scores:
            run_case("hostile_iv", f"prb validity --scores: {label}",
                     ["validity", str(runs), "--compare-with", "rewardbench2", "--scores", path, "--out",
                      str(root / "out")], root)
        (root / "rmbench").mkdir()
        (root / "rmbench" / "total_dataset.json").write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
        run_case("hostile_iv", "RM-Bench total_dataset.json 200,000 deep, prb data validate",
                 ["data", "validate", str(root / "rmbench")], root)
        judge = ["eval", "--model", "prb-judge", "--tasks", "personalized_rb_sample", "--limit", "1"]
        for fault in ("deep", "huge"):
            with FakeLLMServer(faults={fault: 1.0}) as srv:
                run_case("hostile_iv", f"judge reply {fault} (transport=direct), prb eval",
                         judge + ["--model_args", f"model=openai/fake,api_base={srv.openai_base},transport=direct,"
                                  f"max_retries=1,cache=off"], root)
        with FakeLLMServer(faults={"trickle": 1.0}) as srv:
            run_case("hostile_iv", "endless trickle, transport=litellm timeout=3 max_retries=1, prb eval",
                     judge + ["--model_args", f"model=openai/fake,api_base={srv.openai_base},transport=litellm,"
                              "timeout=3,max_retries=1,cache=off"], root, limit=300)
        for label, body in (("deep", b'{"data": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
                            ("64 MiB", b" " * (64 * 1024**2))):
            server = _RawRM(body)
            try:
                run_case("hostile_iv", f"served RM reply {label}, prb eval",
                         ["eval", "--model", "prb-rm", "--model_args", f"endpoint={server.url},max_retries=1",
                          "--tasks", "personalized_rb_sample_scalar", "--limit", "1"], root)
            finally:
                server.close()
        secret = "Zq8vJ3mW1xN5rT0yAuditKey"
        with FakeLLMServer(echo_credentials=True) as srv:
            said = run_case("hostile_iv", "key in api_base's query, prb eval",
                            judge + ["--model_args", f"model=openai/fake,api_base={srv.openai_base}?key={secret},"
                                     "cache=off", "--output_path", str(root / "keyrun"), "--log_samples"], root)
        written = sum(p.read_text(encoding="utf-8", errors="replace").count(secret)
                      for p in (root / "keyrun").rglob("*") if p.is_file())
        print(f"hostile_iv: key in api_base's query: {(said or '').count(secret)} time(s) printed, "
              f"{written} time(s) in the files written")


CHECKS = {"full_disk": check_full_disk, "kill9": check_kill9, "slow": check_slow, "hostile": check_hostile,
          "hostile_iv": check_hostile_iv}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(CHECKS), help=f"comma-separated: {', '.join(CHECKS)}")
    chosen = parser.parse_args().only.split(",")
    for name in chosen:
        CHECKS[name]()
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
