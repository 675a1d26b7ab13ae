# SPDX-License-Identifier: MIT
# report/: rules for this directory (see the top-level Makefile for the variables it extends).
# Every report/*.c is a library object: the model, writers, tokenizer and symbol index.
LIB_OBJS += $(patsubst report/%.c,$(OUTPUT)/report/%.o,$(wildcard report/*.c))
