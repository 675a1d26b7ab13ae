// SPDX-License-Identifier: MIT
// Test harness for the report's browser tests: one Debian chromium (fresh profile, no network
// features), a page per test, and guards that fail a test when the page throws, opens a dialog,
// runs script from the fixture or asks for anything that is not the report file itself.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
	      '--disable-component-update', '--no-first-run'];

class Failure extends Error {}

function assert(cond, msg) {
	if (!cond)
		throw new Failure(msg);
}

function eq(actual, expected, msg) {
	const a = JSON.stringify(actual), e = JSON.stringify(expected);
	if (a !== e)
		throw new Failure(`${msg}\n      expected ${e}\n      actual   ${a}`);
}

class Harness {
	constructor(dir) {
		this.dir = dir;
		this.tests = [];
		this.requests = [];
	}

	test(name, fn, opts) {
		this.tests.push({ name, fn, opts: opts || {} });
	}

	url(file, hash) {
		return 'file://' + path.resolve(this.dir, file) + (hash || '');
	}

	async start() {
		this.profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ls-report-test-'));
		this.ctx = await chromium.launchPersistentContext(this.profile, {
			executablePath: '/usr/bin/chromium', args: ARGS, headless: true,
			viewport: { width: 1400, height: 900 },
			permissions: ['clipboard-read', 'clipboard-write'],
		});
		// Every request must be the report file itself (or an inline data: URL); anything else
		// is recorded, refused and fails the run.
		await this.ctx.route('**/*', (route) => {
			const u = route.request().url();
			if (u.startsWith('file://') || u.startsWith('data:'))
				return route.continue();
			this.requests.push(u);
			return route.abort();
		});
		this.ctx.on('request', (r) => {
			const u = r.url();
			if (!u.startsWith('file://') && !u.startsWith('data:'))
				this.requests.push(u);
		});
	}

	async page(opts) {
		const page = await this.ctx.newPage();
		const errors = [];
		page.on('pageerror', (e) => errors.push('pageerror: ' + e.message));
		page.on('console', (m) => {
			if (m.type() === 'error')
				errors.push('console error: ' + m.text());
		});
		page.on('dialog', (d) => {
			errors.push('dialog opened: ' + d.message());
			d.dismiss().catch(() => {});
		});
		await page.emulateMedia({ colorScheme: (opts && opts.colorScheme) || 'light' });
		if (opts && opts.viewport)
			await page.setViewportSize(opts.viewport);
		page.lsErrors = errors;
		return page;
	}

	// Opens a report file at a hash and waits until the report has drawn itself.
	async open(page, file, hash) {
		await page.goto(this.url(file, hash));
		await page.waitForFunction(() => document.documentElement.getAttribute('data-ready'));
		const ready = await page.evaluate(() => document.documentElement.getAttribute('data-ready'));
		assert(ready === '1', 'report failed to start: ' + ready);
	}

	async run(filter) {
		await this.start();
		let failed = 0, passed = 0;
		for (const t of this.tests) {
			if (filter && !t.name.includes(filter))
				continue;
			const page = await this.page(t.opts);
			const t0 = Date.now();
			try {
				await t.fn(page);
				// nothing from the fixture may have run, whatever the test did
				const probe = await page.evaluate(() => ({ pwned: typeof window.__pwned,
									   images: document.images.length }));
				assert(probe.pwned === 'undefined', 'a script from the fixture ran');
				assert(probe.images === 0, 'an <img> element from the fixture was created');
				assert(!page.lsErrors.length, page.lsErrors.join('\n      '));
				console.log(`  ok    ${t.name} (${Date.now() - t0} ms)`);
				passed++;
			} catch (e) {
				failed++;
				console.log(`  FAIL  ${t.name}\n      ${e instanceof Failure ? e.message : e.stack}`);
				if (page.lsErrors.length)
					console.log('      page errors: ' + page.lsErrors.join('; '));
			}
			await page.close();
		}
		if (this.requests.length) {
			failed++;
			console.log('  FAIL  network requests were made: ' + this.requests.join(', '));
		}
		await this.ctx.close();
		fs.rmSync(this.profile, { recursive: true, force: true });
		console.log(`report browser tests: ${passed} passed, ${failed} failed`);
		return failed;
	}
}

// ---- reading tables from the page -------------------------------------------------------

// Rows of the table inside `scope`: [{row, group, cells: {colId: text}}] in display order.
async function tableRows(page, scope) {
	return page.evaluate((scope) => {
		const root = document.querySelector(scope);
		const table = root.matches('table') ? root : root.querySelector('table');
		const ids = [...table.querySelectorAll('thead tr.heads th')].map((th) => th.dataset.col);
		const out = [];
		let group = null;
		for (const tr of table.tBodies[0].rows) {
			if (tr.classList.contains('group')) {
				group = tr.textContent;
				continue;
			}
			if (!tr.classList.contains('r'))
				continue;
			const cells = {};
			[...tr.cells].forEach((td, i) => { cells[ids[i]] = td.textContent; });
			out.push({ row: Number(tr.dataset.row), group, cls: tr.className, cells });
		}
		return out;
	}, scope);
}

async function clickSort(page, scope, col) {
	await page.click(`${scope} thead th[data-col="${col}"] button`);
}

async function sortState(page, scope, col) {
	return page.getAttribute(`${scope} thead th[data-col="${col}"]`, 'aria-sort');
}

// Expected display order: known values by value (dir 1 ascending, -1 descending), ties in
// natural order, unknown (null) values last whatever the direction.
function expectedOrder(items, dir) {
	const known = items.filter((x) => x.v !== null && x.v !== undefined);
	const unknown = items.filter((x) => x.v === null || x.v === undefined);
	known.sort((a, b) => {
		const c = typeof a.v === 'string' ? a.v.localeCompare(b.v, 'en', { numeric: true, sensitivity: 'base' })
						  : a.v - b.v;
		return c ? c * dir : a.k - b.k;
	});
	unknown.sort((a, b) => a.k - b.k);
	return known.concat(unknown).map((x) => x.id);
}

// Rows of the fixture's `lines` table combined over processes (or one process) by (src, line),
// computed here independently of the report's own code.
function combinedLines(doc, proc) {
	const L = doc.lines, n = L.src.length, out = new Map();
	const peak = new Set(['peak_mem', 'gpu_peak_mem']);
	for (let i = 0; i < n; i++) {
		if (proc !== undefined && proc >= 0 && L.proc[i] !== proc)
			continue;
		const k = L.src[i] + ':' + L.line[i];
		if (!out.has(k))
			out.set(k, { src: L.src[i], line: L.line[i] });
		const r = out.get(k);
		for (const col of Object.keys(L)) {
			if (['proc', 'src', 'line', 'avg_hit_s'].includes(col) || !Array.isArray(L[col]))
				continue;
			const v = L[col][i];
			if (typeof v !== 'number')
				continue;
			r[col] = r[col] === undefined ? v : peak.has(col) ? Math.max(r[col], v) : r[col] + v;
		}
	}
	return out;
}

function readFixture(dir, name) {
	// the fixture holds deliberately invalid UTF-8; Node decodes it to U+FFFD like the report does
	return JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
}

module.exports = { Harness, assert, eq, tableRows, clickSort, sortState, expectedOrder, combinedLines,
		   readFixture, Failure };
