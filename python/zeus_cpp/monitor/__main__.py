"""Zeus Monitor CLI: `python -m zeus_cpp.monitor energy|power` (upstream's `python -m zeus.monitor`).

    python -m zeus_cpp.monitor energy [--gpu-indices 0 1]
        Opens a ZeusMonitor window; on Ctrl-C prints its Measurement (time, energy per GPU, CPU
        and DRAM).
    python -m zeus_cpp.monitor power [--gpu-indices 0 1] [--update-period 1.0]
                                     [--power-domain device_instant|device_average|memory_average]
        Prints the time and {"GPU<i>": W} every update period; on Ctrl-C prints the total time
        (s) and the energy (J) per GPU over the run.

Output goes through `rich.print`, as upstream, when rich can be imported; otherwise a printer
that lays the same objects out the way rich does (without colours) is used, so the text is the
same either way.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from datetime import datetime
from typing import Any, Dict, List, Optional, Sequence, TextIO

from zeus_cpp.monitor.energy import ZeusMonitor
from zeus_cpp.monitor.power import PowerMonitor

PROG = "python -m zeus_cpp.monitor"
POWER_DOMAINS = ["device_instant", "device_average", "memory_average"]
_FOREVER_S = 365 * 24 * 60 * 60


# rich's layout, for machines without rich. -------------------------------------------------


def _expandable(obj: Any) -> bool:
    """What rich pretty-prints as a block (containers and dataclass instances)."""
    if isinstance(obj, type):
        return False
    return isinstance(obj, (dict, list, tuple, set, frozenset)) or dataclasses.is_dataclass(obj)


def _node(obj: Any, key: str = "", key_sep: str = "") -> Dict[str, Any]:
    """rich.pretty's tree node of `obj`: an atom (`value`) or braces around children."""
    node: Dict[str, Any] = {"key": key, "key_sep": key_sep}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        name = type(obj).__name__
        children = [_node(getattr(obj, f.name), f.name, "=") for f in dataclasses.fields(obj) if f.repr]
        node.update(open=f"{name}(", close=")", empty=f"{name}()", children=children)
    elif isinstance(obj, dict):
        children = [_node(value, repr(k), ": ") for k, value in obj.items()]
        node.update(open="{", close="}", empty="{}", children=children)
    elif isinstance(obj, (list, tuple)):
        braces = ("[", "]", "[]") if isinstance(obj, list) else ("(", ")", "()")
        node.update(open=braces[0], close=braces[1], empty=braces[2],
                    children=[_node(value) for value in obj], tuple_of_one=isinstance(obj, tuple) and len(obj) == 1)
    else:
        node["value"] = repr(obj)
    return node


def _flat(node: Dict[str, Any]) -> str:
    """The node on one line."""
    head = node["key"] + node["key_sep"]
    if "value" in node:
        return head + node["value"]
    children = node["children"]
    if not children:
        return head + node["empty"]
    inner = ", ".join(_flat(child) for child in children) + ("," if node.get("tuple_of_one") else "")
    return head + node["open"] + inner + node["close"]


def _render(node: Dict[str, Any], indent: str, suffix: str, last: bool, width: int) -> List[str]:
    """rich.pretty's lines: a node stays on one line when it fits (counting its suffix), else its
    children go on lines of their own, 4 spaces further in."""
    end = "" if last else suffix.rstrip()
    if "value" in node or not node["children"] or len(indent) + len(_flat(node)) + len(suffix) <= width:
        return [indent + _flat(node) + end]
    lines = [indent + node["key"] + node["key_sep"] + node["open"]]
    children = node["children"]
    for position, child in enumerate(children):
        child_last = position == len(children) - 1 and not node.get("tuple_of_one")
        lines += _render(child, indent + "    ", ", ", child_last, width)
    lines.append(indent + node["close"] + end)
    return lines


def pretty_text(*objects: Any, width: Optional[int] = None) -> str:
    """What `rich.print(*objects)` writes to a file that is not a terminal (no trailing newline).

    Plain objects are joined by spaces on one line; each container or dataclass starts a block
    of its own, on one line when it fits in `width` columns (default: $COLUMNS, else 80), else
    expanded one item per line.
    """
    if width is None:
        columns = os.environ.get("COLUMNS", "")
        width = int(columns) if columns.isdigit() else 80
    blocks: List[str] = []
    words: List[str] = []
    for obj in objects:
        if _expandable(obj):
            if words:
                blocks.append(" ".join(words))
                words = []
            blocks.append("\n".join(_render(_node(obj), "", "", True, width)))
        else:
            words.append(str(obj))
    if words:
        blocks.append(" ".join(words))
    return "\n".join(blocks)


def _print(*objects: Any, file: Optional[TextIO] = None) -> None:
    """rich.print when rich is importable (upstream's output), else the same layout in plain text."""
    try:
        import rich  # noqa: PLC0415 - optional, as upstream's only output dependency
    except ImportError:
        print(pretty_text(*objects), file=file or sys.stdout, flush=True)
        return
    rich.print(*objects, file=file)
    (file or sys.stdout).flush()


# The subcommands. -----------------------------------------------------------------------------


def energy(gpu_indices: Optional[List[int]] = None) -> None:
    """Measures time and energy with a ZeusMonitor until Ctrl-C, then prints the Measurement.

    Args:
        gpu_indices: GPUs to measure; None measures all (and every readable CPU package).
    """
    monitor = ZeusMonitor(gpu_indices)
    monitor.begin_window("zeus.monitor.energy")
    try:
        time.sleep(_FOREVER_S)
    except KeyboardInterrupt:
        measurement = monitor.end_window("zeus.monitor.energy")
        _print(measurement)


def _by_name(values: Dict[int, float]) -> Dict[str, float]:
    """{0: x} -> {"GPU0": x}."""
    return {f"GPU{index}": value for index, value in values.items()}


def _check_domain(monitor: PowerMonitor, power_domain: str) -> None:
    """SystemExit naming the monitored domains when `power_domain` is not one of them."""
    monitored = [domain.value for domain in monitor.measurement_domains]
    if power_domain not in monitored:
        raise SystemExit(
            f"{PROG} power: error: the GPUs do not support power domain '{power_domain}' "
            f"(monitored: {', '.join(monitored) or 'none'}); pass --power-domain with one of those"
        )


def power(
    gpu_indices: Optional[List[int]] = None,
    update_period: float = 1.0,
    power_domain: str = "device_instant",
) -> None:
    """Prints GPU power every `update_period` seconds until Ctrl-C, then the time and energy.

    Args:
        gpu_indices: GPUs to sample; None samples all.
        update_period: seconds between printed lines (and between the monitor's samples).
        power_domain: "device_instant", "device_average" or "memory_average".

    Raises:
        SystemExit: the GPUs do not support `power_domain`.
    """
    monitor = PowerMonitor(gpu_indices=gpu_indices, update_period=update_period)
    start_time = time.time()
    update_period = monitor.update_period
    _check_domain(monitor, power_domain)
    try:
        while True:
            time.sleep(update_period)
            watts = monitor.get_power(power_domain=power_domain)
            if watts is None:
                continue
            _print(datetime.now(), _by_name(watts))
    except KeyboardInterrupt:
        end_time = time.time()
        _print("\nTotal time (s):", end_time - start_time)
        joules = monitor.get_energy(start_time, end_time, power_domain=power_domain)
        if joules is not None:
            _print("Total energy (J):", _by_name(joules))
    finally:
        monitor.stop()


def _parser() -> argparse.ArgumentParser:
    """upstream's parser, with this package's program name."""
    parser = argparse.ArgumentParser(prog=PROG, description="Zeus Monitor CLI")
    subparsers = parser.add_subparsers(
        dest="subcommand", required=True,
        help=f"The subcommand to run. See `{PROG} <subcommand> --help` for more information.",
    )
    energy_parser = subparsers.add_parser(
        "energy", help="Measure the time and energy consumption of specified GPU indices.")
    power_parser = subparsers.add_parser(
        "power",
        help="Monitor the power consumption of specified GPU indices, and compute total energy on exit (CTRL+C).",
    )
    for sub in (energy_parser, power_parser):
        sub.add_argument("--gpu-indices", nargs="+", type=int,
                         help="Indices of GPUs to monitor. If omitted, all GPUs will be monitored.")
    power_parser.add_argument("--update-period", type=float, default=1.0,
                              help="The time between power measurements in seconds.")
    power_parser.add_argument(
        "--power-domain", choices=POWER_DOMAINS, default="device_instant",
        help="The power domain to query. On GPUs that do not support instant power, use 'device_average'.",
    )
    return parser


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Parses `argv` (default: the command line) and runs the subcommand."""
    args = _parser().parse_args(argv)
    if args.subcommand == "energy":
        energy(args.gpu_indices)
    elif args.subcommand == "power":
        power(args.gpu_indices, args.update_period, args.power_domain)
    else:  # argparse's choices make this unreachable
        raise ValueError(f"Unknown subcommand: {args.subcommand}")


if __name__ == "__main__":
    main()
