"""The Keras 3 progress bar, drawn with tqdm.

``verbose=1`` on a terminal: one line per epoch redrawn in place (tqdm does
the redrawing and throttling), e.g.
``25/25 ━━━━━━━━━━━━━━━━━━━━ 1s 9ms/step - accuracy: 0.5200 - loss: 0.8241``
(ETA while running, elapsed time when done). When stdout is not a terminal
(a log file, a pipe) nothing is drawn during the epoch and only the final
line is printed, without control characters. ``verbose=2`` prints one plain
line per epoch: ``32/32 - 1s - 27ms/step - accuracy: 0.5270 - loss: 0.8096``.
"""
import sys
import time

_BOLD, _RESET, _GREEN, _GREY = "\x1b[1m", "\x1b[0m", "\x1b[32m", "\x1b[37m"
BAR_CHAR = "\u2501"


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def format_value(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"
    return str(value)


def format_time_per_unit(seconds, unit_name="step"):
    if seconds >= 1:
        return f"{seconds:.0f}s/{unit_name}"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/{unit_name}"
    return f"{seconds * 1e6:.0f}us/{unit_name}"


def format_eta(eta):
    if eta > 3600:
        return "%d:%02d:%02d" % (eta // 3600, (eta % 3600) // 60, eta % 60)
    if eta > 60:
        return "%d:%02d" % (eta // 60, eta % 60)
    return "%ds" % eta


class Progbar:
    """Progress of ``target`` steps with running (step-averaged) metric values."""

    def __init__(self, target, width=20, verbose=1, interval=0.05, stateful_metrics=None, unit_name="step",
                 stream=None):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.stateful_metrics = set(stateful_metrics or ())
        self.unit_name = unit_name
        self.stream = stream or sys.stdout
        self._dynamic = _is_terminal(self.stream)
        self._values = {}
        self._values_order = []
        self._seen_so_far = 0
        self._start = time.time()
        self._time_after_first_step = None
        self._bar = None
        self._finalized = False

    def update(self, current, values=None, finalize=None):
        """Records progress to step ``current``; ``values`` is a list of (name, value)."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or ():
            if name not in self._values_order:
                self._values_order.append(name)
            if finalize or name in self.stateful_metrics:
                self._values[name] = [value, 1]
            else:
                base = max(current - self._seen_so_far, 1)
                total = self._values.setdefault(name, [0.0, 0])
                total[0] += value * base
                total[1] += base
        self._seen_so_far = current
        now = time.time()
        time_per_unit = self._time_per_unit(current, now)
        if self.verbose == 1:
            if finalize:
                self._show_final(self._line(current, now, time_per_unit, True, self._dynamic))
            elif self._dynamic:
                self._show_running(self._line(current, now, time_per_unit, False, True))
        elif self.verbose == 2 and finalize:
            self._print(self._plain_line(current, now, time_per_unit))
        if finalize:
            self._finalized = True

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)

    # -- timing -------------------------------------------------------------
    def _time_per_unit(self, current, now):
        if not current:
            return 0.0
        if self._time_after_first_step is not None and current > 1:
            per_unit = (now - self._time_after_first_step) / (current - 1)
        else:
            per_unit = (now - self._start) / current
        if current == 1 and self._time_after_first_step is None:
            self._time_after_first_step = now
        return per_unit

    # -- formatting ---------------------------------------------------------
    def _metrics_text(self):
        parts = []
        for name in self._values_order:
            total, count = self._values[name]
            parts.append(f" - {name}: {format_value(total / max(1, count))}")
        return "".join(parts)

    def _line(self, current, now, time_per_unit, finished, color):
        bold, reset, green, grey = (_BOLD, _RESET, _GREEN, _GREY) if color else ("", "", "", "")
        if self.target is not None:
            digits = len(str(self.target))
            counter = f"{bold}{current:>{digits}}/{self.target}{reset}"
            done = int(self.width * min(current, self.target) / self.target) if self.target else self.width
            bar = f"{green}{BAR_CHAR * done}{reset}{grey}{BAR_CHAR * (self.width - done)}{reset}"
            line = f"{counter} {bar}"
        else:
            line = f"{bold}{current}/Unknown{reset}"
        if finished or self.target is None:
            timing = f"{now - self._start:.0f}s"
        else:
            timing = format_eta(time_per_unit * (self.target - current))
        line += f" {bold}{timing}{reset}"
        if current:
            line += f" {format_time_per_unit(time_per_unit, self.unit_name)}"
        return line + self._metrics_text()

    def _plain_line(self, current, now, time_per_unit):
        target = self.target if self.target is not None else current
        line = f"{current}/{target} - {now - self._start:.0f}s"
        if current:
            line += f" - {format_time_per_unit(time_per_unit, self.unit_name)}"
        return line + self._metrics_text()

    # -- output -------------------------------------------------------------
    def _tqdm(self):
        if self._bar is None:
            from tqdm import tqdm
            self._bar = tqdm(total=self.target, file=self.stream, bar_format="{desc}", mininterval=self.interval,
                             leave=True, ncols=1 << 20, nrows=1 << 10, dynamic_ncols=False)
        return self._bar

    def _show_running(self, line):
        bar = self._tqdm()
        bar.set_description_str(line, refresh=False)
        bar.update(self._seen_so_far - bar.n)

    def _show_final(self, line):
        if self._dynamic:
            bar = self._tqdm()
            bar.set_description_str(line, refresh=False)
            bar.n = self._seen_so_far
            bar.refresh()
            bar.close()
            self._bar = None
        else:
            self._print(line)

    def _print(self, line):
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
