# SPDX-License-Identifier: MIT
"""A child step of the example pipeline: started through /bin/sh -c exec by pipeline.py."""
import statistics
import sys


def summarize(n: int) -> float:
    values = [((i * 2654435761) % 1000) / 10 for i in range(n * 60)]
    return statistics.pstdev(values)


print("summary spread:", round(summarize(int(sys.argv[1])), 3))
