"""A null engine that starts processes of its own, to prove none outlives the harness (issue 49).

    python forker.py PIDFILE

Before its handshake it starts a child in its own process group and a child that starts a
session of its own, which starts a grandchild in yet another session; every one sleeps. It appends
one line to PIDFILE: its watchdog's pid (its parent), its own, and those of the three sleepers.
Then it plays like ``null_engine.py``. Standard library only.
"""

import os
import subprocess
import sys

from null_engine import main as null_main  # this script's folder is on sys.path

SLEEP = [sys.executable, "-c", "import time; time.sleep(600)"]
NEW_SESSION_PARENT = [
    sys.executable,
    "-c",
    "import subprocess, sys, time; "
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
    "start_new_session=True); print(p.pid, flush=True); time.sleep(600)",
]


def main():
    child = subprocess.Popen(SLEEP, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    session = subprocess.Popen(
        NEW_SESSION_PARENT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True
    )
    grandchild = int(session.stdout.readline())
    with open(sys.argv[1], "a") as f:
        f.write(f"{os.getppid()} {os.getpid()} {child.pid} {session.pid} {grandchild}\n")
    null_main()


if __name__ == "__main__":
    main()
