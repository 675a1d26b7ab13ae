# SPDX-License-Identifier: MIT
"""A small data pipeline, the bundled example for `make demo`.

It generates sensor readings, parses them as CSV, cleans them with two implementations of a rolling
window (one quadratic, one incremental), runs a worker pool over stations in child processes, and
calls a child Python script through a shell: every process of the job shows up in the report.
"""
from __future__ import annotations

import csv
import io
import math
import multiprocessing
import random
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Reading:
    station: int
    minute: int
    temperature: float


def generate(stations: int, minutes: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["station", "minute", "temperature"])
    for station in range(stations):
        for minute in range(minutes):
            temperature = 18 + station + 5 * math.sin(minute / 40) + rng.gauss(0, 0.5)
            writer.writerow([station, minute, f"{temperature:.3f}"])
    return out.getvalue()


def parse(text: str) -> list[Reading]:
    return [
        Reading(int(row["station"]), int(row["minute"]), float(row["temperature"]))
        for row in csv.DictReader(io.StringIO(text))
    ]


def rolling_mean_slow(values: list[float], window: int) -> list[float]:
    means = []
    for i in range(len(values)):
        segment = values[max(0, i - window + 1) : i + 1]
        total = 0.0
        for value in segment:  # quadratic: re-adds the whole window every step
            total += value
        means.append(total / len(segment))
    return means


def rolling_mean_fast(values: list[float], window: int) -> list[float]:
    means, buf, total = [], deque(), 0.0
    for value in values:
        buf.append(value)
        total += value
        if len(buf) > window:
            total -= buf.popleft()
        means.append(total / len(buf))
    return means


def station_report(station: int) -> tuple[int, float]:
    """Runs in a worker process: CPU work per station."""
    readings = parse(generate(1, 6000, seed=station))
    temps = [r.temperature for r in readings]
    smooth = rolling_mean_slow(temps, 240)
    anomalies = sum(1 for t, m in zip(temps, smooth) if abs(t - m) > 1.0)
    return station, anomalies / len(temps)


def main() -> None:
    readings = parse(generate(4, 4000))
    temps = [r.temperature for r in readings]
    slow = rolling_mean_slow(temps, 240)
    fast = rolling_mean_fast(temps, 240)
    assert all(abs(a - b) < 1e-6 for a, b in zip(slow, fast))

    with multiprocessing.get_context("fork").Pool(2) as pool:
        shares = pool.map(station_report, range(4))

    subprocess.run(["/bin/sh", "-c", f"exec {sys.executable} {HERE / 'summarize.py'} {len(temps)}"],
                   check=True)
    print("anomaly share per station:", ", ".join(f"{s}:{a:.3f}" for s, a in shares))


if __name__ == "__main__":
    main()
