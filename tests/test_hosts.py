"""`labctl sweep --cluster` across hosts of our own (tests/netns.py): a Dask scheduler and workers,
each in its own network and UTS namespace, with its own address, host name and machine
(LABCTL_MACHINE gives each worker host a CPU of its own, so the store sees kinds of machine).
A sweep stores each point with its host, and show, report and compare split by it; points on
one host never overlap; a host whose link goes down mid-point loses the point once, to the
other host; a host that joins late works, one with another labctl is refused naming it; a
scheduler restarted mid-sweep ends the sweep in one line, and --resume finishes it.

Needs root (network namespaces): skipped with the reason where that is missing, failed instead
where LABCTL_EXPECT_HOSTS=1 (CI, which runs as root).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import netns
import pytest
from test_sweep import sample_counts

from labctl.store import Store

EXPECT = os.environ.get("LABCTL_EXPECT_HOSTS") == "1"
PY = sys.executable
PORTS = itertools.count(8786)  # each cluster's scheduler its own, so no test meets another's workers


def _unavailable() -> str | None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        return "Dask distributed is not installed (pip install 'labctl[dist]')"
    return netns.available()


@pytest.fixture(scope="module")
def net():
    """The hosts: `sched` (the scheduler, and labctl sweep), `node1`, `node2` and `node3`."""
    reason = _unavailable()
    if reason:
        (pytest.fail if EXPECT else pytest.skip)(f"namespace hosts cannot be made here: {reason}")
    with netns.Network() as network:
        for name in ("sched", "node1", "node2", "node3"):
            network.add(name)
        yield network


class Cluster:
    """A scheduler on `sched` and workers on the other hosts, all stopped at the test's end."""

    def __init__(self, net: netns.Network, logs: Path, port: int):
        self.net, self.logs, self.port = net, logs, port
        self.address = f"tcp://sched:{port}"
        self.processes: dict[str, subprocess.Popen] = {}

    def scheduler(self, env: dict[str, str] | None = None) -> None:
        self.processes["sched"] = self.net.start(
            "sched", [PY, "-m", "dask", "scheduler", "--port", str(self.port), "--dashboard-address", ":0"],
            self.logs / f"sched-{self.port}.log", env)

    def worker(self, host: str, nanny: bool = True, env: dict[str, str] | None = None) -> None:
        """docs/cluster.md's worker command on `host`, its machine a CPU of its own."""
        machine = {"cpu_model": f"Test CPU of {host}"}
        self.processes[host] = self.net.start(
            host, [PY, "-m", "dask", "worker", self.address, "--nthreads", "1", "--resources", "host=1",
                   "--no-dashboard", *([] if nanny else ["--no-nanny"])],
            self.logs / f"{host}-{self.port}.log", {"LABCTL_MACHINE": json.dumps(machine), **(env or {})})

    def wait_for_workers(self, count: int) -> None:
        wait = f"from distributed import Client; Client('{self.address}', timeout=30).wait_for_workers({count}, 60)"
        waited = self.net.run("sched", [PY, "-c", wait], timeout=120)
        assert waited.returncode == 0, waited.stderr[-2000:]

    def stop(self, host: str) -> None:
        netns.stop(self.processes.pop(host), grace=5)

    def close(self) -> None:
        for process in self.processes.values():
            netns.stop(process)


@pytest.fixture
def cluster(net, tmp_path):
    """A Cluster on its own scheduler port (so no test meets another's workers)."""
    made: list[Cluster] = []

    def make() -> Cluster:
        made.append(Cluster(net, tmp_path, next(PORTS)))
        return made[-1]

    yield make
    for each in made:
        each.close()
    for host in net.hosts:  # a test that pulled a cable leaves it plugged in again
        net.link(host, True)


def labctl(net: netns.Network, *args: str, env: dict[str, str] | None = None, timeout: float = 300):
    """labctl on the scheduler's host, as a user there runs it."""
    return net.run("sched", [PY, "-P", "-m", "labctl", *args], env=env, timeout=timeout)


def start_labctl(net: netns.Network, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    process = subprocess.Popen(net.command("sched", [PY, "-P", "-m", "labctl", *args]), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                               env={**os.environ, **(env or {})})
    net.processes.append(process)
    return process


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def experiment(name: str, branching: list[int], leaves: int, repeats: int) -> str:
    return f'''
name = "{name}"
order = "grid"
repeats = {repeats}
warmup = 0
timeout_s = 120
[[grid]]
kernel = "skynet"
params = {{ leaves = {leaves} }}
axes = {{ branching = {branching} }}
'''


def stamp(text: str) -> datetime:
    return datetime.fromisoformat(text)


def points_by_host(db: str, run: int = 1) -> dict[str, list]:
    with Store(db) as store:
        points = store.points(run)
    found: dict[str, list] = {}
    for point in points:
        if point.machine is not None:
            found.setdefault(point.machine["hostname"], []).append(point)
    return found


def assert_no_overlap(by_host: dict[str, list]) -> None:
    """Each host ran one point at a time: its points' stored spans do not overlap."""
    for host, points in by_host.items():
        spans = sorted((stamp(p.started_at), stamp(p.finished_at)) for p in points)
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end <= start, f"two points overlapped on {host}: {spans}"


def assert_each_sample_once(db: str, repeats: int, points: int) -> None:
    counts = sample_counts(db)
    assert len(counts) == points and all(r == list(range(repeats)) for r in counts.values()), counts


def labctl_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("labctl:")]


def running_on(db: Path, host: str) -> int | None:
    """A point running on `host` with a sample stored: its id."""
    if not db.exists():
        return None
    connection = sqlite3.connect(db)
    try:
        row = connection.execute(
            "SELECT p.id FROM points p JOIN machines m ON m.id = p.machine_id"
            " WHERE json_extract(m.info, '$.hostname') = ? AND p.status = 'pending'"
            " AND EXISTS (SELECT 1 FROM samples s WHERE s.point_id = p.id)", (host,)).fetchone()
    except sqlite3.OperationalError:  # not made yet
        return None
    finally:
        connection.close()
    return row[0] if row else None


def stored(db: Path) -> int:
    if not db.exists():
        return 0
    connection = sqlite3.connect(db)
    try:
        return connection.execute("SELECT count(*) FROM samples").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        connection.close()


ACROSS = experiment("across", [2, 3, 4, 5, 6, 7], 100_000, 2)


def test_a_sweep_across_hosts_stores_each_point_with_its_host(net, cluster, tmp_path):
    hosts = cluster()
    hosts.scheduler()
    hosts.worker("node1")
    hosts.worker("node2")
    hosts.wait_for_workers(2)
    db = str(tmp_path / "r.db")
    swept = labctl(net, "sweep", write(tmp_path, ACROSS), "--db", db, "--cluster", hosts.address)
    assert swept.returncode == 0, swept.stdout + swept.stderr
    assert f"cluster {hosts.address}: 2 workers on 2 hosts (node1, node2)" in swept.stdout
    by_host = points_by_host(db)
    assert sorted(by_host) == ["node1", "node2"]  # both worked, each point stored with its host
    for host, points in by_host.items():
        for point in points:
            assert point.status == "done" and point.samples_done == 2
            assert point.machine["cpu_model"] == f"Test CPU of {host}"
            address = net.hosts[host].address
            assert point.context["worker"].startswith(f"tcp://{address}:")
    with Store(db) as store:
        assert store.run(1).machine["hostname"] == "sched"  # the run's machine: where labctl ran
    assert_no_overlap(by_host)
    assert_each_sample_once(db, 2, 6)

    shown = labctl(net, "show", "1", "--db", db)
    assert shown.returncode == 0, shown.stderr
    for host in ("node1", "node2"):
        assert f"on Test CPU of {host}, " in shown.stdout and f"(hosts: {host}; " in shown.stdout
    report = labctl(net, "report", "1", "--db", db, "--output", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "report" / "report.md").read_text()
    assert "The points ran on 2 kinds of machine (swept from sched)" in text
    assert "| m1 | Test CPU of node" in text and "| m2 | Test CPU of node" in text


SMALL = experiment("small", [2, 3, 4], 20_000, 2)


def test_runs_on_two_hosts_compare_only_across_machines(net, cluster, tmp_path):
    one, two = cluster(), cluster()
    for hosts, node in ((one, "node1"), (two, "node2")):
        hosts.scheduler()
        hosts.worker(node)
    one.wait_for_workers(1)
    two.wait_for_workers(1)
    db, path = str(tmp_path / "r.db"), write(tmp_path, SMALL)
    for hosts in (one, two):
        swept = labctl(net, "sweep", path, "--db", db, "--cluster", hosts.address)
        assert swept.returncode == 0, swept.stdout + swept.stderr
    assert sorted(points_by_host(db, 1)) == ["node1"] and sorted(points_by_host(db, 2)) == ["node2"]
    apart = labctl(net, "compare", "1", "2", "--db", db)
    assert "Test CPU of node1" in apart.stdout and "Test CPU of node2" in apart.stdout, apart.stdout
    assert "`--across-machines` compares them" in apart.stdout
    across = labctl(net, "compare", "1", "2", "--db", db, "--across-machines")
    assert across.returncode == 0, across.stderr
    assert "Matched across machines (--across-machines)" in across.stdout
    assert "over 3 points" in across.stdout


FAULT = experiment("fault", [2, 3, 4, 5, 6], 300_000, 4)


def test_a_host_whose_link_goes_down_mid_point_loses_it_to_the_other(net, cluster, tmp_path):
    hosts = cluster()
    # A host gone from the network is found by its missed heartbeats (worker-ttl, 5 minutes by
    # default); without a nanny the scheduler then removes it at once (with one, Dask first
    # asks the nanny to restart it, and waits 30 s for an answer that cannot come).
    hosts.scheduler(env={"DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "5s"})
    hosts.worker("node1", nanny=False)
    hosts.worker("node2", nanny=False)
    hosts.wait_for_workers(2)
    db = tmp_path / "r.db"
    sweep = start_labctl(net, "sweep", write(tmp_path, FAULT), "--db", str(db), "--cluster", hosts.address)
    point = netns.wait_for(lambda: running_on(db, "node1"), 120, "a point running on node1")
    net.link("node1", False)
    out, err = sweep.communicate(timeout=180)
    assert sweep.returncode == 0, out + err
    notes = [line for line in err.splitlines() if "died running" in line]
    assert len(notes) == 1, err
    assert notes[0].startswith(f"note: worker tcp://{net.hosts['node1'].address}:")
    assert " on node1 died running skynet " in notes[0] and notes[0].endswith(
        ": it runs once more, on another worker")
    assert "run 1 finished" in out and "5 points done, 0 failed, 20 samples" in out
    assert_each_sample_once(str(db), 4, 5)  # nothing lost, nothing twice
    with Store(str(db)) as store:
        lost = next(p for p in store.points(1) if p.id == point)
    # It kept the machine of its first samples; its second attempt ran on node2.
    assert lost.machine["hostname"] == "node1" and lost.status == "done"
    assert lost.context["worker"].startswith(f"tcp://{net.hosts['node2'].address}:")


LATE = experiment("late", [2, 3, 4, 5, 6, 7, 8, 9], 100_000, 3)


def test_a_host_that_joins_late_works_and_one_with_another_labctl_is_refused(net, cluster, tmp_path):
    shim = tmp_path / "other-labctl"  # what another install of labctl would report
    shim.mkdir()
    (shim / "sitecustomize.py").write_text("import labctl\nlabctl.__version__ = '0.0.9'\n")
    other = {"PYTHONPATH": str(shim)}
    hosts = cluster()
    hosts.scheduler()
    hosts.worker("node3", env=other)
    hosts.wait_for_workers(1)
    db = tmp_path / "r.db"
    path = write(tmp_path, LATE)
    refused = labctl(net, "sweep", path, "--db", str(db), "--cluster", hosts.address)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    [line] = labctl_lines(refused.stderr)
    assert re.fullmatch(f"labctl: --cluster {hosts.address}: refused: worker tcp://"
                        f"{re.escape(net.hosts['node3'].address)}:[0-9]+ on node3: labctl 0.0.9 there, "
                        r"0\.1\.0 here; install labctl 0\.1\.0 there, built there; nothing was run", line), line
    assert not db.exists()
    hosts.stop("node3")

    hosts.worker("node1")
    hosts.wait_for_workers(1)
    sweep = start_labctl(net, "sweep", path, "--db", str(db), "--cluster", hosts.address)
    netns.wait_for(lambda: stored(db) >= 1, 120, "a first sample")
    hosts.worker("node2")
    hosts.worker("node3", env=other)
    out, err = sweep.communicate(timeout=180)
    assert sweep.returncode == 0, out + err
    assert f"cluster {hosts.address}: 1 workers on 1 host (node1)" in out
    assert "8 points done, 0 failed, 24 samples" in out
    joined = [line for line in err.splitlines() if line.startswith("note:") and line.endswith(" joined")]
    assert joined == [f"note: worker {joined[0].split()[2]} on node2 joined"], err
    retired = [line for line in err.splitlines() if line.startswith("note:") and "retired" in line]
    assert len(retired) == 1 and retired[0].startswith(
        f"note: worker tcp://{net.hosts['node3'].address}:"), err
    assert retired[0].endswith(" on node3: labctl 0.0.9 there, 0.1.0 here; install labctl 0.1.0 there, "
                               "built there: retired from the cluster, it runs no point")
    by_host = points_by_host(str(db))
    assert "node3" not in by_host and "node1" in by_host
    assert_no_overlap(by_host)
    assert_each_sample_once(str(db), 3, 8)


RESTART = experiment("restart", [2, 3, 4, 5, 6, 7], 300_000, 3)


def test_a_scheduler_restarted_mid_sweep_ends_it_in_one_line_and_resume_finishes_it(net, cluster, tmp_path):
    hosts = cluster()
    hosts.scheduler()
    hosts.worker("node1")
    hosts.worker("node2")
    hosts.wait_for_workers(2)
    db = tmp_path / "r.db"
    quick = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"}  # how long the client tries again
    sweep = start_labctl(net, "sweep", write(tmp_path, RESTART), "--db", str(db), "--cluster", hosts.address,
                         env=quick)
    netns.wait_for(lambda: stored(db) >= 2, 120, "two samples")
    netns.stop(hosts.processes.pop("sched"))  # kill -9
    out, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 1, out + err
    [line] = labctl_lines(err)
    assert line.startswith(f"labctl: --cluster {hosts.address}: lost the scheduler (the client is ")
    assert "run 1 interrupted with " in line
    assert line.endswith(f"finish it with `labctl sweep --resume 1 --db {db}` (here, or with --cluster)")
    with Store(str(db)) as store:
        assert store.run(1).status == "interrupted"
        before = store.run(1).samples
    # A new scheduler at the same address; the workers, which stop with their scheduler, anew.
    hosts.stop("node1")
    hosts.stop("node2")
    hosts.scheduler()
    hosts.worker("node1")
    hosts.worker("node2")
    hosts.wait_for_workers(2)
    resumed = labctl(net, "sweep", "--resume", "1", "--db", str(db), "--cluster", hosts.address)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"({before} samples already stored)" in resumed.stdout
    assert_each_sample_once(str(db), 3, 6)
    with Store(str(db)) as store:
        assert store.run(1).status == "finished"


# -- the SSH recipe of docs/cluster.md, as written ----------------------------------------------

SSHD = Path("/usr/sbin/sshd")
REMOTE_PYTHON = "/opt/labctl/venv/bin/python"  # the recipe's remote_python


def ssh_recipe() -> str:
    """docs/cluster.md's SSHCluster block, verbatim: the test runs what the page says."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "cluster.md").read_text()
    match = re.search(r"```python\n(from dask\.distributed import SSHCluster\n.*?)```", text, re.DOTALL)
    assert match, "docs/cluster.md has no SSHCluster recipe"
    return match.group(1)


def sshd(net: netns.Network, host: str, folder: Path, authorized: Path) -> str:
    """An OpenSSH server on `host` with a host key made here, letting in the key `authorized`;
    REMOTE_PYTHON there is a virtual environment with labctl in it (netns.python_environment, in
    the server's own mount namespace: /opt is a tmpfs there, nothing of this machine's changes).
    Returns its known_hosts line."""
    key = folder / f"{host}-host-key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    config = folder / f"{host}-sshd_config"
    config.write_text(f"ListenAddress {net.hosts[host].address}\nHostKey {key}\nAuthorizedKeysFile {authorized}\n"
                      f"PidFile {folder / (host + '-sshd.pid')}\nPermitRootLogin prohibit-password\n"
                      "StrictModes no\nUsePAM no\n")
    mount = f"mkdir -p /run/sshd && {netns.python_environment(REMOTE_PYTHON)}"
    net.start(host, [str(SSHD), "-D", "-e", "-f", str(config)], folder / f"{host}-sshd.log", mount=mount)
    kind, public = (folder / f"{key.name}.pub").read_text().split()[:2]
    return f"{host} {kind} {public}"


def test_the_ssh_recipe_runs_as_written_and_sweeps(net, tmp_path):
    if not SSHD.exists() or importlib.util.find_spec("asyncssh") is None:
        (pytest.fail if EXPECT else pytest.skip)("the SSH recipe needs openssh-server (Debian) and asyncssh")
    if "sched-host" not in net.hosts:
        net.add("sched-host")
    home = tmp_path / "home"  # the client's ~/.ssh: its key and the hosts' keys, made here
    (home / ".ssh").mkdir(parents=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(home / ".ssh" / "id_ed25519")],
                   check=True)
    authorized = tmp_path / "authorized_keys"
    authorized.write_text((home / ".ssh" / "id_ed25519.pub").read_text())
    known = [sshd(net, host, tmp_path, authorized) for host in ("sched-host", "node1", "node2")]
    (home / ".ssh" / "known_hosts").write_text("\n".join(known) + "\n")
    script = tmp_path / "ssh_cluster.py"
    # The recipe, then what "keep this process running" means here: until the test closes stdin.
    script.write_text(ssh_recipe() + "import sys\nsys.stdout.flush()\nsys.stdin.read()\n")
    client = subprocess.Popen(net.command("sched", [PY, str(script)]), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=open(tmp_path / "ssh_cluster.log", "w"), text=True, start_new_session=True,  # noqa: SIM115
                              env={**os.environ, "HOME": str(home)})
    net.processes.append(client)
    address = client.stdout.readline().strip()
    assert re.fullmatch(rf"tcp://{re.escape(net.hosts['sched-host'].address)}:[0-9]+", address), \
        (tmp_path / "ssh_cluster.log").read_text()[-3000:]
    db = str(tmp_path / "r.db")
    swept = labctl(net, "sweep", write(tmp_path, ACROSS), "--db", db, "--cluster", address)
    assert swept.returncode == 0, swept.stdout + swept.stderr
    assert f"cluster {address}: 2 workers on 2 hosts (node1, node2)" in swept.stdout
    by_host = points_by_host(db)
    assert sorted(by_host) == ["node1", "node2"]
    assert_no_overlap(by_host)
    assert_each_sample_once(db, 2, 6)
    client.stdin.close()  # the recipe's process ends, and SSHCluster stops what it started
    client.wait(60)
