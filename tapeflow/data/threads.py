"""Background work: prefetch (a producer thread) and map with num_parallel_calls (a thread pool).

Both keep the element order, so results are the same as without threads;
what changes is when upstream work (and its side effects) runs. An error
raised upstream reaches the consumer at the element where it happened.
"""
import collections
import queue
import threading

from .dataset import AUTOTUNE, Dataset

_AUTOTUNE_BUFFER = 2
_POLL_SECONDS = 0.1


class PrefetchDataset(Dataset):
    """Prepares the next ``buffer_size`` elements in a background thread while the consumer works.

    A thread pays only when producing an element runs user Python code or file
    I/O that can overlap the consumer's work; an in-memory pipeline (slices,
    shuffle, batch, ...) is faster read directly, so it is.
    """
    _tf_name = "_PrefetchDataset"

    def __init__(self, input_dataset, buffer_size):
        from ..framework.errors import InvalidArgumentError
        if buffer_size < AUTOTUNE:
            raise InvalidArgumentError(f"buffer_size must be >= -1 (AUTOTUNE), got {buffer_size}.")
        self._input = input_dataset
        self._inputs = (input_dataset,)
        self._buffer_size = _AUTOTUNE_BUFFER if buffer_size == AUTOTUNE else buffer_size

    def _compute_spec(self):
        return self._input.element_spec

    def _compute_cardinality(self):
        return self._input._cardinality()

    def _index_plan(self):
        return self._input._index_plan()

    def _iterate(self):
        if self._buffer_size == 0 or not self._input._runs_python_code():
            return self._input._iterate()
        return background(self._input._iterate, self._buffer_size)


def _put(items, item, stop):
    """Puts ``item`` unless the consumer has gone; returns whether it was put."""
    while not stop.is_set():
        try:
            items.put(item, timeout=_POLL_SECONDS)
            return True
        except queue.Full:
            continue
    return False


def _produce(make_iterator, items, stop, state):
    from .shuffle import active
    active.state = state     # random nodes upstream draw for the consumer's iterator
    try:
        for element in make_iterator():
            if not _put(items, (True, element), stop):
                return
        _put(items, (False, None), stop)
    except BaseException as error:  # handed to the consumer, raised there at this element
        _put(items, (False, error), stop)


def background(make_iterator, buffer_size):
    items = queue.Queue(maxsize=buffer_size)
    stop = threading.Event()
    from .shuffle import active
    threading.Thread(target=_produce, args=(make_iterator, items, stop, active.state), daemon=True,
                     name="tapeflow-prefetch").start()
    try:
        while True:
            ok, item = items.get()
            if ok:
                yield item
            elif item is None:
                return
            else:
                raise item
    finally:
        stop.set()


def parallel_map(fn, elements, workers):
    """``map(fn, elements)`` with up to ``workers`` calls running at once, results in input order."""
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tapeflow-map")
    pending = collections.deque()
    try:
        for element in elements:
            pending.append(pool.submit(fn, element))
            if len(pending) >= workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=False)
