"""`medhal reproduce BENCHMARK --model M [--backend vllm | --base-url U]`: every paper setting of
the benchmark in `configs/eval/`, one `eval` each, then the reports (and their comparison).

Nothing heavy is imported at module level: the CLI imports this module on every command."""

from __future__ import annotations

import argparse
import contextlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from medhal.commands.report import add_max_error_rate, gate
from medhal.commands.serve import EndpointFailed, add_backend_args, model_endpoint, positive_count
from medhal.kit.options import parse_taskset_options
from medhal.kit.untrusted import one_line


def default_configs_dir() -> Path:
    """`configs/eval/` of the source tree medhal runs from, else of the working directory."""
    here = Path(__file__).resolve().parents[2] / "configs" / "eval"
    return here if here.is_dir() else Path("configs") / "eval"


def _module_name(benchmark: str) -> str:
    return benchmark.strip().lower().replace("-", "_")


def paper_settings(benchmark: str, configs_dir: Path) -> dict[str, Path]:
    """Setting name (file stem) -> config, for every `<module>*.toml` in `configs_dir` whose
    `[taskset] id` is this benchmark (the prefix alone would also match a longer module name)."""
    module = _module_name(benchmark)
    found: dict[str, Path] = {}
    for path in sorted(configs_dir.glob(f"{module}*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: not a valid TOML file: {e}") from e
        taskset = data.get("taskset")
        env_id = taskset.get("id") if isinstance(taskset, dict) else None
        if isinstance(env_id, str) and _module_name(env_id) == module:
            found[path.stem] = path
    return found


def pick_settings(available: dict[str, Path], wanted: list[str] | None, module: str) -> dict[str, Path]:
    """The settings named by `--setting` (a file stem, or the stem without `<module>_`), in the
    order given; all of them without `--setting`."""
    if not wanted:
        return available
    short = {stem.removeprefix(f"{module}_"): stem for stem in available}
    picked: dict[str, Path] = {}
    for name in wanted:
        stem = name if name in available else short.get(name)
        if stem is None:
            raise ValueError(f"--setting {name!r} is not one of {', '.join(available)}")
        picked[stem] = available[stem]
    return picked


def eval_command(
    config: Path, *, model: str, base_url: str, out: Path, ns: argparse.Namespace, env_args: list[str]
) -> list[str]:
    argv = [
        str(Path(sys.executable).parent / "eval"),
        "@",
        str(config),
        "--model",
        model,
        "--client.base-url",
        base_url,
        "-o",
        str(out),
        "--no-push",
    ]
    if ns.num_tasks:
        argv += ["-n", str(ns.num_tasks)]
    if ns.concurrency:
        argv += ["-c", str(ns.concurrency)]
    return argv + env_args


SERVER_POLL_SECONDS = 0.5
"""How often a running eval checks that the server started for it still runs."""


def run_eval(argv: list[str], out: Path, server: Any = None) -> int:
    """One `eval` with visible progress: its live dashboard on a terminal; otherwise its
    per-rollout log lines, with the per-trace dump it prints sent to OUT/eval.stdout. When
    `server` (started here) stops running, the eval is stopped at once: its rollouts would
    otherwise wait out their timeouts against a dead endpoint."""
    out.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        if sys.stdout.isatty():
            proc = subprocess.Popen(argv)
        else:
            dump = stack.enter_context(open(out / "eval.stdout", "w"))
            proc = subprocess.Popen([*argv, "--no-rich"], stdout=dump)
        try:
            while True:
                try:
                    return proc.wait(timeout=SERVER_POLL_SECONDS)
                except subprocess.TimeoutExpired:
                    if server is not None and not server.running():
                        break
            proc.terminate()
            try:
                return proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                return proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise


def report_settings(run_dirs: list[Path], out_root: Path, max_error_rate: float) -> int:
    """Report each paper setting's run next to its traces (and compare them when there are
    several, in OUT/comparison); the gate's exit status."""
    from medhal.reports.markdown import to_markdown
    from medhal.reports.report_files import report_runs, write_comparison

    runs, reports, _ = report_runs(run_dirs, None, None)
    for report in reports:
        print(to_markdown(report, report["headline"]))
    if len(reports) > 1:
        text, _ = write_comparison(runs, reports, out_root / "comparison")
        print(text)
    return gate(reports, max_error_rate, allow_incomplete=False)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text.replace("/", "--")).strip("-") or "model"


def cmd_reproduce(ns: argparse.Namespace) -> int:
    command = "reproduce"
    try:
        env_args = ns.taskset_args
        parse_taskset_options(env_args)  # checked here; passed to every eval unchanged
        settings = _settings(ns)
    except (ValueError, OSError) as e:
        print(f"medhal {command}: error: {one_line(e)}", file=sys.stderr)
        return 2
    if not ns.base_url and ns.backend is None:
        print(
            f"medhal {command}: error: give --backend vllm|local (start a server) or --base-url URL "
            "(use a running one)",
            file=sys.stderr,
        )
        return 2
    if (ns.base_url or ns.backend == "vllm") and not ns.model:
        print(
            f"medhal {command}: error: --model is required with --backend vllm or --base-url", file=sys.stderr
        )
        return 2
    run_name = f"{_slug(ns.benchmark)}--{_slug(ns.model or 'local')}"
    out_root: Path = ns.output or Path("outputs") / "reproduce" / run_name
    out_root.mkdir(parents=True, exist_ok=True)
    try:
        servers: list[Any] = []
        with model_endpoint(ns, command, output_dir=out_root, started=servers) as (base_url, model):
            done, failed = _run_settings(ns, settings, base_url, model, out_root, env_args, servers)
    except EndpointFailed as e:
        return e.code
    except KeyboardInterrupt:
        print(f"medhal {command}: interrupted; the server is stopped", file=sys.stderr)
        return 130
    code = report_settings(done, out_root, ns.max_error_rate) if done else 1
    print(
        f"\nmedhal {command}: {len(done)} of {len(settings)} settings ran; runs and reports under {out_root}",
        flush=True,
    )
    if failed:
        print(f"medhal {command}: no results for {', '.join(failed)}", file=sys.stderr)
        return 1
    return code


def _settings(ns: argparse.Namespace) -> dict[str, Path]:
    """The paper settings `--setting` picks (all without it); ValueError when there are none."""
    configs_dir = ns.configs or default_configs_dir()
    available = paper_settings(ns.benchmark, configs_dir)
    if not available:
        raise ValueError(
            f"no paper settings for {ns.benchmark!r} in {configs_dir} "
            f"(files {_module_name(ns.benchmark)}*.toml with "
            f"[taskset] id = {ns.benchmark!r})"
        )
    return pick_settings(available, ns.setting, _module_name(ns.benchmark))


def _run_settings(
    ns: argparse.Namespace,
    settings: dict[str, Path],
    base_url: str,
    model: str,
    out_root: Path,
    env_args: list[str],
    servers: list[Any] | None = None,
) -> tuple[list[Path], list[str]]:
    """One eval per setting, in order: (run directories that finished, settings that failed).
    When the server started here dies, the eval running is stopped and so are the rest."""
    done: list[Path] = []
    failed: list[str] = []
    server = servers[0] if servers else None
    for number, (setting, config) in enumerate(settings.items(), 1):
        out = out_root / setting
        print(f"\n=== {ns.benchmark}: {setting} ({number} of {len(settings)}) ===", flush=True)
        argv = eval_command(config, model=model, base_url=base_url, out=out, ns=ns, env_args=env_args)
        code = run_eval(argv, out, server)
        if server is not None and not server.running():
            failed += list(settings)[number - 1 :]
            status = server.process.poll() if server.process is not None else None
            print(
                f"medhal reproduce: the model server (pid {server.pid}) exited with status {status} "
                f"while {setting} ran; stopped (server log: {getattr(server, 'log_path', None)})",
                file=sys.stderr,
                flush=True,
            )
            break
        if code == 0:
            done.append(out)
        else:
            failed.append(setting)
            print(f"medhal reproduce: eval of {setting} exited {code} (its output is above)", file=sys.stderr)
    return done, failed


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `reproduce`."""
    rep = sub.add_parser(
        "reproduce",
        help="run a benchmark's paper settings (configs/eval/) against a model, then the report",
        description="Run every paper setting of BENCHMARK from configs/eval/ (files <module>*.toml; "
        "--setting picks some) with `eval @ <config> --model M --client.base-url URL -o OUT/<setting>`, "
        "then report each run. With --backend the server is started and stopped here; with --base-url "
        "a running one is used. Environment options (--taskset.<option> VALUE) follow BENCHMARK and go "
        "to every eval unchanged.",
    )
    rep.add_argument("benchmark", help="environment id, e.g. medfact-bench")
    rep.add_argument("--model", help="model to evaluate (required with --backend vllm or --base-url)")
    rep.add_argument("--base-url", help="an OpenAI-compatible endpoint that already serves --model")
    rep.add_argument("--setting", action="append", help="only this setting (file stem; repeatable)")
    rep.add_argument(
        "-n", "--num-tasks", type=positive_count, help="at most this many tasks per setting (default: all)"
    )
    rep.add_argument(
        "-c", "--concurrency", type=positive_count, help="rollouts in flight per eval (default: eval's)"
    )
    rep.add_argument(
        "-o", "--output", type=Path, help="output root (default outputs/reproduce/<benchmark>--<model>)"
    )
    rep.add_argument("--configs", type=Path, help="settings folder (default: the repository's configs/eval)")
    add_max_error_rate(rep, 0.0)
    add_backend_args(rep)
    rep.set_defaults(handler=cmd_reproduce, takes_taskset_options=True)
