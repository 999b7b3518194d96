import threading

from tfrview.gui.request_queue import NewestFirst


def test_newest_first_with_a_cap_and_no_duplicates_while_busy():
    q = NewestFirst(limit=3)
    for n in (1, 2, 3, 4):  # 1 is dropped: scrolled past
        q.put(n)
    assert q.take() == 4
    q.put(4)  # still being worked on: not queued again
    assert [q.take(block=False) for _ in range(3)] == [3, 2, None]
    q.done(4)
    q.put(4)
    assert q.take(block=False) == 4


def test_stop_wakes_a_waiting_worker():
    q = NewestFirst(limit=8)
    got = []
    t = threading.Thread(target=lambda: got.append(q.take()))
    t.start()
    q.stop()
    t.join(timeout=5)
    assert not t.is_alive() and got == [None] and q.wait() is False
