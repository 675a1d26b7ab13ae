# SPDX-License-Identifier: MIT
# bench/: rules for this directory (see the top-level Makefile for the variables it extends).
