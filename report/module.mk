# SPDX-License-Identifier: MIT
# report/: rules for this directory (see the top-level Makefile for the variables it extends).
LIB_OBJS += $(OUTPUT)/report/pytok.o $(OUTPUT)/report/pyindex.o
