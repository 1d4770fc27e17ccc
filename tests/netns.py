"""Hosts of our own for the tests: each a network namespace (`ip netns`) with its own address on
one private switch, and a UTS namespace (`unshare --uts`) for each process started in it, so
Dask, SSH and labctl see separate machines with their own names and addresses.

The switch is a bridge in a namespace of its own, and each host's veth pair runs from the host's
namespace to the switch's: nothing is added to this machine's own network, so two test sessions
(each with its own namespace names) never meet, even with the same addresses. Each host's
/etc/hosts names every host (`ip netns exec` mounts /etc/netns/NS/hosts over /etc/hosts), so
the hosts reach each other by name. Network.close() (or `with`) kills every process started in
a host, by process group and then every process left in the namespaces, then deletes the namespaces (their links go with them) and their
/etc/netns folders: after a failure as after a pass.

Needs root, iproute2 and util-linux's unshare: `available()` says why they cannot be used.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Self

ETC_NETNS = Path("/etc/netns")
SUBNET = "10.77.0"  # host N is 10.77.0.(N+1); the switch has no address


def available() -> str | None:
    """Why namespace hosts cannot be made here, or None where they can."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (iproute2, util-linux)"
    probe = f"labprobe-{uuid.uuid4().hex[:8]}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        return f"`ip netns add` fails here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@dataclass
class Host:
    name: str  # its host name (UTS) and its name in every host's /etc/hosts
    netns: str  # its network namespace
    address: str
    link: str  # its end of the veth pair, inside its namespace


class Network:
    """A switch and the hosts on it; processes started in them (start, run)."""

    def __init__(self) -> None:
        self.tag = f"lab{uuid.uuid4().hex[:6]}"
        self.switch = f"{self.tag}-switch"
        self.hosts: dict[str, Host] = {}
        self.processes: list[subprocess.Popen] = []
        self._names: list[str] = []
        try:
            _ip("netns", "add", self.switch)
            self._names.append(self.switch)
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "up")
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def add(self, name: str) -> Host:
        """A new host on the switch, with the next address; every host's /etc/hosts names it."""
        index = len(self.hosts)
        host = Host(name, f"{self.tag}-{name}", f"{SUBNET}.{index + 1}", "eth0")
        _ip("netns", "add", host.netns)
        self._names.append(host.netns)
        port = f"p{index}"
        _ip("link", "add", "name", host.link, "netns", host.netns, "type", "veth", "peer", "name", port,
            "netns", self.switch)
        _ip("-n", self.switch, "link", "set", port, "master", "br0")
        _ip("-n", self.switch, "link", "set", port, "up")
        _ip("-n", host.netns, "addr", "add", f"{host.address}/24", "dev", host.link)
        _ip("-n", host.netns, "link", "set", host.link, "up")
        _ip("-n", host.netns, "link", "set", "lo", "up")
        self.hosts[name] = host
        lines = ["127.0.0.1 localhost", *(f"{h.address} {h.name}" for h in self.hosts.values())]
        for each in self.hosts.values():
            folder = ETC_NETNS / each.netns
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "hosts").write_text("\n".join(lines) + "\n")
        return host

    def command(self, host: str, argv: list[str], mount: str = "") -> list[str]:
        """`argv` as run in `host`: in its network namespace and a UTS namespace named as it,
        after the shell lines `mount` in a private mount namespace (`ip netns exec` makes one)."""
        name = self.hosts[host].name
        script = f'hostname {shlex.quote(name)} && {mount + " && " if mount else ""}exec "$@"'
        return ["ip", "netns", "exec", self.hosts[host].netns, "unshare", "--uts", "sh", "-c", script, "sh", *argv]

    def start(self, host: str, argv: list[str], log: Path, env: dict[str, str] | None = None,
              mount: str = "") -> subprocess.Popen:
        """A process in `host`, in a process group of its own (close() kills the group), its
        output to `log`."""
        with open(log, "ab") as out:
            process = subprocess.Popen(self.command(host, argv, mount), stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       env={**os.environ, **(env or {})})
        self.processes.append(process)
        return process

    def run(self, host: str, argv: list[str], env: dict[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess:
        """`argv` in `host`, to its end (killed with its group past `timeout`)."""
        process = subprocess.Popen(self.command(host, argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, text=True, start_new_session=True,
                                   env={**os.environ, **(env or {})})
        self.processes.append(process)
        try:
            out, err = process.communicate(timeout=timeout)
        finally:
            stop(process)
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    def link(self, host: str, up: bool) -> None:
        """Takes `host`'s link to the switch down (its cable pulled) or up again."""
        _ip("-n", self.hosts[host].netns, "link", "set", self.hosts[host].link, "up" if up else "down")

    def kill_all(self, netns: str) -> None:
        """Kills every process in the namespace `netns` (all started by this network)."""
        found = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True, check=False)
        for pid in found.stdout.split():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)

    def close(self) -> None:
        """Kills every process started in a host, deletes the namespaces and their /etc files."""
        for process in self.processes:
            stop(process)
        self.processes.clear()
        for name in self._names:  # those that left their group: an SSH session's (setsid)
            self.kill_all(name)
        for name in reversed(self._names):
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
            shutil.rmtree(ETC_NETNS / name, ignore_errors=True)
        self._names.clear()


def python_environment(python: str) -> str:
    """Shell lines (for a host's `mount`) that make `python` (".../venv/bin/python", under a
    tmpfs the lines mount on /opt) the interpreter of a virtual environment of its own, made by
    venv from this test's interpreter, in which labctl and everything this test run has installed
    can be imported: what a user's host has, labctl installed in an environment there. A link to
    this Python would not do: where it is a virtual environment over another installation (a
    pyenv build), the link finds no pyvenv.cfg beside it, so it runs the base interpreter without
    the environment's packages (`No module named 'distributed'`). The new environment reaches this
    run's packages through a .pth file that adds its site-packages as a site directory (so their
    own .pth files, labctl's editable install among them, take effect), rather than by installing
    labctl again, which compiles the extension for minutes."""
    venv = Path(python).parents[1]
    here = {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    pth = "import site; " + "; ".join(f"site.addsitedir({path!r})" for path in sorted(here))
    return (f"mount -t tmpfs tmpfs /opt && {shlex.quote(sys.executable)} -m venv --without-pip {shlex.quote(str(venv))}"
            f" && echo {shlex.quote(pth)} > {shlex.quote(str(site / 'labctl-test-run.pth'))}"
            f" && test -x {shlex.quote(python)}")


def stop(process: subprocess.Popen, grace: float = 0.0) -> None:
    """Ends `process` and its group (its children: a Dask nanny's worker, sshd's sessions):
    SIGTERM first where `grace` > 0, then SIGKILL; waits for it."""
    if grace > 0 and process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # the group outlives its leader: always
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(10)


def wait_for(condition, limit: float, what: str, step: float = 0.1):
    """Polls `condition` until it returns something true (returned), or fails saying `what`."""
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {limit:g} s for {what}")
        time.sleep(step)
