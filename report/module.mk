# SPDX-License-Identifier: MIT
# report/: rules for this directory (see the top-level Makefile for the variables it extends).
LIB_OBJS += $(addprefix $(OUTPUT)/report/,pytok.o pyindex.o pyparse.o pyexpr.o pyresolve.o)
