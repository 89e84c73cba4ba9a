/**
 * The script and style inlined in the page {@link renderHtmlPage} writes: plain browser
 * JavaScript (no build step, no library), reading the spans from the page's JSON block and
 * drawing them with `textContent` only, so no name or attribute from a file becomes markup.
 * `#span=ID` in the address opens that span's details (a link to one span in a bug report).
 */
export const HTML_PAGE_SCRIPT = String.raw`
'use strict';
const data = JSON.parse(document.getElementById('tooltrace-data').textContent);
const element = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};
const duration = (micros) => {
  const ms = micros / 1000;
  if (ms < 1) return Math.round(micros) + 'µs';
  if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + 'ms';
  return (ms / 1000).toFixed(2) + 's';
};
const show = (value) => (typeof value === 'string' ? value : JSON.stringify(value));
const pairs = (attributes) => {
  const table = element('table', 'attributes');
  for (const key of Object.keys(attributes).sort()) {
    const row = table.insertRow();
    row.insertCell().textContent = key;
    row.insertCell().textContent = show(attributes[key]);
  }
  return table;
};
const rowsById = new Map();
const details = (span) => {
  const box = element('div', 'details');
  box.append(element('h4', '', span.name));
  const facts = element('p', 'facts');
  facts.textContent = 'span ' + span.id + (span.parent ? ' · parent ' + span.parent : '') +
    ' · ' + duration(span.duration) + ' · ' + span.state +
    (span.message ? ' · "' + span.message + '"' : '');
  box.append(facts, element('h5', '', 'attributes'), pairs(span.attributes));
  box.append(element('h5', '', span.events.length + ' events'));
  if (span.events.length > 0) {
    const list = element('table', 'events');
    for (const event of span.events) {
      const row = list.insertRow();
      row.insertCell().textContent = '+' + duration(event.at);
      row.insertCell().textContent = event.name;
      row.insertCell().textContent = Object.keys(event.attributes).sort()
        .map((key) => key + '=' + show(event.attributes[key])).join('  ');
    }
    box.append(list);
  }
  return box;
};
const toggle = (row, span) => {
  const open = row.nextElementSibling;
  if (open && open.classList.contains('details')) {
    open.remove();
    row.classList.remove('open');
    return;
  }
  row.classList.add('open');
  row.after(details(span));
};
const main = document.getElementById('traces');
for (const trace of data.traces) {
  const section = element('section', 'trace');
  section.id = 'trace-' + trace.id;
  const head = element('h3', '', 'trace ' + trace.id);
  head.append(element('span', 'meta', trace.spans.length + ' spans · ' + duration(trace.duration)));
  section.append(head);
  // In the order drawn, each with its depth in the trace's tree (the waterfall's).
  for (const span of trace.spans) {
    const row = element('div', 'row ' + span.state.toLowerCase());
    row.dataset.span = span.id;
    row.tabIndex = 0;
    const label = element('span', 'label', span.name);
    label.style.paddingLeft = span.depth * 16 + 'px';
    label.title = span.name;
    const lane = element('span', 'lane');
    const bar = element('span', 'bar');
    const total = trace.duration || 1;
    bar.style.left = (span.start / total) * 100 + '%';
    bar.style.width = Math.max(0.3, (span.duration / total) * 100) + '%';
    lane.append(bar);
    const state = element('span', 'state', span.state === 'UNSET' ? '' : span.state);
    row.append(label, lane, element('span', 'duration', duration(span.duration)), state,
      element('span', 'note', span.note));
    row.addEventListener('click', () => toggle(row, span));
    row.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); toggle(row, span); }
    });
    rowsById.set(span.id, { row, span });
    section.append(row);
  }
  main.append(section);
}
const openFromAddress = () => {
  const opened = /^#span=([0-9a-f]+)$/.exec(location.hash);
  if (!opened || !rowsById.has(opened[1])) return;
  const { row, span } = rowsById.get(opened[1]);
  if (!row.classList.contains('open')) toggle(row, span);
  const box = row.getBoundingClientRect();
  if (box.top < 0 || box.bottom > window.innerHeight) row.scrollIntoView({ block: 'center' });
};
window.addEventListener('hashchange', openFromAddress);
openFromAddress();
`;

/** The page's style: light, compact, errors in red, cancelled calls in amber. */
export const HTML_PAGE_STYLE = `
:root { --line: #e3e6ea; --muted: #6a737d; --bar: #3b82c4; --error: #c62828; --cancel: #b7791f; }
* { box-sizing: border-box; }
body { margin: 0; padding: 20px 28px; font: 13px/1.45 system-ui, sans-serif; color: #1f2328; background: #fff; }
h1 { font-size: 18px; margin: 0 0 4px; } h1 small { color: var(--muted); font-weight: normal; }
h2 { font-size: 14px; margin: 18px 0 6px; } h3 { font-size: 13px; margin: 0 0 4px; font-family: ui-monospace, monospace; }
h3 .meta { color: var(--muted); font-weight: normal; margin-left: 10px; font-family: system-ui, sans-serif; }
h4 { margin: 0 0 2px; font-size: 13px; } h5 { margin: 8px 0 2px; font-size: 12px; color: var(--muted); }
.counts { font-size: 14px; margin: 4px 0 10px; } .counts b.error { color: var(--error); } .counts b.cancelled { color: var(--cancel); }
table.tools, table.calls { border-collapse: collapse; margin-bottom: 6px; }
table.tools th, table.tools td, table.calls td { padding: 2px 12px 2px 0; text-align: right; }
table.tools th:first-child, table.tools td:first-child, table.calls td:nth-child(2) { text-align: left; }
table.tools th { color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--line); }
table.calls { width: 100%; } table.calls td { white-space: nowrap; }
table.calls td.message { color: var(--error); text-align: left; width: 100%; max-width: 0; overflow: hidden; text-overflow: ellipsis; }
a { color: var(--bar); text-decoration: none; font-family: ui-monospace, monospace; }
.summary { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0 56px; align-items: start; }
.summary h2:first-child { margin-top: 8px; }
section.trace { margin: 18px 0; border-top: 1px solid var(--line); padding-top: 10px; }
.row { display: grid; grid-template-columns: minmax(220px, 30%) 1fr 70px 90px minmax(0, 28%); gap: 10px; align-items: center;
  padding: 2px 6px; border-radius: 4px; cursor: pointer; white-space: nowrap; }
.row:hover, .row.open { background: #f2f5f8; }
.row.error { background: #fdecea; } .row.error:hover, .row.error.open { background: #f9d7d3; }
.label { overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, monospace; }
.lane { position: relative; height: 12px; background: #f6f8fa; border-radius: 2px; }
.bar { position: absolute; top: 0; bottom: 0; background: var(--bar); border-radius: 2px; min-width: 2px; }
.row.error .bar { background: var(--error); } .row.cancelled .bar { background: var(--cancel); }
.duration { text-align: right; font-variant-numeric: tabular-nums; }
.state { font-size: 11px; font-weight: 700; color: #2e7d32; } .row.error .state { color: var(--error); }
.row.cancelled .state { color: var(--cancel); }
.note { overflow: hidden; text-overflow: ellipsis; color: var(--muted); }
.row.error .note { color: var(--error); }
.details { margin: 2px 0 8px 24px; padding: 8px 12px; border-left: 3px solid var(--bar); background: #fafbfc; }
.details .facts { margin: 0; color: var(--muted); font-family: ui-monospace, monospace; font-size: 12px; }
.details table { border-collapse: collapse; font-family: ui-monospace, monospace; font-size: 12px; }
.details td { padding: 1px 14px 1px 0; vertical-align: top; white-space: pre-wrap; word-break: break-all; }
.details td:first-child { color: var(--muted); white-space: nowrap; }
footer { color: var(--muted); margin-top: 24px; font-size: 12px; }
`;
