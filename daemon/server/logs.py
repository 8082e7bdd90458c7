"""The daemon's log: a rotating file under the state folder, plus stderr in the foreground."""

from __future__ import annotations

import logging
import logging.handlers
import sys

from browserd.daemon.config import DaemonConfig
from browserd.protocol import paths


def setup_logging(config: DaemonConfig, foreground: bool) -> None:
    log_file = paths.log_file()
    paths.ensure_private_dir(log_file.parent)
    handlers: list[logging.Handler] = [
        logging.handlers.RotatingFileHandler(
            log_file, maxBytes=config.log_max_bytes, backupCount=config.log_backups, encoding="utf-8"
        )
    ]
    if foreground:
        handlers.append(logging.StreamHandler(sys.stderr))
    logging.basicConfig(
        level=config.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    # Playwright's and asyncio's chatter at INFO is noise in a daemon's log.
    logging.getLogger("asyncio").setLevel(logging.WARNING)
