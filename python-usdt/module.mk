# SPDX-License-Identifier: MIT
# python-usdt/: rules for this directory (see the top-level Makefile for the variables it extends).
