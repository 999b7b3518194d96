"""One tfrview process per user and display: a second launch hands its files to the running one
(over a QLocalServer socket) and exits, so double-clicking ten shards does not start ten Pythons."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable

from PySide6.QtCore import QObject, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket


def server_name() -> str:
    override = os.environ.get("TFRVIEW_INSTANCE")
    if override:
        return override
    display = os.environ.get("WAYLAND_DISPLAY") or os.environ.get("DISPLAY") or "none"
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return f"tfrview-{uid}-{re.sub(r'[^A-Za-z0-9]', '_', display)}"


def absolute_args(args: list[str]) -> list[str]:
    """Paths (and globs) made absolute, so the running process finds them from its own directory."""
    return [a if os.path.isabs(a) else os.path.join(os.getcwd(), a) for a in args]


def forward(args: list[str], timeout_ms: int = 3000) -> bool:
    """True when a running tfrview took the files; False when there is none (or it did not answer)."""
    sock = QLocalSocket()
    sock.connectToServer(server_name())
    if not sock.waitForConnected(300):
        return False
    sock.write(json.dumps({"args": absolute_args(args)}).encode() + b"\n")
    sock.flush()
    if not sock.waitForBytesWritten(timeout_ms) and sock.bytesToWrite():
        return False
    ok = sock.waitForReadyRead(timeout_ms) and bytes(sock.readAll().data()).startswith(b"ok")
    sock.disconnectFromServer()
    return ok


class InstanceServer(QObject):
    """Listens for later launches and opens what they ask for through `open_args`."""

    def __init__(self, open_args: Callable[[list[str]], None], parent=None) -> None:
        super().__init__(parent)
        self._open = open_args
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._on_connection)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        name = server_name()
        if self.server.listen(name):
            return True
        QLocalServer.removeServer(name)  # a stale socket left by a process that crashed
        return self.server.listen(name)

    @Slot()
    def _on_connection(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            self._buffers[sock] = b""
            sock.readyRead.connect(lambda s=sock: self._on_ready(s))
            sock.disconnected.connect(lambda s=sock: self._forget(s))

    def _on_ready(self, sock: QLocalSocket) -> None:
        self._buffers[sock] = self._buffers.get(sock, b"") + bytes(sock.readAll().data())
        if b"\n" not in self._buffers[sock]:
            return
        line = self._buffers[sock].split(b"\n", 1)[0]
        try:
            args = [str(a) for a in json.loads(line)["args"]]
        except (ValueError, KeyError, TypeError):
            sock.write(b"error\n")
            sock.flush()
            return
        sock.write(b"ok\n")
        sock.flush()
        self._open(args)

    def _forget(self, sock: QLocalSocket) -> None:
        self._buffers.pop(sock, None)
        sock.deleteLater()
