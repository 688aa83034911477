"""A running Streamlit server and a websocket client that speaks its protocol.

This is how a browser drives the app: the client opens a session over the
``/_stcore/stream`` websocket, asks for a page, and after a widget change
sends one ``rerun_script`` message carrying the new widget value (and the
fragment the widget lives in, as the browser does).  The server streams the
page's elements back and ends with ``script_finished``; the time between the
two is the rerun latency a user waits for after moving a slider, without the
browser's own drawing.

Used by the page benchmarks (``benchmarks/bench_pages.py``) and the load test
(``benchmarks/load.py``).  Loopback only.
"""
from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect as websocket_connect

ROOT = Path(__file__).resolve().parent.parent
_FINISHED_OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def server(script: str | Path = ROOT / "app.py", timeout_s: float = 60.0):
    """``streamlit run script`` on a free loopback port; yields (port, pid)."""
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(script), "--server.address",
           "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                            timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise RuntimeError(f"streamlit did not start on port {port}: {err[-2000:]}")
            time.sleep(0.1)
        yield port, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (s), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """Resident memory of a process (MB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


@dataclass
class Run:
    seconds: float
    status: int
    messages: int = 0
    exceptions: list = field(default_factory=list)     # texts of st.exception elements
    errors: list = field(default_factory=list)         # texts of st.error elements


class Session:
    """One browser-like session.  ``await open(page)``, then ``await set(key, value)``."""

    def __init__(self, port: int):
        self.port = port
        self.ws = None
        self.page_hash = ""
        self.widgets: dict[str, tuple[str, str, str]] = {}   # user key -> (id, kind, fragment)

    async def connect(self):
        self.ws = await websocket_connect(f"ws://127.0.0.1:{self.port}/_stcore/stream",
                                          max_size=256 * 2**20, compression=None)

    async def close(self):
        if self.ws is not None:
            await self.ws.close()

    async def _rerun(self, client_state) -> Run:
        msg = BackMsg()
        msg.rerun_script.CopyFrom(client_state)
        t0 = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        run = Run(0.0, -1)
        while True:
            raw = await self.ws.recv()
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            run.messages += 1
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fwd.new_session.page_script_hash or self.page_hash
            elif kind == "page_info_changed" or kind == "navigation":
                if kind == "navigation" and fwd.navigation.page_script_hash:
                    self.page_hash = fwd.navigation.page_script_hash
            elif kind == "delta":
                self._read_delta(fwd.delta, run)
            elif kind == "script_finished":
                run.seconds = time.perf_counter() - t0
                run.status = fwd.script_finished
                return run

    def _read_delta(self, delta, run: Run):
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        if kind == "exception":
            run.exceptions.append(el.exception.message)
        elif kind == "alert" and el.alert.format == el.alert.ERROR:
            run.errors.append(el.alert.body)
        sub = getattr(el, kind, None) if kind else None
        wid = getattr(sub, "id", "") if sub is not None else ""
        if wid and "-" in wid:
            key = wid.rsplit("-", 1)[-1] if wid.startswith("$$ID") else wid
            self.widgets[key] = (wid, kind, delta.fragment_id)

    async def open(self, page_url_path: str = "", query: str = "") -> Run:
        """First run of a page (by its url path, "" for the home page)."""
        if self.ws is None:
            await self.connect()
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = query
        cs.page_name = page_url_path
        return await self._rerun(cs)

    async def set(self, key: str, value) -> Run:
        """Move the widget keyed ``key`` to ``value`` and wait for the rerun."""
        wid, kind, fragment = self.widgets[key]
        msg = BackMsg()
        cs = msg.rerun_script
        cs.page_script_hash = self.page_hash
        cs.fragment_id = fragment
        w = cs.widget_states.widgets.add()
        w.id = wid
        if kind == "slider":
            w.double_array_value.data.extend([float(value)])
        elif kind == "checkbox":
            w.bool_value = bool(value)
        elif kind == "number_input" and isinstance(value, int):
            w.int_value = value
        elif kind == "number_input":
            w.double_value = float(value)
        else:
            raise NotImplementedError(f"widget kind {kind}")
        return await self._rerun(cs)


def run_async(coro):
    return asyncio.run(coro)
