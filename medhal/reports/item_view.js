// report.html's per-item view (medhal/reports/items.py writes its data).
// Every text from a run is set with textContent, never parsed as HTML.
(() => {
  "use strict";
  const root = document.getElementById("items");
  if (!root) return;
  const started = performance.now();
  const meta = JSON.parse(root.dataset.meta);
  const own = meta.conventions.indexOf(meta.own);
  const PAGE = 50;
  const status = root.querySelector("[data-items-status]");
  const list = root.querySelector("[data-items-list]");
  const controls = root.querySelector("[data-items-controls]");
  const items = { m: [], r: [], p: null, t: [], c: null };
  const state = { filter: "all", group: "", by: meta.fields.length ? meta.fields[0] : "", q: "", page: 0, mode: "", sort: "idx" };
  let shown = []; // entries on screen: each an array of item numbers (one rollout, or a task's rollouts)
  let tasks = []; // item numbers of each task's rollouts, tasks in order of first appearance
  let taskOf = []; // item number -> its task
  let spreads = []; // task -> [share of rollouts outside the most common reading, share on the minority side of right/wrong]

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function bytesOf(text) {
    if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  async function inflate(node) {
    const stream = new Blob([bytesOf(node.textContent.trim())]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function parts(name) {
    return Array.from(document.querySelectorAll('script[data-items-part="' + name + '"]'));
  }

  async function load(name, from) {
    const chunks = await Promise.all(parts(name).slice(from).map(inflate));
    return [].concat(...chunks);
  }

  // A prompt is stored as pieces joined by a blank line: a text, or the number of a text
  // shared by many prompts (an instruction, few-shot examples), stored once in part "t".
  function promptOf(i) {
    const pieces = items.p ? items.p[i] : undefined;
    if (pieces === undefined) return undefined;
    if (pieces === null) return null;
    return pieces.map((x) => (typeof x === "number" ? items.t[x] : x)).join("\n\n");
  }

  // ---- what an item is
  const bit = (mask, i) => (mask >> i) & 1;
  const errored = (i) => items.m[i][7] !== null;
  const wrong = (i) => !bit(items.m[i][4], own);
  const unreadable = (i) => !errored(i) && !bit(items.m[i][5], own);
  function disagree(i) {
    const row = items.m[i];
    const all = (1 << meta.conventions.length) - 1;
    return new Set(row[3]).size > 1 || (row[4] !== 0 && row[4] !== all);
  }
  // ---- several rollouts of a task: how much they disagree (under the run's own reading)
  function groupTasks() {
    const at = new Map();
    tasks = [];
    taskOf = new Array(items.m.length);
    items.m.forEach((row, i) => {
      let t = at.get(row[0]);
      if (t === undefined) {
        t = tasks.length;
        at.set(row[0], t);
        tasks.push([]);
      }
      tasks[t].push(i);
      taskOf[i] = t;
    });
    spreads = tasks.map(spread);
  }
  function readingCounts(task) {
    const counts = new Map();
    for (const i of task) counts.set(items.m[i][3][own], (counts.get(items.m[i][3][own]) || 0) + 1);
    return [...counts.entries()].sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])));
  }
  function spread(task) {
    const right = task.filter((i) => bit(items.m[i][4], own)).length;
    return [1 - readingCounts(task)[0][1] / task.length, Math.min(right, task.length - right) / task.length];
  }
  const several = () => tasks.some((t) => t.length > 1);
  const split = (i) => spreads[taskOf[i]][0] > 0 || spreads[taskOf[i]][1] > 0;

  const FILTERS = {
    all: () => true,
    wrong: wrong,
    unreadable: unreadable,
    errored: errored,
    disagree: disagree,
    split: split,
  };
  const MODES = { tasks: "tasks, their rollouts side by side", rollouts: "each rollout" };
  const SORTS = { idx: "grouping above", disagreement: "rollouts disagreeing most first" };
  const mode = () => (state.mode === "tasks" || (state.mode === "" && several()) ? "tasks" : "rollouts");
  const entries = () => (mode() === "tasks" ? tasks : items.m.map((_, i) => [i]));

  function matches(i, q) {
    if (!q) return true;
    const row = items.m[i];
    const number = /^(#?)(\d+)$/.exec(q);
    if (number && row[0] === Number(number[2])) return true;
    if (number && number[1]) return false; // #12: that idx only; 12: that idx or the text
    const needle = q.toLowerCase();
    const texts = [items.r[i], row[2], row[7], row[3].join(" "), items.p ? promptOf(i) : null];
    return texts.some((t) => t !== null && t !== undefined && String(t).toLowerCase().includes(needle));
  }

  // ---- state in the address (#view:filter=disagree&q=...), so a view can be linked
  function readHash() {
    const hash = location.hash.slice(1);
    if (!hash.startsWith("view:")) return false;
    const params = new URLSearchParams(hash.slice(5));
    // Only the filters' own names: "__proto__" or "valueOf" is every object's, not a filter.
    state.filter = Object.hasOwn(FILTERS, params.get("filter")) ? params.get("filter") : "all";
    state.group = params.get("group") || "";
    state.q = params.get("q") || "";
    state.page = Math.max(0, Number(params.get("page") || 1) - 1) || 0;
    if (params.has("by")) state.by = params.get("by");
    state.mode = Object.hasOwn(MODES, params.get("mode")) ? params.get("mode") : "";
    state.sort = Object.hasOwn(SORTS, params.get("sort")) ? params.get("sort") : "idx";
    return true;
  }

  function select(name, label, options, value) {
    const wrap = el("label", label + " ");
    const box = el("select");
    box.name = name;
    for (const [key, text] of options) {
      const option = el("option", text);
      option.value = key;
      box.append(option);
    }
    box.value = value;
    wrap.append(box);
    return [wrap, box];
  }

  function groupCounts() {
    const counts = meta.fields.map(() => new Map());
    for (const row of items.m) row[1].forEach((v, f) => counts[f].set(v, (counts[f].get(v) || 0) + 1));
    return counts;
  }

  function order(list) {
    const first = (e) => items.m[e[0]];
    const byIdx = (a, b) => first(a)[0] - first(b)[0];
    if (state.sort === "disagreement") {
      const key = (e) => spreads[taskOf[e[0]]];
      return list.sort((a, b) => key(b)[0] - key(a)[0] || key(b)[1] - key(a)[1] || byIdx(a, b));
    }
    const f = meta.fields.indexOf(state.by);
    if (f < 0) return list.sort(byIdx);
    const rank = new Map((Object.hasOwn(meta.groups, state.by) ? meta.groups[state.by] : []).map((v, k) => [v, k]));
    const key = (e) => (rank.has(first(e)[1][f]) ? rank.get(first(e)[1][f]) : rank.size);
    return list.sort((a, b) => key(a) - key(b) || String(first(a)[1][f]).localeCompare(String(first(b)[1][f])) || byIdx(a, b));
  }

  function update() {
    const keep = FILTERS[state.filter];
    let group = null;
    if (state.group) {
      const at = state.group.indexOf("=");
      group = [meta.fields.indexOf(state.group.slice(0, at)), state.group.slice(at + 1)];
    }
    shown = order(entries().slice()).filter(
      (e) => e.some(keep) && (!group || items.m[e[0]][1][group[0]] === group[1]) && e.some((i) => matches(i, state.q)),
    );
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    render(pages);
  }

  function render(pages) {
    list.replaceChildren();
    const start = state.page * PAGE;
    const f = state.sort === "disagreement" ? -1 : meta.fields.indexOf(state.by);
    const byTask = mode() === "tasks";
    let heading = null;
    for (const e of shown.slice(start, start + PAGE)) {
      if (f >= 0 && items.m[e[0]][1][f] !== heading) {
        heading = items.m[e[0]][1][f];
        list.append(el("h3", state.by + ": " + heading, "item-group"));
      }
      list.append(byTask ? taskCard(e) : card(e[0]));
    }
    const to = Math.min(start + PAGE, shown.length);
    const prompts = items.p ? "" : " (prompts still loading: search covers them once loaded)";
    status.textContent =
      shown.length + " of " + (byTask ? tasks.length + " tasks (" + items.m.length + " rollouts)" : items.m.length + " items") +
      (shown.length ? "; showing " + (start + 1) + "–" + to + ", page " + (state.page + 1) + " of " + pages : "") +
      prompts;
    root.querySelector("[data-page=prev]").disabled = state.page === 0;
    root.querySelector("[data-page=next]").disabled = state.page >= pages - 1;
    root.dataset.shown = String(shown.length);
    root.dataset.mode = mode();
  }

  const rewardText = (row) => {
    const rewards = Object.entries(row[6]);
    return rewards.length ? rewards.map(([k, v]) => k + " " + Number(v).toFixed(3)).join(", ") : "–";
  };
  const tokensText = (row) => (row[8] === null ? "–" : row[8][0] + " in, " + row[8][1] + " out");
  const secondsText = (row) => (row[9] === null ? "–" : Number(row[9]).toFixed(2) + " s");
  const replyText = (i) => (items.r[i] === null ? (meta.withheld ? "(withheld in the published copy)" : "(no reply)") : items.r[i]);

  function promptDetails(i) {
    const prompt = el("details");
    prompt.append(el("summary", "prompt"));
    const text = items.p ? promptOf(i) : "(still loading)";
    prompt.append(el("pre", text === null ? (meta.withheld ? "(withheld in the published copy)" : "(none recorded)") : text));
    return prompt;
  }

  // The reasoning a reasoning model returned beside its reply: shown folded, never read.
  function reasoningDetails(i) {
    const reasoning = items.c ? items.c[i] : null;
    if (reasoning === null || reasoning === undefined) return null;
    const folded = el("details");
    folded.dataset.part = "reasoning";
    folded.append(el("summary", "reasoning (" + reasoning.length + " characters; shown, never read as the answer)"));
    folded.append(el("pre", reasoning, "reply"));
    return folded;
  }

  function head(row, flags) {
    const line = el("p", null, "item-head");
    line.append(el("strong", "idx " + row[0]));
    meta.fields.forEach((f, k) => line.append(el("span", f + ": " + row[1][k], "tag")));
    for (const [text, cls] of flags) line.append(el("span", text, "tag " + cls));
    return line;
  }

  function card(i) {
    const row = items.m[i];
    const node = el("article", null, "item");
    node.dataset.idx = String(row[0]);
    const flags = [];
    const task = tasks[taskOf[i]];
    if (task.length > 1) flags.push(["rollout " + (task.indexOf(i) + 1) + " of " + task.length, ""]);
    if (errored(i)) flags.push(["errored", "bad"]);
    else if (unreadable(i)) flags.push(["unreadable", "bad"]);
    flags.push(wrong(i) ? ["wrong (" + meta.own + ")", "bad"] : ["right (" + meta.own + ")", "good"]);
    if (disagree(i)) flags.push(["conventions disagree", "warnflag"]);
    if (row[10]) flags.push(["truncated " + row[10] + " (token limit)", "warnflag"]);
    node.append(head(row, flags));

    const table = el("table");
    table.dataset.table = "readings";
    const headRow = el("tr");
    ["", ...meta.conventions].forEach((c) => headRow.append(el("th", c === meta.own ? c + " (run)" : c)));
    const thead = el("thead");
    thead.append(headRow);
    const body = el("tbody");
    const reading = el("tr");
    reading.append(el("th", "reading"));
    row[3].forEach((r) => reading.append(el("td", r)));
    const right = el("tr");
    right.append(el("th", "right"));
    meta.conventions.forEach((_, k) => right.append(el("td", bit(row[4], k) ? "yes" : "no", bit(row[4], k) ? "good" : "bad")));
    body.append(reading, right);
    table.append(thead, body);
    node.append(table);

    const facts = el("dl");
    const fact = (name, value, cls) => {
      facts.append(el("dt", name));
      facts.append(el("dd", value, cls));
    };
    fact("gold", row[2] === null ? (meta.withheld ? "(withheld)" : "–") : row[2]);
    fact("reward", rewardText(row));
    if (row[8] !== null) fact("tokens", tokensText(row));
    if (row[9] !== null) fact("model time", secondsText(row));
    if (row[7] !== null) fact("error", row[7], "bad");
    node.append(facts);

    const folded = reasoningDetails(i);
    if (folded) node.append(folded);
    node.append(el("p", "reply", "label"));
    node.append(el("pre", replyText(i), "reply"));
    node.append(promptDetails(i));
    return node;
  }

  // One task, its rollouts side by side: a column per rollout, a row per reading, rightness,
  // reward, tokens, time, error and reply.
  function taskCard(task) {
    const rows = task.map((i) => items.m[i]);
    const node = el("article", null, "item task");
    node.dataset.idx = String(rows[0][0]);
    node.dataset.rollouts = String(task.length);
    const right = task.filter((i) => bit(items.m[i][4], own)).length;
    const flags = [[right + " of " + task.length + " right (" + meta.own + ")", right === task.length ? "good" : right === 0 ? "bad" : "warnflag"]];
    const failed = task.filter(errored).length;
    if (failed) flags.push([failed + " errored", "bad"]);
    if (split(task[0])) flags.push(["rollouts disagree", "warnflag"]);
    node.append(head(rows[0], flags));
    const counts = readingCounts(task);
    const facts = el("dl");
    facts.append(el("dt", "gold"));
    facts.append(el("dd", rows[0][2] === null ? (meta.withheld ? "(withheld)" : "–") : rows[0][2]));
    facts.append(el("dt", "readings (" + meta.own + ")"));
    facts.append(el("dd", counts.map(([r, n]) => r + " ×" + n).join(", ")));
    node.append(facts);

    const table = el("table", null, "rollouts");
    table.dataset.table = "rollouts";
    const headRow = el("tr");
    headRow.append(el("th", ""));
    task.forEach((_, k) => headRow.append(el("th", "rollout " + (k + 1))));
    const thead = el("thead");
    thead.append(headRow);
    const body = el("tbody");
    const line = (label, cell) => {
      const tr = el("tr");
      tr.append(el("th", label));
      task.forEach((i, k) => tr.append(cell(i, rows[k])));
      body.append(tr);
    };
    meta.conventions.forEach((c, k) => line("reading, " + c + (c === meta.own ? " (run)" : ""), (i, row) => el("td", row[3][k])));
    meta.conventions.forEach((c, k) =>
      line("right, " + c, (i, row) => el("td", bit(row[4], k) ? "yes" : "no", bit(row[4], k) ? "good" : "bad")),
    );
    line("reward", (i, row) => el("td", rewardText(row)));
    if (rows.some((row) => row[8] !== null)) line("tokens", (i, row) => el("td", tokensText(row)));
    if (rows.some((row) => row[9] !== null)) line("model time", (i, row) => el("td", secondsText(row)));
    if (failed) line("error", (i, row) => el("td", row[7] === null ? "–" : row[7], row[7] === null ? "" : "bad"));
    if (rows.some((row) => row[10])) line("truncated", (i, row) => el("td", row[10] ? row[10] + " (token limit)" : "–", row[10] ? "warnflag" : ""));
    line("reply", (i) => {
      const td = el("td");
      const folded = reasoningDetails(i);
      if (folded) td.append(folded);
      td.append(el("pre", replyText(i), "reply"));
      return td;
    });
    table.append(thead, body);
    const scroll = el("div", null, "scroll");
    scroll.append(table);
    node.append(scroll);
    node.append(promptDetails(task[0]));
    return node;
  }

  function build() {
    const counts = groupCounts();
    const byTask = mode() === "tasks";
    const counted = (keep) => (byTask ? tasks.filter((t) => t.some(keep)).length : items.m.filter((_, i) => keep(i)).length);
    const filters = [
      ["all", byTask ? "all tasks" : "all items"],
      ["wrong", "wrong (" + meta.own + " reading)"],
      ["unreadable", "unreadable (" + meta.own + " reading)"],
      ["errored", "errored"],
      ["disagree", "conventions disagree"],
    ];
    if (several()) filters.push(["split", "rollouts disagree (" + meta.own + " reading)"]);
    const filterOptions = filters.map(([k, t]) => [k, t + " (" + counted(FILTERS[k]) + ")"]);
    const [filterLabel, filterBox] = select("filter", "Show", filterOptions, state.filter);
    const groupOptions = [["", "every group"]];
    meta.fields.forEach((f, k) => {
      const values = [...counts[k].keys()];
      const rank = new Map((meta.groups[f] || []).map((v, r) => [v, r]));
      values.sort((a, b) => (rank.has(a) ? rank.get(a) : rank.size) - (rank.has(b) ? rank.get(b) : rank.size) || a.localeCompare(b));
      for (const v of values) groupOptions.push([f + "=" + v, f + ": " + v + " (" + counts[k].get(v) + ")"]);
    });
    const [groupLabel, groupBox] = select("group", "in", groupOptions, state.group);
    const [byLabel, byBox] = select("by", "grouped by", [...meta.fields.map((f) => [f, f]), ["", "none (idx order)"]], state.by);
    const [modeLabel, modeBox] = select("mode", "as", Object.entries(MODES), mode());
    const [sortLabel, sortBox] = select("sort", "sorted by", Object.entries(SORTS), state.sort);
    const search = el("input");
    search.type = "search";
    search.name = "q";
    search.placeholder = "#idx (e.g. #12) or text in reply, gold, prompt, error";
    search.value = state.q;
    const searchLabel = el("label", "Search ");
    searchLabel.append(search);
    const prev = el("button", "‹ previous");
    prev.dataset.page = "prev";
    const next = el("button", "next ›");
    next.dataset.page = "next";
    const shownControls = several() ? [modeLabel, sortLabel] : [];
    controls.replaceChildren(filterLabel, groupLabel, byLabel, ...shownControls, searchLabel, prev, next);
    let rebuild = false;
    const changed = () => {
      rebuild = modeBox.value !== mode();
      state.filter = filterBox.value;
      state.group = groupBox.value;
      state.by = byBox.value;
      state.mode = modeBox.value;
      state.sort = sortBox.value;
      state.q = search.value.trim();
      state.page = 0;
      if (rebuild) build(); // the filters count tasks or rollouts
      update();
    };
    for (const box of [filterBox, groupBox, byBox, modeBox, sortBox]) box.addEventListener("change", changed);
    let timer = 0;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(changed, 250);
    });
    prev.addEventListener("click", () => {
      state.page -= 1;
      update();
      root.scrollIntoView();
    });
    next.addEventListener("click", () => {
      state.page += 1;
      update();
      root.scrollIntoView();
    });
  }

  function followHash() {
    if (!readHash()) return;
    build();
    update();
    root.scrollIntoView();
  }

  async function main() {
    if (typeof DecompressionStream !== "function") {
      status.textContent = "This browser cannot show the items (it lacks DecompressionStream; any browser since 2023 has it).";
      return;
    }
    const linked = readHash();
    const mark = (name) => (document.documentElement.dataset[name] = String(Math.round(performance.now() - started)));
    // The first chunk on screen at once; the filters' counts and order wait for the rest.
    if (parts("m").length) [items.m, items.r] = await Promise.all([inflate(parts("m")[0]), inflate(parts("r")[0])]);
    const total = meta.n;
    groupTasks();
    if (items.m.length < total) {
      build();
      update();
      status.textContent += " (reading the other " + (total - items.m.length) + " items…)";
      mark("itemsReady");
      const [m, r] = await Promise.all([load("m", 1), load("r", 1)]);
      items.m = items.m.concat(m);
      items.r = items.r.concat(r);
      groupTasks();
    }
    build();
    update();
    if (linked) root.scrollIntoView();
    if (!document.documentElement.dataset.itemsReady) mark("itemsReady");
    window.addEventListener("hashchange", followHash);
    mark("itemsLoaded");
    [items.t, items.p, items.c] = await Promise.all([load("t", 0), load("p", 0), load("c", 0)]);
    if (state.q) update();
    else render(Math.max(1, Math.ceil(shown.length / PAGE)));
    mark("promptsReady");
  }

  main().catch((error) => {
    status.textContent = "The items could not be shown: " + error;
    console.error(error);
  });
})();
