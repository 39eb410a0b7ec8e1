"""The docs site builds from the repository with warnings as errors (issue 21.7)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"  # the data shelf (data/README.md; experiments/shelf.py)


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="needs the docs extra (pip install 'yahtzee-rl[docs]')",
)
def test_docs_build_strict(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "yahtzee_env.RuleSet" in api and "upper_bonus_threshold" in api  # from docstrings
    benchmark = (tmp_path / "site" / "benchmark" / "index.html").read_text()
    assert "yahtzee-benchmark-v1" in benchmark and "reported, not re-run" in benchmark
    assert "--8&lt;--" not in benchmark and "8<--" not in benchmark  # every snippet resolved


def _code_blocks(text: str) -> list[str]:
    return [block.split("\n", 1)[1] for block in text.split("```")[1::2]]


def _slug(heading: str) -> str:
    """The anchor GitHub and MkDocs' toc give a heading: lower case, punctuation dropped,
    spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_readme_is_a_short_front_page_led_by_the_two_commands() -> None:
    """The README starts with the two commands (CI runs the test one, `.ci/run`), stays short,
    and includes nothing: each docs page owns its text (issue 21.7)."""
    readme = (ROOT / "README.md").read_text()
    first = _code_blocks(readme)[0]
    commands = [line.split("#")[0].strip() for line in first.splitlines() if line.strip()]
    assert commands == ["make run", "make test"]
    assert readme.index("```") < readme.index("\n## ")  # before any section
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert "make test" in ci  # the README's test command, run as written
    assert len(readme.splitlines()) <= 140  # one screen of numbers (issue 47)
    assert "--8<--" not in readme
    for page in (ROOT / "docs").glob("*.md"):
        assert "--8<--" not in page.read_text(), page  # no page is built from the README


def test_readme_links_reach_existing_files_and_headings() -> None:
    """Every relative link of the README names a file of the repository (and a heading of
    it, for an anchor), and the README's contents link every page of the site."""
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert len(links) > 20
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert path and target.exists(), link
        if anchor:
            headings = [
                line.lstrip("#") for line in target.read_text().splitlines() if line.startswith("#")
            ]
            assert anchor in {_slug(h) for h in headings}, link
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages = [page for entry in nav for page in entry.values()]
    for page in pages:
        if page != "index.md":
            assert f"(docs/{page})" in readme, page


def test_readme_figures_are_the_docs_figures() -> None:
    """One writer per figure: every decimal the README quotes is written in a docs page, and
    each leaderboard row it shows agrees, cell by cell, with the row of the full leaderboard
    in docs/benchmark.md."""
    readme = (ROOT / "README.md").read_text()
    docs = "\n".join(page.read_text() for page in (ROOT / "docs").glob("*.md"))
    figures = set(re.findall(r"\d+\.\d+", readme)) - {"2601.00007"}
    assert len(figures) > 30
    missing = sorted(f for f in figures if f not in docs)
    assert not missing, missing

    # Both leaderboards are written from results/ (tests/test_citable.py holds them equal
    # to what `yahtzee results --update` writes); here: cell by cell, the README's row of an
    # agent is the docs' row (the docs add the five facts and more columns).
    def table(text: str, name: str) -> dict[str, list[str]]:
        block = text.split(f"<!-- results:{name} ", 1)[1].split(f"<!-- /results:{name} -->")[0]
        found = {}
        for line in block.splitlines()[1:]:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if line.startswith("| ") and cells[0] != "agent":
                found[cells[0]] = cells
        return found

    full = table((ROOT / "docs" / "benchmark.md").read_text(), "leaderboard-docs")
    short = table(readme, "leaderboard-readme")
    for agent, cells in short.items():
        assert agent in full, agent
        docs_cells = full[agent]
        assert cells == [docs_cells[0], docs_cells[1], docs_cells[7], docs_cells[9]], agent
    # the levels (the duelist alone is hard's row), the four baselines, the strict track's best
    names = [agent.split(" (")[0] for agent in short]
    assert {"easy", "medium", "hard", "expert", "master"} <= set(names), names
    assert {"optimal", "heuristic", "greedy", "random"} <= set(names), names
    assert "duelist" not in names and "`duelist` alone" in next(
        a for a in short if a.startswith("hard")
    )
    assert [c[1] for c in short.values()].count("reward-only") == 1
    assert len(set(full)) == len(full)  # one row per network in the full table too


def test_the_readme_time_is_the_job_make_run_runs() -> None:
    """The README's `make run` figure describes the job the Makefile runs: the games and the
    pairings it names are those of the Makefile's commands (not a timing), and the job is the
    levels that play for the score (the duelist, which plays hard's network alone, has its
    own `make duel`)."""
    from yahtzee_env.policies.models import LEVELS, level_manifest

    make = (ROOT / "Makefile").read_text()
    recipe = make.split("\nrun: ", 1)[1].split("\n\n", 1)[0].replace("\\\n", " ")
    levels = re.search(r"^RUN_LEVELS = (\S+)$", make, re.M).group(1).split(",")
    assert set(levels) == {lv for lv in LEVELS if level_manifest(lv).objective != "win"}
    evaluate = re.search(r"yahtzee evaluate --policy (\S+) .*?--games (\d+)", recipe).groups()
    policies = evaluate[0].replace("$(RUN_LEVELS)", ",".join(levels)).split(",")
    baselines = len(policies) - len(levels)
    ladder = re.search(r"yahtzee tournament --policies (\S+) --players 2 --games (\d+)", recipe)
    assert ladder.group(1) == "$(RUN_LEVELS)"
    pairings = len(levels) * (len(levels) - 1) // 2
    readme = (ROOT / "README.md").read_text()
    said = (
        f"`make run` (the solver, {int(evaluate[1]):,} games of each of {len(levels)}\nlevels "
        f"and {baselines} baselines, a 2-player ladder of {pairings} pairings × "
        f"{int(ladder.group(2)):,} games) takes"
    )
    assert said in readme
    assert re.search(r"make serve.{0,40}127\.0\.0\.1", make + readme, re.S)


def test_the_seed_and_kernel_table_is_read_off_the_committed_runs() -> None:
    """docs/training.md's seed-and-kernel table agrees, cell by cell, with the run metadata
    committed in data/runs/<run>/ (config, command, meta.json with the environment, sessions,
    evaluations, final/eval.json; no weights, no logs), and each run's environment shows the
    kernel setting its row names (issue 21.4)."""
    runs = DATA / "runs"
    folders = sorted(p.name for p in runs.iterdir() if p.is_dir())
    assert len(folders) >= 4
    for path in runs.rglob("*"):
        if path.is_file():
            assert path.suffix in {".json", ".jsonl", ".yaml", ".txt"}, path
            assert path.stat().st_size < 64_000, path
    page = (ROOT / "docs" / "training.md").read_text()
    rows = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| `") and cells[0].strip("`") in folders:
            rows[cells[0].strip("`")] = cells
    assert sorted(rows) == folders
    digests = {}
    for name, (_, seed, variables, capability, score, regret, digest) in rows.items():
        folder = runs / name
        config = yaml.safe_load((folder / "config.yaml").read_text())
        meta = json.loads((folder / "meta.json").read_text())
        final = json.loads((folder / "final" / "eval.json").read_text())
        kernels = meta["environment"]["kernels"]
        assert int(seed) == config["train"]["seed"], name
        set_here = {
            f"{k}={v}" for k, v in kernels["variables"].items() if not k.endswith("_NUM_THREADS")
        }
        assert set(re.findall(r"`(\w+=\w+)`", variables)) == set_here, name
        assert capability == kernels["torch"]["cpu_capability"], name
        assert score == f"{final['mean']:.2f} ± {final['ci95']:.2f}", name
        assert regret == f"{final['regret_per_game']:.2f}", name
        assert digest == f"`{final['weights_sha256'][:12]}`", name
        last_eval = json.loads((folder / "evals.jsonl").read_text().splitlines()[-1])
        assert final["timesteps"] == last_eval["timesteps"] and final["mean"] == last_eval["mean"]
        digests[name] = final["weights_sha256"]
    # what the page says is bit for bit, is: a rerun, and the MKL / oneDNN variables here
    assert digests["ppo1m-s0-rerun"] == digests["ppo1m-s0"] == digests["ppo1m-s0-mkl-sse42"]
    assert digests["ppo1m-s0-aten-default"] != digests["ppo1m-s0"]


def test_reward_only_names_the_strict_track_only() -> None:
    """ "reward-only" is the strict track (raw observation, game score, all 32 holds, no model,
    no teacher) and published agents described that way: every line of the docs, the README,
    the configs (shipped, and in data/ but for the runs' own records), the cards and the level
    manifests that says it names the strict track, a published agent, or says an agent is not
    one; no manifest's `method` and no config key says it; a JSON row that says it as its track
    knew nothing more (its facts give that track)."""
    from yahtzee_env.analysis.results import check_row
    from yahtzee_env.policies.knowledge import track

    allowed = ("strict", "published", "not reward-only")
    texts = [
        ROOT / "README.md",
        *(ROOT / "configs").rglob("*.yaml"),
        *(ROOT / "cards").rglob("*.md"),
    ]
    # A run's own config.yaml (beside its meta.json) is a record: its bytes are what the run
    # wrote and its digest holds (tests/test_provenance.py), older keys and wording included.
    records = {
        p.parent / "config.yaml" for name in ("meta.json", "command.txt") for p in DATA.rglob(name)
    }
    texts += [*(ROOT / "docs").rglob("*.md"), *DATA.rglob("*.md")]
    texts += [p for p in DATA.rglob("*.yaml") if p not in records]
    levels = ROOT / "yahtzee_env" / "policies" / "levels"
    bad = []
    for path in texts + sorted(levels.glob("*.json")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            low = line.lower()
            if ("reward-only" in low or "reward only" in low) and not any(
                a in low for a in allowed
            ):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
            if re.match(r"\s*reward_only\s*:", low):
                bad.append(f"{path.relative_to(ROOT)}:{n}: the old config key: {line.strip()[:60]}")
    assert not bad, "\n".join(bad)
    for manifest in levels.glob("*.json"):
        assert json.loads(manifest.read_text()).get("method") != "reward-only", manifest
    for path in [*DATA.rglob("*.json"), *(ROOT / "results").glob("*.json")]:
        data = json.loads(path.read_text())
        if isinstance(data, dict) and data.get("track") == "reward-only":
            assert track(data["knew"]) == "reward-only", path
            if data.get("row_format"):
                check_row(data)


def test_docs_holds_the_pages_and_data_holds_the_data() -> None:
    """Issue 59.8: `docs/` is the pages and the images they show (`docs/img/`), nothing else;
    the data they quote is on its own shelf, `data/`, whose README names every folder of it
    (a row of its table each: what it holds, the command that wrote it, the page that reads
    it) and no folder that is not there; the experiments name the shelf in one place."""
    import importlib.util

    docs = ROOT / "docs"
    strays = sorted(
        str(p.relative_to(ROOT))
        for p in docs.rglob("*")
        if p.is_file()
        and not (p.parent == docs and p.suffix == ".md")
        and not (p.is_relative_to(docs / "img") and p.suffix == ".png")
    )
    assert not strays, f"data in docs/ (its place is data/: data/README.md): {strays}"
    shown = {
        (page.parent / link).resolve()
        for page in docs.glob("*.md")
        for link in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text())
    }
    assert shown and all(p.is_file() and p.is_relative_to(docs / "img") for p in shown), shown
    readme = (DATA / "README.md").read_text()
    named = {
        line.split("|")[1].strip().strip("`").rstrip("/")
        for line in readme.splitlines()
        if line.startswith("| `")
    }
    folders = {p.name for p in DATA.iterdir() if p.is_dir()}
    assert named == folders, (sorted(folders - named), sorted(named - folders))
    spec = importlib.util.spec_from_file_location("shelf", ROOT / "experiments" / "shelf.py")
    shelf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shelf)
    assert shelf.DATA == DATA and DATA.name == shelf.DATA_DIR
