"""The model-server options of `serve`, `reproduce` and `demo` (part of the bad-input suite): a
port outside 1..65535, a start-up timeout that is not a positive number of seconds, a count
of tasks or of rollouts in flight below 1 are one line and exit 2 before anything starts;
`--port 0` means a free port, and an IPv6 host gets one too."""

from __future__ import annotations

import socket

import pytest

from medhal.commands.cli import build_parser
from medhal.serving.server_process import unused_port
from tests.running import clean_exit_2, medhal_main


@pytest.mark.parametrize("port", ["70000", "-1", "65536", "http", "1.5"])
def test_a_port_outside_the_range_is_one_line(port):
    proc = medhal_main("serve", "--backend", "vllm", "--model", "m", "--port", port)
    clean_exit_2(proc, "--port")


@pytest.mark.parametrize("seconds", ["nan", "0", "-5", "inf", "-inf", "soon"])
def test_a_startup_timeout_that_is_no_positive_number_is_one_line(seconds):
    proc = medhal_main("serve", "--backend", "vllm", "--model", "m", "--startup-timeout", seconds)
    clean_exit_2(proc, "--startup-timeout")


def test_port_0_means_a_free_port_and_a_valid_port_is_kept():
    parser = build_parser()
    assert parser.parse_args(["serve", "--port", "0"]).port is None  # as when not given: a free one
    assert parser.parse_args(["serve", "--port", "8123"]).port == 8123
    assert parser.parse_args(["serve", "--startup-timeout", "2.5"]).startup_timeout == 2.5


def test_an_ipv6_host_gets_a_free_port():
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    port = unused_port("::1")
    with socket.socket(socket.AF_INET6) as s:
        s.bind(("::1", port))  # free indeed


@pytest.mark.parametrize("flag", ["-n", "-c", "--num-tasks", "--concurrency"])
@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_reproduce_counts_below_1_are_one_line(flag, value):
    proc = medhal_main(
        "reproduce", "medfact-bench", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", flag, value
    )
    clean_exit_2(proc, "at least 1")
