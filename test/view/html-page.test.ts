import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runView } from '../../src/view/run-view.js';
import { readJournalSpans } from '../../src/view/read-journal-spans.js';
import { journalText } from '../sidecar/journal-lines.js';
import { HeadlessChromium } from './headless-chromium.js';
import { TEN_LINE_JOURNAL } from './malformed-journal.js';

let directory: string;
let browser: HeadlessChromium;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tooltrace-html-'));
  browser = await HeadlessChromium.launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await rm(directory, { recursive: true, force: true });
});

/** Writes `journal` and runs `tooltrace view` on it with `--html`; returns the page's path. */
async function pageOf(name: string, journal: string): Promise<{ page: string; stdout: string }> {
  const file = join(directory, `${name}.ndjson`);
  const page = join(directory, `${name}.html`);
  await writeFile(file, journal);
  let stdout = '';
  const out = new PassThrough().on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await runView(file, { html: page, stdout: out, stderr: new PassThrough() });
  expect(code).toBe(0);
  return { page, stdout };
}

/** The span ids of the rows the page's script drew. */
function rowIds(dom: string): string[] {
  return [...dom.matchAll(/<div class="row [^"]*" data-span="([0-9a-f]+)"/g)].map(
    (match) => match[1]!,
  );
}

describe('tooltrace view --html', () => {
  it('writes a page that draws every span of the trace in Chromium, with no console message', async () => {
    const journal = journalText({ calls: 6, nested: true });
    const { page, stdout } = await pageOf('nested', journal);
    const expected = await readJournalSpans([Buffer.from(journal)]);
    expect(stdout).toMatch(/^wrote .*nested\.html: 1 trace, 6 spans, \d+ KB\n$/);
    const rendered = await browser.render(pathToFileURL(page).href);
    expect(rendered.console).toEqual([]);
    expect(rowIds(rendered.dom).sort()).toEqual(expected.spans.map((span) => span.spanId).sort());
    expect(rendered.dom).toContain(`trace ${expected.spans[0]!.traceId}`);
    // The summary: counts and the per-tool table.
    expect(rendered.dom).toContain('6 tool calls');
    expect(rendered.dom).toMatch(/<td>search<\/td><td>6<\/td><td>0<\/td>/);
  });

  it("shows a span's attributes and stream events when it is opened (#span=ID, as a click does)", async () => {
    const journal = journalText({ calls: 2, nested: true });
    const { page } = await pageOf('details', journal);
    const { spans } = await readJournalSpans([Buffer.from(journal)]);
    const span = spans.find((candidate) => candidate.events.length > 0)!;
    const rendered = await browser.render(`${pathToFileURL(page).href}#span=${span.spanId}`);
    expect(rendered.console).toEqual([]);
    const details = /<div class="details">(.*?)<\/div>/s.exec(rendered.dom)?.[1] ?? '';
    expect(details).toContain(`span ${span.spanId}`);
    expect(details).toContain('<td>gen_ai.tool.call.id</td>');
    expect(details).toContain(`${span.events.length} events`);
    expect(details).toContain(`<td>${span.events[0]!.name}</td>`);
  });

  it("highlights the failed call of the issue's ten-line malformed journal, and loads nothing", async () => {
    const { page } = await pageOf('ten-lines', TEN_LINE_JOURNAL);
    const html = await readFile(page, 'utf8');
    // Self-contained: no external script, style, font or image, and a policy that forbids them.
    expect(html).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
    expect(html).toContain(`content="default-src 'none';`);
    const rendered = await browser.render(pathToFileURL(page).href);
    expect(rendered.console).toEqual([]);
    expect(rowIds(rendered.dom)).toHaveLength(4);
    expect(rendered.dom).toMatch(
      /<div class="row error"[^>]*><span class="label"[^>]*>execute_tool grep<\/span>/,
    );
    expect(rendered.dom).toContain('1 failed');
  });

  it('keeps a span name that holds markup as text', async () => {
    const journal = journalText({ calls: 1 }).replaceAll(
      '"Name":"search"',
      '"Name":"</script><img src=x onerror=alert(1)>"',
    );
    const { page } = await pageOf('markup', journal);
    const rendered = await browser.render(pathToFileURL(page).href);
    expect(rendered.console).toEqual([]);
    expect(rendered.dom).not.toContain('<img src="x"');
    expect(rendered.dom).toContain(
      'execute_tool &lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
  });

  it('takes a screenshot of the page', async () => {
    const { page } = await pageOf('screenshot', TEN_LINE_JOURNAL);
    const png = join(directory, 'page.png');
    await browser.screenshot(pathToFileURL(page).href, png, 1000, 600);
    const bytes = await readFile(png);
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    // Width and height from the IHDR chunk: the window asked for.
    expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([1000, 600]);
    expect((await stat(png)).size).toBeGreaterThan(10_000);
  });
});
