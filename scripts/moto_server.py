"""moto's server (moto.server.main, what the moto_server command runs) with one per-request lookup
done once: moto 5's DomainDispatcherApplication.get_backend_for_host (moto/moto_server/werkzeug_app.py)
calls backends.list_of_moto_modules() for every request, which lists moto's package folder and stats
each of its entries. That folder does not change while the server runs, so its listing is taken once.
Started by scripts/moto.sh with the .venv's Python; the arguments are moto_server's.

With --zygote PORT it serves nothing itself: it imports moto's server and the modules of the services
aurora-bench calls (about 2 s of CPU, which every server otherwise pays again on its first calls), then
listens on 127.0.0.1:PORT. Each connection sends one line, "SERVER_PORT LOG_FILE", and gets back the pid
of a forked child that serves moto on SERVER_PORT in a session of its own, its output in LOG_FILE: the
server scripts/moto.sh start would have started, with the imports done. A forked child starts with its
parent's random state: moto draws its ids from its own generator (moto_api._internal.mock_random, a
random.Random that Python does not reseed on fork as it does the random module's), reseeded in each
child from os.urandom, so servers do not hand out the same ids. scripts/test.sh runs one beside its
server layers; scripts/moto.sh start forks from it when AURORA_BENCH_MOTO_ZYGOTE names it."""
import importlib
import os
import signal
import socket
import sys

from moto import backends
from moto.moto_api._internal import mock_random
from moto.server import main

_MODULES = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: _MODULES

# The services of the AWS SDK clients aurora-bench uses (package.json), as moto names them.
SERVICES = (
    "athena",
    "cloudformation",
    "cloudwatch",
    "ec2",
    "events",
    "iam",
    "rds",
    "s3",
    "secretsmanager",
    "servicequotas",
    "sns",
    "ssm",
    "stepfunctions",
    "sts",
)


def serve_forked(server_port: str, log_file: str) -> None:
    """In the forked child: moto_server on server_port, as scripts/moto.sh starts it; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        mock_random.seed()
        os.setsid()
        out = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        main(["-H", "127.0.0.1", "-p", server_port])
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def zygote(port: int) -> None:
    for service in SERVICES:
        for module in ("models", "responses", "urls"):
            importlib.import_module(f"moto.{service}.{module}")
    # The kernel reaps the children: a stopped server is gone, not a zombie its stopper waits on.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    with socket.create_server(("127.0.0.1", port)) as listener:
        print(f"moto zygote listening on 127.0.0.1:{port}", flush=True)
        while True:
            conn, _ = listener.accept()
            with conn:
                request = conn.makefile("r").readline().split()
                if len(request) != 2 or not request[0].isdigit():
                    conn.sendall(b"error: expected 'SERVER_PORT LOG_FILE'\n")
                    continue
                pid = os.fork()
                if pid == 0:
                    listener.close()
                    conn.close()
                    serve_forked(request[0], request[1])
                conn.sendall(f"{pid}\n".encode())


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--zygote":
        zygote(int(sys.argv[2]))
    else:
        sys.exit(main())
