"""docs/cluster.md's Slurm recipe (dask-jobqueue's SLURMCluster), read from the page and run as
written against a one-node Slurm of our own, then `labctl sweep --cluster` on the address it
prints: every point runs in the Slurm job's Dask worker and is stored with that job's host.

The Slurm is Debian's slurmctld and slurmd (22.05), each in a namespace host of tests/netns.py:
slurmctld on `login` (which also runs the recipe, so the Dask scheduler, and labctl), slurmd on
`node1` (the compute node, whose jobs run the Dask worker). Namespace hosts rather than this
machine's own network and cgroups: the node has a host name of its own (so the points' host is
not the sweep's machine), Slurm's ports and state are the test's alone, and slurmd's cgroup
mounts (below) are made in its private mount namespace, changing nothing outside it.

What the daemons need here (slurm.conf, cgroup.conf below): no munge (`AuthType=auth/none`,
`CredType=cred/none`); no cgroup process tracking or task plugin (`proctrack/linuxproc`,
`task/none`); yet slurmd loads a cgroup plugin all the same, and fails on a machine with v1
controllers beside the unified hierarchy ("Hybrid mode is not supported") or with no cgroup
file system (`ip netns exec` mounts a fresh /sys): so `CgroupPlugin=cgroup/v1`, with v1 `cpuset`
and `memory` hierarchies mounted in slurmd's mount namespace. The recipe's `memory="16GB"` asks
each job for `--mem=15G`, so the node declares `RealMemory=16384`, with
`SlurmdParameters=config_overrides` so that slurmd takes the declared node as it is on a machine
with less. The recipe's `python=/opt/labctl/venv/bin/python` is a virtual environment on the node with labctl
in it (netns.python_environment, on a tmpfs on /opt in slurmd's mount namespace, as
tests/test_hosts.py does for SSH).

Needs root, the Debian packages slurmctld and slurmd (with slurm-client), and dask-jobqueue;
skipped with the reason where one is missing, failed instead where LABCTL_EXPECT_HOSTS=1 (CI).
Everything started (the daemons, the jobs, the recipe's process, the namespaces) is ended at the
test's end, after a failure as after a pass.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import netns
import pytest
from test_hosts import assert_each_sample_once, assert_no_overlap, experiment, points_by_host, write

from labctl.store import Store

EXPECT = os.environ.get("LABCTL_EXPECT_HOSTS") == "1"
PY = sys.executable
REMOTE_PYTHON = "/opt/labctl/venv/bin/python"  # the recipe's python
SBIN = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])
TOOLS = {"slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client", "squeue": "slurm-client",
         "scancel": "slurm-client", "sinfo": "slurm-client"}
SMALL = experiment("slurm", [2, 3, 4], 10_000, 2)  # 3 points of 2 samples


def _unavailable() -> str | None:
    missing = sorted({package for tool, package in TOOLS.items() if shutil.which(tool, path=SBIN) is None})
    if missing:
        return f"the Debian packages {', '.join(missing)} are not installed"
    for module, package in (("distributed", "labctl[dist]"), ("dask_jobqueue", "dask-jobqueue")):
        if importlib.util.find_spec(module) is None:
            return f"`{module}` is not installed (pip install '{package}')"
    return netns.available()


def slurm_recipe() -> str:
    """docs/cluster.md's SLURMCluster block, verbatim: the test runs what the page says."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "cluster.md").read_text()
    match = re.search(r"```python\n(from dask_jobqueue import SLURMCluster\n.*?)```", text, re.DOTALL)
    assert match, "docs/cluster.md has no SLURMCluster recipe"
    return match.group(1)


def slurm_conf(folder: Path, controller: str) -> str:
    return f"""ClusterName=lab
SlurmctldHost=login({controller})
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
NodeName=node1 CPUs=2 RealMemory=16384 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class Slurm:
    """slurmctld on `login`, slurmd on `node1`; its client commands run on `login`."""

    def __init__(self, net: netns.Network, folder: Path):
        self.net, self.folder = net, folder
        for each in ("state", "spool"):
            (folder / each).mkdir(parents=True)
        conf = folder / "slurm.conf"
        conf.write_text(slurm_conf(folder, net.hosts["login"].address))
        (folder / "cgroup.conf").write_text("CgroupPlugin=cgroup/v1\n")
        self.env = {"SLURM_CONF": str(conf), "PATH": SBIN}
        net.start("login", ["slurmctld", "-D", "-v"], folder / "slurmctld.log", self.env)
        cgroups = ("mount -t tmpfs none /sys/fs/cgroup && for c in cpuset memory; do mkdir /sys/fs/cgroup/$c"
                   " && mount -t cgroup -o $c none /sys/fs/cgroup/$c; done")
        python = netns.python_environment(REMOTE_PYTHON)
        net.start("node1", ["slurmd", "-D", "-v"], folder / "slurmd.log", self.env, mount=f"{cgroups} && {python}")

    def run(self, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return self.net.run("login", list(argv), env=self.env, timeout=timeout)

    def logs(self) -> str:
        return "\n".join(f"--- {name}:\n" + (self.folder / name).read_text()[-2500:]
                         for name in ("slurmctld.log", "slurmd.log") if (self.folder / name).exists())

    def node_state(self) -> str:
        return self.run("sinfo", "-h", "-n", "node1", "-o", "%T").stdout.strip()

    def jobs(self) -> list[str]:
        """The jobs in the queue: 'ID STATE' each."""
        return self.run("squeue", "-h", "-o", "%i %T").stdout.splitlines()


@pytest.fixture
def slurm(tmp_path):
    reason = _unavailable()
    if reason:
        (pytest.fail if EXPECT else pytest.skip)(f"a one-node Slurm cannot run here: {reason}")
    with netns.Network() as net:
        net.add("login")
        net.add("node1")
        cluster = Slurm(net, tmp_path / "slurm")
        try:
            try:
                netns.wait_for(lambda: cluster.node_state() == "idle", 30, "node1 idle in sinfo", step=0.5)
            except AssertionError as error:
                raise AssertionError(f"{error}\n{cluster.logs()}") from None
            yield cluster
        finally:
            with contextlib.suppress(subprocess.TimeoutExpired):  # the jobs left, if any
                cluster.run("scancel", "--user", "root", timeout=10)
        # Network.close(): every process in login and node1 (daemons, slurmstepd, jobs) killed


def test_the_slurm_recipe_runs_as_written_and_sweeps(slurm, tmp_path):
    net = slurm.net
    script = tmp_path / "slurm_cluster.py"
    # The recipe, then what "keep it running" means here: until the test closes stdin.
    script.write_text(slurm_recipe() + "import sys\nsys.stdout.flush()\nsys.stdin.read()\n")
    log = tmp_path / "slurm_cluster.log"
    with open(log, "w") as err:
        client = subprocess.Popen(net.command("login", [PY, str(script)]), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True,
                                  cwd=tmp_path, env={**os.environ, **slurm.env})  # sbatch's output files there
    net.processes.append(client)
    watchdog = threading.Timer(60, netns.stop, [client])  # a recipe that never prints fails, not hangs
    watchdog.start()
    try:
        address = client.stdout.readline().strip()
    finally:
        watchdog.cancel()
    assert re.fullmatch(rf"tcp://{re.escape(net.hosts['login'].address)}:[0-9]+", address), \
        log.read_text()[-3000:] + slurm.logs()
    jobs = netns.wait_for(lambda: (j := slurm.jobs()) and len(j) == 4 and j, 30, "the recipe's 4 jobs")
    db = str(tmp_path / "r.db")
    swept = net.run("login", [PY, "-P", "-m", "labctl", "sweep", write(tmp_path, SMALL), "--db", db,
                              "--cluster", address], env=slurm.env, timeout=180)
    print(f"recipe: {address}\nsqueue: {jobs}\n$ labctl sweep ... --cluster {address}\n{swept.stdout}")
    assert swept.returncode == 0, swept.stdout + swept.stderr + slurm.logs()
    assert f"cluster {address}: 1 workers on 1 host (node1)" in swept.stdout
    with Store(db) as store:
        points = store.points(1)
        assert store.run(1).status == "finished"
    assert [p.status for p in points] == ["done"] * 3, [(p.status, p.failure) for p in points]
    by_host = points_by_host(db)
    assert {host: len(each) for host, each in by_host.items()} == {"node1": 3}
    assert_no_overlap(by_host)
    assert_each_sample_once(db, 2, 3)
    # scale(jobs=4) on one node of two CPUs, each job one CPU but --exclusive: one runs, three wait
    queue = slurm.run("squeue", "-h", "-o", "%i %T %m %R").stdout
    print(f"$ squeue -o '%i %T %m %R'\n{queue}")
    assert sorted(line.split(" ")[1:3] for line in queue.splitlines()) == \
        [["PENDING", "15G"]] * 3 + [["RUNNING", "15G"]], queue
    assert re.search(r"^[0-9]+ RUNNING 15G node1$", queue, re.MULTILINE), queue
    client.stdin.close()  # the recipe's process ends, and SLURMCluster cancels its jobs
    client.wait(60)
    netns.wait_for(lambda: not slurm.jobs(), 30, "the recipe's jobs to leave the queue")
