"""The package as users get it (issue 28): the wheel and the sdist built from this checkout,
the wheel installed (not editable) into a fresh environment, and used from a folder outside
the clone. An editable install reads everything from the source tree and hides missing
package data; this test does not.

The fresh environment gets the project from the wheel only; the third-party libraries it
needs (numpy, gymnasium, starlette, torch, ...) are this test environment's, reached through
a path entry that adds no project code (installing torch again would take minutes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "yahtzee_env" / "web" / "static"
pytestmark = pytest.mark.skipif(
    not (ROOT / "pyproject.toml").exists(), reason="needs the source checkout"
)


def _files(folder: Path) -> set[str]:
    """Every file under ``folder``, relative, as the wheel names them (no caches)."""
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", OPENBLAS_NUM_THREADS="1")
    return env


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel, built as `python -m build` builds them (the wheel from the
    sdist), with the build's output kept to check that it warns of nothing."""
    pytest.importorskip("build", reason="needs the dev extra (build)")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
        capture_output=True, text=True, env=_clean_env(), timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("yahtzee_rl-*.whl")
    (sdist,) = out.glob("yahtzee_rl-*.tar.gz")
    return {"wheel": wheel, "sdist": sdist, "log": done.stdout + done.stderr}


@pytest.fixture(scope="module")
def installed(dists, tmp_path_factory) -> dict[str, Path]:
    """A fresh venv holding the wheel (no editable finder, no source tree), and a working
    folder outside the clone."""
    base = tmp_path_factory.mktemp("installed")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps",
         "--no-index", str(dists["wheel"])],
        check=True, env=_clean_env(), timeout=300,
    )  # fmt: skip
    site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    # A plain path line: the libraries become importable, but the .pth files there (this
    # checkout's editable finder among them) are not run.
    (site / "zz_test_libraries.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = base / "work"
    work.mkdir()
    return {"python": py, "bin": venv / "bin", "site": site, "work": work}


def _run(installed, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(installed["bin"] / "yahtzee"), *args],
        capture_output=True, text=True, cwd=installed["work"], env=_clean_env(),
        timeout=timeout, check=False,
    )  # fmt: skip


def test_the_build_is_clean_and_checked(dists) -> None:
    """No warning from the build; `twine check` and `check-wheel-contents` pass."""
    warnings = [
        line for line in dists["log"].splitlines()
        if "warning" in line.lower() and "byte-compiling is disabled" not in line
    ]  # fmt: skip
    assert not warnings, "\n".join(warnings[:20])
    pytest.importorskip("twine", reason="needs the dev extra (twine)")
    pytest.importorskip("check_wheel_contents", reason="needs the dev extra")
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(dists["wheel"]),
         str(dists["sdist"])],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert twine.returncode == 0, twine.stdout + twine.stderr
    contents = subprocess.run(
        [sys.executable, "-m", "check_wheel_contents", str(dists["wheel"])],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert contents.returncode == 0, contents.stdout + contents.stderr


def test_the_wheel_holds_every_file_of_the_source_tree(dists) -> None:
    """Every file of `yahtzee_env/`, `agents/` and `configs/` is in the wheel: a new folder of
    code or data that pyproject's package list misses fails here."""
    names = set(zipfile.ZipFile(dists["wheel"]).namelist())
    expected = (
        {f"yahtzee_env/{f}" for f in _files(ROOT / "yahtzee_env")}
        | {f"yahtzee_agents/{f}" for f in _files(ROOT / "agents")}
        | {f"yahtzee_agents/configs/{f}" for f in _files(ROOT / "configs")}
    )
    missing = sorted(expected - names)
    assert not missing, f"not in the wheel: {missing[:20]}"
    tops = {n.split("/")[0] for n in names if not n.startswith("yahtzee_rl-")}
    assert tops == {"yahtzee_env", "yahtzee_agents"}


def test_imported_from_the_install_with_every_level(installed) -> None:
    code = (
        "import json, yahtzee_env, yahtzee_agents\n"
        "from yahtzee_env.policies.models import LEVELS, load_opponent\n"
        "for level in LEVELS: load_opponent(level)\n"
        "print(json.dumps([yahtzee_env.__file__, yahtzee_agents.__file__, list(LEVELS),\n"
        "                  yahtzee_env.__version__]))\n"
    )
    out = subprocess.run(
        [str(installed["python"]), "-c", code], capture_output=True, text=True,
        cwd=installed["work"], env=_clean_env(), check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    env_file, agents_file, levels, version = json.loads(out.stdout)
    assert Path(env_file).is_relative_to(installed["site"]), env_file
    assert Path(agents_file).is_relative_to(installed["site"]), agents_file
    shipped = {p.stem for p in (ROOT / "yahtzee_env" / "policies" / "levels").glob("*.json")}
    assert set(levels) == shipped
    assert _run(installed, "--version").stdout.strip() == f"yahtzee-rl {version}"


def test_the_core_needs_numpy_and_gymnasium_only_and_jax_is_an_extra(dists, installed) -> None:
    """The wheel requires numpy and gymnasium and nothing else outside its extras; JAX comes
    with the ``jax`` extra (issue 51). From the install, making `Yahtzee-v0` imports no JAX,
    and (where this environment has JAX) `yahtzee_env.jax` plays a game."""
    with zipfile.ZipFile(dists["wheel"]) as wheel:
        (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        lines = wheel.read(meta).decode().splitlines()
    requires = [line.split(":", 1)[1].strip() for line in lines
                if line.startswith("Requires-Dist:")]  # fmt: skip
    core = sorted(r.split(">")[0].split("<")[0].split("=")[0].strip()
                  for r in requires if "extra ==" not in r)  # fmt: skip
    assert core == ["gymnasium", "numpy"], core
    assert any(r.startswith("jax") and 'extra == "jax"' in r for r in requires), requires
    code = (
        "import sys, gymnasium, yahtzee_env\n"
        "env = gymnasium.make('Yahtzee-v0'); env.reset(seed=0)\n"
        "assert 'jax' not in sys.modules, 'Yahtzee-v0 imported jax'\n"
        "try:\n    import jax\nexcept ImportError:\n    print('no jax'); raise SystemExit\n"
        "from yahtzee_env.jax import Yahtzee\n"
        "state = Yahtzee().init(jax.random.key(0))\n"
        "print(yahtzee_env.jax.__file__, int(state.legal_action_mask.sum()))\n"
    )
    out = subprocess.run(
        [str(installed["python"]), "-c", code], capture_output=True, text=True,
        cwd=installed["work"], env=_clean_env(), check=False, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    if out.stdout.strip() != "no jax":
        path, legal = out.stdout.split()
        assert Path(path).is_relative_to(installed["site"]) and int(legal) > 0


def test_serve_answers_every_static_file_and_both_languages(installed) -> None:
    from yahtzee_env.web.door.local_server import free_port

    port = free_port()
    log = installed["work"] / "serve.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [str(installed["bin"] / "yahtzee"), "serve", "--host", "127.0.0.1", "--port",
             str(port), "--db", str(installed["work"] / "games.db")],
            cwd=installed["work"], env=_clean_env(), stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-2000:]
            try:
                urllib.request.urlopen(f"{url}/readyz", timeout=2).read()
                break
            except OSError:
                assert time.monotonic() < deadline, "the installed server did not start"
                time.sleep(0.2)
        files = sorted(_files(STATIC))
        assert "i18n/en.json" in files and "i18n/it.json" in files
        for name in files:
            with urllib.request.urlopen(f"{url}/static/{name}", timeout=10) as answer:
                assert answer.read() == (STATIC / name).read_bytes(), name
        with urllib.request.urlopen(f"{url}/api/config", timeout=10) as answer:
            config = json.loads(answer.read())
        text = json.dumps(config)
        assert '"en"' in text and '"it"' in text, config
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_configs_benchmark_and_export_from_the_install(installed) -> None:
    listed = _run(installed, "configs")
    assert listed.returncode == 0, listed.stderr
    names = {line.split()[0] for line in listed.stdout.splitlines()}
    assert names == {p.with_suffix("").relative_to(ROOT / "configs").as_posix()
                     for p in (ROOT / "configs").rglob("*.yaml")}  # fmt: skip
    shown = _run(installed, "configs", "tiny")
    assert shown.stdout == (ROOT / "configs" / "tiny.yaml").read_text()

    bench = _run(installed, "benchmark", "hard", "--games", "200", "--no-progress", "--json",
                 "hard.json")  # fmt: skip
    assert bench.returncode == 0, bench.stderr
    row = json.loads((installed["work"] / "hard.json").read_text())
    assert row["games"] == 200 and 200 < row["expected_score"] < 255

    pytest.importorskip("onnx", reason="needs the export extra")
    export = _run(installed, "export", "hard", "--format", "onnx", "--out", "exported")
    assert export.returncode == 0, export.stderr
    graded = _run(installed, "benchmark", "exported/hard.onnx", "--games", "200",
                  "--no-progress", "--json", "onnx.json")  # fmt: skip
    assert graded.returncode == 0, graded.stderr
    onnx_row = json.loads((installed["work"] / "onnx.json").read_text())
    assert onnx_row["mean"] == pytest.approx(row["mean"], abs=1e-6)
    assert onnx_row["track"] == row["track"] != "not stated"  # the export carries `knew`


def test_benchmark_imports_the_users_module_from_the_current_folder(installed) -> None:
    """`yahtzee benchmark mymod:act` through the console script, in a subprocess, finds
    mymod.py in the folder it runs in, as `python -m` would."""
    (installed["work"] / "mymod.py").write_text(
        "import numpy as np\n\n\n"
        "def act(obs, mask):\n"
        "    return np.argmax(mask, axis=1)  # the first legal action\n"
    )
    out = _run(installed, "benchmark", "mymod:act", "--games", "50", "--no-progress")
    assert out.returncode == 0, out.stderr
    assert "mymod:act" in out.stdout


def test_train_tiny_by_name_from_the_install(installed) -> None:
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    out = _run(installed, "train", "tiny", "--runs-dir", "runs", "--no-progress", timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    run = installed["work"] / "runs" / "tiny"
    assert (run / "config.yaml").is_file() and (run / "final" / "model.zip").is_file()


def test_train_with_the_jax_engine_from_the_install(installed) -> None:
    """Issue 59: `yahtzee train tiny-jax` (`train.engine: jax`) from the wheel, in a folder
    outside the clone, writes the run folder every run has (config, evaluations, meta,
    checkpoints, the numpy model), and `yahtzee benchmark runs/NAME` grades it. (Its exact
    resume after SIGTERM: tests/test_jax.py, the same modules.)"""
    pytest.importorskip("jax", reason="needs the jax extra")
    out = _run(installed, "train", "tiny-jax", "--runs-dir", "runs", "--no-progress", timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    run = installed["work"] / "runs" / "tiny-jax"
    for name in ("config.yaml", "evals.jsonl", "meta.json", "final/model.npz"):
        assert (run / name).is_file(), name
    assert list((run / "checkpoints").glob("ckpt_*.state.npz"))
    meta = json.loads((run / "meta.json").read_text())
    assert meta["engine"] == "jax" and meta["method"] == "ppo", meta
    graded = _run(installed, "benchmark", "runs/tiny-jax", "--games", "100", "--no-progress")
    assert graded.returncode == 0, graded.stdout[-2000:] + graded.stderr[-2000:]
    assert "expected" in graded.stdout.lower() or "mean" in graded.stdout.lower()


def test_card_of_a_level_finds_its_rows_in_the_install(dists, installed) -> None:
    """`yahtzee card hard` from a folder with no results/: the card reads the rows the wheel
    ships (the repository's results/*.json, as `yahtzee_env/results/`), not "no row yet"; the
    networks of results/weights/ stay out of the wheel."""
    names = zipfile.ZipFile(dists["wheel"]).namelist()
    rows = sorted(p.name for p in (ROOT / "results").glob("*.json"))
    assert sorted(n.split("/")[-1] for n in names if n.startswith("yahtzee_env/results/")) == rows
    assert not [n for n in names if "weights/" in n]
    out = _run(installed, "card", "hard")
    assert out.returncode == 0, out.stderr
    row = json.loads((ROOT / "results" / "hard.json").read_text())
    assert f"| {row['expected_score']:.2f} ± {row['expected_ci95']:.2f} |" in out.stdout
    assert "No benchmark row" not in out.stdout and "| optimal |" in out.stdout
