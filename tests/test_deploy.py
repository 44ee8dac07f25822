"""deploy/ (issue 30): what cannot run here (Docker, Kubernetes) is parsed, and every command, flag, path
and port it uses is checked against the CLI and the app; the haproxy configuration is checked by haproxy
itself and keeps the defaults the cluster tests run with."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster import parts
from mcpkit.cli.commands import parser
from mcpkit.transports.http_server import Operations

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
PROBES = Operations()


def serve_args(argv: list[str]) -> Any:
    """`mcpkit serve ...` parsed by the real CLI parser (an unknown flag fails the test)."""
    assert argv[:2] == ["mcpkit", "serve"], argv
    try:
        args = parser().parse_args(argv[1:])
    except SystemExit:
        pytest.fail(f"mcpkit rejects {shlex.join(argv)}")
    assert (ROOT / args.target).is_file(), args.target
    assert args.http and args.metrics and args.redis
    return args


def dockerfile() -> tuple[list[str], list[str]]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    cmd = next(line for line in lines if line.startswith("CMD "))
    return lines, json.loads(cmd.removeprefix("CMD "))


def compose() -> dict[str, Any]:
    services: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    return services


def kubernetes() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted((DEPLOY / "kubernetes").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
    ]


def haproxy_sections() -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    current = ""
    for line in (DEPLOY / "haproxy.cfg").read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith(" "):
            current = line.strip()
            sections[current] = []
        else:
            sections[current].append(line.strip())
    return sections


def test_every_mcpkit_command_in_deploy_parses_and_names_a_file_that_exists() -> None:
    commands = [dockerfile()[1], compose()["worker"]["command"]]
    commands += [
        c["args"]
        for doc in kubernetes()
        if doc["kind"] == "Deployment"
        for c in doc["spec"]["template"]["spec"]["containers"]
        if c["name"] == "mcpkit"
    ]
    assert len(commands) == 3
    for argv in commands:
        args = serve_args(argv)
        assert args.port == 8000 and args.host == "0.0.0.0"
        assert args.redis == "redis://redis:6379/0"


def test_the_dockerfile_copies_what_exists_and_installs_extras_that_exist() -> None:
    lines, _ = dockerfile()
    for line in lines:
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    install = next(line for line in lines if "pip install" in line)
    named = re.search(r"\.\[([a-z,]+)\]", install)
    assert named is not None
    assert set(named.group(1).split(",")) <= set(extras)
    assert "EXPOSE 8000" in lines


def test_kubernetes_probes_ports_and_scrape_path_are_the_apps() -> None:
    docs = {(doc["kind"], doc["metadata"]["name"]): doc for doc in kubernetes()}
    pod = docs["Deployment", "mcpkit"]["spec"]["template"]
    container = next(c for c in pod["spec"]["containers"] if c["name"] == "mcpkit")
    port = serve_args(container["args"]).port
    assert [p["containerPort"] for p in container["ports"]] == [port]
    assert container["livenessProbe"]["httpGet"] == {"path": PROBES.health_path, "port": port}
    assert container["readinessProbe"]["httpGet"] == {"path": PROBES.ready_path, "port": port}
    annotations = pod["metadata"]["annotations"]
    assert (annotations["prometheus.io/path"], int(annotations["prometheus.io/port"])) == (
        PROBES.metrics_path,
        port,
    )
    drain = float(container["args"][container["args"].index("--drain-timeout") + 1])
    assert (
        pod["spec"]["terminationGracePeriodSeconds"]
        > drain + container["lifecycle"]["preStop"]["sleep"]["seconds"]
    )
    assert docs["Service", "mcpkit"]["spec"]["ports"][0]["targetPort"] == port
    assert docs["Service", "redis"]["spec"]["ports"][0]["port"] == 6379


def test_compose_and_haproxy_agree_on_ports_paths_and_files() -> None:
    services = compose()
    sections = haproxy_sections()
    backend, frontend = sections["backend workers"], sections["frontend mcp"]
    assert f"option httpchk GET {PROBES.ready_path}" in backend
    template = next(line for line in backend if line.startswith("server-template"))
    assert template.split()[-1] == f"worker:{serve_args(services['worker']['command']).port}"
    bind = next(line for line in frontend if line.startswith("bind"))
    assert services["haproxy"]["ports"] == [f"{bind.split(':')[-1]}:{bind.split(':')[-1]}"]
    source = services["haproxy"]["volumes"][0].split(":")[0]
    assert (DEPLOY / source).resolve() == DEPLOY / "haproxy.cfg"
    drain = float(services["worker"]["command"][services["worker"]["command"].index("--drain-timeout") + 1])
    assert float(services["worker"]["stop_grace_period"].removesuffix("s")) > drain


def test_haproxy_accepts_the_config_and_it_keeps_the_cluster_tests_defaults() -> None:
    binary = shutil.which("haproxy") or pytest.skip("haproxy is not installed")
    checked = subprocess.run(
        [binary, "-c", "-f", str(DEPLOY / "haproxy.cfg")], capture_output=True, text=True, timeout=30
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = parts.haproxy_config(1, [2], "stats.sock").split("defaults\n")[1].split("\n\n")[0]
    assert haproxy_sections()["defaults"] == [line.strip() for line in tested.splitlines()]
