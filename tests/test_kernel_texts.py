"""A kernel's one-line summary is printed beside every run of it (the report's kernel section,
`labctl kernels`), whatever sizes the run had: it names the parameters that size the work, never
a number that one of them sets (a report of a default-scale run once said "1M leaf agents")."""

from __future__ import annotations

import re

import pytest

from labctl import _native

# Numbers in a summary that are no size: a version, a formula of a parameter, messaging's kind,
# a name (mailbox_n_to_1).
NOT_SIZES = re.compile(r"CAF 0\.17|2\^depth|1:N|\w+_\w+")


@pytest.mark.parametrize("kernel", _native.kernels(), ids=lambda k: k["name"])
def test_a_summary_states_no_number_a_parameter_sets(kernel):
    assert not re.search(r"\d", NOT_SIZES.sub("", kernel["summary"])), kernel["summary"]


def test_a_summary_names_the_parameters_that_size_its_work():
    summaries = {k["name"]: k["summary"] for k in _native.kernels()}
    assert "`leaves` leaf agents" in summaries["skynet"]
    assert "`senders` senders x `messages_per_sender` messages" in summaries["mailbox_n_to_1"]
    assert "rebuilt `repetitions` times" in summaries["mixed"]
    assert "`workers` workers, each sending itself `messages_per_worker` messages" in summaries["self_send"]
    assert "passed `hops` times around a ring of `actors` agents" in summaries["thread_ring"]


def test_every_savina_actor_has_a_queue_of_its_own_unless_a_run_asks_otherwise():
    # Each Savina actor has a mailbox of its own: a coop's shared queue (fifo = cooperation) would
    # run a benchmark's agents one at a time on a pool, whatever its threads.
    defaults = {k["name"]: {p["name"]: p["default"] for p in k["params"]}.get("fifo")
                for k in _native.kernels() if k["name"].startswith("savina_") and k["runtime"] == "labctl"}
    assert len(defaults) == 30 and set(defaults.values()) == {"individual"}, defaults
    assert {p["name"]: p["default"] for p in next(k for k in _native.kernels()
                                                  if k["name"] == "thread_ring")["params"]}["fifo"] == "cooperation"
