"""index.html of `uir grade`: one static page, data and script inline, no network.

The page must stay readable at 300 compilers by 3,000 tests, so the matrix shows one column per
test directory (passed / tests, coloured by the fraction), and a directory's own tests, one
column each, only when its header is clicked. Every value is put in the page as text by the
script (never parsed as HTML), so a test's name or a compiler's message cannot inject markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

DETAIL_CHARS = 120  # of each failure's detail, shown on hover; grades.json has it whole


def page_data(document: Mapping[str, Any], legend: Mapping[str, str]) -> dict[str, Any]:
    """What the script needs, compactly: verdicts as one mark per test, `legend` giving each
    mark's verdict (matrix.LEGEND, one of them "not run")."""
    index = {test["path"]: i for i, test in enumerate(document["tests"])}
    return {
        "meta": {
            key: document.get(key) for key in ("roster", "test_dirs", "complete", "interrupted")
        },
        "tests": [test["path"] for test in document["tests"]],
        "compilers": [
            {
                key: row[key]
                for key in ("name", "source", "commit", "problem", "passed", "tests", "percent")
            }
            | {
                "marks": row["marks"],
                "failures": [
                    [index[f["test"]], f"{f['verdict']}: {f['detail']}"[:DETAIL_CHARS]]
                    for f in row["failures"]
                ],
            }
            for row in document["compilers"]
        ],
        "authors": [
            {key: a[key] for key in ("author", "team", "tests", "bonus")}
            | {"caught": len(a["caught"])}
            for a in document["authors"]
        ],
        "invalid": document["invalid_tests"],
        "reference_failures": document["reference_failures"],
        "legend": dict(legend),
    }


def render(document: Mapping[str, Any], legend: Mapping[str, str]) -> str:
    """The page of a grades document (matrix.grades), its marks read by `legend`."""
    data = json.dumps(page_data(document, legend), ensure_ascii=True).replace("<", "\\u003c")
    return PAGE.replace("@DATA@", data)


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="robots" content="noindex, nofollow">
<title>UIR cross-grading (staff only)</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #111; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #eee; cursor: pointer; position: sticky; top: 0; }
td.name, th.name { text-align: left; position: sticky; left: 0; background: #fafafa; }
.alarm { background: #c00; color: #fff; padding: 0.6em 1em; font-weight: bold; }
.warn { background: #fd4; padding: 0.6em 1em; }
.cell { min-width: 3.5em; }
.mark { width: 1.2em; text-align: center; padding: 0; }
.v-pass { background: #7c7; } .v-fail { background: #e66; } .v-none { background: #ddd; }
.problem { color: #a00; text-align: left; }
#matrix-wrap, #detail-wrap { overflow: auto; max-height: 80vh; }
.vertical { writing-mode: vertical-rl; transform: rotate(180deg); }
</style>
</head>
<body>
<h1>UIR cross-grading</h1>
<p class="warn" id="staff-only">Staff only: every team's results and every test's details on
one page. Do not publish it; each team's own page is feedback/TEAM/index.html (and
results.json), which shows hidden tests as their visibility.toml says.</p>
<div id="app"></div>
<script id="data" type="application/json">@DATA@</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("data").textContent);
const app = document.getElementById("app");
const PASS = Object.keys(data.legend).find(m => data.legend[m] === "pass");
const NOT_RUN = Object.keys(data.legend).find(m => data.legend[m] === "not run");

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) {
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function dirOf(path) {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "." : path.slice(0, cut);
}

function colour(passed, total) {
  if (total === 0) return "#ddd";
  return "hsl(" + Math.round(120 * passed / total) + ", 65%, 72%)";
}

// A table whose columns sort when their header is clicked (numbers as numbers).
function sortable(id, headers, rows) {
  const body = el("tbody");
  const table = el("table", {id}, el("thead", {}, el("tr", {})), body);
  let order = {column: -1, down: false};
  const fill = () => { body.replaceChildren(...rows.map(r => r.node)); };
  headers.forEach((header, column) => {
    const th = el("th", {}, header);
    th.addEventListener("click", () => {
      order = {column, down: order.column === column ? !order.down : true};
      rows.sort((a, b) => {
        const x = a.keys[column], y = b.keys[column];
        const c = typeof x === "number" ? x - y : String(x).localeCompare(String(y));
        return order.down ? -c : c;
      });
      fill();
    });
    table.tHead.rows[0].append(th);
  });
  fill();
  return table;
}

const meta = data.meta;
app.append(el("p", {}, "roster " + meta.roster + "; tests " + (meta.test_dirs || []).join(" ") +
  "; " + data.tests.length + " valid tests, " + data.compilers.length + " compilers"));
if (data.reference_failures.length) {
  const box = el("div", {class: "alarm", id: "reference-failures"},
    "The reference fails " + data.reference_failures.length +
    " valid test(s): a bug of the reference or a wrong test. Check them before publishing:");
  const list = el("ul");
  for (const f of data.reference_failures) list.append(el("li", {}, f.test + ": " + f.verdict +
    ": " + f.detail));
  box.append(list);
  app.append(box);
}
if (!meta.complete) {
  app.append(el("div", {class: "warn", id: "incomplete"}, "Incomplete: some pairs have not run" +
    (meta.interrupted ? " (interrupted by " + meta.interrupted + ")" : "") +
    "; run the same command again to finish."));
}

// Grades, best first.
app.append(el("h2", {}, "Grades"));
const ranked = data.compilers.map((c, i) => ({c, i})).sort((a, b) => b.c.percent - a.c.percent ||
  a.c.name.localeCompare(b.c.name));
app.append(sortable("grades", ["compiler", "percent", "passed", "tests", "commit", "problem"],
  ranked.map(({c}) => ({
    keys: [c.name, c.percent, c.passed, c.tests, c.commit || "", c.problem || ""],
    node: el("tr", {"data-name": c.name},
      el("td", {class: "name", title: c.source}, c.name),
      el("td", {class: "percent", style: "background:" + colour(c.passed, c.tests)},
        c.percent.toFixed(2)),
      el("td", {}, c.passed), el("td", {}, c.tests),
      el("td", {title: c.commit || ""}, (c.commit || "").slice(0, 10)),
      el("td", {class: "problem"}, c.problem || "")),
  }))));

// Bonus, most first.
app.append(el("h2", {}, "Bonus by test author"));
app.append(el("p", {}, "Points: one per (valid test, other compiler failing it); the author's " +
  "own compiler and compilers whose submission failed never count."));
app.append(sortable("bonus", ["author", "team", "valid tests", "bonus", "tests that caught"],
  data.authors.map(a => ({
    keys: [a.author, a.team ? "yes" : "no", a.tests, a.bonus, a.caught],
    node: el("tr", {"data-author": a.author}, el("td", {class: "name"}, a.author),
      el("td", {}, a.team ? "yes" : "no"), el("td", {}, a.tests),
      el("td", {class: "bonus"}, a.bonus), el("td", {}, a.caught)),
  }))));

// The matrix: compilers by test directory; a directory's header opens its tests.
const dirs = [];
const dirTests = {};
data.tests.forEach((path, i) => {
  const dir = dirOf(path);
  if (!(dir in dirTests)) { dirTests[dir] = []; dirs.push(dir); }
  dirTests[dir].push(i);
});
const failureText = data.compilers.map(c => Object.fromEntries(c.failures));
app.append(el("h2", {}, "Matrix"));
app.append(el("p", {}, "Passed / tests per test directory; click a directory for its tests."));
const matrix = el("table", {id: "matrix"});
const head = el("tr", {}, el("th", {class: "name"}, "compiler"));
const detailWrap = el("div", {id: "detail-wrap"});
for (const dir of dirs) {
  const th = el("th", {"data-dir": dir}, dir + " (" + dirTests[dir].length + ")");
  th.addEventListener("click", () => { location.hash = "dir=" + encodeURIComponent(dir); });
  head.append(th);
}
matrix.append(el("thead", {}, head));
const matrixBody = el("tbody");
for (const {c, i} of ranked) {
  const row = el("tr", {"data-name": c.name}, el("td", {class: "name"}, c.name));
  for (const dir of dirs) {
    const tests = dirTests[dir];
    const passed = tests.filter(t => c.marks[t] === PASS).length;
    row.append(el("td", {class: "cell", "data-dir": dir, style: "background:" +
      colour(passed, tests.length)}, passed + "/" + tests.length));
  }
  matrixBody.append(row);
}
matrix.append(matrixBody);
app.append(el("div", {id: "matrix-wrap"}, matrix), detailWrap);

function showDirectory(dir) {
  const tests = dirTests[dir];
  const table = el("table", {id: "detail", "data-dir": dir});
  const header = el("tr", {}, el("th", {class: "name"}, dir));
  for (const t of tests) {
    const name = data.tests[t].slice(dir.length + 1);
    header.append(el("th", {class: "vertical", title: data.tests[t]}, name));
  }
  table.append(el("thead", {}, header));
  const body = el("tbody");
  for (const {c, i} of ranked) {
    const row = el("tr", {"data-name": c.name}, el("td", {class: "name"}, c.name));
    for (const t of tests) {
      const mark = c.marks[t];
      const kind = mark === PASS ? "v-pass" : mark === NOT_RUN ? "v-none" : "v-fail";
      const title = failureText[i][t] || data.legend[mark];
      row.append(el("td", {class: "mark " + kind, title, "data-test": data.tests[t]}, mark));
    }
    body.append(row);
  }
  table.append(body);
  detailWrap.replaceChildren(el("h3", {}, "Tests of " + dir), table);
}

// The open directory is in the address (#dir=NAME), so a link or a reload shows it again.
function fromAddress() {
  const dir = decodeURIComponent(location.hash.replace(/^#dir=/, ""));
  if (dir in dirTests) showDirectory(dir);
}
window.addEventListener("hashchange", fromAddress);
fromAddress();

app.append(el("h2", {}, "Legend"));
app.append(el("p", {}, Object.entries(data.legend).map(([m, v]) => m + " " + v).join(", ")));
if (data.invalid.length) {
  app.append(el("h2", {}, "Invalid tests (not run, not counted)"));
  const list = el("ul", {id: "invalid"});
  for (const t of data.invalid) list.append(el("li", {}, t.path + ": " + t.detail));
  app.append(list);
}
</script>
</body>
</html>
"""
