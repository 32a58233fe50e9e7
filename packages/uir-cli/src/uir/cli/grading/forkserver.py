"""A fork server: a Python process that imports numpy and the compiler once, then forks one child
per run, which behaves as `python -m MODULE ARGS...` would.

Starting Python with numpy and the compiler costs about 0.4 s of CPU; the mutants run starts the
reference compiler over ten thousand times, so it forks from a preloaded process instead, one
server per copy of the sources (each planted bug has its own): the server imports the copy's
compiler along the copy's PYTHONPATH, as `python -m uir.cli.main` would. A child runs exactly as
a started program does in sandbox.py: its own session, the same resource limits, its working
directory, its environment, its standard output and error on pipes the harness reads.

The server runs the code a request names, as the grader's user and outside every sandbox, so no
one but the harness that started it may reach it (spec/grading.md section 3.2). It has no name
anywhere: no socket file, no abstract address. The harness holds one end of a socket pair made
before the server starts (the server inherits the other); for each run it makes a new socket
pair and hands the server one end of it over that control channel (SCM_RIGHTS). A socket that
came another way, or whose peer is not the process that started the server (SO_PEERCRED), is
refused. Closing the control channel stops the server.

On a run's own socket, messages are JSON lines: the request carries the two pipe ends as
SCM_RIGHTS, the server answers {"pid": N} once the child exists, then {"exit": CODE} when it has
been reaped (negative CODE: killed by that signal, as `subprocess` reports it).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

from .limits import Limits, apply_rlimits
from .sandbox import CannotStart, Started

# What `uir run` imports that is not ours and is slow to import.
DEFAULT_PRELOAD = ("numpy", "pluggy", "importlib.metadata", "fractions", "argparse")
_MAX_FD = 1 << 16
# The entry-point groups whose modules the server preloads too: the plugins `uir run` loads, and
# the command lines every `uir` builds (uir.core.plugins.COMMANDS_GROUP; this module imports
# nothing of uir, which the server purges).
PLUGIN_GROUPS = ("uir", "uir.commands")
# The longest the server spends importing one preloaded module.
PRELOAD_S = 60


# ---- the harness's side ---------------------------------------------------------------------


class _Connection:
    """JSON lines over a socket, with a buffer that survives read timeouts."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def send(self, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
        data = json.dumps(message).encode() + b"\n"
        sent = socket.send_fds(self.sock, [data], list(fds)) if fds else 0
        self.sock.sendall(data[sent:])

    def receive(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message; None at the timeout. Raises EOFError when the peer has gone."""
        self.sock.settimeout(timeout)
        while b"\n" not in self.buffer:
            try:
                chunk = self.sock.recv(65536)
            except (TimeoutError, BlockingIOError):  # a zero timeout raises the second
                return None
            if not chunk:
                raise EOFError("the fork server closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)


class _Forked:
    """A child of the fork server, seen as sandbox.Started."""

    def __init__(self, pid: int, stdout: int, stderr: int, connection: _Connection) -> None:
        self.pid = pid
        self.stdout = stdout
        self.stderr = stderr
        self.connection = connection
        self.code: int | None = None

    def wait(self, timeout: float) -> int | None:
        if self.code is None:
            try:
                message = self.connection.receive(max(timeout, 0.0))
            except (EOFError, OSError):
                # The server died; the child is orphaned and reaped by init. Report a kill.
                message = {"exit": -signal.SIGKILL}
            if message is not None:
                self.code = int(message["exit"])
        return self.code

    def close(self) -> None:
        for fd in (self.stdout, self.stderr):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.connection.sock.close()


class ForkServer:
    """A sandbox.Launcher that runs `python -m MODULE` children of a preloaded server.

    The server puts `pythonpath` on its `sys.path` as PYTHONPATH would, and imports `preload`
    and, with `preload_module`, MODULE itself (best effort: a module that fails to import is
    left for each child to fail on). A run whose environment has that same PYTHONPATH starts
    from those imports, as `python -m MODULE` would once they are done; any other run drops
    every `uir` module and imports afresh along its own PYTHONPATH. The `argv` given to `start`
    is the child's `sys.argv` (its first word is only a name). Use as a context manager.
    """

    def __init__(
        self,
        module: str = "uir.cli.main",
        pythonpath: str = "",
        preload: Sequence[str] = DEFAULT_PRELOAD,
        preload_module: bool = True,
    ) -> None:
        self.module = module
        main = module if preload_module else ""
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.lock = threading.Lock()  # one hand-over at a time on the control channel
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)  # the server code is this installation's; see serve()
        env["OPENBLAS_NUM_THREADS"] = "1"  # no numpy thread pool alive across fork
        code = "import sys; from uir.cli.grading.forkserver import serve; serve(*sys.argv[1:])"
        try:
            self.server = subprocess.Popen(
                [sys.executable, "-c", code, str(theirs.fileno()), pythonpath, main, *preload],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                env=env,
                pass_fds=[theirs.fileno()],
            )
        except BaseException:
            self.control.close()
            raise
        finally:
            theirs.close()

    def start(
        self, argv: Sequence[str], cwd: str, env: Mapping[str, str], limits: Limits
    ) -> Started:
        request = {
            "module": self.module,
            "argv": list(argv),
            "cwd": cwd,
            "env": dict(env),
            "rlimits": limits.rlimits(),
        }
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self.lock:
                socket.send_fds(self.control, [b"r"], [theirs.fileno()])
            connection = _Connection(sock)
            connection.send(request, [out_write, err_write])
            reply = connection.receive(timeout=60.0)
        except (OSError, EOFError) as exc:
            reply = {"error": f"the fork server is not answering: {exc}"}
        finally:
            theirs.close()
            os.close(out_write)  # the child holds the only write ends now: EOF when it ends
            os.close(err_write)
        if reply is None or "pid" not in reply:
            for fd in (out_read, err_read):
                os.close(fd)
            sock.close()
            reason = "no answer" if reply is None else reply.get("error", reply)
            raise CannotStart(f"fork server: {reason}")
        return _Forked(int(reply["pid"]), out_read, err_read, connection)

    def close(self) -> None:
        self.control.close()  # the server's end reads EOF: it stops
        try:
            self.server.wait(10)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


# ---- the server's side ----------------------------------------------------------------------


def _exit_code(value: object) -> int:
    """sys.exit's argument as the exit status Python would give it."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _purge_uir() -> None:
    for name in [n for n in sys.modules if n == "uir" or n.startswith("uir.")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _split_path(pythonpath: str) -> list[str]:
    return [os.path.abspath(p) for p in pythonpath.split(os.pathsep) if p]


class _Server:
    """What the children inherit: the PYTHONPATH the preloaded modules were imported along, and
    the `sys.path` Python had without any."""

    def __init__(self, pythonpath: str) -> None:
        self.pythonpath = pythonpath
        self.base = [p for p in sys.path if p not in ("", ".")]
        sys.path[:] = [*_split_path(pythonpath), *self.base]
        _purge_uir()  # this module's own `uir` came from the installation, not the path

    def preload(self, names: Sequence[str], main: str) -> None:
        """Import `names`, then what `main` imports: the child runs `main` itself as __main__.

        A module that fails to import, or takes more than PRELOAD_S (a planted bug may hang at
        import), is left for each child to import and fail on, exactly as `python -m` would.
        """

        def give_up(*_: object) -> None:
            raise TimeoutError("preloading took too long")

        signal.signal(signal.SIGALRM, give_up)
        for name in [*names, main] if main else names:
            before = set(sys.modules)
            signal.alarm(PRELOAD_S)
            try:
                importlib.import_module(name)
            except BaseException:
                for added in set(sys.modules) - before:
                    del sys.modules[added]
                _purge_uir()
            finally:
                signal.alarm(0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        if main:
            sys.modules.pop(main, None)  # runpy runs it afresh, as `python -m` does


def _child(server: _Server, request: dict[str, Any], stdout: int, stderr: int) -> None:
    """In the forked child: become the sandboxed `python -m MODULE`, run it, and exit."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # SIGPIPE stays ignored, as Python has it
        signal.signal(signal.SIGINT, signal.default_int_handler)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        os.closerange(3, _MAX_FD)  # the server's sockets and pipes are not the compiler's
        os.chdir(request["cwd"])
        apply_rlimits([tuple(r) for r in request["rlimits"]])
        os.environ.clear()
        os.environ.update(request["env"])
        if "tempfile" in sys.modules:
            sys.modules["tempfile"].tempdir = None  # read TMPDIR afresh
        # As `python -m` does: the working directory first, then PYTHONPATH, then the rest.
        pythonpath = request["env"].get("PYTHONPATH", "")
        if pythonpath == server.pythonpath:
            sys.path.insert(0, os.getcwd())
        else:
            sys.path[:] = [os.getcwd(), *_split_path(pythonpath), *server.base]
            _purge_uir()
        sys.argv = list(request["argv"])
        import runpy

        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _serve_request(
    server: _Server, connection: _Connection, children: dict[int, _Connection]
) -> bool:
    """Read one request and fork its child. False when the connection is to be dropped."""
    try:
        data, fds, _, _ = socket.recv_fds(connection.sock, 1 << 20, 2)
    except OSError:
        return False
    connection.buffer = data
    while b"\n" not in connection.buffer:
        chunk = connection.sock.recv(1 << 20)
        if not chunk:
            return False
        connection.buffer += chunk
    line, connection.buffer = connection.buffer.split(b"\n", 1)
    try:
        request = json.loads(line)
    except ValueError:
        request = None
    if len(fds) != 2 or not isinstance(request, dict):
        for fd in fds:
            os.close(fd)
        connection.send({"error": "a request is one JSON object with two pipe ends"})
        return False
    pid = os.fork()
    if pid == 0:
        _child(server, request, fds[0], fds[1])  # never returns
    for fd in fds:
        os.close(fd)
    children[pid] = connection
    connection.send({"pid": pid})
    return True


def _reap(children: dict[int, _Connection]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = children.pop(pid, None)
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.send({"exit": os.waitstatus_to_exitcode(status)})
            connection.sock.close()


def _peer_is(sock: socket.socket, pid: int) -> bool:
    """Whether the process at the other end of `sock` (SO_PEERCRED: the one that made a socket
    pair) is `pid`, running as our user."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return False
    peer, uid, _ = struct.unpack("3i", creds)
    return peer == pid and uid == os.getuid()


def _handed_over(control: socket.socket, harness: int) -> list[socket.socket] | None:
    """The run sockets of one message on the control channel, those of `harness` only; None
    when the channel is closed (the harness is done or gone)."""
    try:
        data, fds, _, _ = socket.recv_fds(control, 16, 4)
    except OSError:
        return None
    if not data:
        return None
    received = [socket.socket(fileno=fd) for fd in fds]
    accepted = []
    for sock in received:
        if sock.family == socket.AF_UNIX and _peer_is(sock, harness):
            accepted.append(sock)
        else:
            sock.close()
    return accepted


def serve(control_fd: str, pythonpath: str, main: str, *preload: str) -> None:
    """The server's main loop, on the control channel `control_fd`, until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides when the server stops
    harness = os.getppid()
    control = socket.socket(fileno=int(control_fd))
    if not _peer_is(control, harness):
        return  # not the channel of the process that started us: serve no one
    server = _Server(pythonpath)
    # The plugin modules `uir run` loads through the entry points (pluggy imports them by name,
    # so a copy's modules are the ones found along its path).
    plugins = [
        ep.module for group in PLUGIN_GROUPS for ep in importlib.metadata.entry_points(group=group)
    ]
    server.preload([*preload, *plugins], main)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, _Connection] = {}
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, "control")
    selector.register(wake_read, selectors.EVENT_READ, "wake")
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.data == "wake":
                os.read(wake_read, 4096)
            elif key.data == "control":
                runs = _handed_over(control, harness)
                if runs is None:
                    return
                for sock in runs:
                    sock.setblocking(True)
                    if not _serve_request(server, _Connection(sock), children):
                        sock.close()
        _reap(children)
