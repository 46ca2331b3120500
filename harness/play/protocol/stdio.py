"""JSON lines over a subprocess's stdin and stdout: starting, reading with deadlines, killing.

The engine runs under a watchdog (:mod:`harness.play.protocol.watchdog`) in a session of its own,
in a process group of its own, may have its address space capped, and its stderr is copied by a
thread into a log file up to a cap (the rest is counted, not kept). The watchdog holds the read
end of a pipe only this process writes to: when it closes (:meth:`StdioEngine.kill`, or this
process gone, however it died), the watchdog kills the engine's group and every process the engine
left (it is their child subreaper), so no process outlives the harness. Reads never block
past a deadline: the pipe is read with ``select`` into a buffer, and a line longer than the cap is
a flood (the engine is killed: its stream cannot be trusted any more).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from multiprocessing import util as mp_util
from pathlib import Path
from typing import IO, Any, Sequence

#: Longest line an engine may write (bytes); a batch's answer is about 10 bytes a position.
MAX_LINE = 64 << 20

#: The watchdog program every engine runs under (standard library only, started with ``-I -S``).
WATCHDOG = str(Path(__file__).with_name("watchdog.py"))


class EngineDied(RuntimeError):
    """The engine's process exited or closed its pipes (the message says how)."""


class EngineFlood(RuntimeError):
    """The engine wrote a line longer than :data:`MAX_LINE`."""


def _missing(argv: Sequence[str], cwd: str | os.PathLike[str] | None, env: dict[str, str] | None) -> str | None:
    """Why ``argv[0]`` cannot be executed (as ``exec`` would say it), or None: said at once, here,
    rather than by the watchdog after it started."""
    prog = argv[0] if argv else ""
    if os.sep in prog:
        path = Path(cwd or ".") / prog
        if not path.exists():
            return "No such file or directory"
        return None if os.access(path, os.X_OK) else "Permission denied"
    search = (env or os.environ).get("PATH", os.defpath)
    return None if prog and shutil.which(prog, path=search) else "No such file or directory"


class _StderrPump(threading.Thread):
    """Copies an engine's stderr into its log file, at most ``cap`` bytes; counts the rest."""

    def __init__(self, stream: IO[bytes], path: Path | None, cap: int, header: str) -> None:
        super().__init__(daemon=True, name="engine-stderr")
        self.stream, self.path, self.cap, self.header = stream, path, cap, header
        self.kept = 0
        self.dropped = 0
        self.tail = b""

    def run(self) -> None:
        out = None
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                out = open(self.path, "ab")
                out.write(self.header.encode())
                out.flush()
            while True:
                data = self.stream.read1(1 << 16) if hasattr(self.stream, "read1") else self.stream.read(1 << 16)
                if not data:
                    break
                self.tail = (self.tail + data)[-2000:]
                room = self.cap - self.kept
                if out is not None and room > 0:
                    out.write(data[:room])
                    out.flush()
                self.kept += min(len(data), max(room, 0))
                self.dropped += max(len(data) - max(room, 0), 0)
        except (OSError, ValueError):
            pass
        finally:
            if out is not None:
                if self.dropped:
                    out.write(
                        f"\n[stderr capped at {self.cap:,} bytes; {self.dropped:,} more bytes dropped]\n".encode()
                    )
                out.close()


class StdioEngine:
    """One engine process speaking JSON lines; :meth:`send` a message, :meth:`read_line` a reply."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        log_path: Path | None = None,
        stderr_cap: int = 1 << 20,
        memory_mb: int = 0,
        env: dict[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.cwd = cwd
        self.log_path = log_path
        self.stderr_cap = stderr_cap
        self.memory_mb = memory_mb
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        #: the write end of the watchdog's pipe (closed: the watchdog kills the engine and its children)
        self._watch: int | None = None
        self._buf = bytearray()
        self._pump: _StderrPump | None = None
        self._finalizer: Any = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        """Start the process under its watchdog (raises :class:`EngineDied` when it cannot be started)."""
        why = _missing(self.argv, self.cwd, self.env)
        if why is not None:
            raise EngineDied(f"cannot start {' '.join(self.argv)!r}: {why}")
        read, write = os.pipe()  # both ends close on exec: only the watchdog is given the read end
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", WATCHDOG, str(read), str(self.memory_mb), "--", *self.argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                bufsize=0,
                start_new_session=True,
                pass_fds=(read,),
                close_fds=True,
            )
        except OSError as exc:
            os.close(write)
            raise EngineDied(f"cannot start {' '.join(self.argv)!r}: {exc.strerror or exc}") from None
        finally:
            os.close(read)
        self._watch = write
        self._buf = bytearray()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        header = f"--- engine started {time.strftime('%Y-%m-%d %H:%M:%S')} pid {self.proc.pid}: {' '.join(self.argv)}\n"
        self._pump = _StderrPump(self.proc.stderr, self.log_path, self.stderr_cap, header)
        self._pump.start()
        # a worker process exits through multiprocessing's finalizers, not atexit: kill the engine there too
        self._finalizer = mp_util.Finalize(self, _kill_group, args=(self.proc, self._watch), exitpriority=10)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def send(self, data: bytes) -> None:
        """Write one message (a newline is added); :class:`EngineDied` when the pipe is closed."""
        if self.proc is None or self.proc.stdin is None:
            raise EngineDied("the engine is not running")
        try:
            self.proc.stdin.write(data + b"\n")
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError):
            raise EngineDied(self._death("its stdin is closed")) from None

    def read_line(self, deadline: float) -> bytes | None:
        """The next line of stdout (without its newline), or None when ``deadline`` (monotonic
        seconds) passes first. :class:`EngineDied` on end of file, :class:`EngineFlood` past
        :data:`MAX_LINE`."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        scanned = 0
        while True:
            nl = self._buf.find(b"\n", scanned)
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line.rstrip(b"\r")
            scanned = len(self._buf)
            if scanned > MAX_LINE:
                raise EngineFlood(f"the engine wrote a line over {MAX_LINE >> 20} MiB")
            wait = deadline - time.monotonic()
            if wait <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                return None
            try:
                data = os.read(fd, 1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                raise EngineDied(self._death("it closed its stdout"))
            self._buf += data

    def _death(self, how: str) -> str:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                code = None
        status = (
            f"exit status {code}"
            if code is not None and code >= 0
            else f"killed by signal {-code}"
            if code is not None
            else "still running"
        )
        tail = self.stderr_tail()
        return f"the engine died ({how}; {status})" + (f"; stderr ends: {tail}" if tail else "")

    def stderr_tail(self, limit: int = 300) -> str:
        if self._pump is None:
            return ""
        if self._pump.is_alive():
            self._pump.join(timeout=0.1)
        text = self._pump.tail.decode(errors="replace").strip()
        return text[-limit:].replace("\n", " | ")

    def kill(self) -> None:
        """Kill the engine's whole process group and reap it."""
        if self.proc is None:
            return
        _kill_group(self.proc, self._watch)
        self._watch = None
        if self._finalizer is not None:
            self._finalizer.cancel()
        if self._pump is not None:
            self._pump.join(timeout=1.0)
        self.proc = None

    def quit(self, message: bytes, grace: float = 0.5) -> None:
        """Ask the engine to quit, then kill what is left after ``grace`` seconds."""
        if self.proc is None:
            return
        try:
            self.send(message)
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=grace)
        except (EngineDied, subprocess.TimeoutExpired, OSError):
            pass
        self.kill()


def _kill_group(proc: subprocess.Popen[bytes], watch: int | None) -> None:
    """End the engine: close the watchdog's pipe (it kills the engine, its group and every process
    left, then exits), wait for the watchdog; kill the watchdog's own session's group if it hangs."""
    if watch is not None:
        try:
            os.close(watch)
        except OSError:
            pass
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        pass
