"""Running a policy on suites: every case's complete turn, k samples each, as data.

Built-in policies run in this process one case after another; LLM policies (``openai``)
run ``concurrency`` cases at once on asyncio (the calls are the wait, the room is cheap).
Each finished case is appended to ``OUT/cases.jsonl`` at once, so ``--resume`` goes on
where a stopped run ended (the file's first line holds the run's settings, which must
match). A case that fails (endpoint down, timeout, malformed tool call, a case that no
longer reproduces) is recorded with its reason, and the run goes on.
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from liveroom_sim.evals.cases import Case, case_sha, load_suite
from liveroom_sim.evals.failures import classify
from liveroom_sim.evals.faults import set_faults
from liveroom_sim.evals.follow import check_all
from liveroom_sim.evals.grade import grade
from liveroom_sim.evals.replay import Snapshot, StaleCase
from liveroom_sim.evals.turn import AgentTurn, Sample, run_turn
from liveroom_sim.rollout.policy_spec import PolicySpec

CASES_FILE = "cases.jsonl"


@dataclass
class EvalConfig:
    """What ``liveroom eval`` runs (see the command's options)."""

    suites: tuple[str, ...]
    policy: PolicySpec
    out: Path
    samples: int = 1
    concurrency: int = 8
    limit: int | None = None
    resume: bool = False
    judge: list = field(default_factory=list)  # judge Endpoints (1 to 3): the LLM judge votes too
    folder: Path | None = None                 # where the suite files are (default: the package's)
    judge_tier: tuple = ()                     # --judge: Endpoints voting on every component (rewards.judge)
    judge_policy: str = "stricter"

    def settings(self, headers: dict) -> dict:
        tier = {"judge_tier": {"models": [e.model for e in self.judge_tier], "policy": self.judge_policy}} \
            if self.judge_tier else {}
        return {"suites": {s: {"version": h["version"], "sha256": h["sha256"]} for s, h in headers.items()},
                "policy": self.policy.describe(), "samples": self.samples, "limit": self.limit,
                "judge": [e.model for e in self.judge], **tier}


def load_cases(config: EvalConfig) -> tuple[dict, list[Case]]:
    """The suites' headers and the cases to run (``limit`` per suite)."""
    headers, cases = {}, []
    for suite in config.suites:
        headers[suite], found = load_suite(suite, config.folder)
        cases += found[: config.limit] if config.limit else found
    return headers, cases


def sample_seed(case: Case, i: int) -> int:
    return (zlib.crc32(case.id.encode()) + 7919 * i) % 2**31


def _judge(config: EvalConfig):
    if config.judge_tier:
        from liveroom_sim.rewards.judge.service import JudgeService

        return JudgeService(config.judge_tier, config.judge_policy, max_in_flight=max(8, 3 * config.concurrency))
    if not config.judge:
        return None
    from liveroom_sim.rewards.judge import LLMJudge

    return LLMJudge(config.judge)


def _after_turn(case: Case, sample: Sample, turn: AgentTurn, judge) -> Sample:
    if case.checks:
        follow = check_all(case, turn.ctx if sample.reply else None)
        sample.verdict["checks"] = follow
        # An instruction-following case passes when the reply is accurate and meets every
        # instruction in force (answering in full is lsqa's measure).
        sample.verdict["pass"] = bool(sample.verdict["accuracy"]) and all(follow.values())
        sample.verdict["loose"] = sample.verdict["pass"] or any(
            grade(case, ctx)["accuracy"] and all(check_all(case, ctx).values()) for ctx in turn.loose_contexts)
    if hasattr(judge, "vote") and turn.ctx is not None and sample.reply and turn.breakdown is not None:
        from liveroom_sim.rewards.judge.apply import judge_turn  # the judge tier: every component

        sample.judge = asyncio.run(judge_turn(judge, turn.room.reward_model, turn.ctx, turn.breakdown.scores))
    elif judge is not None and turn.ctx is not None and sample.reply and turn.breakdown is not None:
        score = judge(turn.ctx, turn.breakdown.scores["engagement"])
        sample.judge = {"engagement": round(score.value, 4), "rule_engagement": turn.breakdown.scores["engagement"].value,
                        "reason": score.reasons[-1] if score.reasons else ""}
    return sample


def _record(case: Case, samples: list[Sample], error: tuple[str, str] | None = None) -> dict:
    rec = {"id": case.id, "suite": case.suite, "env": case.env, "kind": case.kind, "language": case.language,
           "operator": ("all" if len(case.operators) > 1 else case.operators[0]) if case.operators else "none",
           "twin": case.twin, "condition": _condition(case),
           "inputs": {"question": case.question.model_dump(), "must": list(case.must), "must_not": list(case.must_not),
                      "operators": list(case.operators), "checks": [c.model_dump() for c in case.checks],
                      "digest": case.digest, "sha": case_sha(case)},
           "samples": [s.as_dict() for s in samples]}
    if error is not None:
        rec["error_kind"], rec["error"] = error
    return rec


def _condition(case: Case) -> str | None:
    """A robust case's condition: ``fault:KIND`` or ``perturbed:NAME``."""
    if case.fault is not None:
        return f"fault:{case.fault.kind}"
    return f"perturbed:{case.perturbation}" if case.perturbation else None


def evaluate_case(case: Case, policy: PolicySpec, samples: int = 1, judge=None) -> dict:
    """One case, ``samples`` times, with a built-in policy (synchronously)."""
    try:
        snap = Snapshot.of(case)
    except StaleCase as exc:
        return _record(case, [], ("stale_case", str(exc)))
    out = []
    for i, (env, obs, info) in enumerate(snap.fork(samples)):
        try:
            agent = policy.build(sample_seed(case, i))
        except Exception as exc:  # noqa: BLE001
            return _record(case, out, classify(exc))
        sample, turn = run_turn(case, env, obs, info, agent)
        out.append(_after_turn(case, sample, turn, judge))
    return _record(case, out)


async def aevaluate_case(case: Case, policy: PolicySpec, samples: int = 1, judge=None) -> dict:
    """:func:`evaluate_case` for LLM policies: the samples' calls are awaited."""
    try:
        snap = Snapshot.of(case)
    except StaleCase as exc:
        return _record(case, [], ("stale_case", str(exc)))

    async def one(i, env, obs, info):
        agent = policy.build(sample_seed(case, i))
        set_faults(case, env)
        turn = AgentTurn(case, env, obs, info)
        for _ in range(2 * turn.limit + 4):
            if turn.done:
                break
            start = time.perf_counter()
            try:
                acall = getattr(agent, "acall", None)
                action = await acall(turn.obs, turn.info) if acall else agent(turn.obs, turn.info)
            except Exception as exc:  # noqa: BLE001 - the case fails, the run goes on
                turn.sample.latency_s += time.perf_counter() - start
                turn.fail(*classify(exc))
                break
            turn.feed(action, time.perf_counter() - start)
        accounting = getattr(agent, "accounting", None)
        sample = turn.finish(accounting.as_dict() if accounting is not None else None)
        if hasattr(judge, "vote"):  # the judge tier is asynchronous: its vote is awaited here
            sample = _after_turn(case, sample, turn, None)
            if turn.ctx is not None and sample.reply and turn.breakdown is not None:
                from liveroom_sim.rewards.judge.apply import judge_turn

                sample.judge = await judge_turn(judge, turn.room.reward_model, turn.ctx, turn.breakdown.scores)
            return sample
        if judge is not None:  # the judge's calls are blocking: keep them off the event loop
            return await asyncio.to_thread(_after_turn, case, sample, turn, judge)
        return _after_turn(case, sample, turn, None)

    forks = snap.fork(samples)
    out = await asyncio.gather(*(one(i, *f) for i, f in enumerate(forks)))
    return _record(case, list(out))


def _read_done(path: Path, settings: dict) -> dict[str, dict]:
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        return {}
    head = json.loads(lines[0])
    if head.get("settings") != settings:
        raise ValueError(f"{path} was written by a run with other settings ({json.dumps(head.get('settings'))[:200]}); "
                         "use another --out or drop --resume")
    done = {}
    for line in lines[1:]:
        try:
            rec = json.loads(line)
        except ValueError:
            break  # a torn last line from a stopped run: that case runs again
        done[rec["id"]] = rec
    return done


def run_eval(config: EvalConfig, progress=None) -> tuple[dict, list[dict]]:
    """Run the configured suites; returns the suites' headers and every case's record."""
    headers, cases = load_cases(config)
    settings = config.settings(headers)
    config.out.mkdir(parents=True, exist_ok=True)
    path = config.out / CASES_FILE
    done = _read_done(path, settings) if config.resume else {}
    if not config.resume or not path.exists():
        path.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")
    if done:  # rewrite without a torn tail, then append
        path.write_text("\n".join([json.dumps({"settings": settings}), *(json.dumps(r, ensure_ascii=False)
                                                                          for r in done.values())]) + "\n")
    todo = [c for c in cases if c.id not in done]
    judge = _judge(config)
    tick = progress or (lambda n, total: None)
    with open(path, "a", encoding="utf-8") as f:
        def keep(rec):
            done[rec["id"]] = rec
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            f.flush()
            tick(len(done), len(cases))

        if config.policy.kind == "openai":
            asyncio.run(_run_async(todo, config, judge, keep))
        else:
            for case in todo:
                keep(evaluate_case(case, config.policy, config.samples, judge))
    return headers, [done[c.id] for c in cases if c.id in done]


async def _run_async(todo: list[Case], config: EvalConfig, judge, keep) -> None:
    gate = asyncio.Semaphore(config.concurrency)

    async def run(case):
        async with gate:
            try:
                rec = await aevaluate_case(case, config.policy, config.samples, judge)
            except Exception as exc:  # noqa: BLE001 - a bug in one case must not stop the run
                rec = _record(case, [], classify(exc))
            keep(rec)

    await asyncio.gather(*(run(c) for c in todo))
