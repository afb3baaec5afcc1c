// Runs the HTML report's filter script against a minimal stand-in for the DOM (no jsdom needed).
// argv: page.json (sections with their attributes and diagram rows, and the actions to take), filter.js.
// Prints, after each action, which sections are hidden, which summary rows, the dimmed rows and the count.
"use strict";
const fs = require("fs");
const page = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const source = fs.readFileSync(process.argv[3], "utf8");

function listening(obj) {
  obj.listeners = {};
  obj.addEventListener = function (type, fn) { this.listeners[type] = fn; };
  return obj;
}
function classes(list) {
  const set = new Set(list);
  return {
    contains: (c) => set.has(c),
    toggle: (c, on) => { if (on) { set.add(c); } else { set.delete(c); } },
    has: (c) => set.has(c),
  };
}
const boxes = page.statuses.map((s) => listening({value: s, checked: true}));
const text = listening({value: ""});
const count = {textContent: ""};
const form = listening({querySelectorAll: () => boxes});
const summaryRows = {};
const sections = page.sections.map((s) => {
  const rows = s.rows.map((r) => ({attrs: {"data-text": r.text}, classList: classes(r.classes),
    getAttribute(n) { return this.attrs[n]; }}));
  summaryRows["row-" + s.id] = {hidden: false};
  return {id: s.id, hidden: false, attrs: {"data-status": s.status, "data-text": s.text}, rows,
    getAttribute(n) { return this.attrs[n]; }, querySelectorAll: () => rows};
});
const document = {
  getElementById(id) {
    return {"filter": form, "filter-text": text, "filter-count": count}[id] || summaryRows[id] || null;
  },
  querySelectorAll: () => sections,
};
const window = listening({});
new Function("document", "window", "location", source)(document, window, {hash: ""});

function state() {
  return {
    hidden: sections.filter((s) => s.hidden).map((s) => s.id),
    hiddenRows: Object.keys(summaryRows).filter((k) => summaryRows[k].hidden),
    dimmed: sections.map((s) => s.rows.filter((r) => r.classList.has("dim")).length),
    count: count.textContent,
  };
}
const states = [state()];
for (const action of page.actions) {
  if ("text" in action) { text.value = action.text; text.listeners.input(); }
  if ("uncheck" in action) {
    const box = boxes.find((b) => b.value === action.uncheck);
    box.checked = false; box.listeners.change();
  }
  states.push(state());
}
process.stdout.write(JSON.stringify(states));
