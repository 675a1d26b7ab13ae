// SPDX-License-Identifier: MIT
// Checks the HTML report of a merged two-host, two-rank profile in chromium against its JSON
// report: the Overview's Ranks section (each rank's time on the STEP line, the slow rank marked,
// the totals row) and process labels and columns that name the host and rank.
// Usage: node ranks.js MERGED.html MERGED.json
'use strict';

const fs = require('fs');
const path = require('path');
const { Harness, assert, tableRows } = require('./lib');

const html = path.resolve(process.argv[2]);
const want = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
const H = new Harness(path.dirname(html));
const file = path.basename(html);

// "1.23 s" / "967 ms" -> seconds
function secs(text) {
	const m = /^([\d.,]+) (ns|µs|ms|s)$/.exec(text.trim());
	assert(m, 'not a time: ' + text);
	return Number(m[1].replace(/,/g, '')) * { ns: 1e-9, 'µs': 1e-6, ms: 1e-3, s: 1 }[m[2]];
}

const step = want.lines.filter((l) => (l.source || '').includes('# STEP'));
const rankOf = (l) => want.processes.find((p) => p.pid === l.pid && p.host === l.host).rank;

H.test('overview: the Ranks section, the slow rank marked on its line', async (page) => {
	await H.open(page, file, '#overview');
	const cells = await page.evaluate(() => {
		const t = document.querySelector('table.ranks');
		if (!t)
			return null;
		const head = Array.from(t.querySelectorAll('thead th')).map((th) => th.textContent);
		const rows = Array.from(t.querySelectorAll('tbody tr')).map((tr) =>
			Array.from(tr.children).map((td) => ({ text: td.textContent, worst: td.classList.contains('worst') })));
		return { head, rows };
	});
	assert(cells, 'no Ranks table');
	assert(cells.head[1].startsWith('rank 0') && cells.head[2].startsWith('rank 1'),
	       'columns: ' + cells.head.join(' | '));
	assert(cells.rows[0][0].text === 'All lines', 'first row: ' + cells.rows[0][0].text);
	const row = cells.rows.find((r) => /rank_work\.py:\d+/.test(r[0].text) &&
				    step.some((l) => r[0].text.endsWith(':' + l.line)));
	assert(row, 'no row for the STEP line: ' + cells.rows.map((r) => r[0].text).join(', '));
	for (const l of step) {
		const got = secs(row[1 + rankOf(l)].text);
		assert(Math.abs(got - l.time_s) <= 0.01 * l.time_s + 0.001,
		       `rank ${rankOf(l)}: ${got} s shown, ${l.time_s} s in the JSON`);
	}
	assert(row[2].worst && !row[1].worst, 'rank 1 (the slow one) is not the marked cell');
});

H.test('processes: host and rank columns, labels with the host', async (page) => {
	await H.open(page, file, '#overview');
	const rows = await tableRows(page, '.index.procs');
	const hosts = new Set(rows.map((r) => r.cells.host));
	for (const p of want.processes)
		assert(hosts.has(p.host), `host ${p.host} not in the process table: ${[...hosts]}`);
	assert(rows.some((r) => r.cells.rank === '1'), 'no rank 1 in the process table');
	const opts = await page.evaluate(() => Array.from(document.querySelectorAll('select option')).map((o) => o.textContent));
	for (const p of want.processes)
		assert(opts.some((o) => o.startsWith(p.host + ' ' + p.pid)), `no process label "${p.host} ${p.pid} ..." in ${opts}`);
});

H.run().then((failed) => process.exit(failed ? 1 : 0), (e) => {
	console.error(e);
	process.exit(1);
});
