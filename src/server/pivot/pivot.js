// The pivot page: a measure and an aggregate; each dimension on the rows,
// the columns or the slicer; a click on a consolidated element drills down
// (its children appear under it) and a second click rolls up; the visible
// cells as a bar or line chart; a click on a cell writes it. Everything comes
// from the HTTP API: GET /cube/info and /dimension/elements once, then one
// POST /cell/area per view (the visible elements of every row and column
// dimension, the slicer's element of the others), and POST /cell/replace
// for a write.
//
// window.pivot is for tests and benchmarks: `generation` counts the views
// drawn, `last` times the latest one.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const kMaxSeries = 12;      // column tuples drawn in the chart
  const kMaxCategories = 40;  // row tuples drawn in the chart
  const kPalette = ['#2f6fdf', '#12b76a', '#f79009', '#7a5af8', '#ee46bc', '#06aed4',
                    '#b42318', '#669f2a', '#dd2590', '#444ce7', '#e04f16', '#344054'];

  const state = {
    dims: [],         // {name, elements, byName, tops, axis, slice, expanded: the drilled paths (pathKey)}
    measures: [],
    cells: new Map(), // path key -> value, from the latest answer
    answer: null,
    view: null,       // [row dims, row tuples, column dims, column tuples] of the drawn view
  };
  const pivot = { state, generation: 0, last: null, ready: false };
  window.pivot = pivot;

  // ---- the API ----

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const token = $('token').value;
    if (token && method === 'POST') init.headers.Authorization = 'Bearer ' + token;
    const response = await fetch(path, init);
    const text = await response.text();
    let data = null;
    try { data = JSON.parse(text); } catch (e) { /* not JSON: reported below */ }
    if (!response.ok) {
      const why = data && data.error ? `${data.error}: ${data.detail}` : `${response.status} ${response.statusText}`;
      throw new Error(`${method} ${path}: ${why}`);
    }
    if (data === null) throw new Error(`${method} ${path}: the answer is not JSON`);
    return data;
  }

  const pathKey = (names) => names.join('\u001f');

  // ---- the model ----

  function makeDimension(name, list) {
    const byName = new Map(list.elements.map((e) => [e.name, e]));
    const tops = list.elements.filter((e) => e.parents.length === 0).map((e) => e.name);
    return { name, elements: list.elements, byName, tops, axis: 'slicer', slice: defaultSlice(list.elements), expanded: new Set() };
  }

  // The slicer's first element: the top element with the most levels under
  // it (a dimension's "All"), the first such in schema order.
  function defaultSlice(elements) {
    let best = null;
    for (const e of elements) if (e.parents.length === 0 && (best === null || e.level > best.level)) best = e;
    return best ? best.name : elements[0].name;
  }

  // Where an element is shown: the names from its top element down to it
  // (`path`). The drill state is kept by path, not by name: in a hierarchy
  // where an element has two parents it shows under each, drilled or not
  // apart.

  // A dimension's visible elements on its axis, in order: its top elements,
  // each drilled element followed by its children (depth-first).
  function visible(dim) {
    const out = [];
    const walk = (name, indent, parentPath) => {
      const path = [...parentPath, name];
      out.push({ name, indent, path });
      if (!dim.expanded.has(pathKey(path))) return;
      for (const child of dim.byName.get(name).children) walk(child.name, indent + 1, path);
    };
    for (const top of dim.tops) walk(top, 0, []);
    return out;
  }

  const onAxis = (axis) => state.dims.map((d, i) => ({ d, i })).filter(({ d }) => d.axis === axis);

  // Every combination of the axis dimensions' visible elements, the first dimension slowest.
  function tuples(axisDims) {
    let out = [[]];
    for (const { d } of axisDims) {
      const next = [];
      const items = visible(d);
      for (const t of out) for (const item of items) next.push([...t, item]);
      out = next;
    }
    return out;
  }

  function areaRequest() {
    const area = {};
    for (const d of state.dims) area[d.name] = d.axis === 'slicer' ? [d.slice] : [...new Set(visible(d).map((v) => v.name))];
    return { measure: $('measure').value, aggregate: $('aggregate').value, area };
  }

  // The cell at a row tuple and a column tuple, as a path in dimension order.
  function cellPath(rowDims, rowTuple, colDims, colTuple) {
    const names = state.dims.map((d) => d.slice);
    rowDims.forEach(({ i }, k) => { names[i] = rowTuple[k].name; });
    colDims.forEach(({ i }, k) => { names[i] = colTuple[k].name; });
    return names;
  }

  // ---- drawing ----

  function formatValue(v) {
    if (v === undefined || v === null) return '';
    if (state.answer && state.answer.aggregate === 'count') return String(v);
    return v.toLocaleString(undefined, { maximumFractionDigits: 2 });
  }

  function elementHeader(dimIndex, item) {
    const th = document.createElement('th');
    const dim = state.dims[dimIndex];
    const element = dim.byName.get(item.name);
    const label = document.createElement('span');
    label.textContent = item.name;
    th.dataset.dim = dim.name;
    th.dataset.element = item.name;
    th.style.paddingLeft = `${8 + 14 * item.indent}px`;
    if (element.children.length > 0) {
      label.className = 'toggle';
      const drilled = dim.expanded.has(pathKey(item.path));
      label.dataset.expanded = String(drilled);
      label.title = drilled ? 'roll up' : 'drill down';
      label.addEventListener('click', () => toggle(dimIndex, item.path));
    } else {
      label.className = 'leaf';
    }
    th.appendChild(label);
    return th;
  }

  const samePrefix = (a, b, upTo) => { for (let k = 0; k <= upTo; ++k) if (a[k].name !== b[k].name) return false; return true; };

  function drawTable(rowDims, rows, colDims, cols) {
    const table = $('pivot-table');
    table.replaceChildren();
    const thead = table.createTHead();
    const headerRows = Math.max(colDims.length, 1);
    const cornerWidth = Math.max(rowDims.length, 1);
    for (let level = 0; level < headerRows; ++level) {
      const tr = thead.insertRow();
      if (level === 0) {
        const corner = document.createElement('th');
        corner.className = 'corner';
        corner.colSpan = cornerWidth;
        corner.rowSpan = headerRows;
        corner.textContent = rowDims.map(({ d }) => d.name).join(' / ');
        tr.appendChild(corner);
      }
      if (colDims.length === 0) {
        const th = document.createElement('th');
        th.textContent = `${state.answer.aggregate}(${state.answer.measure})`;
        tr.appendChild(th);
        continue;
      }
      for (let j = 0; j < cols.length;) {
        let end = j + 1;
        while (end < cols.length && samePrefix(cols[end], cols[j], level)) ++end;
        const th = elementHeader(colDims[level].i, cols[j][level]);
        th.colSpan = end - j;
        tr.appendChild(th);
        j = end;
      }
    }
    const tbody = table.createTBody();
    rows.forEach((row, r) => {
      const tr = tbody.insertRow();
      if (rowDims.length === 0) {
        const th = document.createElement('th');
        th.textContent = 'all';
        tr.appendChild(th);
      }
      for (let level = 0; level < rowDims.length; ++level) {
        if (r > 0 && samePrefix(rows[r - 1], row, level)) continue;
        let end = r + 1;
        while (end < rows.length && samePrefix(rows[end], row, level)) ++end;
        const th = elementHeader(rowDims[level].i, row[level]);
        th.rowSpan = end - r;
        tr.appendChild(th);
      }
      for (const col of cols) {
        const path = cellPath(rowDims, row, colDims, col);
        const value = state.cells.get(pathKey(path));
        const td = tr.insertCell();
        td.className = value === undefined ? 'value empty' : 'value';
        td.dataset.path = JSON.stringify(path);
        if (value !== undefined) td.dataset.value = String(value);
        td.textContent = formatValue(value);
        td.title = `${path.join(', ')}: ${value === undefined ? 'empty' : value}`;
        td.addEventListener('click', () => editCell(td, path, value));
      }
    });
  }

  const svgNode = (name, attributes, parent) => {
    const node = document.createElementNS('http://www.w3.org/2000/svg', name);
    for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  };

  function drawChart(rowDims, rows, colDims, cols) {
    const svg = $('chart');
    svg.replaceChildren();
    const kind = $('chart-kind').value;
    svg.style.display = kind === 'none' ? 'none' : '';
    if (kind === 'none') return;
    const categories = rows.slice(0, kMaxCategories);
    const series = cols.slice(0, kMaxSeries);
    const label = (tuple) => tuple.map((t) => t.name).join(' / ') || 'all';
    const values = series.map((col) => categories.map((row) => state.cells.get(pathKey(cellPath(rowDims, row, colDims, col)))));
    const present = values.flat().filter((v) => v !== undefined);
    const width = 560, height = 320, left = 64, right = 8, top = 8 + 14 * Math.ceil(series.length / 4), bottom = 48;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    if (present.length === 0) {
      svgNode('text', { x: left, y: height / 2 }, svg).textContent = 'no values in view';
      return;
    }
    const low = Math.min(0, ...present), high = Math.max(0, ...present);
    const span = high - low || 1;
    const y = (v) => top + (height - top - bottom) * (high - v) / span;
    const band = (width - left - right) / categories.length;
    for (const v of [low, (low + high) / 2, high]) {
      svgNode('line', { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: '#eaecf0' }, svg);
      const tick = v.toLocaleString(undefined, { notation: 'compact', maximumFractionDigits: 1 });
      svgNode('text', { x: left - 4, y: y(v) + 4, 'text-anchor': 'end' }, svg).textContent = tick;
    }
    svgNode('line', { x1: left, x2: width - right, y1: y(0), y2: y(0), stroke: '#98a2b3' }, svg);
    categories.forEach((row, c) => {
      const x = left + band * (c + 0.5);
      const text = svgNode('text', { x, y: height - bottom + 14, 'text-anchor': 'middle' }, svg);
      text.textContent = label(row).slice(0, Math.max(3, Math.floor(band / 6)));
    });
    series.forEach((col, s) => {
      const color = kPalette[s % kPalette.length];
      const legendX = left + (s % 4) * ((width - left) / 4), legendY = 10 + 14 * Math.floor(s / 4);
      svgNode('rect', { x: legendX, y: legendY - 8, width: 9, height: 9, fill: color }, svg);
      svgNode('text', { x: legendX + 13, y: legendY }, svg).textContent = label(col);
      if (kind === 'bar') {
        const barWidth = Math.max(1, band * 0.8 / series.length);
        values[s].forEach((v, c) => {
          if (v === undefined) return;
          const x = left + band * c + band * 0.1 + barWidth * s;
          svgNode('rect', { x, y: Math.min(y(v), y(0)), width: barWidth, height: Math.abs(y(v) - y(0)), fill: color,
                            'data-series': label(col), 'data-category': label(categories[c]) }, svg);
        });
      } else {
        const points = values[s].map((v, c) => (v === undefined ? null : [left + band * (c + 0.5), y(v)])).filter((p) => p);
        svgNode('polyline', { points: points.map((p) => p.join(',')).join(' '), fill: 'none', stroke: color, 'stroke-width': 2 }, svg);
        for (const [px, py] of points) svgNode('circle', { cx: px, cy: py, r: 2.5, fill: color }, svg);
      }
    });
  }

  function drawAxes() {
    const section = $('axes');
    section.replaceChildren();
    state.dims.forEach((dim, i) => {
      const card = document.createElement('div');
      card.className = 'axis-card';
      card.dataset.axis = dim.axis;
      card.dataset.dim = dim.name;
      const name = document.createElement('span');
      name.className = 'dim-name';
      name.textContent = dim.name;
      const axis = document.createElement('select');
      axis.className = 'axis';
      for (const a of ['rows', 'columns', 'slicer']) axis.add(new Option(a, a, false, a === dim.axis));
      axis.addEventListener('change', () => {
        const before = dim.axis;
        change(() => { dim.axis = axis.value; drawAxes(); }, () => { dim.axis = before; });
      });
      card.append(name, axis);
      if (dim.axis === 'slicer') {
        const slice = document.createElement('select');
        slice.className = 'slice';
        for (const e of dim.elements) slice.add(new Option(e.name, e.name, false, e.name === dim.slice));
        slice.addEventListener('change', () => {
          const before = dim.slice;
          change(() => { dim.slice = slice.value; }, () => { dim.slice = before; });
        });
        card.appendChild(slice);
      }
      section.appendChild(card);
    });
  }

  function setStatus(text, isError) {
    const status = $('status');
    status.textContent = text;
    status.className = isError ? 'error' : '';
  }

  // ---- actions ----

  // Asks the area of the current view and draws it; `note` leads the status
  // line. A view the server refuses (too many cells, say) leaves the
  // previous one drawn and throws. An answer that comes after a later
  // request was made is dropped (false): only the latest view is drawn, from
  // the rows and columns as they were when it was asked.
  let latestRequest = 0;
  async function refresh(note = '') {
    const table = $('pivot-table');
    table.dataset.state = 'loading';
    const started = performance.now();
    const request = areaRequest();
    const sequence = ++latestRequest;
    const rowDims = onAxis('rows'), colDims = onAxis('columns');
    const view = [rowDims, tuples(rowDims), colDims, tuples(colDims)];
    let answer;
    try {
      answer = await api('POST', '/cell/area', request);
    } catch (e) {
      if (sequence !== latestRequest) return false;
      table.dataset.state = 'error';
      setStatus(e.message, true);
      throw e;
    }
    if (sequence !== latestRequest) return false;
    const answered = performance.now();
    state.answer = answer;
    state.cells = new Map(answer.cells.map((c) => [pathKey(c.path), c.value]));
    state.view = view;
    drawTable(...state.view);
    drawChart(...state.view);
    const drawn = performance.now();
    pivot.generation += 1;
    pivot.last = { request, answer_ms: answered - started, draw_ms: drawn - answered, total_ms: drawn - started,
                   cells: answer.cells.length, target_cells: answer.target_cells };
    setStatus(`${note}${answer.cells.length} non-empty of ${answer.target_cells} cells · answered in ${(answered - started).toFixed(1)} ms,` +
              ` drawn in ${(drawn - answered).toFixed(1)} ms`, false);
    table.dataset.generation = String(pivot.generation);
    table.dataset.state = 'ready';
    if (!pivot.ready) {
      pivot.ready = true;
      performance.mark('pivot-ready');
    }
    return true;
  }

  // Makes a change to the view (`apply`) and asks for it; when the server
  // refuses the new view, `revert` undoes the change, so that the controls
  // say what the drawn view shows.
  async function change(apply, revert) {
    apply();
    try {
      await refresh();
    } catch (e) {
      revert();
      drawAxes();
    }
  }

  // Drills down into an element where it is shown (its children appear) or
  // rolls it up there (its descendants below it disappear, and are rolled
  // up too; the same elements shown under another parent stay as they are).
  function toggle(dimIndex, path) {
    const dim = state.dims[dimIndex];
    const before = new Set(dim.expanded);
    const key = pathKey(path);
    change(() => {
      if (dim.expanded.has(key)) {
        for (const k of [...dim.expanded]) if (k === key || k.startsWith(key + '\u001f')) dim.expanded.delete(k);
      } else {
        dim.expanded.add(key);
      }
    }, () => { dim.expanded = before; });
  }

  function editCell(td, path, value) {
    if (td.querySelector('input')) return;
    // The measure and aggregate of the view drawn, not of the menus (which
    // may already ask for another).
    const { measure, aggregate } = state.answer;
    if (aggregate !== 'sum') {
      setStatus('a cell is written through the sum: choose the aggregate sum to write', true);
      return;
    }
    const input = document.createElement('input');
    input.type = 'text';
    input.inputMode = 'decimal';
    input.value = value === undefined ? '' : String(value);
    td.replaceChildren(input);
    input.focus();
    input.select();
    const cancel = () => { td.textContent = formatValue(value); };
    input.addEventListener('blur', cancel);
    input.addEventListener('keydown', async (event) => {
      if (event.key === 'Escape') { input.removeEventListener('blur', cancel); cancel(); return; }
      if (event.key !== 'Enter') return;
      const text = input.value.trim();
      const number = text === '' ? null : Number(text);
      if (number !== null && !Number.isFinite(number)) {
        setStatus(`'${text}' is not a number`, true);
        return;
      }
      input.removeEventListener('blur', cancel);
      input.disabled = true;
      try {
        const written = await api('POST', '/cell/replace', { path, value: number, measure });
        await refresh(`wrote ${path.join(', ')}: ${written.cells_written} base cell(s), log sequence ${written.sequence} · `);
      } catch (e) {
        setStatus(e.message, true);
        cancel();
      }
    });
  }

  async function start() {
    const token = $('token');
    token.value = sessionStorage.getItem('gpuolap-token') || '';
    token.addEventListener('change', () => sessionStorage.setItem('gpuolap-token', token.value));
    try {
      const info = await api('GET', '/cube/info');
      const lists = await Promise.all(info.dimensions.map((d) => api('GET', `/dimension/elements?dimension=${encodeURIComponent(d.name)}`)));
      state.dims = info.dimensions.map((d, i) => makeDimension(d.name, lists[i]));
      if (state.dims.length > 0) state.dims[0].axis = 'rows';
      if (state.dims.length > 1) state.dims[1].axis = 'columns';
      state.measures = info.measures;
      $('cube-name').textContent = info.name;
      document.title = `${info.name} · gpuolap pivot`;
      for (const m of info.measures) $('measure').add(new Option(m, m));
    } catch (e) {
      $('pivot-table').dataset.state = 'error';
      setStatus(`${e.message} (this page needs a server started with --cube)`, true);
      return;
    }
    for (const id of ['measure', 'aggregate']) {
      const select = $(id);
      select.addEventListener('change', () => {
        const before = state.answer ? state.answer[id] : select.value;
        change(() => {}, () => { select.value = before; });
      });
    }
    $('chart-kind').addEventListener('change', () => { if (state.view) drawChart(...state.view); });
    drawAxes();
    refresh().catch(() => {});
  }

  start();
})();
