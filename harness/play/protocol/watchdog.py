"""The engine's watchdog: a small program between the harness and an engine that leaves no process behind.

    python -I -S watchdog.py WATCH_FD MEMORY_MB -- ENGINE_ARGV...

:class:`harness.play.protocol.stdio.StdioEngine` starts it in a session of its own, with the
engine's stdin, stdout and stderr, and the read end ``WATCH_FD`` of a pipe whose write end only
the harness process holds. The watchdog

1. makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux): every process the
   engine starts, even one that starts a session of its own or is orphaned, is re-parented to the
   watchdog instead of to pid 1;
2. starts the engine in a process group of its own (its stdin/stdout are the harness's pipes; the
   watchdog keeps no copy of them), with the address-space cap ``MEMORY_MB`` (0: none) and
   ``PR_SET_PDEATHSIG`` (the engine dies if the watchdog is SIGKILLed);
3. waits until the watch pipe closes (the harness closed it, or the harness process is gone,
   however it died: the kernel closes a dead process's descriptors) or the engine exits;
4. then kills the engine's process group and every process re-parented to it, until it has no
   child left, and exits with the engine's status (a signal as the same signal).

Standard library only, and nothing of the harness: it runs with ``-I -S`` in ~15 ms.
"""

import ctypes
import os
import select
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl():
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def children():
    """Pids of this process's children (``/proc``; empty where there is none)."""
    me = os.getpid()
    found = set()
    try:
        for tid in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{tid}/children") as f:
                found.update(int(x) for x in f.read().split())
        return found
    except OSError:
        pass
    for name in os.listdir("/proc"):  # a kernel without the children file: read every process's parent
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
                if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                    found.add(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def sweep(group):
    """Kill the engine's group, then every child (re-parented descendants included) until none is left."""
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
    while True:
        for pid in children():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)  # a reaped process's own children are ours by now: kill them next
        except ChildProcessError:
            return
        except InterruptedError:
            continue


class Stopped(Exception):
    """The watchdog was asked to stop by a signal."""


def _stop(signum, frame):
    raise Stopped


def main(argv):
    watch, memory_mb, cmd = int(argv[0]), int(argv[1]), argv[3:]
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _stop)

    def setup():  # in the engine's process, before exec
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if memory_mb > 0:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    try:
        engine = subprocess.Popen(cmd, process_group=0, preexec_fn=setup, close_fds=True)
    except OSError as exc:
        os.write(2, f"cannot start {' '.join(cmd)!r}: {exc.strerror or exc}\n".encode())
        return 127
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the harness sees the engine's end of file, not a copy held here
    os.dup2(null, 1)
    try:
        pidfd = os.pidfd_open(engine.pid)
    except (AttributeError, OSError):
        pidfd = None
    watched = [watch] + ([pidfd] if pidfd is not None else [])
    try:
        while True:
            ready, _, _ = select.select(watched, [], [], 0.1 if pidfd is None else None)
            if watch in ready and not os.read(watch, 4096):
                break  # the harness is gone (or asks the engine to go)
            if engine.poll() is not None:
                break
    except Stopped:  # SIGTERM, SIGHUP or SIGINT sent to the watchdog itself: the same end
        pass
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    status = engine.poll()
    sweep(engine.pid)
    if status is None:
        status = engine.returncode if engine.returncode is not None else -signal.SIGKILL
    if status < 0:  # the engine died of a signal: so does its watchdog, for the harness to read
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
