"""`uir viz FILE`: the program's graph, every rewrite step and its kernels, in a browser.

`--html OUT` writes the page to a file; otherwise the page is served on 127.0.0.1 until Ctrl-C,
built afresh from FILE on every request, so that reloading the browser shows the file as edited.
"""

from __future__ import annotations

import argparse
from contextlib import suppress

from uir.core.errors import UsageError
from uir.core.plugins import Registry, RendersKernels, load_registry

from ..output import write_output
from ..program_commands import more_help, pass_options, selected_passes
from ..source import read_source
from .data import KernelSetup, page_data
from .page import render_page

CODE_BACKEND = "c"  # whose code the page shows beside each kernel, when it is installed


def kernel_setup(registry: Registry, args: argparse.Namespace) -> KernelSetup:
    """The passes of the compiling backends (those `uir run --backend c` runs) under the same
    `--passes` and `--skip`, and the C backend if installed; a selection they cannot run with
    (`--skip rangeify`) gives the page no kernels and the reason."""
    try:
        passes = selected_passes(registry, args, "kernels")
    except UsageError as exc:
        return KernelSetup(None, f"no kernels: {exc.message}")
    backend = registry.backends.get(CODE_BACKEND)
    if not isinstance(backend, RendersKernels):
        return KernelSetup(passes)
    return KernelSetup(passes, code=backend, code_name=CODE_BACKEND)


EXAMPLES = """\
  uir viz FILE                              serve the page on 127.0.0.1 (Ctrl-C stops)
  uir viz FILE --html page.html             write it as one self-contained file
  uir viz FILE --skip simplify              the pipeline without one pass"""


def _data(args: argparse.Namespace) -> dict:
    registry = load_registry(args.plugin_modules)
    source = read_source(args.file)
    passes = selected_passes(registry, args)
    return page_data(source.text, source.path, passes, kernel_setup(registry, args))


def _page(args: argparse.Namespace) -> str:
    return render_page(_data(args))


def _written(path: str, size: int, data: dict) -> str:
    """What `--html` says once the page is written: where, how big, and what it shows."""
    error, passes, steps = data["error"], len(data["passes"]), len(data["steps"])
    shows = f"{passes} pass(es), {steps} rewrite step(s)"
    if error:
        where = f" on line {error['line']}" if error["line"] is not None else ""
        shows = f"the {error['kind']} error{where}, {shows}"
    return f"uir viz: wrote {path} ({size} bytes): {shows}; open it in a browser\n"


def viz_command(args: argparse.Namespace) -> int:
    data = _data(args)  # errors in the file itself show on the page; this fails only on I/O
    if args.html is not None:
        page = render_page(data)
        try:
            with open(args.html, "w", encoding="utf-8") as out:
                out.write(page)
        except OSError as exc:
            raise UsageError(f"cannot write {args.html}: {exc.strerror or exc}") from exc
        write_output(_written(args.html, len(page.encode("utf-8")), data))
        return 0
    page = render_page(data)
    return _serve(args, page if args.file == "-" else None)  # standard input is read once only


def _serve(args: argparse.Namespace, fixed: str | None) -> int:
    """Serve the page until Ctrl-C: `fixed` if given, else built afresh for each request."""
    # Imported here, not at the top: every `uir` command pays for the CLI's module imports, and
    # http.server alone would add a fifth to the start-up of each (measured: 25 of 137 ms).
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a browser that went away mid-page: socketserver would print a traceback

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?")[0] not in ("/", "/index.html"):
                self.send_error(404)
                return
            kind = "text/html"
            try:
                body = (fixed if fixed is not None else _page(args)).encode("utf-8")
                status = 200
            except Exception as exc:  # the file became unreadable: say so, as plain text
                body, status, kind = f"uir viz: {exc}\n".encode(), 500, "text/plain"
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # no request log on the terminal

    try:
        server = Server(("127.0.0.1", args.port), Handler)
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from exc
    with server:
        host, port = server.server_address[:2]
        print(f"uir viz: serving {args.file} on http://{host}:{port}/ (Ctrl-C stops)", flush=True)
        with suppress(KeyboardInterrupt):  # Ctrl-C is how the server stops: not an error
            server.serve_forever()
    return 0


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return int(text)


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    viz = commands.add_parser(
        "viz",
        parents=[common],
        help="show the graph, every rewrite step and the kernels in a browser",
        more_help=more_help(EXAMPLES, backends=False),
    )
    viz.add_argument("file", help="a .uir file, or - for standard input")
    viz.add_argument("--html", metavar="OUT", help="write a self-contained page to OUT instead")
    viz.add_argument("--port", type=_port, default=0, help="port to serve on (default: a free one)")
    pass_options(viz)
    viz.set_defaults(handler=viz_command)
