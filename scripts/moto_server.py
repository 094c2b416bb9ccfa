"""moto's server (moto.server.main, what the moto_server command runs) with one per-request lookup
done once: moto 5's DomainDispatcherApplication.get_backend_for_host (moto/moto_server/werkzeug_app.py)
calls backends.list_of_moto_modules() for every request, which lists moto's package folder and stats
each of its entries. That folder does not change while the server runs, so its listing is taken once.
Started by scripts/moto.sh with the .venv's Python; the arguments are moto_server's."""
import sys

from moto import backends
from moto.server import main

_MODULES = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: _MODULES

if __name__ == "__main__":
    sys.exit(main())
