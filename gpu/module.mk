# SPDX-License-Identifier: MIT
# gpu/: rules for this directory (see the top-level Makefile for the variables it extends).
