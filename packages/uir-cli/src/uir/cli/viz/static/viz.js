// uir viz: a program's graph, every rewrite step and its kernels. Plain JS, no build step.
//
// DATA (written by uir/cli/viz/data.py) lists every UOp once, as [op, type, arg, sources]; graphs,
// passes, rule steps and kernels name UOps by their index there. The layout is dagre's
// (static/dagre.min.js); drawing is on a canvas, and only what lies in view is drawn.
"use strict";

const DATA = JSON.parse(document.getElementById("uir-data").textContent);
const NODES = DATA.nodes;
const LAYOUT_BUDGET = 500; // UOps laid out at once; beyond that, the deeper ones stay collapsed
const STEP_DEPTH = 4; // a rule step shows this many levels under the UOp it rewrote
const NODE_H = 34;
const CHAR_W = 7.2; // 12px monospace
const FONT = "12px monospace";

const CATEGORY = {
  SINK: "#444", CONST: "#e8e8e8", PARAM: "#cfe8c8", CALL: "#a7d59a", STACK: "#e0d3f0",
  INDEX: "#f7d9a8", BUFFER: "#f5b971", LOCAL: "#f5b971", SHRINK: "#f7d9a8", LOAD: "#f7c98a",
  STORE: "#f0a35e", AFTER: "#f5b971", RANGE: "#c9b3ee", END: "#b9a0e6",
};
const ALU_COLOR = "#cfe0f7";
const MEMORY_COLORS = ["#d9534f", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"];
// A kernel's UOps are filled with its colour (kernel k: KERNEL_COLORS[k % length]).
const KERNEL_COLORS = ["#ffe08a", "#a8e6e0", "#f4b6d2", "#c6e3a1", "#d2c4f2", "#f7c59f"];
const KERNELS = DATA.kernels ? DATA.kernels.kernels : [];
const KERNEL_OF = new Map(); // UOp -> the kernel that runs it
KERNELS.forEach((k, i) => k.uops.forEach((id) => KERNEL_OF.set(id, i)));

// ---- the graph under some roots --------------------------------------------------------------

const collapsed = new Set(); // UOps whose sources the user hid
const forced = new Set(); // UOps whose sources the user opened beyond the budget or depth
const closedBodies = new Set(); // CALLs whose body is hidden

function hiddenSources(id) {
  const [op, , , src] = NODES[id];
  if (collapsed.has(id)) return src;
  if (op === "CALL" && closedBodies.has(id)) return src.slice(0, 1);
  return [];
}

// Breadth first from the roots, so that what a budget or depth cuts off is the deepest part.
function visibleGraph(roots, depth) {
  const level = new Map(roots.map((r) => [r, 0]));
  const queue = [...roots];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i];
    const d = level.get(id);
    const within = (d < depth && queue.length < LAYOUT_BUDGET) || forced.has(id);
    if (!within) continue;
    const hidden = hiddenSources(id);
    for (const s of NODES[id][3]) {
      if (!level.has(s) && !hidden.includes(s)) {
        level.set(s, d + 1);
        queue.push(s);
      }
    }
  }
  const shown = new Set(queue);
  const frontier = new Set(queue.filter((id) => NODES[id][3].some((s) => !shown.has(s))));
  return { ids: queue, shown, frontier };
}

function reach(roots) {
  const seen = new Set(roots);
  const stack = [...roots];
  while (stack.length) {
    for (const s of NODES[stack.pop()][3]) {
      if (!seen.has(s)) { seen.add(s); stack.push(s); }
    }
  }
  return seen;
}

// The CALL body each shown UOp belongs to: reached from that one body only (not from outside
// every body, and not from another body: a body two CALLs share is drawn outside both).
function bodyOwners(roots, shown) {
  const sources = (id) => (NODES[id][0] === "CALL" ? NODES[id][3].slice(1) : NODES[id][3]);
  const walk = (starts, seen, stop) => {
    const stack = [...starts];
    while (stack.length) {
      const id = stack.pop();
      if (seen.has(id) || !shown.has(id) || stop.has(id)) continue;
      seen.add(id);
      stack.push(...sources(id));
    }
    return seen;
  };
  const outside = walk(roots, new Set(), new Set());
  const owner = new Map();
  const shared = new Set();
  for (const call of shown) {
    if (NODES[call][0] !== "CALL") continue;
    for (const id of walk([NODES[call][3][0]], new Set(), outside)) {
      if (owner.has(id)) shared.add(id); else owner.set(id, call);
    }
  }
  for (const id of shared) owner.delete(id);
  return owner;
}

function label(id) {
  const [op, type, arg] = NODES[id];
  const name = DATA.names[id];
  const head = name ? `${name} ${op}` : op;
  const memory = DATA.memory[id];
  const version = memory && ["BUFFER", "LOCAL", "AFTER"].includes(op) ? ` v${memory[1]}` : "";
  return [head + version, arg ? `${type} ${arg}` : type];
}

function searchText(id) {
  const [op, type, arg] = NODES[id];
  return `${DATA.names[id] || ""} ${op} ${type} ${arg}`.toLowerCase();
}

// ---- one graph pane: layout, drawing, pan and zoom -------------------------------------------

class GraphView {
  constructor(parent, title) {
    this.pane = document.createElement("div");
    this.pane.className = "pane";
    this.pane.innerHTML = `<div class="title"></div><div class="canvas"><canvas></canvas></div>`;
    this.setTitle(title);
    parent.appendChild(this.pane);
    this.canvas = this.pane.querySelector("canvas");
    this.marks = new Map(); // UOp -> "new" | "gone" | "focus"
    this.drawn = 0;
    this.listen();
  }

  setTitle(title) {
    this.pane.querySelector(".title").textContent = title;
  }

  show(roots, depth, marks) {
    this.scope = this.scope || roots; // what search looks through: the graph of the step
    this.roots = roots;
    this.depth = depth;
    this.marks = marks;
    this.relayout();
    this.fit();
  }

  relayout() {
    const { ids, shown, frontier } = visibleGraph(this.roots, this.depth);
    this.shown = shown;
    this.frontier = frontier;
    const g = new dagre.graphlib.Graph({ compound: true, multigraph: true });
    g.setGraph({ rankdir: "TB", nodesep: 14, ranksep: 28, marginx: 20, marginy: 20 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const id of ids) {
      const [head, tail] = label(id);
      g.setNode(String(id), { width: Math.max(head.length, tail.length) * CHAR_W + 16,
                              height: NODE_H });
    }
    const owner = bodyOwners(this.roots, shown);
    const cluster = (key, text) => {
      if (!g.hasNode(key)) g.setNode(key, { cluster: text, paddingTop: 18 });
      return key;
    };
    const loopCluster = (range) => {
      const key = cluster(`L${range}`, `loop ${DATA.names[range] || "RANGE"}`);
      const outer = DATA.around[range];
      if (outer !== undefined && !g.parent(key)) g.setParent(key, loopCluster(outer));
      return key;
    };
    for (const id of ids) {
      const call = owner.get(id);
      const range = DATA.loops[id];
      if (call !== undefined) {
        const key = cluster(`C${call}`, `body of ${DATA.names[call] || "CALL"}`);
        g.setParent(String(id), key);
        const outer = owner.get(call);
        if (outer !== undefined && !g.parent(key)) g.setParent(key, `C${outer}`);
      } else if (range !== undefined) {
        g.setParent(String(id), loopCluster(range));
      }
    }
    for (const id of ids) {
      // One edge per source, so that ADD(x, x) shows both: edges are named by position.
      NODES[id][3].forEach((s, k) => {
        if (shown.has(s)) g.setEdge(String(s), String(id), {}, String(k));
      });
    }
    dagre.layout(g);
    this.boxes = ids.map((id) => ({ id, ...g.node(String(id)) }));
    this.clusters = g.nodes().filter((k) => g.node(k).cluster)
      .map((k) => ({ key: k, ...g.node(k) }));
    this.edges = g.edges().map((e) => {
      const pts = g.edge(e).points;
      const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y);
      return { from: +e.v, to: +e.w, first: e.name === "0", pts,
               x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) };
    });
    this.size = g.graph();
    this.draw();
    publishState();
  }

  fit() {
    const w = this.canvas.clientWidth || 400, h = this.canvas.clientHeight || 400;
    const s = Math.min(w / (this.size.width || 1), h / (this.size.height || 1), 1.5);
    this.scale = Math.max(s, 0.05);
    this.tx = (w - this.size.width * this.scale) / 2;
    this.ty = Math.max((h - this.size.height * this.scale) / 2, 0);
    this.draw();
  }

  center(id) {
    const b = this.boxes.find((box) => box.id === id);
    if (!b) return;
    this.scale = Math.max(this.scale, 0.8);
    this.tx = this.canvas.clientWidth / 2 - b.x * this.scale;
    this.ty = this.canvas.clientHeight / 2 - b.y * this.scale;
    this.draw();
  }

  draw() {
    const c = this.canvas, ratio = window.devicePixelRatio || 1;
    c.width = c.clientWidth * ratio;
    c.height = c.clientHeight * ratio;
    const ctx = c.getContext("2d");
    ctx.setTransform(ratio * this.scale, 0, 0, ratio * this.scale, ratio * this.tx,
                     ratio * this.ty);
    // The part of the graph in view, in layout coordinates: everything else is skipped.
    const x0 = -this.tx / this.scale, y0 = -this.ty / this.scale;
    const x1 = x0 + c.clientWidth / this.scale, y1 = y0 + c.clientHeight / this.scale;
    const inView = (ax, ay, bx, by) => bx >= x0 && ax <= x1 && by >= y0 && ay <= y1;
    const text = this.scale > 0.35;
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    for (const k of this.clusters) {
      if (!inView(k.x - k.width / 2, k.y - k.height / 2, k.x + k.width / 2, k.y + k.height / 2))
        continue;
      const loop = k.key[0] === "L";
      ctx.fillStyle = loop ? "rgba(150, 110, 220, 0.08)" : "rgba(80, 170, 60, 0.08)";
      ctx.strokeStyle = loop ? "#a58bd6" : "#7cbf6a";
      ctx.setLineDash([5, 3]);
      ctx.fillRect(k.x - k.width / 2, k.y - k.height / 2, k.width, k.height);
      ctx.strokeRect(k.x - k.width / 2, k.y - k.height / 2, k.width, k.height);
      ctx.setLineDash([]);
      if (text) {
        ctx.fillStyle = ctx.strokeStyle;
        ctx.fillText(k.cluster, k.x - k.width / 2 + 4, k.y - k.height / 2 + 9);
      }
    }
    for (const e of this.edges) {
      if (!inView(e.x0, e.y0, e.x1, e.y1)) continue;
      const memory = e.first && NODES[e.to][0] === "AFTER";
      const body = e.first && NODES[e.to][0] === "CALL";
      ctx.strokeStyle = memory ? memoryColor(e.to) : body ? "#5aa348" : "#999";
      ctx.lineWidth = memory ? 3 : 1;
      ctx.setLineDash(body ? [6, 3] : []);
      ctx.beginPath();
      e.pts.forEach((p, i) => (i ? ctx.lineTo(p.x, p.y) : ctx.moveTo(p.x, p.y)));
      ctx.stroke();
      const [a, b] = e.pts.slice(-2);
      const angle = Math.atan2(b.y - a.y, b.x - a.x);
      ctx.fillStyle = ctx.strokeStyle;
      ctx.beginPath();
      ctx.moveTo(b.x, b.y);
      ctx.lineTo(b.x - 7 * Math.cos(angle - 0.4), b.y - 7 * Math.sin(angle - 0.4));
      ctx.lineTo(b.x - 7 * Math.cos(angle + 0.4), b.y - 7 * Math.sin(angle + 0.4));
      ctx.fill();
    }
    ctx.setLineDash([]);
    ctx.lineWidth = 1;
    this.drawn = 0;
    for (const b of this.boxes) {
      const left = b.x - b.width / 2, top = b.y - b.height / 2;
      if (!inView(left, top, left + b.width, top + b.height)) continue;
      this.drawn++;
      const op = NODES[b.id][0];
      const mark = this.marks.get(b.id);
      ctx.fillStyle = mark === "new" ? "#b8f0b0" : mark === "gone" ? "#ffc4c4"
        : typeof mark === "number" ? KERNEL_COLORS[mark % KERNEL_COLORS.length]
        : CATEGORY[op] || ALU_COLOR;
      ctx.fillRect(left, top, b.width, b.height);
      const memory = DATA.memory[b.id];
      if (memory) {
        ctx.fillStyle = memoryColor(b.id);
        ctx.fillRect(left, top, 5, b.height);
      }
      ctx.strokeStyle = b.id === selected ? "#0066ff" : matches.has(b.id) ? "#e0a800" : "#666";
      ctx.lineWidth = b.id === selected || matches.has(b.id) || mark === "focus" ? 3 : 1;
      ctx.strokeRect(left, top, b.width, b.height);
      if (this.frontier.has(b.id)) {
        ctx.fillStyle = "#666";
        ctx.fillText("+", left + b.width - 10, top + 7);
      }
      if (text) {
        const [head, tail] = label(b.id);
        ctx.fillStyle = op === "SINK" ? "#fff" : "#000";
        ctx.fillText(head, left + 8, top + 10);
        ctx.fillStyle = op === "SINK" ? "#ddd" : "#444";
        ctx.fillText(tail, left + 8, top + 24);
      }
    }
  }

  hit(event) {
    const r = this.canvas.getBoundingClientRect();
    const x = (event.clientX - r.left - this.tx) / this.scale;
    const y = (event.clientY - r.top - this.ty) / this.scale;
    const b = this.boxes.find((box) => Math.abs(box.x - x) <= box.width / 2 &&
                                       Math.abs(box.y - y) <= box.height / 2);
    return b ? b.id : null;
  }

  listen() {
    let drag = null;
    this.canvas.addEventListener("mousedown", (e) => {
      drag = { x: e.clientX, y: e.clientY, tx: this.tx, ty: this.ty, moved: false };
    });
    window.addEventListener("mousemove", (e) => {
      if (!drag) return;
      drag.moved = drag.moved || Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) > 3;
      this.tx = drag.tx + e.clientX - drag.x;
      this.ty = drag.ty + e.clientY - drag.y;
      this.draw();
    });
    window.addEventListener("mouseup", (e) => {
      if (drag && !drag.moved && e.target === this.canvas) {
        const id = this.hit(e);
        if (id !== null) select(id);
      }
      drag = null;
    });
    this.canvas.addEventListener("dblclick", (e) => {
      const id = this.hit(e);
      if (id !== null) toggle(id);
    });
    this.canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const r = this.canvas.getBoundingClientRect();
      const factor = Math.exp(-e.deltaY * 0.0015);
      const mx = e.clientX - r.left, my = e.clientY - r.top;
      this.tx = mx - (mx - this.tx) * factor;
      this.ty = my - (my - this.ty) * factor;
      this.scale *= factor;
      this.draw();
    }, { passive: false });
  }
}

function memoryColor(id) {
  return MEMORY_COLORS[DATA.memory[id][0] % MEMORY_COLORS.length];
}

// ---- the step list: the program, each pass, each rule application ------------------------------

function shortRule(rule) {
  return `${rule.file}:${rule.line}`;
}

// A UOp in a step's title: its name if the program gave it one, its op, a constant's value.
function brief(id) {
  const [op, , arg] = NODES[id];
  const name = DATA.names[id];
  return [name, op, op === "CONST" ? arg : ""].filter(Boolean).join(" ");
}

function buildEntries() {
  const entries = [{ kind: "program", title: "program", roots: DATA.roots }];
  DATA.passes.forEach((p, k) => {
    const count = p.steps.length;
    const note = p.after === null ? "failed" : p.after === p.before ? "no change"
      : `${count} rule${count === 1 ? "" : "s"}`;
    entries.push({ kind: "pass", pass: k, title: `pass ${p.name} (${note})`,
                   failed: p.after === null, before: [p.before],
                   after: p.after === null ? null : [p.after] });
    for (const s of p.steps) {
      const [rule, before, after] = DATA.steps[s];
      const r = DATA.rules[rule];
      entries.push({ kind: "step", step: s, pass: k, rule: r.name, where: shortRule(r),
                     title: `${r.name}: ${brief(before)} → ${brief(after)}`,
                     before: [before], after: [after] });
    }
  });
  const kernels = DATA.kernels;
  if (kernels) {
    const n = kernels.kernels.length;
    const title = kernels.sink === null ? "kernels: none" : `kernels: ${n}`;
    entries.push({ kind: "kernels", title, failed: kernels.sink === null });
    kernels.kernels.forEach((k, i) => entries.push({ kind: "kernel", kernel: i, title: k.summary }));
  }
  return entries;
}

const ENTRIES = buildEntries();
let current = 0;
let selected = null;
let matches = new Set();
let views = [];

// A pass's rules fold away under it (a click on the pass's arrow); long lists start folded.
const FOLD_OVER = 200;
const folded = new Set(DATA.passes.flatMap((p, k) => (p.steps.length > FOLD_OVER ? [k] : [])));

function renderList() {
  const nav = document.getElementById("steps");
  nav.innerHTML = "";
  ENTRIES.forEach((entry, i) => {
    const div = document.createElement("div");
    div.className = `entry ${entry.kind}${entry.failed ? " failed" : ""}`;
    if (entry.kind === "pass" && DATA.passes[entry.pass].steps.length) {
      const arrow = document.createElement("span");
      arrow.className = "arrow";
      arrow.textContent = folded.has(entry.pass) ? "▸ " : "▾ ";
      arrow.addEventListener("click", (e) => {
        e.stopPropagation();
        if (folded.has(entry.pass)) folded.delete(entry.pass); else folded.add(entry.pass);
        renderList();
        markCurrent();
      });
      div.appendChild(arrow);
    }
    div.appendChild(document.createTextNode(entry.title));
    if (entry.kind === "step") {
      div.hidden = folded.has(entry.pass);
      const where = document.createElement("span");
      where.className = "where";
      where.textContent = `  ${entry.where}`;
      div.appendChild(where);
      div.title = DATA.rules[DATA.steps[entry.step][0]].pattern;
    }
    div.addEventListener("click", () => choose(i));
    nav.appendChild(div);
  });
}

function markCurrent() {
  document.querySelectorAll("nav .entry").forEach((div, k) => {
    div.classList.toggle("selected", k === current);
    if (k === current) div.scrollIntoView({ block: "nearest" });
  });
}

// The next entry up or down the list that is not folded away.
function move(by) {
  let i = current + by;
  const hidden = (k) => ENTRIES[k].kind === "step" && folded.has(ENTRIES[k].pass);
  while (i > 0 && i < ENTRIES.length - 1 && hidden(i)) i += by;
  choose(i);
}

function choose(i) {
  current = Math.max(0, Math.min(i, ENTRIES.length - 1));
  const entry = ENTRIES[current];
  if (entry.kind === "step" && folded.has(entry.pass)) {
    folded.delete(entry.pass);
    renderList();
  }
  markCurrent();
  const host = document.getElementById("graphs");
  host.innerHTML = "";
  views = [];
  shownCode = null;
  if (entry.kind === "kernels" || entry.kind === "kernel") {
    showKernels(host, entry);
  } else if (entry.kind === "program") {
    const view = new GraphView(host, `${DATA.path}: ${reach(entry.roots).size} UOps`);
    views.push(view);
    view.show(entry.roots, Infinity, new Map());
  } else if (entry.after === null || entry.after[0] === entry.before[0]) {
    const why = entry.after === null ? "the pass failed: see the error" : "no change";
    const view = new GraphView(host, `${entry.title}: ${why}`);
    views.push(view);
    view.show(entry.before, Infinity, new Map());
  } else {
    const depth = entry.kind === "step" ? STEP_DEPTH : Infinity;
    const before = reach(entry.before), after = reach(entry.after);
    const marksBefore = new Map(), marksAfter = new Map();
    for (const id of before) if (!after.has(id)) marksBefore.set(id, "gone");
    for (const id of after) if (!before.has(id)) marksAfter.set(id, "new");
    if (entry.kind === "step") {
      const rule = DATA.rules[DATA.steps[entry.step][0]];
      document.getElementById("info").textContent =
        `rule ${rule.name}\npattern ${rule.pattern}\ndefined at ${entry.where}`;
      // The UOp the rule matched, and what replaced it (an old UOp, when the rule picked one).
      marksBefore.set(entry.before[0], "focus");
      if (before.has(entry.after[0])) marksAfter.set(entry.after[0], "focus");
    }
    const what = entry.kind === "step" ? `rule ${entry.rule} (${entry.where})` : entry.title;
    const left = new GraphView(host, `before ${what}`);
    const right = new GraphView(host, `after ${what}`);
    views.push(left, right);
    left.show(entry.before, depth, marksBefore);
    right.show(entry.after, depth, marksAfter);
  }
  runSearch();
  const node = selected !== null ? `&node=${selected}` : "";
  history.replaceState(null, "", `#entry=${current}${node}`);
  publishState();
}

// ---- the kernels: the lowered program, each kernel's UOps in its colour, its code --------------

let shownCode = null; // the text of the code pane, when one is shown

function textPane(host, title, text, className) {
  const pane = document.createElement("div");
  pane.className = "pane";
  pane.innerHTML = `<div class="title"></div><pre class="${className}"></pre>`;
  pane.querySelector(".title").textContent = title;
  pane.querySelector("pre").textContent = text;
  host.appendChild(pane);
}

function showKernels(host, entry) {
  const kernels = DATA.kernels;
  const info = document.getElementById("info");
  if (kernels.sink === null) { // no schedule: why, in place of the graph
    info.textContent = kernels.why;
    textPane(host, "kernels: none", kernels.why, "note");
    return;
  }
  const chosen = entry.kind === "kernel" ? [entry.kernel] : KERNELS.map((_, i) => i);
  const marks = new Map();
  for (const i of chosen) for (const id of KERNELS[i].uops) marks.set(id, i);
  const size = reach([kernels.sink]).size;
  const what = entry.kind === "kernel" ? `${KERNELS[entry.kernel].name} (${marks.size} UOps)`
    : `${KERNELS.length} kernel${KERNELS.length === 1 ? "" : "s"}`;
  const view = new GraphView(host, `lowered program: ${size} UOps, ${what}`);
  views.push(view);
  if (entry.kind === "kernel") {
    const k = KERNELS[entry.kernel];
    info.textContent = `${k.summary}\n${k.stats}`;
  } else {
    info.textContent = [`stats: ${kernels.stats}`, ...kernels.locals].join("\n");
  }
  const code = chosen.map((i) => KERNELS[i].code).filter((c) => c !== null);
  if (kernels.code && code.length) {
    shownCode = code.join("\n\n");
    const which = entry.kind === "kernel" ? KERNELS[entry.kernel].name : "every kernel";
    textPane(host, `${kernels.code.toUpperCase()} of ${which}`, shownCode, "code");
  } else {
    textPane(host, "code", kernels.codeWhy || "no code", "note");
  }
  view.show([kernels.sink], Infinity, marks); // laid out once the code pane took its room
}

// ---- selection, source text, search ------------------------------------------------------------

function select(id) {
  selected = id;
  const [op, type, arg, src] = NODES[id];
  const line = DATA.lines[id];
  const name = DATA.names[id] || `#${id}`;
  const srcNames = src.map((s) => DATA.names[s] || `#${s}`).join(" ");
  const memory = DATA.memory[id];
  const info = [`${name} = ${op} ${type} ${srcNames} ${arg}`.trim(),
                line ? `from line ${line}` : "built by a rewrite"];
  if (memory) info.push(`memory: ${DATA.names[memory[0]] || "buffer"}, version ${memory[1]}`);
  const loop = DATA.loops[id];
  if (loop !== undefined) info.push(`in the loop of ${DATA.names[loop] || "a RANGE"}`);
  if (KERNEL_OF.has(id)) info.push(`run by ${KERNELS[KERNEL_OF.get(id)].summary}`);
  document.getElementById("info").textContent = info.join("\n");
  document.querySelectorAll("#source .line").forEach((div) => {
    const on = +div.dataset.line === line;
    div.classList.toggle("selected", on);
    if (on) div.scrollIntoView({ block: "nearest" });
  });
  views.forEach((v) => v.draw());
  history.replaceState(null, "", `#entry=${current}&node=${id}`);
  publishState();
}

function toggle(id) {
  if (NODES[id][0] === "CALL" && !collapsed.has(id)) {
    if (closedBodies.has(id)) closedBodies.delete(id); else closedBodies.add(id);
  } else if (views.some((v) => v.frontier.has(id))) {
    collapsed.delete(id);
    forced.add(id);
  } else {
    collapsed.add(id);
    forced.delete(id);
  }
  views.forEach((v) => v.relayout());
}

function renderSource() {
  const host = document.getElementById("source");
  const error = DATA.error;
  DATA.source.split("\n").forEach((text, i) => {
    const div = document.createElement("div");
    div.className = "line";
    div.dataset.line = i + 1;
    div.innerHTML = `<span class="no">${i + 1}</span>`;
    div.appendChild(document.createTextNode(text));
    div.addEventListener("click", () => {
      const view = views[views.length - 1];
      const id = view && view.boxes.find((b) => DATA.lines[b.id] === i + 1);
      if (id) select(id.id);
    });
    host.appendChild(div);
    if (error && error.line === i + 1) {
      div.classList.add("error");
      const message = document.createElement("div");
      message.className = "message";
      message.textContent = `${error.kind} error: ${error.message}`;
      host.appendChild(message);
    }
  });
  if (error && !error.line) {
    const banner = document.createElement("div");
    banner.className = "banner";
    banner.textContent = `${error.kind} error: ${error.message}`;
    host.prepend(banner);
  }
}

function runSearch() {
  // Only leading blanks are dropped: "%m3 " finds %m3 and not %m30.
  const query = document.getElementById("search").value.trimStart().toLowerCase();
  const view = views[views.length - 1];
  matches = new Set();
  if (query.trim() && view) {
    for (const id of reach(view.scope)) if (searchText(id).includes(query)) matches.add(id);
  }
  const shown = view ? [...matches].filter((id) => view.shown.has(id)).length : 0;
  document.getElementById("matches").textContent =
    query.trim() ? `${matches.size} found, ${shown} shown (Enter: next)` : "";
  views.forEach((v) => v.draw());
}

// Enter shows the next match. One the layout left out is shown in its neighbourhood: the graph
// is redrawn from the UOps that use it (Escape goes back to the whole graph), so that finding a
// UOp 2,000 levels deep lays out what is around it, not the 2,000 levels above it.
let matchIndex = -1;
function nextMatch() {
  const view = views[views.length - 1];
  if (!view || !matches.size) return;
  const list = [...matches];
  matchIndex = (matchIndex + 1) % list.length;
  const target = list[matchIndex];
  if (!view.shown.has(target)) {
    const users = [...reach(view.scope)].filter((id) => NODES[id][3].includes(target));
    view.setTitle(`around ${DATA.names[target] || NODES[target][0]} (Escape: the whole graph)`);
    view.show(users.length ? users : [target], Infinity, view.marks);
    runSearch(); // the count of matches shown
  }
  select(target);
  view.center(target);
}

// The page's state, written into the DOM for tests (and for anyone reading the page's source).
function publishState() {
  const state = {
    entry: current,
    kind: ENTRIES[current] && ENTRIES[current].kind,
    title: ENTRIES[current] && ENTRIES[current].title,
    entries: ENTRIES.length,
    rules: ENTRIES.filter((e) => e.kind === "step").map((e) => e.rule),
    passes: DATA.passes.map((p) => p.name),
    panes: views.map((v) => ({ laidOut: v.boxes ? v.boxes.length : 0, drawn: v.drawn,
                               marked: [...v.marks.keys()].filter((id) => v.shown?.has(id)).length,
                               clusters: v.clusters ? v.clusters.map((k) => k.cluster) : [] })),
    selected, selectedLine: selected === null ? null : DATA.lines[selected],
    error: DATA.error,
    kernels: KERNELS.map((k) => k.summary),
    code: shownCode,
    info: document.getElementById("info").textContent,
  };
  document.getElementById("viz-state").textContent = JSON.stringify(state);
}

// ---- start -------------------------------------------------------------------------------------

document.getElementById("path").textContent = DATA.path;
renderSource();
renderList();
document.getElementById("search").addEventListener("input", () => {
  matchIndex = -1;
  runSearch();
});
document.getElementById("search").addEventListener("keydown", (e) => {
  if (e.key === "Enter") nextMatch();
});
window.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT") return;
  if (e.key === "j" || e.key === "ArrowDown") { move(1); e.preventDefault(); }
  if (e.key === "k" || e.key === "ArrowUp") { move(-1); e.preventDefault(); }
  if (e.key === "f") views.forEach((v) => v.fit());
  if (e.key === "/") { document.getElementById("search").focus(); e.preventDefault(); }
  if (e.key === "Escape") choose(current);
});
window.addEventListener("resize", () => views.forEach((v) => v.draw()));
const params = new URLSearchParams(location.hash.slice(1));
choose(+(params.get("entry") || 0));
if (params.has("node") && NODES[+params.get("node")]) select(+params.get("node"));
if (params.has("find")) { // as if typed into the search box, then Enter
  document.getElementById("search").value = params.get("find");
  runSearch();
  nextMatch();
}
