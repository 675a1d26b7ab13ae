// SPDX-License-Identifier: MIT
// Browser tests of the report's Spark view on the feature fixture (report/module.mk builds it;
// tests/report/run.sh runs this after run.js): the applications line, the action overview
// (selection, order, trigger locations), an action's page (cards, trigger, plan steps, stages,
// plans, how the numbers were collected) and the Spark badge on a trigger line. Expected values
// are computed here from the fixture JSON, never written down.
// Usage: node spark.js DIR [NAME-FILTER]
'use strict';

const { Harness, assert, eq, tableRows, clickSort, sortState, expectedOrder, readFixture } = require('./lib');

const dir = process.argv[2];
const filter = process.argv[3];
const H = new Harness(dir);
const FIX = readFixture(dir, 'fixture.json');
const SP = FIX.spark;
const A = SP.actions;
const APPS = SP.applications;
const OVERVIEW = '.content table.spark';
const STEPS = '.content table.steps';
const STAGES = '.content table.stages';
const DASH = '\u2013';

// ---- the report's number formats (00-util.js), restated ------------------------------------

const NF0 = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const NF1 = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
const isNum = (v) => typeof v === 'number' && v === v;
const fixed = (v) => v.toFixed(Math.abs(v) < 10 ? 2 : Math.abs(v) < 100 ? 1 : 0);

function fmtTime(s) {
	if (!isNum(s))
		return DASH;
	if (s === 0)
		return '0 s';
	const a = Math.abs(s);
	if (a >= 1000)
		return NF0.format(s) + ' s';
	if (a >= 1)
		return fixed(s) + ' s';
	if (a >= 1e-3)
		return fixed(s * 1e3) + ' ms';
	if (a >= 1e-6)
		return fixed(s * 1e6) + ' \u00b5s';
	return fixed(s * 1e9) + ' ns';
}

function fmtBytes(b) {
	if (!isNum(b))
		return DASH;
	let a = Math.abs(b), u = 0;
	const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
	while (a >= 1000 && u < units.length - 1) {
		a /= 1000;
		u++;
	}
	return (b < 0 ? '-' : '') + (u === 0 ? NF0.format(a) : NF1.format(a)) + ' ' + units[u];
}

const fmtCount = (n) => (isNum(n) ? NF0.format(n) : DASH);

// "app.py:27", as the report writes a location (the fixture's Spark lines are not in notebooks)
const locText = (s, line) => `${FIX.sources[s].name}:${line}`;
const hasSrc = (a) => isNum(a.src) && !!FIX.sources[a.src];

// The actions a selection lists: those of its processes; with every process, also those no
// driver line matched (proc null).
const listed = (p) => A.map((a, i) => i).filter((i) => (p === undefined ? true : A[i].proc === p));

async function overviewRows(page) {
	return tableRows(page, OVERVIEW);
}

// Checks an overview order against the fixture's values, both ways from the first click.
async function checkOrder(page, col, ids, get, msg) {
	const items = ids.map((i) => ({ id: i, k: i, v: isNum(get(A[i])) ? get(A[i]) : null }));
	await clickSort(page, OVERVIEW, col);
	const dir1 = (await sortState(page, OVERVIEW, col)) === 'ascending' ? 1 : -1;
	eq((await overviewRows(page)).map((r) => r.row), expectedOrder(items, dir1), `${msg}: first click`);
	await clickSort(page, OVERVIEW, col);
	eq(await sortState(page, OVERVIEW, col), dir1 > 0 ? 'descending' : 'ascending', `${msg}: second click reverses`);
	eq((await overviewRows(page)).map((r) => r.row), expectedOrder(items, -dir1), `${msg}: second click`);
	return dir1;
}

// ---- overview ----------------------------------------------------------------------------------

H.test('spark overview: the selection\'s actions, longest wall time first, re-sortable', async (page) => {
	assert(A.some((a) => !isNum(a.wall_s)) && A.some((a) => !isNum(a.executor_s)),
	       'the fixture needs actions of unknown wall and executor time');
	await H.open(page, 'fixture.html', '#spark');
	const all = listed();
	const byWall = (dir) => expectedOrder(all.map((i) => ({ id: i, k: i, v: isNum(A[i].wall_s) ? A[i].wall_s : null })), dir);
	eq(await sortState(page, OVERVIEW, 'wall'), 'descending', 'starts sorted by wall time, descending');
	const rows = await overviewRows(page);
	eq(rows.map((r) => r.row), byWall(-1), 'every action, longest wall time first, unknown last');
	for (const r of rows) {
		const a = A[r.row];
		eq([r.cells.wall, r.cells.action, r.cells.maxop, r.cells.jobs, r.cells.tasks, r.cells.executor,
		    r.cells.peak, r.cells.spill, r.cells.status],
		   [fmtTime(a.wall_s), a.name, fmtTime(a.max_op_s), fmtCount(a.jobs), fmtCount(a.tasks),
		    fmtTime(a.executor_s), fmtBytes(a.peak_mem), fmtBytes(a.spill), a.status], `row of action ${r.row}`);
		if (APPS.length > 1)
			eq(r.cells.app, APPS[a.app].name, `application of action ${r.row}, as text`);
	}
	const links = await page.$$eval(`${OVERVIEW} td a[href^="#spark/"]`, (as) => as.map((x) => x.getAttribute('href')));
	eq(links, rows.map((r) => '#spark/' + r.row), 'each action links to its page');
	const failed = await page.$$eval(`${OVERVIEW} tr.r`, (trs) => trs.filter((tr) => tr.querySelector('.badge.failed'))
		.map((tr) => Number(tr.dataset.row)));
	eq(failed, rows.map((r) => r.row).filter((i) => A[i].status === 'failed'), 'failed badge on the failed actions');
	await checkOrder(page, 'wall', all, (a) => a.wall_s, 'wall time');
	await checkOrder(page, 'executor', all, (a) => a.executor_s, 'executor time');
	await checkOrder(page, 'maxop', all, (a) => a.max_op_s, 'largest operator');
	await checkOrder(page, 'peak', all, (a) => a.peak_mem, 'peak memory');
});

H.test('spark overview: one process lists its own actions, never an unmatched one', async (page) => {
	const procs = [...new Set(A.map((a) => a.proc).filter(isNum))];
	assert(procs.length > 1 && A.some((a) => a.proc === null), 'the fixture needs two driver processes and an unmatched action');
	for (const p of procs) {
		await H.open(page, 'fixture.html', '#spark?p=' + p);
		const rows = (await overviewRows(page)).map((r) => r.row).sort((x, y) => x - y);
		eq(rows, listed(p), `process ${p}: its actions only`);
	}
	await H.open(page, 'fixture.html', '#spark');
	await page.selectOption('#proc-select', String(procs[0]));
	await page.waitForFunction((p) => location.hash.endsWith('?p=' + p), procs[0]);
	eq((await overviewRows(page)).map((r) => r.row).sort((x, y) => x - y), listed(procs[0]), 'the selector filters too');
	await page.selectOption('#proc-select', '-1');
	await page.waitForFunction(() => !location.hash.includes('?'));
	eq((await overviewRows(page)).length, A.length, 'all processes again: the unmatched action is back');
});

H.test('overview: the Spark actions card counts the selection\'s actions and opens the view', async (page) => {
	const card = async () => page.evaluate(() => {
		const c = [...document.querySelectorAll('.content .card')].find((e) => e.querySelector('.clabel').textContent === 'Spark actions');
		return c ? { value: c.querySelector('.cvalue').textContent, href: (c.querySelector('.cvalue a') || {}).hash, extra: (c.querySelector('.cextra') || {}).textContent } : null;
	});
	await H.open(page, 'fixture.html', '#overview');
	let c = await card();
	eq(c && c.value, fmtCount(A.length), 'all processes: every action');
	eq(c.extra, APPS.length + ' applications', 'the applications');
	for (const p of [...new Set(A.map((a) => a.proc).filter(isNum))]) {
		await H.open(page, 'fixture.html', '#overview?p=' + p);
		c = await card();
		eq(c && c.value, fmtCount(listed(p).length), `process ${p}: its actions`);
	}
	await page.click('.content .card .cvalue a');
	await page.waitForFunction(() => location.hash.startsWith('#spark'));
	eq((await overviewRows(page)).length > 0, true, 'the card opens the Spark view');
});

H.test('spark overview: trigger locations, "matched by time", unavailable sources', async (page) => {
	assert(A.some((a) => a.match === 'time') && A.some((a) => !hasSrc(a)), 'fixture lacks a time match or an unmatched action');
	await H.open(page, 'fixture.html', '#spark');
	const cells = await page.$$eval(`${OVERVIEW} tr.r`, (trs) => trs.map((tr) => {
		const td = tr.querySelector('td.locc'), a = td.querySelector('a.loc');
		return { row: Number(tr.dataset.row), text: td.textContent, href: a ? a.getAttribute('href') : null,
			 link: a ? a.textContent : null, time: td.querySelectorAll('.matchtime').length };
	}));
	for (const c of cells) {
		const a = A[c.row];
		eq(c.time, a.match === 'time' ? 1 : 0, `"matched by time" label on action ${c.row} (match ${a.match})`);
		if (hasSrc(a)) {
			eq([c.link, c.href], [locText(a.src, a.line), `#source/${a.src}/${a.line}`], `trigger link of action ${c.row}`);
			assert(!c.text.includes('unavailable'), `action ${c.row} has a source`);
		} else {
			eq([c.text, c.href], ['Trigger source unavailable', null], `action ${c.row} without a source`);
		}
	}
});

H.test('spark applications: a line each, the log\'s strings as text', async (page) => {
	assert(APPS.some((ap) => ap.name.includes('<script>')), 'the fixture needs the hostile application name');
	await H.open(page, 'fixture.html', '#spark');
	const apps = await page.$$eval('.sparkapps li.sparkapp', (lis) => lis.map((li) => ({
		name: li.querySelector('.appname').textContent, text: li.textContent,
		failed: li.querySelectorAll('.badge').length, elements: li.querySelectorAll('*').length })));
	eq(apps.length, APPS.length, 'one line per application');
	APPS.forEach((ap, k) => {
		eq(apps[k].name, ap.name, `application ${k}: its name, literally`);
		for (const part of [ap.id, 'Spark ' + ap.spark_version, ap.status, ap.log, ap.codec])
			assert(apps[k].text.includes(part), `application ${k}: "${part}" missing from "${apps[k].text}"`);
	});
	eq(await page.$$eval('script', (s) => s.length), 2, 'no script element from the log');
	eq(await page.$$eval('.sparkapps script, .sparkapps img', (s) => s.length), 0, 'no element made of the name');
	const notes = await page.$$eval('.content ul.notes li', (lis) => lis.map((li) => li.textContent));
	eq(notes, SP.notes, 'the notes under the actions');
});

// ---- an action's page --------------------------------------------------------------------------

async function cards(page) {
	return page.$$eval('.cards.spark .card', (cs) => Object.fromEntries(cs.map((c) => [c.dataset.card, {
		value: c.querySelector('.cvalue').textContent,
		extra: c.querySelector('.cextra') ? c.querySelector('.cextra').textContent : null }])));
}

H.test('spark action: cards, trigger and collection notes equal the JSON', async (page) => {
	for (let i = 0; i < A.length; i++) {
		const a = A[i];
		await H.open(page, 'fixture.html', '#spark/' + i);
		eq(await page.textContent('.content h1'), 'Spark action: ' + a.name, `action ${i}: title`);
		const c = await cards(page);
		const stages = a.stages, skipped = a.stage_details.filter((s) => s.status === 'skipped').length;
		eq(skipped, a.skipped_stages, `fixture: skipped_stages of action ${i} counts its skipped stages`);
		eq(Object.keys(c), ['Wall time', 'Driver line', 'Executor time', 'Peak memory', 'Disk spill', 'Jobs',
				    'Stages', 'Tasks', 'Status'], `action ${i}: the cards`);
		eq(c['Wall time'].value, fmtTime(a.wall_s), `action ${i}: wall time`);
		eq(c['Driver line'].value, isNum(a.driver_s) ? fmtTime(a.driver_s) : 'not sampled', `action ${i}: driver line`);
		if (isNum(a.driver_wait_s))
			eq(c['Driver line'].extra, fmtTime(a.driver_wait_s) + ' off-CPU', `action ${i}: driver off-CPU`);
		eq(c['Executor time'].value, fmtTime(a.executor_s), `action ${i}: executor time`);
		const ex = c['Executor time'].extra;
		assert(ex.includes('cumulative task time; overlaps wall time'), `action ${i}: executor caveat: ${ex}`);
		assert(isNum(a.executor_cpu_s) ? ex.includes('CPU ' + fmtTime(a.executor_cpu_s)) : !ex.includes('CPU'),
		       `action ${i}: executor CPU: ${ex}`);
		eq(c['Peak memory'].value, fmtBytes(a.peak_mem), `action ${i}: peak memory`);
		eq(c['Disk spill'].value, fmtBytes(a.spill), `action ${i}: spill`);
		eq(c.Jobs.value, fmtCount(a.jobs), `action ${i}: jobs`);
		eq(c.Stages.value, fmtCount(stages), `action ${i}: stages`);
		eq(c.Stages.extra, fmtCount(skipped) + ' skipped', `action ${i}: skipped stages`);
		eq([c.Tasks.value, c.Tasks.extra], [fmtCount(a.tasks), fmtCount(a.failed_tasks) + ' failed'], `action ${i}: tasks`);
		eq(c.Status.value, a.status, `action ${i}: status`);
		if (a.status === 'failed') {
			eq(c.Status.extra, a.error, `action ${i}: the error, as text`);
			eq(await page.textContent('.sparkerror'), 'Failed: ' + a.error, `action ${i}: the error notice`);
		}
		// the trigger: the line's text, the call site, how it was matched
		const trig = await page.evaluate(() => {
			const s = document.querySelector('.sparktrigger');
			const dd = (k) => [...s.querySelectorAll('dt')].find((dt) => dt.textContent === k).nextElementSibling.textContent;
			const x = s.querySelector('code.excerpt');
			return { code: x ? x.textContent : null, site: dd('Call site'), match: dd('Matched by'), loc: dd('Location') };
		});
		eq(trig.site, a.call_site || DASH, `action ${i}: call site`);
		if (hasSrc(a)) {
			eq(trig.code, FIX.sources[a.src].text.split('\n')[a.line - 1].trim(), `action ${i}: trigger line text`);
			eq(trig.loc, locText(a.src, a.line) + (a.match === 'time' ? 'matched by time' : ''), `action ${i}: location`);
		} else {
			eq([trig.code, trig.loc], [null, 'Trigger source unavailable'], `action ${i}: no trigger line`);
		}
		assert(a.match === 'time' ? trig.match.includes('time window') : a.match === 'call site'
			? trig.match.includes('call site') : trig.match.includes('no driver line matched'),
		       `action ${i}: match kind "${a.match}" shown as "${trig.match}"`);
		eq(await page.$$eval('.sparkhow li', (lis) => lis.map((li) => li.textContent)), a.how, `action ${i}: how[]`);
	}
});

H.test('spark action: plan steps, pipelines measured together, rows from the input', async (page) => {
	const i = A.findIndex((a) => a.steps.some((s) => !isNum(s.time_s) && isNum(s.pipeline_time_s)) &&
			      a.steps.some((s) => s.rows_from_input));
	assert(i >= 0, 'the fixture needs a pipelined step without its own time and rows carried from the input');
	await H.open(page, 'fixture.html', '#spark/' + i);
	const steps = A[i].steps;
	const rows = await page.$$eval(`${STEPS} tr.r`, (trs) => trs.map((tr) => {
		const td = (c) => tr.cells[[...tr.closest('table').querySelectorAll('thead tr.heads th')].findIndex((th) => th.dataset.col === c)];
		return { row: Number(tr.dataset.row), label: td('label').textContent, from: td('from').textContent,
			 rows: td('rows').textContent, rowsCls: td('rows').className, rowsTitle: td('rows').title,
			 time: td('time').textContent, timeTitle: td('time').title, together: td('time').querySelectorAll('.together').length,
			 peak: td('peak').textContent, detail: td('detail').textContent };
	}));
	eq(rows.map((r) => r.row), steps.map((s, k) => k), 'the steps in data-flow order');
	rows.forEach((r, k) => {
		const s = steps[k];
		eq([r.label, r.from, r.peak, r.detail], [s.label, s.from.join(' + ') || DASH, fmtBytes(s.peak_mem), s.detail],
		   `step ${k + 1}`);
		eq(r.rows, fmtCount(s.rows), `step ${k + 1}: rows`);
		eq([r.rowsCls.includes('frominput'), r.rowsTitle], s.rows_from_input ? [true, 'From input \u00b7 unchanged'] : [false, ''],
		   `step ${k + 1}: rows from the input`);
		if (!isNum(s.time_s) && isNum(s.pipeline_time_s)) {
			eq([r.together, r.time, r.timeTitle], [1, 'Measured together ' + fmtTime(s.pipeline_time_s),
							       `pipeline ${s.pipeline}: its steps are measured together`],
			   `step ${k + 1}: measured with its pipeline`);
		} else {
			eq([r.together, r.time, r.timeTitle], [0, fmtTime(s.time_s), ''], `step ${k + 1}: its own time`);
		}
	});
});

H.test('spark action: the stages table, a skipped stage in dashes, failed tasks', async (page) => {
	const i = A.findIndex((a) => a.stage_details.some((s) => s.status === 'skipped') && a.stage_details.some((s) => s.failed_tasks > 0));
	assert(i >= 0, 'the fixture needs an action with a skipped stage and a failed task');
	await H.open(page, 'fixture.html', '#spark/' + i);
	const S = A[i].stage_details;
	const key = (s) => s.id * 65536 + s.attempt;
	const byStage = expectedOrder(S.map((s, k) => ({ id: k, k, v: key(s) })), 1);
	let rows = await tableRows(page, STAGES);
	eq(rows.map((r) => r.row), byStage, 'one row per stage, by id and attempt');
	const M = { wall: ['wall_s', fmtTime], executor: ['executor_s', fmtTime], cpu: ['cpu_s', fmtTime],
		    gc: ['gc_s', fmtTime], input: ['input_bytes', fmtBytes], output: ['output_bytes', fmtBytes],
		    sread: ['shuffle_read_bytes', fmtBytes], swrite: ['shuffle_write_bytes', fmtBytes],
		    spill: ['spill_bytes', fmtBytes], peak: ['peak_mem', fmtBytes], p50: ['task_p50_s', fmtTime],
		    p95: ['task_p95_s', fmtTime], pmax: ['task_max_s', fmtTime] };
	for (const r of rows) {
		const s = S[r.row], skipped = s.status === 'skipped';
		eq([r.cells.stage, r.cells.name, r.cells.status], [`${s.id}.${s.attempt}`, s.name, s.status], `stage ${s.id}`);
		eq(r.cells.tasks, skipped ? DASH : fmtCount(s.tasks) + (s.failed_tasks > 0 ? ` (${fmtCount(s.failed_tasks)} failed)` : ''),
		   `stage ${s.id}: tasks`);
		for (const [col, [f, fmt]] of Object.entries(M))
			eq(r.cells[col], skipped ? DASH : fmt(s[f]), `stage ${s.id}: ${col}${skipped ? ' (skipped: a dash)' : ''}`);
	}
	// executor time, skipped stages (unknown) last both ways
	const items = S.map((s, k) => ({ id: k, k, v: s.status === 'skipped' || !isNum(s.executor_s) ? null : s.executor_s }));
	await clickSort(page, STAGES, 'executor');
	const dir = (await sortState(page, STAGES, 'executor')) === 'ascending' ? 1 : -1;
	rows = await tableRows(page, STAGES);
	eq(rows.map((r) => r.row), expectedOrder(items, dir), 'stages by executor time');
	await clickSort(page, STAGES, 'executor');
	eq((await tableRows(page, STAGES)).map((r) => r.row), expectedOrder(items, -dir), 'stages by executor time, reversed');
});

H.test('spark action: plans are text in collapsible blocks and run nothing', async (page) => {
	for (let i = 0; i < A.length; i++) {
		await H.open(page, 'fixture.html', '#spark/' + i);
		const got = await page.evaluate(() => Object.fromEntries(['physical', 'final'].map((k) => {
			const x = document.querySelector(`.sparkplans [data-plan="${k}"]`);
			const pre = x && x.querySelector('pre');
			return [k, { tag: x ? x.tagName : null, text: pre ? pre.textContent : null, kids: pre ? pre.children.length : 0 }];
		})));
		const P = A[i].plans || {};
		for (const k of ['physical', 'final']) {
			if (P[k]) {
				eq([got[k].tag, got[k].text, got[k].kids], ['DETAILS', P[k], 0], `action ${i}: the ${k} plan, as text`);
			} else {
				eq([got[k].tag, got[k].text], ['P', null], `action ${i}: no ${k} plan, said so`);
			}
		}
	}
	assert(A.some((a) => a.plans && /<img/.test(a.plans.physical || '')), 'the fixture needs markup in a plan');
	eq(await page.evaluate(() => typeof window.__pwned), 'undefined', 'nothing from a plan ran');
});

H.test('spark: a badge on the trigger line opens its action', async (page) => {
	const withSrc = A.map((a, i) => i).filter((i) => hasSrc(A[i]));
	for (const i of withSrc) {
		const a = A[i];
		await H.open(page, 'fixture.html', `#source/${a.src}/${a.line}`);
		const sel = `.content .tscroll tr[data-row="${a.line}"] td.ctx a.ctxb.spark[href="#spark/${i}"]`;
		assert(await page.$(sel), `no Spark badge for action ${i} on ${locText(a.src, a.line)}`);
		assert((await page.textContent(sel)).includes(a.name), `badge of action ${i} names it`);
		await page.click(sel);
		await page.waitForFunction((h) => location.hash === h, '#spark/' + i);
		await page.waitForFunction((t) => document.querySelector('.content h1').textContent === t, 'Spark action: ' + a.name);
	}
	// another process selected: its line shows no badge of an action of a different driver
	const other = withSrc.find((i) => withSrc.some((j) => A[j].proc !== A[i].proc));
	const p = A[withSrc.find((j) => A[j].proc !== A[other].proc)].proc;
	await H.open(page, 'fixture.html', `#source/${A[other].src}/${A[other].line}?p=${p}`);
	eq(await page.$$(`.content a.ctxb.spark[href^="#spark/${other}?"]`).then((x) => x.length), 0,
	   `process ${p}: no badge of action ${other} (process ${A[other].proc})`);
});

H.run(filter).then((failed) => process.exit(failed ? 1 : 0), (e) => {
	console.error(e);
	process.exit(2);
});
