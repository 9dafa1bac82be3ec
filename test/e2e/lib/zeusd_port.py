"""The TCP port a zeusd started with `--tcp 127.0.0.1:0` bound, read from its log ("... on
127.0.0.1:PORT"); shared by the e2e scripts that start daemons over loopback TCP."""
import re
import time


def zeusd_tcp_port(log, proc, name: str, tries: int = 200) -> str:
    """Polls the open log file `log` of the zeusd process `proc` until it names its port (every
    50 ms, `tries` times); fails the test, with the log, if zeusd exits or never says it."""
    for _ in range(tries):
        log.seek(0)
        m = re.search(r"on 127\.0\.0\.1:(\d+)", log.read())
        if m:
            return m.group(1)
        assert proc.poll() is None, f"{name} exited: {open(log.name).read()}"
        time.sleep(0.05)
    raise AssertionError(f"{name} did not start: {open(log.name).read()}")
