// SPDX-License-Identifier: MIT
/*
 * Notebook cells of IPython kernels: where a kernel's cells can be found (its history database, the
 * notebook its launcher executes), and each sampled cell's text, verified by its name's hash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "monoclock.h"
#include "array.h"
#include "asuser.h"
#include "ipycell.h"
#include "log.h"
#include "notebooks.h"
#include "procfs.h"

void ls_notebooks_init(struct ls_notebooks *n)
{
	memset(n, 0, sizeof(*n));
	ls_nbusdt_init(&n->usdt);
}

/* What was read for nb's cells, and the descriptors of its history and notebook */
static void notebook_forget(struct ls_notebook *nb)
{
	ls_ipyhist_release(&nb->hist);
	ls_ipynb_release(&nb->ipynb);
	ls_hashmap_release(&nb->by_hash);
	if (nb->hist_fd >= 0)
		close(nb->hist_fd);
	if (nb->ipynb_fd >= 0)
		close(nb->ipynb_fd);
	nb->hist_fd = nb->ipynb_fd = -1;
}

static void notebook_release(struct ls_notebook *nb)
{
	free(nb->path);
	free(nb->nb_relpath);
	free(nb->history);
	free(nb->note);
	notebook_forget(nb);
}

void ls_notebooks_release(struct ls_notebooks *n)
{
	for (size_t i = 0; i < n->n; i++)
		notebook_release(&n->nbs[i]);
	for (size_t i = 0; i < n->ncells; i++) {
		free(n->cells[i].name);
		free(n->cells[i].key);
	}
	free(n->nbs);
	free(n->cells);
	ls_nbusdt_release(&n->usdt);
	memset(n, 0, sizeof(*n));
}

void ls_notebooks__unflush(struct ls_notebooks *n)
{
	for (size_t i = 0; i < n->n; i++)
		n->nbs[i].dirty = true;
	for (size_t i = 0; i < n->ncells; i++)
		n->cells[i].dirty = true;
}

/* A new notebook of kernel pid at the end of n->nbs (its caller counts it in n->n), or NULL */
static struct ls_notebook *notebook_add(struct ls_notebooks *n, pid_t pid, int64_t proc_id)
{
	struct ls_notebook *v = ls_array_grow(n->nbs, &n->cap, n->n, sizeof(*v), 4), *nb;

	if (!v)
		return NULL;
	n->nbs = v;
	nb = &n->nbs[n->n];
	memset(nb, 0, sizeof(*nb));
	nb->hist_fd = nb->ipynb_fd = -1;
	nb->pid = pid;
	nb->proc_id = proc_id;
	nb->dirty = true;
	nb->loaded_round = UINT_MAX;
	return nb;
}

static int notebook_of(struct ls_notebooks *n, pid_t pid, int64_t proc_id, size_t *out)
{
	struct ls_notebook *nb;
	int err;

	for (size_t i = 0; i < n->n; i++)
		if (n->nbs[i].pid == pid && n->nbs[i].proc_id == proc_id && !n->nbs[i].parent) {
			*out = i;
			return 0;
		}
	nb = notebook_add(n, pid, proc_id);
	if (!nb)
		return -ENOMEM;
	err = ls_nbfind__history(nb);
	if (!err)
		err = ls_nbfind__notebook_file(nb);
	if (err) {
		notebook_release(nb);
		return err;
	}
	ls_dbg("pid %d: notebook %s, history %s%s%s", pid, nb->path ? nb->path : "unknown",
	       nb->history ? nb->history : "none", nb->note ? ": " : "", nb->note ? nb->note : "");
	*out = n->n++;
	return 0;
}

/* Adds key -> val unless the key has a value: the first text with a hash wins */
static int index_one(struct ls_hashmap *m, uint64_t key, uint64_t val)
{
	uint64_t *slot = ls_hashmap__slot(m, key, val);

	return slot ? 0 : -ENOMEM;
}

/*
 * Every text by its hash, so that each cell is one lookup: a kernel that runs thousands of
 * generated cells against a history of 50000 rows must not hash them all for every cell
 */
static int index_texts(struct ls_notebook *nb)
{
	uint32_t h[LS_IPYCELL_MAX_NL + 1];
	int err = 0;

	ls_hashmap_release(&nb->by_hash);
	ls_hashmap_init(&nb->by_hash);
	for (size_t i = 0; !err && i < nb->hist.n; i++) {
		err = ls_ipycell__hashes(nb->hist.cells[i].text, nb->hist.cells[i].len, h);
		for (int k = 0; !err && k <= LS_IPYCELL_MAX_NL; k++)
			err = index_one(&nb->by_hash, h[k], (uint64_t)i << 8 | k);
	}
	for (size_t i = 0; !err && i < nb->ipynb.n; i++)
		err = index_one(&nb->by_hash,
				1ull << 32 | ls_ipycell__murmur2(nb->ipynb.cells[i].text,
								 nb->ipynb.cells[i].len,
								 LS_IPYCELL_SEED),
				(uint64_t)i << 8);
	return err;
}

/*
 * A read of path that failed with err becomes a note (why), except that the kernel has ended
 * when a read of it failed before (said why then; *refused); true when it is -ENOMEM
 */
static bool load_failed(struct ls_notebook *nb, const char *path, int err, const char *why,
			bool *refused)
{
	if (err && err != -ENOMEM && !(err == -ESRCH && *refused)) {
		ls_dbg("pid %d: %s: %s", nb->pid, path, why);
		ls_notebook__note(nb, why);
		*refused = err != -ESRCH;
	}
	return err == -ENOMEM;
}

/* Reads the history and the notebook again, once per round; their failures become notes */
static int reload(struct ls_notebooks *n, struct ls_notebook *nb)
{
	uint64_t t0 = ls_mono_ns(), wait;
	char why[256];
	int err;

	/* once per round; for a new cell not in them (just edited and run), again after 10 ms and
	 * five times the last read, so that a kernel generating cells cannot keep us reading */
	wait = nb->load_cost_ns * 5 > LS_NB_REFRESH_NS ? nb->load_cost_ns * 5 : LS_NB_REFRESH_NS;
	if (nb->loaded_round == n->round && !(n->refresh && t0 - nb->loaded_ns >= wait))
		return 0;
	nb->loaded_round = n->round;
	nb->loaded_ns = t0;
	ls_ipyhist_release(&nb->hist);
	ls_ipynb_release(&nb->ipynb);
	if (nb->history) {
		why[0] = 0;
		err = ls_ipyhistory__load(nb->pid, nb->history, &nb->hist_fd, &nb->hist, why,
					  sizeof(why));
		if (load_failed(nb, nb->history, err, why, &nb->hist_refused))
			return err;
	}
	if (nb->path) {
		/*
		 * with the kernel's rights, not its launcher's: a launcher may be more privileged,
		 * and a 32-bit hash is no proof against a kernel that wants another user's cell
		 * text
		 */
		why[0] = 0;
		err = ls_ipynb__load(nb->pid, nb->path[0] == '/' ? nb->path : nb->nb_relpath,
				     &nb->ipynb_fd, &nb->ipynb, why, sizeof(why));
		if (load_failed(nb, nb->path, err, why, &nb->ipynb_refused))
			return err;
	}
	err = index_texts(nb);
	nb->load_cost_ns = ls_mono_ns() - t0;
	return err;
}

/*
 * An IPython shell's cell: the history row of its execution count whose compiled (transformed)
 * text hashes to its name, newest session first. The raw text is shown when it has as many lines
 * (a line magic), else the compiled one (a cell magic is one line of it).
 */
static int match_input(struct ls_sources *s, struct ls_nbcell *c, const struct ls_notebook *nb)
{
	for (size_t i = 0; i < nb->hist.n; i++) {
		const struct ls_ipyhist_cell *h = &nb->hist.cells[i];
		const char *compiled = h->source ? h->source : h->text;
		size_t clen = h->source ? h->slen : h->len, len;
		int nl;
		char *text;

		if (h->line != c->input)
			continue;
		nl = ls_ipycell__verify_sha48(compiled, clen, c->sha48);
		if (nl == -ENOMEM)
			return nl;
		if (nl < 0)
			continue;
		if (ls_ipycell__count_lines(h->text, h->len) ==
		    ls_ipycell__count_lines(compiled, clen))
			compiled = h->text, clen = h->len;
		text = ls_ipycell__with_newlines(compiled, clen, nl, &len);
		if (!text)
			return -ENOMEM;
		c->how = "history";
		c->number = c->input;
		return ls_sources__set_text(s, c->file_id, text, len, NULL) ?: 1;
	}
	return 0;
}

int ls_notebooks__announced(struct ls_notebooks *n, int64_t proc_id, const void *msg, size_t len)
{
	return ls_nbusdt__record(&n->usdt, proc_id, msg, len);
}

/* c's notebook cell, "index:N" (N-th code cell of the file) or "id:ID" (the front end's id) */
static int set_key(struct ls_nbcell *c, const char *kind, const char *id, int index)
{
	free(c->key);
	if ((id ? asprintf(&c->key, "%s:%s", kind, id) : asprintf(&c->key, "%s:%d", kind, index)) <
	    0)
		c->key = NULL;
	return c->key ? 0 : -ENOMEM;
}

/* What python-usdt announced under c's name, kept when it hashes to the name (nbusdt.c) */
static int match_usdt(struct ls_sources *s, struct ls_nbcell *c, const struct ls_notebook *nb,
		      const struct ls_nbusdt *u)
{
	const struct ls_nbusdt_cell *a = c->name ? ls_nbusdt__find(u, nb->proc_id, c->name) : NULL;
	char *text;
	size_t len;
	int err = a ? ls_nbusdt__verify(a, c->input, c->sha48, c->hash, &text, &len) : 0;

	if (err <= 0)
		return err;
	if (a->id_len && set_key(c, "id", ls_nbusdt_cell__id(a), 0)) {
		free(text);
		return -ENOMEM;
	}
	c->how = "python-usdt";
	c->number = c->input ? c->input : a->number > 0 ? a->number : 0;
	return ls_sources__set_text(s, c->file_id, text, len, NULL) ?: 1;
}

/* python-usdt gave c's text; which notebook-file cell it is, is not known yet */
#define wants_file(c)                                               \
	((c)->how && !(c)->key && !(c)->input && (c)->file_tries && \
	 (c)->file_tries < LS_NBCELL_TRIES)

/* The file's code cell of c (python-usdt gave its text): by its front-end id, else by its text,
 * read again at once, soon and at later flushes while not found (saved since?). 0, -ENOMEM */
static int file_cell(struct ls_notebooks *n, struct ls_nbcell *c)
{
	struct ls_notebook *nb = &n->nbs[c->notebook];
	int err = reload(n, nb);
	uint64_t v;

	if (!err && !c->key && !ls_hashmap__get(&nb->by_hash, 1ull << 32 | c->hash, &v) &&
	    !c->file_tries) {
		n->refresh = true;
		err = reload(n, nb);
		n->refresh = false;
	}
	if (err)
		return err;
	if (c->key) {
		for (size_t i = 0; i < nb->ipynb.n; i++)
			if (nb->ipynb.cells[i].id && !strcmp(c->key + 3, nb->ipynb.cells[i].id))
				c->number = nb->ipynb.cells[i].index;
		return 0;
	}
	if (!ls_hashmap__get(&nb->by_hash, 1ull << 32 | c->hash, &v)) {
		c->file_tries++;
		return 0;
	}
	c->number = nb->ipynb.cells[v >> 8].index;
	c->dirty = true;
	return set_key(c, "index", NULL, c->number);
}

/* Finds c's text in notebook nbi's sources; 1 when found (the file has it), 0 when not, -ENOMEM */
static int match_in(struct ls_notebooks *n, struct ls_sources *s, struct ls_nbcell *c, size_t nbi)
{
	struct ls_notebook *nb = &n->nbs[nbi];
	int err = match_usdt(s, c, nb, &n->usdt);
	uint64_t v;
	char *text;
	size_t len;

	if (err == 1 && !c->input)
		return file_cell(n, c) ?: 1;
	if (!err)
		err = reload(n, nb);
	if (err)
		return err;
	if (c->input)
		return match_input(s, c, nb);
	if (ls_hashmap__get(&nb->by_hash, c->hash, &v)) {
		const struct ls_ipyhist_cell *h = &nb->hist.cells[v >> 8];

		text = ls_ipycell__with_newlines(h->text, h->len, (int)(v & 0xff), &len);
		if (!text)
			return -ENOMEM;
		c->how = "history";
		c->number = h->line > 0 && h->line < INT_MAX ? (int)h->line : 0;
		return ls_sources__set_text(s, c->file_id, text, len, NULL) ?: 1;
	}
	if (ls_hashmap__get(&nb->by_hash, 1ull << 32 | c->hash, &v)) {
		const struct ls_ipynb_cell *k = &nb->ipynb.cells[v >> 8];

		text = strdup(k->text);
		if (!text)
			return -ENOMEM;
		c->how = "notebook";
		c->number = k->index;
		if (set_key(c, "index", NULL, k->index)) {
			free(text);
			return -ENOMEM;
		}
		return ls_sources__set_text(s, c->file_id, text, k->len, NULL) ?: 1;
	}
	err = ls_notebooks__adopt_from_cwd(nb, c->hash, c->input != 0);
	return err == 1 ? match_in(n, s, c, nbi) : err;
}

/* The path a `%run X.ipynb` line names (quotes taken off), or false */
static bool run_line(const char *line, size_t len, char *path, size_t pathlen)
{
	const char *p = line, *end = line + len, *q;
	size_t n;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (end - p < 5 || memcmp(p, "%run", 4) || (p[4] != ' ' && p[4] != '\t'))
		return false;
	for (p += 4; p < end && (*p == ' ' || *p == '\t'); p++)
		;
	if (p < end && (*p == '"' || *p == '\'')) {
		q = memchr(p + 1, *p, end - p - 1);
		if (!q)
			return false;
		p++;
	} else {
		for (q = p; q < end && *q != ' ' && *q != '\t' && *q != '\r'; q++)
			;
	}
	n = q - p;
	if (n < 7 || n >= pathlen || memcmp(q - 6, ".ipynb", 6) || memchr(p, 0, n))
		return false;
	memcpy(path, p, n);
	path[n] = 0;
	return true;
}

/* The child notebook (pid's kernel, path) that line of parent's cell file runs; index or -errno */
static int child_of(struct ls_notebooks *n, size_t parent, int64_t file, int line, const char *path)
{
	const struct ls_notebook *p = &n->nbs[parent];
	struct ls_notebook *nb;
	int children = 0;

	for (size_t i = 0; i < n->n; i++) {
		if (n->nbs[i].pid != p->pid || !n->nbs[i].parent)
			continue;
		if (!strcmp(n->nbs[i].nb_relpath, path))
			return (int)i;
		children++;
	}
	/* each is read again at every round a cell is not found: a cell of 10^5 %run lines is not
	 */
	if (children >= LS_NB_MAX_CHILDREN)
		return -E2BIG;
	nb = notebook_add(n, p->pid, p->proc_id);
	if (!nb)
		return -ENOMEM;
	p = &n->nbs[parent];
	nb->launcher = p->pid; /* %run names it from the kernel's cwd */
	nb->parent = parent + 1;
	nb->parent_file = file;
	nb->parent_line = line;
	nb->nb_relpath = strdup(path);
	nb->path = ls_nbfind__from_cwd(p->pid, path);
	if (!nb->path || !nb->nb_relpath) {
		notebook_release(nb);
		return -ENOMEM;
	}
	return (int)n->n++;
}

/* c in a notebook that a verified cell of the same kernel runs with %run: 1 when found there */
static int match_child(struct ls_notebooks *n, struct ls_sources *s, struct ls_nbcell *c)
{
	pid_t pid = n->nbs[c->notebook].pid;
	char path[PATH_MAX];
	int err;

	for (size_t i = 0; i < n->ncells; i++) {
		const struct ls_nbcell *p = &n->cells[i];
		const struct ls_file *f = &s->files[p->file_id];
		const char *t, *end;
		int line = 1;

		if (!p->how || n->nbs[p->notebook].pid != pid || f->source_id < 0)
			continue;
		t = s->srcs[f->source_id].text;
		end = t + s->srcs[f->source_id].len;
		for (const char *l = t; l < end; line++) {
			const char *eol = memchr(l, '\n', end - l);
			size_t parent = p->notebook;
			int child;

			if (!eol)
				eol = end;
			if (run_line(l, eol - l, path, sizeof(path))) {
				child = child_of(n, parent, p->file_id, line, path);
				if (child == -E2BIG)
					return 0;
				if (child < 0)
					return child;
				err = match_in(n, s, c, child);
				if (err) {
					if (err > 0) {
						c->notebook = child;
						c->seq = ++n->nbs[child].ncells;
					}
					return err;
				}
			}
			l = eol + 1;
		}
	}
	return 0;
}

/* Finds c's text: its kernel's history and notebook, then what its verified cells %run */
static int resolve(struct ls_notebooks *n, struct ls_sources *s, struct ls_nbcell *c)
{
	int err = match_in(n, s, c, c->notebook);

	return err ? err : match_child(n, s, c);
}

/* Why a cell has no text: what was tried */
static int not_found(struct ls_notebooks *n, struct ls_sources *s, struct ls_nbcell *c, bool last)
{
	const struct ls_notebook *nb = &n->nbs[c->notebook];
	char why[1024];
	bool in_hist = nb->history && nb->hist.n, in_nb = nb->path && nb->ipynb.n;
	char name[48];

	if (c->input)
		snprintf(name, sizeof(name), "IPython cell %d (%012llx)", c->input,
			 (unsigned long long)c->sha48);
	else
		snprintf(name, sizeof(name), "notebook cell %u", c->hash);
	snprintf(why, sizeof(why), "%s: %s%s%s%s%s", name,
		 last ? "no text found that hashes to its name" : "text not found yet",
		 in_hist ? " (not in the history database)" : "",
		 in_nb ? " (not a code cell of " : "", in_nb ? nb->path : "", in_nb ? ")" : "");
	if (nb->note) {
		size_t l = strlen(why);

		snprintf(why + l, sizeof(why) - l, "; %s", nb->note);
	}
	return ls_sources__set_text(s, c->file_id, NULL, 0, why);
}

int64_t ls_notebooks__cell(struct ls_notebooks *n, struct ls_sources *s, pid_t pid, int64_t proc_id,
			   const struct ls_source_view *view, const char *path)
{
	struct ls_nbcell *c, *v;
	uint32_t hash = 0;
	uint64_t sha48 = 0;
	int64_t fid;
	size_t nbi;
	int kpid, input = 0, err;

	if (!ls_ipycell__parse(path, &kpid, &hash) &&
	    !(ls_ipycell__parse_input(path, &input, &sha48) && input > 0))
		return ls_sources__lookup_in(s, pid, view, path, ls_mono_ns());
	err = notebook_of(n, pid, proc_id, &nbi);
	if (err)
		return err;
	fid = ls_sources__add_text(s, path, NULL, 0, "notebook cell: text not found yet");
	if (fid < 0)
		return fid;
	for (size_t i = 0; i < n->ncells; i++)
		if (n->cells[i].file_id == fid)
			return fid;
	v = ls_array_grow(n->cells, &n->ccap, n->ncells, sizeof(*v), 16);
	if (!v)
		return -ENOMEM;
	n->cells = v;
	c = &n->cells[n->ncells++];
	memset(c, 0, sizeof(*c));
	c->file_id = fid;
	c->notebook = nbi;
	c->seq = ++n->nbs[nbi].ncells;
	c->hash = hash;
	c->input = input;
	c->sha48 = sha48;
	c->dirty = true;
	c->name = strdup(path);
	if (!c->name)
		return -ENOMEM;
	err = resolve(n, s, c);
	if (err == 0) {
		n->refresh = true;
		err = resolve(n, s, c);
		n->refresh = false;
	}
	if (err == 0)
		err = not_found(n, s, c, false);
	return err < 0 ? err : fid;
}

/* With no cell left to look for, the copies of histories and notebooks (up to 64 MB each) go */
static void forget_texts(struct ls_notebooks *n)
{
	for (size_t i = 0; i < n->ncells; i++)
		if (!n->cells[i].how && n->cells[i].tries < LS_NBCELL_TRIES)
			return;
	for (size_t i = 0; i < n->n; i++) {
		notebook_forget(&n->nbs[i]);
		n->nbs[i].loaded_round = UINT_MAX; /* a new cell reads them again */
	}
}

#define QUICK_TRIES 3
#define QUICK_NS    100000000ULL /* 0.1 s, then 0.2 s */

int ls_notebooks__retry_soon(struct ls_notebooks *n, struct ls_sources *s, uint64_t now)
{
	bool due = false;
	int err = 0;

	for (size_t i = 0; i < n->ncells && !due; i++) {
		const struct ls_nbcell *c = &n->cells[i];

		due = (wants_file(c) || (!c->how && c->tries < LS_NBCELL_TRIES)) &&
		      c->quick < QUICK_TRIES && now >= c->next_ns;
	}
	if (!due)
		return 0;
	n->round++; /* the history and notebook are read again */
	for (size_t i = 0; i < n->ncells && err >= 0; i++) {
		struct ls_nbcell *c = &n->cells[i];

		if ((!wants_file(c) && (c->how || c->tries >= LS_NBCELL_TRIES)) ||
		    c->quick >= QUICK_TRIES || now < c->next_ns)
			continue;
		c->quick++;
		c->next_ns = now + (QUICK_NS << (c->quick - 1));
		if (!ls_procfs__alive(n->nbs[c->notebook].pid))
			continue; /* the flush's retry says so */
		err = wants_file(c) ? file_cell(n, c) : resolve(n, s, c);
		if (err != 0)
			c->dirty = true;
	}
	forget_texts(n);
	return err < 0 ? err : 0;
}

int ls_notebooks__retry(struct ls_notebooks *n, struct ls_sources *s)
{
	int err = 0;

	n->round++;
	for (size_t i = 0; i < n->ncells && err >= 0; i++) {
		struct ls_nbcell *c = &n->cells[i];

		if (wants_file(c) && ls_procfs__alive(n->nbs[c->notebook].pid)) {
			err = file_cell(n, c); /* its text is known; which cell it is, not yet */
			continue;
		}
		if (c->how || c->tries >= LS_NBCELL_TRIES)
			continue;
		c->tries++;
		/* a kernel that is gone has no files to read with its rights: only what it could
		 * open, once more (the history it wrote as it exited, a shell's last cells; the
		 * notebook saved since), from the descriptors it had */
		if (!ls_procfs__alive(n->nbs[c->notebook].pid))
			c->tries = LS_NBCELL_TRIES;
		if (c->tries < LS_NBCELL_TRIES || n->nbs[c->notebook].hist_fd >= 0 ||
		    n->nbs[c->notebook].ipynb_fd >= 0)
			err = resolve(n, s, c);
		if (err == 0 && c->tries >= LS_NBCELL_TRIES)
			err = not_found(n, s, c, true);
		if (err != 0)
			c->dirty = true;
	}
	forget_texts(n);
	return err < 0 ? err : 0;
}
