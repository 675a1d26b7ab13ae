// SPDX-License-Identifier: MIT
// Checks the HTML report of a merged two-host, two-rank profile in chromium against its JSON
// report: the Overview's Ranks section (each rank's time on the STEP line, the slow rank marked,
// the totals row) and process labels and columns that name the host and rank.
// Usage: node ranks.js MERGED.html MERGED.json
'use strict';

const fs = require('fs');
const path = require('path');
const { Harness, assert, eq, tableRows } = require('./lib');

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

// The hot-lines table's time on the STEP line, as shown.
async function stepTime(page) {
	const rows = await tableRows(page, 'table.hot');
	const row = rows.find((r) => step.some((l) => new RegExp('rank_work\\.py:' + l.line + '\\b').test(r.cells.loc)));
	assert(row, 'no STEP line in the hot lines: ' + rows.map((r) => r.cells.loc).join(', '));
	return secs(row.cells.time);
}

H.test('selector: every process of one rank, of one host', async (page) => {
	await H.open(page, file, '#overview');
	const opts = await page.evaluate(() => Array.from(document.querySelectorAll('#proc-select optgroup')).map((g) => ({
		label: g.label, opts: Array.from(g.children).map((o) => ({ v: o.value, t: o.textContent })) })));
	const ranks = opts.find((g) => g.label === 'Ranks'), hosts = opts.find((g) => g.label === 'Hosts');
	assert(ranks && hosts, 'optgroups: ' + JSON.stringify(opts));
	const hostOf = (r) => want.processes.find((p) => p.rank === r).host;
	for (const r of [0, 1]) {
		const truth = step.filter((l) => rankOf(l) === r).reduce((a, l) => a + l.time_s, 0);
		for (const [group, name] of [[ranks, 'rank ' + r], [hosts, 'host ' + hostOf(r)]]) {
			const o = group.opts.find((x) => x.t.startsWith(name + ' ('));
			assert(o, `no option "${name}" in ${JSON.stringify(group.opts)}`);
			await page.selectOption('#proc-select', o.v);
			await page.waitForFunction((g) => location.hash.endsWith('?g=' + g), String(-2 - Number(o.v)));
			const got = await stepTime(page);
			assert(Math.abs(got - truth) <= 0.01 * truth + 0.001, `${name}: ${got} s on the STEP line, ${truth} s in the JSON`);
			const procs = await tableRows(page, '.index.procs');
			const marked = procs.filter((x) => x.cls.includes('selected')).map((x) => x.cells.host + ' ' + x.cells.rank);
			const mine = want.processes.filter((p) => (name.startsWith('rank') ? p.rank === r : p.host === hostOf(r)));
			eq(marked.length, mine.length, `${name}: rows marked in the process table: ${marked}`);
			assert((await page.textContent('#proc-info')).startsWith('combined'), `${name}: the header's note`);
			const cards = await page.evaluate(() => Object.fromEntries(Array.from(document.querySelectorAll('.card')).map(
				(c) => [c.querySelector('.clabel').textContent, c.querySelector('.cvalue').textContent])));
			const samples = mine.reduce((a, p) => a + p.samples, 0);
			eq(cards.Samples, samples.toLocaleString('en'), `${name}: the Samples card`);
			eq(cards.Processes, String(mine.length), `${name}: the Processes card`);
		}
	}
	// a permalink keeps the group, and the flame graph's top frame is named after it
	const r1 = ranks.opts.find((x) => x.t.startsWith('rank 1 ('));
	await H.open(page, file, '#flame?g=' + (-2 - Number(r1.v)));
	eq(await page.$eval('#proc-select', (s) => s.value), r1.v, 'group from the permalink');
	assert((await page.textContent('.content')).includes('in rank 1'), 'flame summary names the rank');
	// a group beyond the list is all processes, not an error
	await H.open(page, file, '#overview?g=99');
	eq(await page.$eval('#proc-select', (s) => s.value), '-1', 'unknown group: all processes');
});

// A copy of the report whose data has more processes: a rank's loader worker and its child (no
// RANK of their own), a process on the other host whose ppid is that rank's pid there, and a ppid
// loop. The selector's rank groups must count the first two with the rank, and nothing else.
H.test('a process without a rank goes with its nearest ancestor\'s, on its own host', async (page) => {
	const text = fs.readFileSync(html, 'utf8');
	const m = /(<script type="application\/json" id="ls-data">)([\s\S]*?)(<\/script>)/.exec(text);
	assert(m, 'no report data in ' + html);
	const doc = JSON.parse(m[2]);
	const r1 = doc.processes.find((p) => p.rank === 1), other = doc.processes.find((p) => p.host !== r1.host);
	const add = (pid, ppid, host) => doc.processes.push({ pid, ppid, host, comm: 'extra', argv: 'extra', samples: 0 });
	add(900001, r1.pid, r1.host);
	add(900002, 900001, r1.host);
	add(r1.pid + 1, r1.pid, other.host);
	add(900003, 900004, r1.host);
	add(900004, 900003, r1.host);
	const body = JSON.stringify(doc).replace(/</g, '\\u003c');
	const copy = 'inherit-' + file;
	fs.writeFileSync(path.join(path.dirname(html), copy), text.slice(0, m.index) + m[1] + body + m[3] +
			 text.slice(m.index + m[0].length));
	await H.open(page, copy, '#overview');
	const opts = await page.evaluate(() => Array.from(document.querySelectorAll('#proc-select optgroup[label="Ranks"] option')).map((o) => o.textContent));
	eq(JSON.stringify(opts), JSON.stringify(['rank 0 (1)', 'rank 1 (3)']), 'rank groups with their processes');
});

// A copy whose lines have GPU work: the STEP line launched 3 s on each rank, of which rank 0 spent
// 2 s and rank 1 0.5 s in NCCL (rank 0 waits for rank 1). Compare switches the table to GPU time
// and to NCCL, the largest marked; a copy without GPU work has no switch.
H.test('ranks: GPU time and NCCL per rank, the largest marked', async (page) => {
	const text = fs.readFileSync(html, 'utf8');
	const m = /(<script type="application\/json" id="ls-data">)([\s\S]*?)(<\/script>)/.exec(text);
	const doc = JSON.parse(m[2]), L = doc.lines, n = L.proc.length;
	const stepAt = (i) => step.some((l) => doc.sources[L.src[i]] && L.line[i] === l.line &&
		doc.processes[L.proc[i]].pid === l.pid && doc.processes[L.proc[i]].host === l.host);
	const rankAt = (i) => doc.processes[L.proc[i]].rank;
	L.gpu_s = Array.from({ length: n }, (_, i) => (stepAt(i) ? 3 : null));
	L.gpu_nccl_s = Array.from({ length: n }, (_, i) => (stepAt(i) ? (rankAt(i) === 0 ? 2 : 0.5) : null));
	const copy = 'gpu-' + file;
	fs.writeFileSync(path.join(path.dirname(html), copy), text.slice(0, m.index) + m[1] +
			 JSON.stringify(doc).replace(/</g, '\\u003c') + m[3] + text.slice(m.index + m[0].length));
	await H.open(page, copy, '#overview');
	const labels = await page.$$eval('#rankmetric button', (b) => b.map((x) => x.textContent));
	eq(JSON.stringify(labels), JSON.stringify(['Time', 'GPU time', 'NCCL']), 'the Compare switch');
	const table = () => page.evaluate(() => {
		const t = document.querySelector('table.ranks');
		return { metric: t.dataset.metric, head: Array.from(t.querySelectorAll('thead th')).map((th) => th.textContent),
			 rows: Array.from(t.querySelectorAll('tbody tr')).map((tr) => Array.from(tr.children).map((td) =>
				 ({ text: td.textContent, worst: td.classList.contains('worst') }))) };
	});
	await page.click('#rankmetric button[data-value="gpu_nccl_s"]');
	const t = await table();
	eq(t.metric, 'gpu_nccl_s', 'the NCCL table');
	assert(t.head[t.head.length - 1] === 'Largest / median', 'heading: ' + t.head.join(' | '));
	const row = t.rows.find((r) => step.some((l) => r[0].text.endsWith(':' + l.line)));
	assert(row, 'no STEP row: ' + t.rows.map((r) => r[0].text).join(', '));
	eq(secs(row[1].text), 2, 'rank 0 NCCL');
	eq(secs(row[2].text), 0.5, 'rank 1 NCCL');
	assert(row[1].worst && !row[2].worst, 'rank 0, which waits most, is marked');
	await page.click('#rankmetric button[data-value="gpu_s"]');
	const g = await table();
	eq(g.metric, 'gpu_s', 'the GPU time table');
	// only lines with GPU work (the STEP line; once per source version the ranks ran), and the
	// totals row is their sum on each rank
	const lines = g.rows.slice(1);
	assert(lines.length >= 1 && lines.every((r) => step.some((l) => r[0].text.endsWith(':' + l.line))),
	       'only the lines with GPU work: ' + g.rows.map((r) => r[0].text).join(', '));
	for (let k = 1; k < g.head.length - 1; k++)
		eq(secs(g.rows[0][k].text), lines.reduce((a, r) => a + secs(r[k].text), 0),
		   'rank column ' + k + ': the totals are the lines\' GPU time');
	await H.open(page, file, '#overview');
	eq(await page.$$eval('#rankmetric', (x) => x.length), 0, 'no switch without GPU work');
});

H.run().then((failed) => process.exit(failed ? 1 : 0), (e) => {
	console.error(e);
	process.exit(1);
});
