"""``prb rl``: train a policy against each reward model with TRL, grade its answers, write downstream runs.

Steps, each kept on disk under ``--out`` so that the same command started again resumes:

1. prompts: Personalized RewardBench rows as the Best-of-N policy sees them; a stable hash of
   ``pair_key`` holds out the test questions (:mod:`prb_tasks.rl.prompts`);
2. the starting policy answers the test questions once (``answers/base.jsonl``);
3. per reward model: GRPO training (``policies/<rm>/``: checkpoints, then ``final``; resumed
   from the newest checkpoint), then the trained policy's answers (``answers/<rm>.jsonl``);
4. every answer graded once by ``personalized_rb_bon_grade`` (``grade/``);
5. per reward model, a downstream run (``runs/<rm>/``) that ``prb validity`` reads like a
   Best-of-N run: its gain is the trained answer's grade minus the starting policy's.

Each kept artefact has the settings that made it beside it; a re-run whose settings differ is
refused before any work (:mod:`prb_tasks.rl.settings`), so nothing is reused under a new label.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path

from prb_tasks.common.errors import PRBError
from prb_tasks.common.install_hint import pip_install


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``rl`` to the ``prb`` parser.

    Args:
        sub: the ``prb`` subcommand table.
    """
    from prb_tasks.rl.presets import PRESETS

    rl = sub.add_parser(
        "rl", help="RL downstream: train a policy against each reward model (TRL GRPO), grade its answers "
        "like Best-of-N, write runs prb validity reads",
        description="For each --rm, train --policy with TRL's GRPOTrainer using prb-rm's score as the reward, "
        "answer held-out questions, grade every answer once with personalized_rb_bon_grade (--grader), and "
        "write runs/<rm>/ for prb validity. Re-run the same command to resume.")
    rl.add_argument("--policy", required=True, help="the starting policy: hub name or folder of a causal LM "
                    "with a chat template")
    rl.add_argument("--rm", action="append", required=True, metavar="MODEL_ARGS",
                    help="a contestant reward model, as prb-rm's --model_args (e.g. pretrained=org/rm or "
                    "scorer=bm25); repeatable")
    rl.add_argument("--grader", required=True, metavar="MODEL_ARGS",
                    help="the gold grader, as prb-judge's --model_args (e.g. model=openai/NAME,api_base=URL)")
    rl.add_argument("--out", required=True, type=Path, help="folder for checkpoints, answers, grades and runs")
    rl.add_argument("--preset", default="smoke", help=f"settings: {', '.join(PRESETS)} (default smoke); "
                    "paper = the authors' PPO settings as TRL expresses them (docs/rl-downstream.md)")
    rl.add_argument("--data-dir", help="local copy of Personalized RewardBench; 'sample' = the bundled sample "
                    "(default $PRB_DATA_DIR, else the hub)")
    rl.add_argument("--templates", help="templates folder (preset paper needs the authors' prompts: run "
                    "`prb templates official DIR` once)")
    rl.add_argument("--reward-url", help="score with a served RM at this base URL (vLLM --runner pooling) "
                    "instead of loading it here; added to each --rm as endpoint=URL (--engine verl: the authors' "
                    "reward server shape, see below)")
    rl.add_argument("--seed", type=int, default=0, help="seed of training and sampling (default 0)")
    rl.add_argument("--max-steps", type=int, help="optimizer steps (default: the preset's)")
    rl.add_argument("--train-limit", type=int, help="train on at most this many questions (default all)")
    rl.add_argument("--test-limit", type=int, help="answer at most this many held-out questions (default all)")
    rl.add_argument("--lamp-qa", metavar="DIR", help="train on LaMP-QA's train split from this local copy "
                    "(hub layout of alireza7/LaMP-QA), as the authors' PPO; the held-out answers are then every "
                    "Personalized RewardBench row (LaMP-QA's test questions). Default: train on the rows not "
                    "held out")
    rl.add_argument("--engine", choices=("trl", "verl"), default="trl",
                    help="trl (default): TRL's GRPO in this process, CPU or one GPU; verl: PPO on verl as the "
                    "authors' PPO/verl.sh, one GPU to a Ray cluster (below)")
    verl = rl.add_argument_group(
        "--engine verl", "PPO on verl (the verl extra; GPUs): prb writes verl's inputs under "
        "policies/<rm>/verl/ (train.parquet with their prepare_data.py's rows, reward_function.py: prb-rm's "
        "score / 10, 0.5 when scoring fails, overrides.txt: their verl.sh's Hydra overrides), runs python -m "
        "verl.trainer.main_ppo, merges the FSDP shards with python -m verl.model_merger into "
        "policies/<rm>/final, then answers, grades and writes runs as with trl. With --reward-url, the "
        "reward is their served shape instead: POST {response_text, query, profile} to the URL (their "
        "reward_server.py's /score), score / 10. Refused in one line before anything is written: verl not "
        "installed, no CUDA GPU here (without --ray-address), a Ray cluster that does not answer.")
    verl.add_argument("--ray-address", metavar="HOST:PORT",
                      help="a running Ray cluster (`ray start --head` on the head node, `ray start --address "
                      "HOST:6379` on the others); default $RAY_ADDRESS, else verl starts one on this machine")
    verl.add_argument("--nodes", type=int, default=1, help="machines in the Ray cluster (trainer.nnodes; default 1)")
    verl.add_argument("--gpus-per-node", type=int, metavar="N",
                      help="GPUs per machine (trainer.n_gpus_per_node; default: this machine's count)")


def _slug(rm_args: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", rm_args.split("=", 1)[-1].rsplit("/", 1)[-1])[:40].strip("_")
    return f"{readable or 'rm'}-{hashlib.sha256(rm_args.encode('utf-8')).hexdigest()[:6]}"


def _check_path(value: str, what: str) -> None:
    looks_local = value.startswith((".", "/", "~")) or value.count("/") > 1 or "\\" in value
    if looks_local and not Path(value).expanduser().exists():
        raise PRBError(f"prb rl: {what} '{value}' does not exist; give a folder or a hub name")


def run(args: argparse.Namespace, evaluate: Callable[[list[str]], int]) -> int:
    """Run ``prb rl``; 0 on success, 2 on bad input (one line), 130 on Ctrl-C.

    Args:
        args: the parsed command line.
        evaluate: runs one ``prb eval`` (the grading step), given by the command line.
    """
    from prb_tasks.data.local import data_dir_option

    try:
        # The data steps (prompts here, the grading run's prb eval) then name --data-dir,
        # the option this command takes, where they would name --metadata's data_dir.
        with data_dir_option("--data-dir", "--data-dir DIR"):
            return _run(args, evaluate)
    except PRBError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("prb rl: interrupted (Ctrl-C); run the same command to resume from the last checkpoint",
              file=sys.stderr)
        return 130


def _run(args: argparse.Namespace, evaluate: Callable[[list[str]], int]) -> int:
    from prb_tasks.rl.engines import ENGINES
    from prb_tasks.rl.presets import get_preset

    preset = get_preset(args.preset, max_steps=args.max_steps)
    engine = ENGINES[getattr(args, "engine", "trl")]
    missing = [name for name in engine.needs if importlib.util.find_spec(name) is None]
    if missing:
        raise PRBError(f"prb rl needs {', '.join(missing)}; install the extra: {pip_install(engine.extra)}")
    engine.preflight(args, preset)
    if preset.bon_preset == "official" and not args.templates:
        raise PRBError(f"prb rl: preset {preset.name} uses the authors' prompts, which prb does not ship: run "
                       "`prb templates official DIR` once and add --templates DIR")
    _check_path(args.policy, "--policy")
    for rm in args.rm:
        for part in rm.split(","):
            if part.startswith("pretrained="):
                _check_path(part.split("=", 1)[1], "--rm pretrained")
    if len(set(args.rm)) != len(args.rm):
        raise PRBError("prb rl: the same --rm is given twice; give each reward model once")

    from prb_tasks.rl import settings
    from prb_tasks.rl.downstream import write_run
    from prb_tasks.rl.generate import generate_answers
    from prb_tasks.rl.grade import grade_of, run_grader, write_candidates
    from prb_tasks.rl.prompts import build_prompts, split

    out: Path = args.out.expanduser()
    settings.check_out(out)
    extra = {} if preset.max_post_chars is None else {"max_post_chars": preset.max_post_chars}
    if getattr(args, "lamp_qa", None):
        from prb_tasks.rl.lamp_qa import lamp_qa_prompts

        train = lamp_qa_prompts(args.lamp_qa, "train", preset.train_k, args.templates)
        test = build_prompts(preset.test_k, preset.bon_preset, args.data_dir, args.templates, extra)
    else:
        train, _ = split(build_prompts(preset.train_k, preset.bon_preset, args.data_dir, args.templates, extra),
                         preset.test_fraction)
        _, test = split(build_prompts(preset.test_k, preset.bon_preset, args.data_dir, args.templates, extra),
                        preset.test_fraction)
        if preset.name == "paper":
            print("prb rl: training on Personalized RewardBench rows not held out; the authors train on "
                  "LaMP-QA's train split (--lamp-qa DIR)", file=sys.stderr)
    train = train[: args.train_limit] if args.train_limit else train
    test = test[: args.test_limit] if args.test_limit else test
    if not train or not test:
        raise PRBError(f"prb rl: {len(train)} training and {len(test)} test questions; the data is too small "
                       "for this preset's test fraction")
    # What --out holds must have been made with these settings: checked before any work.
    base = settings.base_answers(out, args.policy, args.seed, preset, test)
    artefacts = [base]
    for rm_args in args.rm:
        trained = settings.trained_policy(out / "policies" / _slug(rm_args), args.policy, args.seed, preset, train,
                                          rm_args, args.reward_url)
        artefacts += [trained, settings.trained_answers(out / "answers" / f"{_slug(rm_args)}.jsonl", trained, base)]
    settings.check(out, artefacts)
    from prb_tasks.rl.reward import check_prompts

    for rm_args in args.rm:
        check_prompts(rm_args, train)  # a checkpoint never scores the rows it was trained on
    # Load every RM before any training, so a typo fails in seconds, not after the first model.
    rms = {rm: engine.check_rm(rm, args.reward_url) for rm in args.rm}
    print(f"prb rl: preset {preset.name}: {len(train)} training questions, {len(test)} held out, "
          f"{len(rms)} reward models", file=sys.stderr)
    answers = {"base": generate_answers(args.policy, test, preset, args.seed, out / "answers" / "base.jsonl")}
    for rm_args, rm in rms.items():
        slug = _slug(rm_args)
        print(f"prb rl: {rm_args}: policy in {out / 'policies' / slug}", file=sys.stderr)
        final = engine.train(args.policy, train, rm_args, rm, preset, out / "policies" / slug, args)
        answers[slug] = generate_answers(str(final), test, preset, args.seed, out / "answers" / f"{slug}.jsonl")
    order = ["base"] + [_slug(rm) for rm in rms]
    write_candidates(out / "candidates.jsonl", answers, order)
    grades = run_grader(out / "candidates.jsonl", out / "grade", args.grader, preset.bon_preset, args.data_dir,
                        args.templates, evaluate)
    print(f"{'reward model':40} {'graded':>7} {'base':>7} {'trained':>8} {'gain':>7}")
    for rm_args in rms:
        slug = _slug(rm_args)
        path = write_run(out / "runs" / slug, rm_args, args.policy, answers["base"], answers[slug],
                         lambda key, text: grade_of(grades, key, text), preset, args.seed, engine.record())
        import json

        res = json.loads(path.read_text(encoding="utf-8"))["results"]["personalized_rb_rl"]
        print(f"{rm_args[:40]:40} {1 - res['ungraded,none']:>7.0%} {res['bon_gold_k1,none']:>7.3f} "
              f"{res['bon_gold,none']:>8.3f} {res['bon_gain,none']:>+7.3f}")
    print(f"prb rl: runs in {out / 'runs'}; next: prb validity {out / 'runs'} <the RMs' benchmark runs> "
          "(prb-rm runs with each --rm above as their --model_args: validity pairs runs by it)", file=sys.stderr)
    return 0
