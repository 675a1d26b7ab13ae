# SPDX-License-Identifier: MIT
"""Line numbers of marked lines, for the GPU workloads that say which line launched what."""


def marks(path, word):
    """Labels -> line numbers of the lines of path that end in `# WORD: label`."""
    tag = "# %s:" % word
    lines = {}
    with open(path) as f:
        for n, text in enumerate(f, 1):
            if tag in text and "lines[" not in text:
                lines[text.split(tag)[1].strip()] = n
    return lines
