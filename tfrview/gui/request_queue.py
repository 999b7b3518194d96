"""Record numbers waiting for a worker, newest request first: what is on screen now. Requests for
rows scrolled past are dropped once more than `limit` wait. Shared by the row-text worker and the
thumbnail pool; thread-safe."""

from __future__ import annotations

import threading


class NewestFirst:
    def __init__(self, limit: int) -> None:
        self.lock = threading.Condition()
        self.limit = limit
        self._items: dict[int, None] = {}  # an insertion-ordered set
        self._busy: set[int] = set()
        self.stopped = False

    def put(self, n: int) -> None:
        with self.lock:
            if n in self._items or n in self._busy:
                return
            self._items[n] = None
            if len(self._items) > self.limit:
                del self._items[next(iter(self._items))]
            self.lock.notify()

    def wait(self) -> bool:
        """Block until there is work; False once stopped."""
        with self.lock:
            while not self._items and not self.stopped:
                self.lock.wait()
            return not self.stopped

    def take(self, block: bool = True) -> int | None:
        """The newest request (marked busy until `done`), or None when stopped (or empty and not blocking)."""
        with self.lock:
            while block and not self._items and not self.stopped:
                self.lock.wait()
            if self.stopped or not self._items:
                return None
            n = next(reversed(self._items))
            del self._items[n]
            self._busy.add(n)
            return n

    def peek(self, k: int) -> list[int]:
        """The newest k requests, left waiting (to fetch their records together first)."""
        with self.lock:
            return list(reversed(self._items))[:k]

    def done(self, n: int) -> None:
        with self.lock:
            self._busy.discard(n)

    def clear(self) -> None:
        with self.lock:
            self._items.clear()

    def stop(self) -> None:
        with self.lock:
            self.stopped = True
            self.lock.notify_all()
