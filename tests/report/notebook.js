// SPDX-License-Identifier: MIT
// Checks the HTML report of a notebook executed under the profiler (tests/e2e/test_notebooks.sh)
// in chromium against the same profile as JSON (`--format json`): the Files index lists the
// notebook once, as a notebook, and none of its cells' own files; the source view groups the
// lines by cell, labelled as the data says, and numbers them from 1 in each cell; and, in the report
// of a notebook that runs another (%run), that inline run as a child invocation; in that of a
// notebook that runs another through nbclient, the child kernel hanging off the waiting line.
// Usage: node notebook.js REPORT.html REPORT.json PARENT.html NBCLIENT.html
'use strict';

const fs = require('fs');
const path = require('path');
const { Harness, assert, eq, tableRows } = require('./lib');

const html = path.resolve(process.argv[2]);
const want = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const H = new Harness(path.dirname(html));
const file = path.basename(html);
const hot = want.lines.find((l) => l.kind === 'notebook' && (l.source || '').includes('# HOT'));

async function data(page) {
	return page.evaluate(() => {
		const D = JSON.parse(document.getElementById('ls-data').textContent);
		const s = D.sources.findIndex((x) => x.kind === 'notebook');
		return { s, src: D.sources[s], cellFiles: D.sources.filter((x) => x.kind === 'cell').length };
	});
}

H.test('files: the notebook is one row, of kind Notebook', async (page) => {
	await H.open(page, file, '#files');
	const d = await data(page);
	assert(d.s >= 0 && d.cellFiles > 0, 'no notebook with cell files in the data');
	const rows = await tableRows(page, '.index.files');
	const nb = rows.filter((r) => r.cells.kind === 'Notebook');
	eq(nb.length, 1, 'notebook rows');
	assert(nb[0].row === d.s, `the notebook row is source ${nb[0].row}, want ${d.s}`);
	const cells = rows.filter((r) => /ipykernel_\d+/.test(r.cells.source || ''));
	eq(cells.length, 0, 'rows named after a cell file');
});

H.test('source: lines grouped by cell and numbered within it', async (page) => {
	assert(hot, 'no HOT line in the JSON');
	await H.open(page, file, '#overview');
	const d = await data(page);
	await H.open(page, file, `#source/${d.s}/${hot.line}`);
	const rows = await tableRows(page, 'table.srctable');
	const r = rows.find((x) => x.row === hot.line);
	assert(r, 'no row for line ' + hot.line);
	const cell = d.src.cells[hot.cell - 1];
	eq(r.cells.ln.trim(), String(hot.cell_line), 'the HOT line is numbered within its cell');
	assert((r.group || '').includes(cell.label) ||
	       (await page.textContent('tr.ghead')).includes(cell.label),
	       `the HOT line is not under "${cell.label}": ${r.group}`);
	const labels = await page.evaluate(() => [...document.querySelectorAll('table.srctable tr.group')]
		.map((tr) => tr.textContent));
	for (const l of labels)
		assert(d.src.cells.some((c) => l.includes(c.label)), 'a group label not in the data: ' + l);
});

H.test('child: a %run notebook is an inline run of its line', async (page) => {
	const parent = path.basename(path.resolve(process.argv[4]));
	await H.open(page, parent, '#overview');
	const i = await page.evaluate(() => {
		const D = JSON.parse(document.getElementById('ls-data').textContent);
		return D.children.findIndex((c) => c.kind === 'notebook');
	});
	assert(i >= 0, 'no notebook child in ' + parent);
	await H.open(page, parent, '#child/' + i);
	const text = await page.textContent('main');
	for (const want of ['%run child.ipynb', 'Notebook run', 'Reference: an inline run', 'child.ipynb'])
		assert(text.includes(want), `the child view does not say "${want}"`);
	const src = await page.evaluate((i) => {
		const D = JSON.parse(document.getElementById('ls-data').textContent);
		return D.children[i].source;
	}, i);
	await H.open(page, parent, '#source/' + src);
	const rows = await tableRows(page, 'table.srctable');
	const child = rows.find((r) => (r.cells.source || '').includes('# CHILD'));
	assert(child, 'no CHILD line in the child notebook');
	eq(child.cells.ln.trim(), '2', 'the CHILD line is line 2 of its cell');
});

H.test('child: the kernel nbclient started hangs off the line that waited for it', async (page) => {
	const report = path.basename(path.resolve(process.argv[5]));
	await H.open(page, report, '#overview');
	const c = await page.evaluate(() => {
		const D = JSON.parse(document.getElementById('ls-data').textContent);
		const i = D.children.findIndex((x) => x.via === 'waiting thread');
		return i < 0 ? null : { i, src: D.children[i].src, line: D.children[i].line,
					path: D.sources[D.children[i].src].path };
	});
	assert(c, 'no child linked by its waiting thread in ' + report);
	assert(c.path.endsWith('/nbparent.ipynb'), 'the waiting line is in ' + c.path);
	await H.open(page, report, '#child/' + c.i);
	const text = await page.textContent('main');
	for (const want of ['Waited for at', "started by a library's thread while this line waited",
			    'ipykernel_launcher'])
		assert(text.includes(want), `the child view does not say "${want}"`);
	const links = await page.evaluate(() => [...document.querySelectorAll('main dd a')]
		.map((a) => a.getAttribute('href')));
	assert(links.some((h) => h.includes('source/' + c.src + '/' + c.line)),
	       `no link to source ${c.src} line ${c.line}: ${links}`);
	await H.open(page, report, `#source/${c.src}/${c.line}`);
	const rows = await tableRows(page, 'table.srctable');
	const r = rows.find((x) => x.row === c.line);
	assert(r && (r.cells.source || '').includes('# RUNS'), 'the linked line is not the execute() line');
});

H.run().then((failed) => process.exit(failed ? 1 : 0), (e) => {
	console.error(e);
	process.exit(1);
});
