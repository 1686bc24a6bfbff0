"""``liveroom report``: what the HTML file holds, checked against the records it came from."""

from __future__ import annotations

import html
import json
import re

import pytest

from liveroom_sim.cli.main import main
from liveroom_sim.report import ReportError, build_report, write_report
from liveroom_sim.spec import COMPONENTS
from liveroom_sim.train.grpo import train

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def records(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def sections(html: str) -> dict[str, str]:
    parts = html.split('<section class="page" id="')[1:]
    return {p[: p.index('"')]: p for p in parts}


@pytest.fixture(scope="module")
def report_html(rollout_file) -> str:
    return build_report(rollout_file)


def test_the_report_is_self_contained(report_html):
    assert report_html.startswith("<!DOCTYPE html>")
    assert not re.search(r'(?:src|href)\s*=\s*["\']?(?:https?:)?//', report_html)
    assert "<link" not in report_html and "@import" not in report_html and "url(http" not in report_html
    assert "<script src" not in report_html


def test_each_episode_replays_every_turn_with_its_reward(report_html, rollout_file):
    pages = sections(report_html)
    for r in records(rollout_file):
        page = pages[f"ep-{r['group_id']}-{r['sample_index']}"]
        assert page.count('class="turn"') == r["steps"] == len(r["turn_rewards"])
        shown = [float(x) for x in re.findall(r'<tr class="tot"><td class="l">total</td><td>([-+]\d+\.\d+)</td>', page)]
        assert shown == [round(t["total"], 2) for t in r["turn_rewards"]]
        events = sum(len(t["detail"].get("events", ())) for t in r["turn_rewards"])
        assert page.count('<span class="badge event">EVENT</span>') == events > 0


def test_tool_faults_and_hook_blocks_are_marked(report_html, rollout_file):
    pages = sections(report_html)
    for r in records(rollout_file):
        page = pages[f"ep-{r['group_id']}-{r['sample_index']}"]
        turns = r["turn_rewards"]
        faults = sum(len(t["detail"].get("tool_errors", ())) for t in turns)
        blocks = sum(t["kind"] == "reply" and not t["detail"]["delivered"] for t in turns)
        assert page.count('<span class="badge fault">FAULT</span>') == faults
        assert page.count('<span class="badge blocked">BLOCKED</span>') == blocks
    clumsy = pages["ep-2-0"]
    assert "no_such_tool" in clumsy and "badge fault" in clumsy and "badge blocked" in clumsy


def test_reasons_stand_beside_each_reply(report_html, rollout_file):
    r = records(rollout_file)[0]
    page = sections(report_html)["ep-0-0"]
    reasons = {reason for t in r["turn_rewards"] for rs in t["detail"]["reasons"].values() for reason in rs}
    missing = [reason for reason in reasons if html.escape(reason, quote=True) not in page]
    assert reasons and not missing, missing


def test_plots_have_titles_and_labelled_axes(report_html):
    page = sections(report_html)["ep-0-1"]
    for text in ("The room over stream time", "stream time (minutes)", "viewers", "questions",
                 "GMV (currency units)", "Cumulative reward by component", "Campaign events", "campaign event"):
        assert text in page, text
    assert page.count("<svg") == 3


def test_groups_are_side_by_side_with_their_advantages(report_html, rollout_file):
    page = sections(report_html)["groups"]
    assert "Group-relative advantage of each sample" in page
    for r in records(rollout_file)[:4]:
        assert f"<b>{r['advantage']:+.3f}</b>" in page


def test_max_episodes_limits_the_replays(rollout_file, tmp_path):
    out = write_report(rollout_file, tmp_path / "r.html", max_episodes=2)
    pages = sections(out.read_text())
    assert [k for k in pages if k.startswith("ep-")] == ["ep-0-0", "ep-0-1"]
    assert "--max-episodes N" in pages["overview"]


def test_a_training_run_shows_learning_curves_per_component_with_baselines(tmp_path, capsys):
    run = tmp_path / "run"
    train(TINY, run, iterations=2, group_size=2, groups=1, progress=False)
    assert main(["report", str(run)]) == 0
    html = (run / "report.html").read_text()
    assert capsys.readouterr().out.strip() == str(run / "report.html")
    for text in ("Learning curve: mean episode return per iteration", "naive (baseline)", "scripted (baseline)",
                 "Learning curves per reward component", *(f"{k} (learner)" for k in COMPONENTS), "iteration",
                 "held-out: checkpoint", "held-out: naive", "held-out: scripted"):
        assert text in html, text


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing" / "r.jsonl", "does not exist (the folder"),
    (lambda p: p, "folder without metrics.csv"),
    (lambda p: (p / "x.jsonl").write_text('{"hello": 1}\n') and p / "x.jsonl", "x.jsonl:1: not a rollout record"),
    (lambda p: (p / "e.jsonl").write_text("") == 0 and p / "e.jsonl", "holds no rollout records"),
])
def test_a_source_it_cannot_read_is_one_line(tmp_path, capsys, make, message):
    source = make(tmp_path)
    with pytest.raises(ReportError, match=re.escape(message)):
        build_report(source)
    assert main(["report", str(source)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err


def test_an_eval_folder_is_a_report_with_per_suite_tables_and_failed_cases(tmp_path, capsys):
    out = tmp_path / "eval"
    assert main(["eval", "--suite", "lsqa,robust", "--limit", "6", "--policy", "naive", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    prov = results["summary"]["provenance"]
    assert prov["suites"]["lsqa"] and all(len(p["spec_digest"]) == 16 for p in prov["specs"].values())
    assert main(["report", str(out)]) == 0
    html = (out / "report.html").read_text()
    pages = sections(html)
    assert {"overview", "suite-lsqa", "suite-robust", "failures"} <= set(pages)
    assert "pass@1" in pages["suite-lsqa"] and "<table>" in pages["suite-robust"]
    failed = [c for c in results["cases"] if not all(s["verdict"].get("pass") for s in c["samples"])]
    assert failed  # the naive host fails some cases
    shown = failed[:8]
    for case in shown:  # each failure with its transcript: the question, then what the policy did
        assert f'id="case-{case["id"]}"' in pages["failures"]
        assert case["inputs"]["question"]["text"].split()[0] in pages["failures"]
    assert prov["specs"] and next(iter(prov["specs"].values()))["spec_digest"] in pages["overview"]


# ---------------------------------------------------------------- issue 30: plots and notes that tell the truth
def _chart():
    from liveroom_sim.report import plots
    from liveroom_sim.report.episode import COMPONENTS

    xs = list(range(12))
    series = {k: (xs, [0.0] * 12) for k in COMPONENTS}  # components that tie overlap exactly
    series["engagement"] = (xs, [0.0] * 12)
    series["total"] = (xs, [float(i) for i in xs])
    return plots.line_figure(series, title="Cumulative reward by component (weighted contribution): g0 s1 seed 3, "
                                           "a label long enough to pass the plot's width", xlabel="x", ylabel="y")


def test_the_legend_never_covers_the_lines_and_tied_lines_stay_visible():
    fig = _chart()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    assert not ax.get_legend().get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    lines = {line.get_label(): line for line in ax.get_lines()}
    styles = {(line.get_linestyle(), line.get_marker()) for line in lines.values()}
    assert len(styles) == len(lines)  # two tied components are still two visible lines
    assert lines["total"].get_zorder() == max(line.get_zorder() for line in lines.values())


def test_a_long_title_is_not_clipped():
    from liveroom_sim.report import plots

    fig = _chart()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    title = fig.axes[0].title.get_window_extent(renderer)
    figure = fig.bbox
    assert title.x0 >= figure.x0 - 1 and title.x1 <= figure.x1 + 1
    assert "Cumulative reward" in plots.to_svg(fig)


def test_every_campaign_event_has_a_note_in_the_report(rollout_file):
    from liveroom_sim.report.episode import render_episode

    r = records(rollout_file)[0]
    for t in r["turn_rewards"]:  # events as a campaign file without notes gives them
        for e in t["detail"].get("events", ()):
            e.pop("note", None)
    page = render_episode(r, None)
    table = page.split('<table class="events">')[1].split("</table>")[0]
    notes = re.findall(r'<td class="l">[^<]*</td><td class="l">([^<]*)</td></tr>', table)
    assert notes and all(n.strip() for n in notes), table
    assert "price" in table and "code=" not in table  # said in words, not as fields


def test_the_overview_names_the_provenance_and_warns_of_mixed_worlds(rollout_file, tmp_path):
    rows = records(rollout_file)
    digest = rows[0]["provenance"]["spec_digest"]
    assert digest in sections(build_report(rollout_file))["overview"]
    rows[1]["provenance"] = {**rows[1]["provenance"], "spec_digest": "0123456789abcdef"}
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert "different versions of the same spec" in sections(build_report(mixed))["overview"]
