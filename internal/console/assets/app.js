// The wnms console. It uses only the public HTTP API (docs/api.md), with
// the session cookie every client gets at login; it renders with the DOM
// (text nodes, never HTML from data) and draws its charts as SVG.
'use strict';
(() => {
  const BASE = '/new/webservice';
  const API = BASE + '/V5';
  const ROLES = { VIEWER: 1, OPERATOR: 2, POWERUSER: 3, ADMINISTRATOR: 4, SUPERUSER: 5 };
  const SLOT = 15 * 60 * 1000;
  const DAY = 24 * 3600 * 1000;
  const S = { user: null, locs: new Map(), es: null, poll: 0, keep: 0, view: null, token: 0, pending: 0, stale: false };

  // ---- DOM helpers -------------------------------------------------------
  const $ = (sel, el = document) => el.querySelector(sel);
  const SVGNS = 'http://www.w3.org/2000/svg';
  function build(ns, tag, attrs, kids) {
    const el = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'text') el.textContent = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  const h = (tag, attrs, ...kids) => build(null, tag, attrs, kids);
  const s = (tag, attrs, ...kids) => build(SVGNS, tag, attrs, kids);

  const fmtTime = (ms) => (ms ? new Date(ms).toLocaleString() : '—');
  const fmtClock = (ms) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  const fmtNum = (v, d = 1) => (v === null || v === undefined ? '—' : Number(v).toFixed(d).replace(/\.0+$/, ''));
  const byName = (a, b) => a.name.localeCompare(b.name);

  // ---- API ---------------------------------------------------------------
  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }
  async function api(path, opts = {}) {
    const init = { method: opts.method || 'GET', credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (opts.body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(opts.body);
    }
    const url = path.startsWith(BASE) ? path : API + path;
    const r = await fetch(url, init);
    const text = await r.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (e) {
      data = text;
    }
    if (r.status === 401 && !opts.login) {
      signedOut('Your session has ended. Sign in again.');
    }
    if (!r.ok) {
      const e = data && data.errors && data.errors[0];
      throw new ApiError(r.status, e ? e.errorCode : '', e ? e.message : r.statusText);
    }
    return data;
  }
  const q = (params) => {
    const u = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== '' && v !== null && v !== undefined) u.append(k, v);
    return u.toString();
  };

  // ---- roles -------------------------------------------------------------
  const role = () => (S.user ? ROLES[S.user.role] || S.user.userRoleId || 1 : 0);
  const canOperate = () => role() >= ROLES.OPERATOR; // SU, AD, OP (a POWERUSER has an OPERATOR's rights)
  const canAdminister = () => role() >= ROLES.ADMINISTRATOR;
  const isViewer = () => role() === ROLES.VIEWER;

  // ---- locations ---------------------------------------------------------
  async function loadLocations() {
    const t = await api('/locations/tree');
    const m = new Map();
    for (const l of Object.values(t.locations || {})) {
      m.set(l.id.id, {
        id: l.id.id, name: l.name, floor: l.type === 'floorlocation', parent: l.parentId ? l.parentId.id : null,
        accessible: !!l.accessibleToUser, unknown: !!l.defaultLocation, children: (l.children || []).map((c) => c.id), tz: l.timezoneId || null,
      });
    }
    S.locs = m;
    S.locKey = JSON.stringify(t); // what changed() compares: location names appear in lists
  }
  // changed says whether what el is to show differs from what it shows:
  // a list redrawn with the same rows would lose an armed "Confirm"
  // button, the focus and a click under way (the event stream refreshes
  // a view after every change, anyone's).
  const shownAs = new WeakMap();
  function changed(el, ...data) {
    const key = S.locKey + JSON.stringify(data);
    if (shownAs.get(el) === key) return false;
    shownAs.set(el, key);
    return true;
  }
  const locPath = (id) => {
    const parts = [];
    for (let l = S.locs.get(id); l && l.id !== 0; l = S.locs.get(l.parent)) parts.unshift(l.name);
    return parts.join(' / ') || (id === 0 ? 'All locations' : `location ${id}`);
  };
  // The caller's sites: the top locations it sees below the root.
  function sites() {
    const out = [];
    for (const l of S.locs.values()) {
      if (!l.accessible || l.id === 0 || l.unknown) continue;
      const p = S.locs.get(l.parent);
      if (!p || p.id === 0 || !p.accessible) out.push(l);
    }
    return out.sort(byName);
  }
  const floors = () => [...S.locs.values()].filter((l) => l.floor && l.accessible).sort((a, b) => locPath(a.id).localeCompare(locPath(b.id)));
  // The location a list starts at: the root for a caller at the root, else its first site.
  const home = () => (S.locs.get(0) && S.locs.get(0).accessible ? 0 : (sites()[0] || { id: 0 }).id);

  // ---- sign-in -----------------------------------------------------------
  function showLogin(message) {
    $('#top').hidden = true;
    const main = $('#view');
    delete main.dataset.ready;
    main.dataset.view = 'login';
    const err = h('p', { class: 'error', role: 'alert', hidden: !message, text: message || '' });
    const submit = (path, body) => async (ev) => {
      ev.preventDefault();
      err.hidden = true;
      try {
        const u = await api(BASE + path, { method: 'POST', body, login: true });
        signedIn(u);
      } catch (e) {
        err.textContent = e.status === 401 ? 'Sign-in refused: the credentials are not valid.' : `Sign-in failed: ${e.message}`;
        err.hidden = false;
      }
    };
    const key = { type: 'apikeycredentials', keyId: '', keyValue: '' };
    const pw = { type: 'usernamepasswordcredentials', username: '', password: '' };
    const field = (obj, name, label, type = 'text', auto = 'off') =>
      h('label', {}, label, h('input', { id: `login-${name}`, name, type, required: true, autocomplete: auto, oninput: (e) => { obj[name] = e.target.value; } }));
    main.replaceChildren(h('section', { class: 'login card', 'aria-labelledby': 'login-title' },
      h('h1', { id: 'login-title' }, 'Sign in to wnms'), err,
      h('form', { id: 'login-key', onsubmit: submit('/login/key/console/3600', key) },
        h('fieldset', {}, h('legend', {}, 'With an API key'),
          field(key, 'keyId', 'Key ID'), field(key, 'keyValue', 'Key value', 'password'),
          h('button', { class: 'primary', type: 'submit' }, 'Sign in with key'))),
      h('form', { id: 'login-user', onsubmit: submit('/login/console/3600', pw) },
        h('fieldset', {}, h('legend', {}, 'As a user'),
          field(pw, 'username', 'Login ID', 'text', 'username'), field(pw, 'password', 'Password', 'password', 'current-password'),
          h('button', { class: 'primary', type: 'submit' }, 'Sign in'))),
    ));
    main.dataset.ready = '1';
    $('#login-keyId').focus();
  }

  async function signedIn(u) {
    S.user = u;
    localStorage.setItem('wnms.session', '1');
    await loadLocations();
    $('#who').textContent = `${u.loginId} · ${u.role}`;
    $('#top').hidden = false;
    openStream();
    clearInterval(S.keep);
    S.keep = setInterval(() => api(BASE + '/V5/login/keepsessionalive', { method: 'POST' }).catch(() => {}), 5 * 60 * 1000);
    route();
  }

  function stopLive() {
    clearInterval(S.poll);
    clearInterval(S.keep);
    clearTimeout(S.pending); // a refresh due after events would run signed out
    S.pending = 0;
    if (S.es) S.es.close();
    S.es = null;
  }

  function signedOut(message) {
    if (!S.user && !message) return;
    S.user = null;
    S.token++;
    localStorage.removeItem('wnms.session');
    stopLive();
    showLogin(message);
  }

  async function signOut() {
    stopLive();
    try {
      await api(BASE + '/logout', { method: 'POST' });
    } catch (e) { /* the session is gone either way */ }
    S.user = null;
    S.token++;
    localStorage.removeItem('wnms.session');
    showLogin('You have signed out.');
  }

  // ---- live updates ------------------------------------------------------
  function openStream() {
    if (S.es) S.es.close();
    const es = new EventSource(API + '/events/stream');
    const dot = $('#live');
    es.onopen = () => { dot.classList.add('on'); dot.title = 'Live: events stream in'; };
    es.onerror = () => { dot.classList.remove('on'); dot.title = 'Reconnecting to the event stream'; };
    for (const kind of ['apUp', 'apDown', 'anomaly', 'incidentOpened', 'incidentClosed', 'configChanged', 'userLocked']) {
      es.addEventListener(kind, () => soon(kind === 'configChanged'));
    }
    S.es = es;
  }
  // soon refreshes the open view shortly after events, at most once a second.
  function soon(locations) {
    S.stale = S.stale || locations;
    if (S.pending) return;
    S.pending = setTimeout(async () => {
      S.pending = 0;
      if (S.stale) {
        S.stale = false;
        await loadLocations().catch(() => {});
      }
      refresh();
    }, 1000);
  }
  function refresh() {
    const v = S.view;
    if (!S.user || !v || !v.refresh || document.visibilityState !== 'visible') return;
    v.refresh().catch((e) => note(v, e));
  }
  function note(v, e) {
    if (v.status && e.status !== 401) v.status.textContent = `Could not refresh: ${e.message}`;
  }

  // ---- router ------------------------------------------------------------
  const views = {
    '': overview, servicelevels: serviceLevelsView, aps: apsView, ap: apView, clients: clientsView, client: clientView, baselines: baselinesView,
    floor: floorView, incidents: incidentsView, anomalies: incidentsView, network: networkView, audit: auditView, settings: settingsView,
  };
  function route() {
    if (!S.user) return;
    const [name, ...rest] = location.hash.replace(/^#\/?/, '').split('/');
    const fn = Object.prototype.hasOwnProperty.call(views, name) ? views[name] : overview;
    const arg = decodeURIComponent(rest.join('/'));
    const navName = name === 'client' ? 'clients' : name === 'anomalies' ? 'incidents' : name === 'ap' ? 'aps' : name;
    for (const a of document.querySelectorAll('header nav a')) {
      if (a.getAttribute('href') === `#/${fn === overview ? '' : navName}`) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    clearInterval(S.poll);
    const main = $('#view');
    delete main.dataset.ready;
    main.dataset.view = fn === overview ? 'overview' : name;
    main.replaceChildren();
    const v = { token: ++S.token, refresh: null, status: h('p', { class: 'mut', role: 'status' }) };
    v.live = () => v.token === S.token;
    S.view = v;
    const started = performance.now();
    fn(main, arg, v).then(() => {
      if (!v.live()) return;
      fitAll(main);
      main.append(v.status);
      main.dataset.ready = '1';
      main.dataset.renderMs = String(Math.round(performance.now() - started));
      main.dataset.renderedAt = String(Math.round(performance.now())); // since the page's navigation began
    }).catch((e) => {
      if (!v.live() || e.status === 401) return;
      main.append(h('p', { class: 'error', role: 'alert' }, `This view could not load: ${e.message}`));
      main.dataset.ready = '1';
    });
    // Views that show telemetry poll it: one refresh per 15 s at most.
    S.poll = setInterval(refresh, 15000);
  }

  // ---- charts ------------------------------------------------------------
  // chart draws series over time: opts.points [{t, v, lo, hi, base, bad, label}],
  // a band lo–hi where given, marks where bad, and slots that can be picked.
  //
  // The chart is drawn at the width it is shown at, one unit a pixel, and
  // drawn again when that changes: a chart drawn wide and scaled down into
  // a narrow card or a phone had text a few pixels tall.
  function chart(opts) {
    const box = h('div', { class: 'chart-box fits' });
    let drawn = 0;
    const draw = (w) => {
      drawn = w;
      box.replaceChildren(drawChart(opts, w));
    };
    draw(900);
    box.fit = () => {
      const w = Math.round(box.clientWidth);
      if (w > 0 && Math.abs(Math.max(280, w) - drawn) > 4) draw(Math.max(280, w));
    };
    if (window.ResizeObserver) new ResizeObserver(() => box.fit()).observe(box);
    return box;
  }
  function drawChart(opts, W) {
    const H = 220, L = 44, R = 10, T = 10, B = 24;
    const pts = opts.points;
    const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': opts.label });
    if (!pts.length) {
      svg.append(s('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', text: 'No data in this window' }));
      return svg;
    }
    const t0 = opts.from ?? pts[0].t, t1 = opts.to ?? pts[pts.length - 1].t;
    let lo = opts.min ?? Infinity, hi = opts.max ?? -Infinity;
    for (const p of pts) {
      for (const v of [p.v, p.lo, p.hi]) if (v !== null && v !== undefined) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi === lo) hi = lo + 1;
    const x = (t) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - R);
    const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
    svg.append(s('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }), s('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
    svg.append(s('text', { x: L - 4, y: y(hi) + 4, 'text-anchor': 'end', text: fmtNum(hi) }), s('text', { x: L - 4, y: y(lo), 'text-anchor': 'end', text: fmtNum(lo) }));
    const ticks = W < 600 ? 2 : 4; // room for about 120 px a label
    for (let i = 0; i <= ticks; i++) {
      const t = t0 + ((t1 - t0) * i) / ticks;
      svg.append(s('text', { x: x(t), y: H - 8, 'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle', text: t1 - t0 > DAY ? new Date(t).toLocaleDateString() + ' ' + fmtClock(t) : fmtClock(t) }));
    }
    const band = pts.filter((p) => p.lo !== null && p.lo !== undefined);
    if (band.length) {
      const top = band.map((p) => `${x(p.t)},${y(p.hi)}`), bottom = band.slice().reverse().map((p) => `${x(p.t)},${y(p.lo)}`);
      svg.append(s('polygon', { class: 'band', points: top.concat(bottom).join(' ') }));
      svg.append(s('polyline', { class: 'base', points: band.map((p) => `${x(p.t)},${y(p.base)}`).join(' ') }));
    }
    // Runs of slots: without data (a gap, shaded), or with data but no
    // baseline yet ("learning").
    const step = opts.step || SLOT;
    for (const run of runs(pts, (p) => p.v === null || p.v === undefined)) {
      svg.append(s('rect', { class: 'nodata', x: x(run[0].t), y: T, width: Math.max(1, x(run[run.length - 1].t + step) - x(run[0].t)), height: H - T - B }, s('title', { text: 'No data' })));
    }
    for (const run of runs(pts, (p) => p.learning)) {
      const x0 = x(run[0].t), w = Math.max(1, x(run[run.length - 1].t + step) - x0);
      svg.append(s('rect', { class: 'learn', x: x0, y: T, width: w, height: H - T - B }, s('title', { text: 'Learning: no baseline yet' })));
      if (w >= 60) svg.append(s('text', { class: 'learn-t', x: x0 + w / 2, y: T + 14, 'text-anchor': 'middle', text: 'learning' }));
    }
    for (const seg of segments(pts, opts.gap)) {
      svg.append(seg.length === 1 ? s('circle', { class: 'obs dot', cx: x(seg[0].t), cy: y(seg[0].v), r: 2.5 })
        : s('polyline', { class: 'obs', points: seg.map((p) => `${x(p.t)},${y(p.v)}`).join(' ') }));
    }
    for (const p of pts) if (p.bad && p.v !== null && p.v !== undefined) svg.append(s('circle', { class: 'anom', cx: x(p.t), cy: y(p.v), r: 4 }, s('title', { text: p.label })));
    if (opts.onPick) {
      const w = Math.max(2, ((W - L - R) * SLOT) / Math.max(SLOT, t1 - t0));
      for (const p of pts) {
        if (!p.pickable) continue;
        const r = s('rect', {
          class: 'slot', x: x(p.t) - w / 2, y: T, width: w, height: H - T - B, tabindex: 0, role: 'button',
          'aria-label': `${p.label}: list the failing clients`, 'data-t': p.t,
        }, s('title', { text: p.label }));
        const pick = () => {
          for (const o of svg.querySelectorAll('.slot.picked')) o.classList.remove('picked');
          r.classList.add('picked');
          opts.onPick(p);
        };
        r.addEventListener('click', pick);
        r.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); pick(); } });
        svg.append(r);
      }
    }
    return svg;
  }
  // readableText keeps the text of an SVG drawn in its own units (a floor
  // plan in metres) at least px pixels tall however small the SVG is shown.
  function readableText(svg, px) {
    svg.classList.add('fits');
    svg.fit = () => {
      const m = svg.getScreenCTM();
      const scale = m ? Math.hypot(m.a, m.b) : 0;
      if (!scale) return;
      for (const t of svg.querySelectorAll('text')) {
        if (!t.dataset.size) t.dataset.size = t.getAttribute('font-size') || '0';
        t.setAttribute('font-size', Math.max(Number(t.dataset.size), px / scale));
      }
    };
    if (window.ResizeObserver) new ResizeObserver(() => svg.fit()).observe(svg);
  }
  // fitAll fits what is drawn to its size now (charts, plans) in el: a
  // view calls it once shown, before it counts as ready; later changes of
  // size are followed as they come.
  const fitAll = (el) => { for (const f of el.querySelectorAll('.fits')) if (f.fit) f.fit(); };
  // runs answers the maximal runs of consecutive points that match.
  function runs(pts, match) {
    const out = [];
    let cur = null;
    for (const p of pts) {
      if (match(p)) (cur || (cur = out[out.push([]) - 1])).push(p);
      else cur = null;
    }
    return out;
  }
  // segments splits a series where it has no value, and where two points
  // are further apart than gap (ms): no data is drawn as a gap, never as 0.
  function segments(pts, gap) {
    const out = [];
    let cur = null, last = null;
    for (const p of pts) {
      if (p.v === null || p.v === undefined) { cur = null; continue; }
      if (!cur || (gap && last && p.t - last.t > gap)) cur = out[out.push([]) - 1];
      cur.push(p);
      last = p;
    }
    return out;
  }
  // sparkline draws a percentage over [from, to] on the fixed scale
  // 0–100 %, so that sites compare at a glance; slots without data are
  // gaps, shaded.
  function sparkline(points, from, to, label) {
    const W = 240, H = 40;
    const svg = s('svg', { class: 'spark', viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label });
    const x = (t) => ((t - from) / Math.max(1, to - from)) * W, y = (v) => H - 1 - (Math.min(100, Math.max(0, v)) / 100) * (H - 2);
    svg.append(s('line', { class: 'grid', x1: 0, x2: W, y1: y(50), y2: y(50) }));
    for (const run of runs(points, (p) => p.v === null)) {
      svg.append(s('rect', { class: 'nodata', x: x(run[0].t), y: 0, width: Math.max(0.5, x(run[run.length - 1].t + SLOT) - x(run[0].t)), height: H }));
    }
    for (const seg of segments(points)) {
      // A lone point is drawn as a short flat stroke over its slot.
      const pts = seg.length === 1 ? [seg[0], { t: seg[0].t + SLOT, v: seg[0].v }] : seg;
      svg.append(s('polyline', { class: 'obs', points: pts.map((p) => `${x(p.t)},${y(p.v)}`).join(' ') }));
    }
    return svg;
  }

  // ---- tables ------------------------------------------------------------
  // table renders rows under columns [{title, get(row) -> node|text, sort}];
  // a column with sort is sorted by the server: onSort(sort).
  function table(cols, rows, opts = {}) {
    const head = h('tr', {}, cols.map((c) => {
      if (!c.sort || !opts.onSort) return h('th', { scope: 'col' }, c.title);
      const on = opts.sortBy === c.sort;
      return h('th', { scope: 'col', 'aria-sort': on ? (opts.ascending ? 'ascending' : 'descending') : 'none' },
        h('button', { type: 'button', onclick: () => opts.onSort(c.sort) }, c.title, on ? (opts.ascending ? ' ▲' : ' ▼') : ''));
    }));
    const body = rows.length ? rows.map((r) => h('tr', {}, cols.map((c) => h('td', {}, c.get(r)))))
      : [h('tr', {}, h('td', { colspan: cols.length, class: 'mut' }, opts.empty || 'Nothing to show.'))];
    return h('table', { 'aria-label': opts.label }, h('thead', {}, head), h('tbody', {}, body));
  }
  function pager(offset, limit, total, go) {
    return h('div', { class: 'row' },
      h('span', { class: 'mut' }, total ? `${offset + 1}–${Math.min(offset + limit, total)} of ${total}` : ''),
      h('button', { type: 'button', disabled: offset === 0, onclick: () => go(Math.max(0, offset - limit)) }, 'Previous'),
      h('button', { type: 'button', disabled: offset + limit >= total, onclick: () => go(offset + limit) }, 'Next'));
  }
  const link = (href, text) => h('a', { href }, text);
  const clientLink = (mac, text) => link(`#/client/${encodeURIComponent(mac)}`, text || mac);

  // ---- times in a site's zone -------------------------------------------
  // tzOf is the time zone of a location: its own, else its nearest
  // ancestor's, else UTC (as the server reads it, docs/api.md §22).
  function tzOf(id) {
    for (let l = S.locs.get(id); l; l = S.locs.get(l.parent)) if (l.tz) return l.tz;
    return 'UTC';
  }
  const fmtCache = new Map();
  function fmtIn(ms, tz, opts) {
    const key = tz + JSON.stringify(opts);
    let f = fmtCache.get(key);
    if (!f) {
      try {
        f = new Intl.DateTimeFormat('en-GB', { ...opts, timeZone: tz });
      } catch (e) {
        f = new Intl.DateTimeFormat('en-GB', { ...opts, timeZone: 'UTC' }); // a zone this browser does not know
      }
      fmtCache.set(key, f);
    }
    return f.format(ms);
  }
  const clockIn = (ms, tz) => fmtIn(ms, tz, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const dayIn = (ms, tz) => fmtIn(ms, tz, { day: 'numeric', month: 'short' });
  // whenIn says a moment: "07:15", or "26 Nov 07:15" when not today in the zone.
  const whenIn = (ms, tz) => (dayIn(ms, tz) === dayIn(Date.now(), tz) ? '' : dayIn(ms, tz) + ' ') + clockIn(ms, tz);
  // spanIn says a window "06:30–07:15", with the day when it is not
  // today in the zone, and "since 06:30" while it is open.
  function spanIn(from, to, tz) {
    const today = dayIn(Date.now(), tz);
    const day = (ms) => (dayIn(ms, tz) === today ? '' : dayIn(ms, tz) + ' ');
    if (to === null || to === undefined) return `since ${day(from)}${clockIn(from, tz)}`;
    return `${day(from)}${clockIn(from, tz)}–${dayIn(to - 1, tz) === dayIn(from, tz) ? '' : day(to)}${clockIn(to, tz)}`;
  }

  // ---- incidents in words --------------------------------------------------
  const BANDS = { BAND_2_4_GHZ: '2.4 GHz', BAND_5_GHZ: '5 GHz' };
  const KIND_WORDS = { clientsconnectivity: 'Clients failing to connect', clientsperformance: 'Clients with poor performance', mixed: 'Clients failing and with poor performance' };
  const incidentTitle = (i) => (i.cause ? i.cause.reason.text : KIND_WORDS[i.kind] || i.kind);
  // incidentAffected is the incident's size: its affected clients over its
  // span, from its scope's share (the scope's clients are that share of
  // them), else the sum over its floors, at least its peak's.
  function incidentAffected(i) {
    const sc = i.evidence.find((e) => e.type === i.scope.type && e.id === i.scope.id);
    if (sc && i.scope.share > 0) return Math.max(i.peak.affectedClients, Math.round(sc.clients / i.scope.share));
    const floorSum = i.evidence.filter((e) => e.type === 'floor').reduce((n, e) => n + e.clients, 0);
    return Math.max(floorSum, i.peak.affectedClients);
  }
  function scopeWords(sc) {
    switch (sc.type) {
      case 'ap': return `at AP ${sc.name}`;
      case 'ssid': return `on SSID ${sc.name}`;
      case 'band': return `on the ${BANDS[sc.id] || sc.name} band`;
      case 'radiusServer': return `of RADIUS server ${sc.name}`;
      case 'floor': return `on ${locPath(Number(sc.id)) || sc.name}`;
      default: return `across ${S.locs.has(Number(sc.id)) ? S.locs.get(Number(sc.id)).name : sc.name}`;
    }
  }
  const incidentOpen = (i) => i.to === null || i.to === undefined;
  // incidentLine says an incident in one sentence, every number a link:
  // "RADIUS server unreachable: 89 clients on SSID corp, 06:30–07:30
  // (peak 45 of 45 at 06:30)".
  function incidentLine(i) {
    const tz = tzOf(i.siteLocationId), p = i.peak;
    const floor = i.floors.length ? i.floors[0] : null;
    return h('span', { class: 'incident-line' },
      h('b', {}, incidentTitle(i)), ': ',
      link(`#/incidents/${i.id}`, `${incidentAffected(i)} clients`), ` ${scopeWords(i.scope)}, ${spanIn(i.from, i.to, tz)}`,
      ' (peak ', floor !== null ? link(`#/baselines/${floor}`, `${p.affectedClients} of ${p.attemptingClients}`) : `${p.affectedClients} of ${p.attemptingClients}`,
      ` at ${clockIn(p.timestamp, tz)})`);
  }

  // ---- service levels ------------------------------------------------------
  // What each metric counts, and how its misses are named: the radio's
  // metrics count client samples or roams, not connection attempts.
  const METRIC_WORDS = {
    successfulConnects: () => 'Successful connects', timeToConnect: (m) => `Connected within ${fmtNum(m.target.seconds)} s`,
    coverage: () => 'Coverage', capacity: () => 'Capacity', roaming: () => 'Good roams',
  };
  // The threshold a radio metric's samples or roams must meet, said with its target.
  const THRESHOLD = {
    coverage: (t) => ` at ${t.rssiDbm} dBm or better`, capacity: (t) => ` on radios under ${fmtNum(t.utilizationPct)} % busy`,
    roaming: () => ' fast and to a stronger AP',
  };
  const COUNTED = { coverage: 'client samples', capacity: 'client samples', roaming: 'roams' };
  const CLASSIFIER_WORDS = {
    association: 'association', authentication: 'authentication', dhcp: 'DHCP', dns: 'DNS',
    weakSignal: 'weak signal', busyRadio: 'busy radio', slowRoam: 'slow', suboptimalRoam: 'to a weaker AP',
  };
  const metricName = (m) => (METRIC_WORDS[m.metric] || (() => m.metric))(m);
  // biggestClassifier is where most of a metric's misses were, or null.
  const biggestClassifier = (m) => (m.classifiers || []).filter((c) => c.count > 0).sort((a, b) => b.count - a.count)[0] || null;
  // metricLine: "Successful connects: 18.57 % (target 95 %, 2,521
  // attempts): missed; most failures at authentication (99 %)", the value
  // a link.
  function metricLine(m, href) {
    const counted = COUNTED[m.metric] || 'attempts';
    if (m.value === null) {
      return h('li', { class: 'sl', 'data-metric': m.metric },
        `${metricName(m)}: no ${counted} measured (target ${fmtNum(m.target.goal)} %${THRESHOLD[m.metric] ? THRESHOLD[m.metric](m.target) : ''})`);
    }
    const c = biggestClassifier(m);
    const radio = !!COUNTED[m.metric];
    const miss = m.metric === 'timeToConnect' ? 'slow' : radio ? 'misses' : 'failures';
    const where = c ? (radio ? `; most misses: ${CLASSIFIER_WORDS[c.name] || c.name} (${fmtNum(c.share)} %)` :
      `; most ${miss} at ${CLASSIFIER_WORDS[c.name] || c.name} (${fmtNum(c.share)} %)`) : '';
    return h('li', { class: `sl ${m.met ? 'met' : 'missed'}`, 'data-metric': m.metric },
      `${metricName(m)}: `, link(href, `${fmtNum(m.value, 2)} %`),
      ` (target ${fmtNum(m.target.goal)} %${THRESHOLD[m.metric] ? THRESHOLD[m.metric](m.target) : ''}, ${m.count.toLocaleString('en')} ${counted}): `,
      h('span', { class: m.met ? 'ok' : 'warn' }, m.met ? 'met' : 'missed'), where);
  }

  // ---- overview: the first screen ----------------------------------------
  // activeClients splits the clients seen at a location in the last 15
  // minutes into those connected (their last event is not a Failure) and
  // those failing (it is). The API counts only all of them, so the first
  // 1000 are read and told apart; more is said as "at least".
  async function activeClients(loc) {
    const r = await api('/devices/clients/0/1000?' + q({ locationid: loc, active: true }));
    const failing = r.clientList.filter((c) => c.lastEventType === 'Failure').length;
    const more = r.totalCount > r.clientList.length ? '+' : '';
    return { total: r.totalCount, failing: failing + more, connected: r.clientList.length - failing + more, failingCount: failing };
  }
  // siteFloor is a site's first floor, whose baselines explain its counts.
  const siteFloor = (id) => floors().find((f) => { for (let l = f; l; l = S.locs.get(l.parent)) if (l.id === id) return true; return false; });

  // The first screen, per site: service levels of the last 24 hours
  // against their targets, the incidents of the last 24 hours in words
  // (open ones first), APs down by name, clients now, and the 24-hour
  // trend on a fixed 0–100 % scale. A quiet site shows no alarm.
  async function overview(main, _arg, v) {
    const grid = h('div', { class: 'grid sites' });
    main.append(h('h1', {}, 'Overview'), grid);
    v.refresh = async () => {
      const now = Date.now();
      const cards = await Promise.all(sites().map(async (site) => {
        const at = { locationid: site.id };
        const [up, down, clients, incidents, levels, conn] = await Promise.all([
          api('/devices/apstatus?' + q({ ...at, active: true, limit: 1 })),
          api('/devices/apstatus?' + q({ ...at, active: false, limit: 20, sortby: 'devicename', ascending: true })),
          activeClients(site.id),
          api('/incidents?' + q({ ...at, fromtime: now - DAY, totime: now, limit: 20 })),
          api('/servicelevels?' + q(at)),
          api('/baselines/clientsconnectivity?' + q({ ...at, fromtime: now - DAY, totime: now })),
        ]);
        const tz = tzOf(site.id), floor = siteFloor(site.id);
        const open = incidents.incidents.filter(incidentOpen), ended = incidents.incidents.filter((i) => !incidentOpen(i));
        const nDown = down ? down.totalCount : 0;
        const missed = levels.metrics.filter((m) => m.met === false);
        const state = open.length || nDown ? 'alarm' : missed.length || ended.length ? 'attention' : 'quiet';
        const kpi = (value, label, cls, href) => h('div', { class: 'kpi' }, h('b', { class: cls }, href ? link(href, value) : value), h('span', {}, label));
        const slHref = `#/servicelevels/${site.id}`;
        const incidentItems = [...open, ...ended].map((i) => h('li', { class: incidentOpen(i) ? 'open' : 'ended', 'data-incident': i.id },
          h('span', { class: `chip ${incidentOpen(i) ? 'bad' : ''}` }, incidentOpen(i) ? (i.acknowledged ? 'Open, acknowledged' : 'Open') : 'Ended'), ' ', incidentLine(i)));
        const more = incidents.totalCount > incidents.incidents.length ? link(`#/incidents/site/${site.id}`, `${incidents.totalCount - incidents.incidents.length} more`) : null;
        return h('section', { class: `card site ${state}`, 'aria-label': site.name, 'data-site': site.id, 'data-state': state },
          h('div', { class: 'site-head' }, h('h2', {}, link(`#/aps/${site.id}`, site.name)),
            h('span', { class: `chip ${state === 'alarm' ? 'bad' : state === 'attention' ? 'warn' : 'okc'}` },
              state === 'alarm' ? 'Alarm' : state === 'attention' ? 'Needs a look' : 'Quiet'),
            h('span', { class: 'mut tz' }, `Times in ${tz}`)),
          h('h3', {}, 'Service levels, last 24 h'),
          h('ul', { class: 'lines' }, levels.metrics.map((m) => metricLine(m, slHref))),
          h('h3', {}, 'Incidents, last 24 h'),
          incidentItems.length ? h('ul', { class: 'lines incidents' }, incidentItems, more ? h('li', {}, more) : null)
            : h('p', { class: 'mut none' }, 'No incidents.'),
          h('h3', {}, 'APs and clients now'),
          h('div', { class: 'kpis' },
            up ? kpi(up.totalCount, 'APs up', 'ok', `#/aps/${site.id}`) : null,
            down ? kpi(nDown, 'APs down', nDown ? 'bad' : '', `#/aps/${site.id}`) : null,
            kpi(clients.connected, 'clients connected', '', `#/aps/${site.id}`),
            // A few clients failing (a wrong password) is a healthy network's
            // background, not an alarm: the incidents say when it is more.
            kpi(clients.failing, 'clients failing', clients.failingCount ? 'warn' : '', floor ? `#/baselines/${floor.id}` : null)),
          down ? (nDown ? h('p', { class: 'down' }, h('span', { class: 'bad' }, 'Down: '),
            down.apStatus.map((a, k) => [k ? ', ' : '', link(`#/aps/${a.locationId.id}`, a.name)]), nDown > down.apStatus.length ? ` and ${nDown - down.apStatus.length} more` : '')
            : h('p', { class: 'mut' }, 'Every AP is up.'))
            : h('p', { class: 'mut' }, 'AP status: your role does not list APs.'),
          h('h3', {}, 'Clients failing to connect, last 24 h'),
          sparkline(conn.map((p) => ({ t: p.timestamp, v: p.noOfSamplesForObservation ? p.observation : null })), now - DAY, now,
            `${site.name}: clients failing to connect over the last 24 hours, 0 to 100 %`),
          h('div', { class: 'spark-legend' }, h('span', {}, `${clockIn(now - DAY, tz)} yesterday`), h('span', {}, '0–100 %, shaded: no data'), h('span', {}, `${clockIn(now, tz)} now`)),
          floor ? h('p', {}, link(`#/baselines/${floor.id}`, 'Baselines of the floors')) : null);
      }));
      if (!v.live()) return;
      grid.replaceChildren(...(cards.length ? cards : [h('p', { class: 'mut' }, 'No sites yet: locations appear here once created.')]));
      v.status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    };
    await v.refresh();
  }

  // ---- service levels view ------------------------------------------------
  // The service levels of a location over the last 24 hours, whole and
  // by floor, AP, SSID or band: what the first screen's numbers are made of.
  async function serviceLevelsView(main, arg, v) {
    const loc = arg !== '' && S.locs.has(Number(arg)) ? Number(arg) : home();
    const by = h('select', { id: 'sl-groupby', onchange: () => v.refresh().catch((e) => note(v, e)) },
      ['floor', 'ap', 'ssid', 'band'].map((g) => h('option', { value: g }, { floor: 'By floor', ap: 'By AP', ssid: 'By SSID', band: 'By band' }[g])));
    const out = h('div', {});
    main.append(h('h1', {}, `Service levels: ${locPath(loc)}`), h('p', { class: 'mut' }, 'Connection attempts of the last 24 hours against the targets.'),
      h('div', { class: 'row' }, h('label', {}, 'Group', by)), out);
    v.refresh = async () => {
      const [all, t] = await Promise.all([api('/servicelevels?' + q({ locationid: loc, groupby: by.value })), api('/servicelevels/targets?' + q({ locationid: loc }))]);
      if (!v.live()) return;
      const cell = (g, name) => {
        const m = g.metrics.find((x) => x.metric === name);
        if (!m || m.value === null) return '—';
        const c = biggestClassifier(m);
        return h('span', {}, h('b', { class: m.met ? 'ok' : 'warn' }, `${fmtNum(m.value, 2)} %`), ` of ${m.count}`, c ? h('span', { class: 'mut' }, ` · ${CLASSIFIER_WORDS[c.name] || c.name} ${fmtNum(c.share)} %`) : '');
      };
      const groupName = (g) => (g.type === 'band' ? BANDS[g.id] || 'unknown band' : g.type === 'ap' && g.id === null ? 'no known AP' : g.type === 'floor' && g.id !== null ? link(`#/baselines/${g.id}`, g.name) : g.name);
      out.replaceChildren(h('ul', { class: 'lines' }, all.metrics.map((m) => metricLine(m, `#/servicelevels/${loc}`))),
        h('p', { class: 'mut' }, t.definedAt ? `Targets set at ${locPath(t.definedAt.id ?? t.definedAt)}.` : 'Default targets: 95 % of attempts succeed, 90 % connect within 4 s.'),
        h('div', { class: 'scroll' }, table([
          { title: { floor: 'Floor', ap: 'AP', ssid: 'SSID', band: 'Band' }[by.value], get: groupName },
          { title: 'Successful connects', get: (g) => cell(g, 'successfulConnects') },
          { title: `Connected within ${fmtNum(t.timeToConnect.seconds)} s`, get: (g) => cell(g, 'timeToConnect') },
        ], all.groups, { label: 'Service levels by group', empty: 'No attempts in the last 24 hours.' })));
    };
    await v.refresh();
  }

  // ---- locations and APs -------------------------------------------------
  function tree(selected, hrefOf) {
    const node = (l) => {
      const kids = l.children.map((id) => S.locs.get(id)).filter((c) => c && (c.accessible || hasAccessible(c))).sort(byName);
      const label = l.id === 0 ? 'All locations' : l.name;
      return h('li', {}, l.accessible ? h('a', { href: hrefOf(l), class: l.id === selected ? 'sel' : null, 'aria-current': l.id === selected ? 'true' : null }, label)
        : h('span', { class: 'mut' }, label), kids.length ? h('ul', {}, kids.map(node)) : null);
    };
    const root = S.locs.get(0);
    return h('nav', { class: 'tree card', 'aria-label': 'Locations' }, h('ul', {}, root ? node(root) : null));
  }
  function hasAccessible(l) {
    return l.children.some((id) => { const c = S.locs.get(id); return c && (c.accessible || hasAccessible(c)); });
  }

  async function apsView(main, arg, v) {
    const loc = arg !== '' && S.locs.has(Number(arg)) ? Number(arg) : home();
    const right = h('div', {});
    let left = tree(loc, (l) => `#/aps/${l.id}`);
    main.append(h('h1', {}, 'Locations and APs'), h('div', { class: 'split' }, left, right));
    right.append(h('h2', {}, locPath(loc)));
    // The tree follows the locations as they change (configChanged).
    const retree = () => { const t = tree(loc, (l) => `#/aps/${l.id}`); left.replaceWith(t); left = t; };
    const st = { offset: 0, limit: 100, sortby: 'devicename', ascending: true, name: '', active: '' };
    const nameIn = h('input', { id: 'ap-filter', type: 'search', placeholder: 'Name contains', oninput: (e) => { st.name = e.target.value; st.offset = 0; soonLoad(); } });
    const statusIn = h('select', { id: 'ap-status', onchange: (e) => { st.active = e.target.value; st.offset = 0; load(); } },
      h('option', { value: '' }, 'Any status'), h('option', { value: 'true' }, 'Up'), h('option', { value: 'false' }, 'Down'));
    const out = h('div', {});
    right.append(h('div', { class: 'row' }, h('label', {}, 'Filter by name', nameIn), h('label', {}, 'Status', statusIn)), out);
    let timer = 0;
    const soonLoad = () => { clearTimeout(timer); timer = setTimeout(load, 250); };
    async function load() {
      // A VIEWER reads the APs' status (an extension of the API), without
      // their addresses, software or radios.
      const params = q({ locationid: loc, offset: st.offset, limit: st.limit, sortby: st.sortby, ascending: st.ascending, name: st.name, active: st.active });
      const r = canOperate() ? await api('/devices/manageddevices?' + params) : await api('/devices/apstatus?' + params);
      if (!v.live()) return;
      out.replaceChildren(table([
        { title: 'Name', sort: 'devicename', get: (a) => link(`#/ap/${encodeURIComponent(a.macaddress)}`, a.name || a.macaddress) },
        { title: 'Status', get: (a) => (a.activeStatus ? h('span', { class: 'ok' }, 'Up') : h('span', { class: 'bad' }, 'Down')) },
        { title: 'MAC', sort: 'macaddress', get: (a) => a.macaddress },
        canOperate() ? { title: 'IP', sort: 'ipaddress', get: (a) => a.ipAddress || '—' } : null,
        canOperate() ? { title: 'Model', get: (a) => a.model || '—' } : null,
        { title: 'Location', get: (a) => locPath(a.locationId.id) },
        { title: 'Clients', get: (a) => a.numAssocClients },
        { title: 'Last seen', sort: 'lastseen', get: (a) => fmtTime(a.lastSeen) },
      ].filter(Boolean), r.managedDevices || r.apStatus, {
        label: 'APs', sortBy: st.sortby, ascending: st.ascending, empty: 'No AP matches.',
        onSort: (k) => { st.ascending = st.sortby === k ? !st.ascending : true; st.sortby = k; load(); },
      }), pager(st.offset, st.limit, r.totalCount, (o) => { st.offset = o; load(); }));
    }
    v.refresh = async () => { retree(); await load(); };
    await load();
  }

  // apView is one AP's page: its status, its radios (SUPERUSER,
  // ADMINISTRATOR, OPERATOR: a VIEWER reads the status alone), its
  // clients now and its client count over the last 24 hours.
  async function apView(main, arg, v) {
    const mac = arg;
    const head = h('div', {}), radios = h('section', { class: 'card' }), clients = h('section', { class: 'card' }),
      count = h('section', { class: 'card' }), air = h('section', { class: 'card' });
    main.append(head);
    if (canOperate()) main.append(radios);
    main.append(air, clients, count);
    v.refresh = async () => {
      const byMac = q({ macaddress: mac, limit: 1 });
      const r = canOperate() ? await api('/devices/manageddevices?' + byMac) : await api('/devices/apstatus?' + byMac);
      const a = (r.managedDevices || r.apStatus || [])[0];
      if (!v.live()) return;
      if (!a) {
        head.replaceChildren(h('h1', {}, mac), h('p', { class: 'mut' }, 'No AP with this MAC at your locations.'));
        radios.hidden = clients.hidden = count.hidden = air.hidden = true;
        return;
      }
      const now = Date.now();
      const [cl, trend, rs] = await Promise.all([
        api('/devices/clients/0/100?' + q({ active: true, filter: JSON.stringify({ property: 'apboxid', operator: '=', value: [a.boxId] }) })),
        api('/devices/manageddevices/statistics/trend?' + q({ devicecategory: 'MANAGED_AP', type: 'apclientcount', boxid: a.boxId, fromtime: now - DAY, totime: now })),
        api(`/devices/manageddevices/${a.boxId}/radiostatistics?` + q({ fromtime: now - DAY, totime: now })),
      ]);
      if (!v.live()) return;
      const fact = (k, val) => [h('dt', {}, k), h('dd', {}, val)];
      head.replaceChildren(h('h1', {}, a.name || a.macaddress, ' ', a.activeStatus ? h('span', { class: 'chip okc' }, 'Up') : h('span', { class: 'chip bad' }, 'Down')),
        h('dl', { class: 'props' }, ...fact('MAC', a.macaddress), ...fact('Location', link(`#/aps/${a.locationId.id}`, locPath(a.locationId.id))),
          ...(canOperate() ? [...fact('IP', a.ipAddress || '—'), ...fact('Model', a.model || '—'), ...fact('Software', a.softwareVersion || '—')] : []),
          ...fact(a.activeStatus ? 'Up since' : 'Down since', fmtTime(a.activeStatus ? a.upSince : a.lastSeen)), ...fact('Last heard', fmtTime(a.lastSeen)),
          ...fact('Clients', String(a.numAssocClients))));
      if (canOperate()) {
        radios.replaceChildren(h('h2', {}, 'Radios'), h('div', { class: 'scroll' }, table([
          { title: 'BSSID', get: (x) => x.macaddress },
          { title: 'Band', get: (x) => BANDS[x.frequencyBand] || x.frequencyBand || '—' },
          { title: 'Channel', get: (x) => (x.channel ? String(x.channel) : '—') },
          { title: 'SSID', get: (x) => x.ssid || '—' },
          { title: 'Protocol', get: (x) => x.protocol || '—' },
          { title: 'Clients', get: (x) => String(x.numAssocClients) },
          { title: 'State', get: (x) => (x.active ? 'On' : h('span', { class: 'mut' }, 'Off')) },
        ], a.radios || [], { label: 'Radios', empty: 'No radio reported.' })));
      }
      clients.replaceChildren(h('h2', {}, `Clients on this AP now (${cl.totalCount})`), h('div', { class: 'scroll' }, table([
        { title: 'Name', get: (c) => clientLink(c.macAddress, c.name || c.macAddress) },
        { title: 'User', get: (c) => c.username || '—' },
        { title: 'SSID', get: (c) => c.ssid || '—' },
        { title: 'RSSI', get: (c) => (c.rssi ? `${c.rssi} dBm` : '—') },
        { title: 'Last seen', get: (c) => fmtTime(c.lastSeen) },
      ], cl.clientList, { label: 'Clients on this AP', empty: 'No client heard on this AP in the last 15 minutes.' })));
      // Each radio's channel utilisation over the day, on a fixed 0–100 %
      // scale with a line at the capacity threshold; noise in its title.
      air.replaceChildren(h('h2', {}, 'Channel utilisation, last 24 hours'), ...(rs.radios.length ? rs.radios.map((r) => {
        const last = r.samples[r.samples.length - 1] || {};
        const facts = [BANDS[r.frequencyBand] || r.frequencyBand, last.channel != null ? `channel ${last.channel}` : null,
          last.noiseDbm != null ? `noise ${Math.round(last.noiseDbm)} dBm` : null, last.clients != null ? `${last.clients} clients` : null].filter(Boolean);
        const pts = r.samples.filter((p) => p.utilizationPct != null).map((p) => ({ t: p.time, v: p.utilizationPct }));
        return h('div', {}, h('h3', {}, `${r.bssid} · ${facts.join(' · ')}`), pts.length
          ? chart({ points: pts, from: now - DAY, to: now, gap: 2 * SLOT, min: 0, max: 100, label: `Channel utilisation (%) of ${r.bssid}, last 24 hours` })
          : h('p', { class: 'mut' }, 'This radio reports no utilisation.'));
      }) : [h('p', { class: 'mut' }, 'No radio data: add this AP as a poller (Settings, Data sources: OpenWrt over ubus or a Prometheus exporter), or send its radio samples to POST /V5/ingest/radiostats.')]));
      count.replaceChildren(h('h2', {}, 'Clients, last 24 hours'), chart({ points: trend.samples.map((p) => ({ t: p.time, v: p.value })),
        from: now - DAY, to: now, gap: 2 * SLOT, min: 0, label: 'Most clients associated in each 5 minutes, last 24 hours' }));
    };
    await v.refresh();
  }

  // ---- clients -----------------------------------------------------------
  async function clientsView(main, arg, v) {
    const st = { q: arg, offset: 0, limit: 50 };
    const input = h('input', { id: 'client-q', type: 'search', value: st.q, placeholder: 'aa:bb:cc…, laptop-12, alice@corp' });
    const out = h('div', {});
    main.append(h('h1', {}, 'Clients'),
      h('form', { class: 'row', role: 'search', onsubmit: (e) => { e.preventDefault(); location.hash = `#/clients/${encodeURIComponent(input.value.trim())}`; } },
        h('label', {}, 'Search by MAC, name or 802.1X username', input), h('button', { type: 'submit', class: 'primary' }, 'Search')), out);
    async function load() {
      const text = st.q.trim();
      const query = {};
      if (text) {
        query.filter = JSON.stringify({
          operator: 'OR', value: ['macaddress', 'name', 'username'].map((p) => ({ property: p, operator: 'contains', value: [text] })),
        });
      }
      const r = await api(`/devices/clients/${st.offset}/${st.limit}?` + q(query));
      if (!v.live()) return;
      out.replaceChildren(table([
        { title: 'Name', get: (c) => clientLink(c.macAddress, c.name || c.macAddress) },
        { title: 'MAC', get: (c) => c.macAddress },
        { title: 'User', get: (c) => c.username || '—' },
        { title: 'Last event', get: (c) => h('span', { class: c.lastEventType === 'Failure' ? 'bad' : '' }, c.lastEventType || '—') },
        { title: 'SSID', get: (c) => c.ssid || '—' },
        { title: 'AP', get: (c) => c.associatedAPName || '—' },
        { title: 'RSSI', get: (c) => (c.rssi ? `${c.rssi} dBm` : '—') },
        { title: 'Location', get: (c) => (c.locationId ? locPath(c.locationId.id) : '—') },
        { title: 'Last seen', get: (c) => fmtTime(c.lastSeen) },
      ], r.clientList, { label: 'Clients', empty: text ? `No client matches “${text}”.` : 'No clients yet.' }),
      pager(st.offset, st.limit, r.totalCount, (o) => { st.offset = o; load(); }));
    }
    v.refresh = load;
    await load();
  }

  // roamWords says what a roam (an Intermediate event of category 6,
  // found by the server) was: from where, how long, with what signal.
  function roamWords(e) {
    const parts = [`in ${e.roamLatencyMs ?? '?'} ms`];
    if (e.fastTransition) parts.push('fast transition');
    if (e.rssiBefore != null && e.rssiAfter != null) parts.push(`${e.rssiBefore} → ${e.rssiAfter} dBm`);
    if (e.slowRoam) parts.push('slow');
    if (e.suboptimalRoam) parts.push('to a weaker signal');
    return `Roamed from ${e.fromBssid} (${parts.join(', ')})`;
  }
  function eventWords(e) {
    if (e.eventType === 'Intermediate' && e.categoryCode === 6) return roamWords(e);
    if (e.eventType === 'Failure') return `${e.failure || 'Failure'}: ${e.subFailure || 'cause ' + e.subFailureCode}`;
    if (e.eventType === 'Success') {
      const parts = [];
      if (e.aaaLatency !== null && e.aaaLatency !== undefined) parts.push(`AAA ${e.aaaLatency} ms`);
      if (e.dhcpLatency !== null && e.dhcpLatency !== undefined) parts.push(`DHCP ${e.dhcpLatency} ms`);
      return 'Connected' + (parts.length ? ` (${parts.join(', ')})` : '');
    }
    return [e.eventDescription, e.subEventDescription].filter(Boolean).join(' — ') || `${e.category || 'Event'} ${e.typeCode}`;
  }

  // attempts groups a client's events (newest first, as listed) into
  // connection attempts, newest first: the steps of one connection
  // (association, authentication, DHCP, ...) up to the Success or Failure
  // that ends it; the steps after the last end are an attempt in progress.
  // A Success at another AP than the Success before it, with no Failure
  // between, is a roam.
  function attempts(events) {
    const out = [];
    let cur = { steps: [], end: null };
    for (const e of events.slice().reverse()) {
      // A roam the server found goes with the Success it was found at.
      if (e.eventType === 'Intermediate' && e.categoryCode === 6) {
        const last = out[out.length - 1];
        if (last && last.end && last.end.timestamp === e.timestamp) last.roam = e;
        else cur.roam = e;
        continue;
      }
      cur.steps.push(e);
      if (e.eventType === 'Success' || e.eventType === 'Failure') {
        cur.end = e;
        out.push(cur);
        cur = { steps: [], end: null };
      }
    }
    if (cur.steps.length) out.push(cur);
    let prev = null;
    for (const a of out) {
      if (!a.end) continue;
      const ap = (e) => e.associatedAPName || e.bssid;
      if (a.end.eventType === 'Success' && prev && prev.eventType === 'Success' && ap(prev) && ap(a.end) && ap(prev) !== ap(a.end)) a.roamFrom = ap(prev);
      prev = a.end;
    }
    return out.reverse();
  }

  async function clientView(main, mac, v) {
    const filter = JSON.stringify({ property: 'macaddress', operator: '=', value: [mac] });
    const found = await api('/devices/clients/0/1?' + q({ filter }));
    const c = found.clientList[0];
    if (!c) {
      main.append(h('h1', {}, mac), h('p', { class: 'mut' }, 'No such client at your locations.'));
      return;
    }
    const fact = (label, value) => h('div', { class: 'kpi' }, h('b', {}, value ?? '—'), h('span', {}, label));
    main.append(h('h1', {}, `${c.name || c.macAddress}`),
      h('div', { class: 'card kpis' },
        fact('MAC', c.macAddress), fact('802.1X user', c.username || '—'), fact('Last event', c.lastEventType),
        fact('SSID', c.ssid), fact('AP', c.associatedAPName), fact('Channel', c.channel),
        fact('RSSI', c.rssi ? `${c.rssi} dBm` : '—'), fact('Data rate', c.dataRateMbps ? `${c.dataRateMbps} Mbps` : '—'),
        fact('Where', c.locationId ? locPath(c.locationId.id) : '—'), fact('Last seen', fmtTime(c.lastSeen))));
    const charts = h('div', { class: 'grid' }), hear = h('div', {}), timeline = h('ol', { class: 'timeline', 'aria-label': 'Connection attempts, newest first' }),
      logs = h('div', {}), more = h('div', { class: 'row' });
    main.append(h('h2', {}, 'Last 24 hours'), charts, h('h2', {}, 'APs that hear it'), hear,
      h('h2', {}, 'Connection attempts'), timeline, more, h('h2', {}, 'Connection logs'), logs);
    const st = { offset: 0, limit: 100, loaded: [] };
    const where = (e) => [e.associatedAPName || e.bssid, e.ssid, e.channel != null ? `ch ${e.channel}` : ''].filter(Boolean).join(' · ');
    async function events(append) {
      const r = await api(`/devices/clientevents/${encodeURIComponent(c.macAddress)}/${st.offset}/${st.limit}`);
      if (!v.live()) return;
      st.loaded = append ? st.loaded.concat(r.clientEvents) : r.clientEvents;
      const row = (a) => {
        const last = a.steps[a.steps.length - 1], end = a.end;
        const cls = end ? end.eventType.toLowerCase() : 'intermediate';
        const head = end
          ? [h('span', { class: 'badge' }, end.eventType === 'Success' ? (a.roam || a.roamFrom ? 'Roamed' : 'Connected') : 'Failed'),
            h('b', { class: a.roam && (a.roam.slowRoam || a.roam.suboptimalRoam) ? 'bad' : '' }, end.eventType === 'Success' && a.roam
              ? `${roamWords(a.roam)} to ${end.associatedAPName || end.bssid}`
              : end.eventType === 'Success' && a.roamFrom ? `Roamed from ${a.roamFrom} to ${end.associatedAPName || end.bssid}` : eventWords(end))]
          : [h('span', { class: 'badge' }, 'In progress'), h('b', {}, eventWords(last))];
        const steps = a.steps.length > 1 ? h('details', {}, h('summary', {}, `${a.steps.length} steps`),
          h('ol', { class: 'steps' }, a.steps.map((e) => h('li', {}, h('span', { class: 'mut' }, fmtClock(e.timestamp)), ' ', eventWords(e))))) : null;
        return h('li', { class: cls }, ...head, ' ', h('span', { class: 'mut' }, `${fmtTime((end || last).timestamp)} · ${where(end || last)}`), steps);
      };
      // Three or more failed attempts in a row are one row: how many, when,
      // and their reasons, the attempts themselves one click away.
      const items = [];
      const list = attempts(st.loaded);
      for (let i = 0; i < list.length;) {
        let j = i;
        while (j < list.length && list[j].end && list[j].end.eventType === 'Failure') j++;
        if (j - i >= 3) {
          const run = list.slice(i, j), reasons = new Map();
          for (const a of run) reasons.set(eventWords(a.end), (reasons.get(eventWords(a.end)) || 0) + 1);
          const words = [...reasons].sort((x, y) => y[1] - x[1]).map(([w, n]) => `${w} (${n})`).join(', ');
          const first = run[run.length - 1].end, lastEnd = run[0].end;
          items.push(h('li', { class: 'failure run' }, h('span', { class: 'badge' }, 'Failed'),
            h('b', {}, `${run.length} failed attempts`), ' ',
            h('span', { class: 'mut' }, `${fmtTime(first.timestamp)} – ${fmtClock(lastEnd.timestamp)} · ${where(lastEnd)}`),
            h('div', {}, words),
            h('details', {}, h('summary', {}, 'The attempts'), h('ol', { class: 'timeline' }, run.map(row)))));
          i = j;
        } else {
          items.push(row(list[i]));
          i++;
        }
      }
      timeline.replaceChildren(...(items.length ? items : [h('li', { class: 'mut' }, 'No events.')]));
      more.replaceChildren(st.offset + st.limit < r.totalCount
        ? h('button', { type: 'button', onclick: () => { st.offset += st.limit; events(true).catch((e) => note(v, e)); } }, `Older events (${r.totalCount - st.offset - st.limit} more)`)
        : h('span', { class: 'mut' }, `${r.totalCount} events`));
    }
    v.refresh = async () => {
      const now = Date.now(), window = { macaddress: c.macAddress, fromtime: now - DAY, totime: now };
      const [rate, rssi, snr, retry, heard, cl] = await Promise.all([
        api('/devices/clients/statistics/trend?' + q({ type: 'clientdatarate', ...window })),
        api('/devices/clients/statistics/trend?' + q({ type: 'clientrssi', ...window })),
        api('/devices/clients/statistics/trend?' + q({ type: 'clientsnr', ...window })),
        api('/devices/clients/statistics/trend?' + q({ type: 'clientretransmissionrate', ...window })),
        api(`/devices/clients/${c.boxId}/observingmanageddevices`),
        api('/devices/clients/connectionlogs?' + q({ clientmacaddress: c.macAddress, limit: 20 })),
      ]);
      if (!v.live()) return;
      // Samples more than 30 minutes apart are a gap: the client was not there.
      const trend = (t, title, scale, unit, range) => h('section', { class: 'card' }, h('h3', {}, title),
        chart({ points: t.samples.map((p) => ({ t: p.time, v: p.value * scale })), from: now - DAY, to: now, gap: 2 * SLOT, ...range, label: `${title} (${unit}), last 24 hours` }));
      charts.replaceChildren(trend(rate, 'Data rate (Mbps)', 1 / 1000, 'Mbps', { min: 0 }), trend(rssi, 'RSSI (dBm)', 1, 'dBm'),
        trend(snr, 'SNR (dB)', 1, 'dB', { min: 0 }), trend(retry, 'Retries (%)', 1, '%', { min: 0, max: 100 }));
      hear.replaceChildren(table([
        { title: 'AP', get: (a) => a.name },
        { title: 'MAC', get: (a) => a.macaddress },
        { title: 'Signal', get: (a) => `${a.signalStrength} dBm` },
      ], heard, { label: 'APs that hear the client', empty: 'No AP heard it in the last 15 minutes.' }));
      const logRow = (e) => h('tr', { class: e.eventType === 'Failure' ? 'bad' : '' }, h('td', {}, fmtTime(e.timestamp)), h('td', {}, e.eventType),
        h('td', {}, eventWords(e)), h('td', {}, e.associatedAPName || e.bssid));
      logs.replaceChildren(h('p', { class: 'mut' }, `${cl.successLogs.length} successes and ${cl.failureLogs.length} failures at 802.11ac APs (the last 20 of each)`),
        h('table', { 'aria-label': 'Connection logs' }, h('thead', {}, h('tr', {}, ['Time', 'Outcome', 'What', 'AP'].map((t) => h('th', { scope: 'col' }, t)))),
          h('tbody', {}, [...cl.failureLogs, ...cl.successLogs].sort((a, b) => b.timestamp - a.timestamp).map(logRow))));
      st.offset = 0;
      await events(false);
    };
    await v.refresh();
  }

  // ---- baselines ---------------------------------------------------------
  function floorPicker(current, hrefOf) {
    return h('label', {}, 'Floor', h('select', { id: 'floor-pick', onchange: (e) => { location.hash = hrefOf(e.target.value); } },
      floors().map((f) => h('option', { value: f.id, selected: f.id === current }, locPath(f.id)))));
  }
  // floorOf heads a floor's view: the floor arg names if the caller sees
  // it, else the first floor, or undefined (said on the page) for none.
  function floorOf(main, arg, title) {
    const all = floors();
    main.append(h('h1', {}, title));
    if (!all.length) main.append(h('p', { class: 'mut' }, 'No floors at your locations.'));
    return all.some((f) => String(f.id) === arg) ? Number(arg) : (all[0] || {}).id;
  }
  async function baselinesView(main, arg, v) {
    const floor = floorOf(main, arg, 'Baselines');
    if (floor === undefined) return;
    const hours = h('select', { id: 'baseline-window', onchange: () => v.refresh().catch((e) => note(v, e)) },
      h('option', { value: 24 }, 'Last 24 hours'), h('option', { value: 72 }, 'Last 3 days'), h('option', { value: 168 }, 'Last 7 days'));
    const conn = h('div', {}), perf = h('div', {}), picked = h('section', { class: 'card', id: 'slot-clients', 'aria-live': 'polite' },
      h('p', { class: 'mut' }, 'Pick a slot with failures on the chart (click, or Tab and Enter) to list its failing clients.'));
    main.append(h('div', { class: 'row' }, floorPicker(floor, (id) => `#/baselines/${id}`), h('label', {}, 'Window', hours)),
      h('section', { class: 'card' }, h('h2', {}, 'Clients failing to connect (%) against the baseline band'), conn),
      picked, h('section', { class: 'card' }, h('h2', {}, 'Clients with poor performance (%)'), perf));
    const band = (p) => (p.baseline === null ? {} : { base: p.baseline, lo: Math.max(0, 2 * p.baseline - p.threshold), hi: p.threshold });
    async function pick(p) {
      const r = await api('/baselines/clientsconnectivity/failingclients?' + q({ locationid: floor, timestamp: p.t, limit: 200 }));
      if (!v.live()) return;
      picked.replaceChildren(h('h2', {}, `Failing clients at ${fmtTime(p.t)} (${r.totalCount} of ${p.attempting} attempting)`),
        table([
          { title: 'Client', get: (c) => clientLink(c.macAddress) },
          { title: 'Failed at', get: (c) => c.failureCategories.join(', ') },
        ], r.clients, { label: 'Failing clients of the slot', empty: 'No failing clients in this slot.' }),
        h('p', { class: 'mut', hidden: r.totalCount <= r.clients.length }, `The first ${r.clients.length} by MAC.`));
    }
    v.refresh = async () => {
      const now = Date.now(), from = now - Number(hours.value) * 3600 * 1000;
      const at = { locationid: floor, fromtime: from, totime: now };
      const [c, pf] = await Promise.all([api('/baselines/clientsconnectivity?' + q(at)), api('/baselines/clientsperformance?' + q(at))]);
      if (!v.live()) return;
      conn.replaceChildren(chart({
        label: `Connectivity of ${locPath(floor)}: failing clients in % per 15-minute slot, with the baseline band`, from, to: now, min: 0,
        max: 100,
        points: c.map((p) => ({
          t: p.timestamp, v: p.noOfSamplesForObservation ? p.observation : null, ...band(p), bad: p.anomalous,
          learning: p.noOfSamplesForObservation > 0 && p.baseline === null, pickable: p.absoluteObservation > 0, attempting: p.noOfSamplesForObservation,
          label: `${fmtTime(p.timestamp)}: ${fmtNum(p.observation)} % failing (${p.absoluteObservation} of ${p.noOfSamplesForObservation})${p.anomalous ? ', anomalous' : ''}`,
        })),
        onPick: (p) => pick(p).catch((e) => note(v, e)),
      }), h('p', { class: 'mut' }, `${c.filter((p) => p.anomalous).length} anomalous slots (red) in this window.`),
      ...[learningNote(c)].filter(Boolean));
      perf.replaceChildren(chart({
        label: `Performance of ${locPath(floor)}: clients with low rate, high retries, low RSSI or sticky, in %`, from, to: now, min: 0, max: 100,
        points: pf.map((p) => ({ t: p.timestamp, v: p.noOfSamplesForObservation ? p.observation : null, ...band(p), bad: p.anomalous,
          learning: p.noOfSamplesForObservation > 0 && p.baseline === null, label: `${fmtTime(p.timestamp)}: ${fmtNum(p.observation)} %` })),
      }));
      v.status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    };
    await v.refresh();
  }

  // learningNote says, under a baselines chart, how many of its slots have
  // data but no baseline yet: on a narrow chart the shading is all there is.
  function learningNote(points) {
    const n = points.filter((p) => p.noOfSamplesForObservation > 0 && p.baseline === null).length;
    return n ? h('p', { class: 'learn-note' }, `Learning: ${n} slot${n === 1 ? '' : 's'} with data and no baseline yet (shaded), too little history to judge.`) : null;
  }

  // ---- floor plan --------------------------------------------------------
  async function floorView(main, arg, v) {
    const floor = floorOf(main, arg, 'Floor plan');
    if (floor === undefined) return;
    const plan = h('div', {}), aps = h('div', {}), edit = h('div', {});
    const placer = canOperate() ? apPlacer(() => v.refresh()) : null;
    main.append(h('div', { class: 'row' }, floorPicker(floor, (id) => `#/floor/${id}`)), plan, placer ? placer.card : null, edit, h('h2', {}, 'APs on this floor'), aps);
    v.refresh = async () => {
      let layout = null;
      try {
        layout = await api('/layouts?' + q({ locationid: floor }));
      } catch (e) {
        if (e.status !== 404) throw e;
      }
      if (canOperate() && !edit.firstChild) edit.append(planForm(floor, layout, () => v.refresh()));
      const list = (await api('/devices/apstatus?' + q({ locationid: floor, limit: 1000, sortby: 'devicename', ascending: true }))).apStatus;
      if (!v.live()) return;
      if (!layout) {
        if (placer) placer.card.hidden = true;
        plan.replaceChildren(h('p', { class: 'mut' }, 'This floor has no layout yet: save its size below, then place its APs on it.'));
      } else {
        const L = layout.length, W = layout.width, mats = (layout.obstaclesInfo && layout.obstaclesInfo.materialProperties) || {};
        const svg = s('svg', { class: 'plan', viewBox: `-1 -1 ${L + 2} ${W + 2}`, role: 'img', 'aria-label': `Layout of ${locPath(floor)}: ${L} × ${W} ${layout.unit.toLowerCase()}s` });
        svg.append(s('rect', { x: 0, y: 0, width: L, height: W, fill: '#fafbfc', stroke: '#99a', 'stroke-width': 0.1 }));
        if (layout.imageKey) svg.append(s('image', { href: `${BASE}/sfiles?id=${encodeURIComponent(layout.imageKey)}`, x: 0, y: 0, width: L, height: W, preserveAspectRatio: 'none' }));
        for (const o of (layout.obstaclesInfo && layout.obstaclesInfo.obstacles) || []) {
          const m = mats[o.materialId], c = m && m.fillColor ? `rgb(${m.fillColor.r},${m.fillColor.g},${m.fillColor.b})` : '#666';
          const len = o.breadth || 0, th = Math.max(o.thickness || 0.1, 0.15);
          svg.append(s('rect', {
            class: 'obstacle', x: o.centerX - len / 2, y: o.centerY - th / 2, width: len, height: th, fill: c,
            transform: `rotate(${o.angle || 0} ${o.centerX} ${o.centerY})`,
          }, s('title', { text: m ? m.name : o.materialId })));
        }
        // The APs that report where they are, up in green, down in red.
        const r = Math.max(L, W) / 90;
        for (const a of list) {
          if (!a.position) continue;
          const { x, y } = a.position;
          svg.append(s('g', { class: 'ap' },
            s('circle', { cx: x, cy: y, r, fill: a.activeStatus ? '#2e7d32' : '#c62828', stroke: '#fff', 'stroke-width': r / 4 }),
            s('text', { class: 'ap-name', x, y: y - r * 1.4, 'text-anchor': 'middle', 'font-size': r * 1.5, fill: '#1d2330', text: a.name }),
            s('title', { text: `${a.name}: ${a.activeStatus ? 'up' : 'down'}, ${a.numAssocClients} clients` })));
        }
        if (placer) placer.bind(svg, list, L, W);
        readableText(svg, 12);
        const legend = [...new Set(((layout.obstaclesInfo && layout.obstaclesInfo.obstacles) || []).map((o) => o.materialId))]
          .map((id) => (mats[id] ? mats[id].name : id)).join(', ');
        plan.replaceChildren(h('div', { class: 'card' }, svg,
          h('p', { class: 'mut' }, `${L} × ${W} ${layout.unit.toLowerCase()}s. Obstacles: ${legend || 'none'}. ${layout.imageKey ? '' : 'No floor image uploaded.'}`)));
      }
      aps.replaceChildren(table([
        { title: 'AP', get: (a) => a.name },
        { title: 'Status', get: (a) => (a.activeStatus ? h('span', { class: 'ok' }, 'Up') : h('span', { class: 'bad' }, 'Down')) },
        { title: 'On the plan', get: (a) => (a.position ? `x ${fmtNum(a.position.x)}, y ${fmtNum(a.position.y)}` : 'position not reported') },
        { title: 'Clients', get: (a) => a.numAssocClients },
      ], list, { label: 'APs on this floor', empty: 'No APs on this floor.' }));
    };
    await v.refresh();
  }

  // apPlacer places the floor's APs on its plan: choose an AP, click
  // where it hangs (or type x and y), Place; only the position changes
  // (PUT manageddevices/{boxId}/position), so a down AP stays down.
  function apPlacer(done) {
    const msg = h('p', { role: 'status', class: 'mut', id: 'place-msg' });
    const pick = h('select', { id: 'place-ap' });
    const num = (id, label) => h('input', { id, type: 'number', min: 0, max: 100000, step: 'any', required: true, 'aria-label': label });
    const x = num('place-x', 'x'), y = num('place-y', 'y');
    let svg = null, mark = null, aps = [];
    const chosen = () => aps.find((a) => String(a.boxId) === pick.value);
    const put = async (position, said) => {
      const a = chosen();
      if (!a) return;
      try {
        await api(`/devices/manageddevices/${a.boxId}/position`, { method: 'PUT', body: { position } });
        msg.textContent = said(a);
        await done();
      } catch (e) {
        msg.textContent = `Not placed: ${e.message}`;
      }
    };
    const form = h('form', {
      class: 'row', id: 'place-form', onsubmit: (e) => {
        e.preventDefault();
        const p = { x: Number(x.value), y: Number(y.value) };
        put(p, (a) => `Placed ${a.name} at x ${fmtNum(p.x)}, y ${fmtNum(p.y)}.`);
      },
    }, h('label', {}, 'AP', pick), h('label', {}, 'x', x), h('label', {}, 'y', y),
    h('button', { type: 'submit', class: 'primary edit' }, 'Place AP'),
    h('button', { type: 'button', class: 'edit', id: 'place-remove', onclick: () => put(null, (a) => `Took ${a.name} off the plan.`) }, 'Take off the plan'));
    const card = h('section', { class: 'card', 'aria-labelledby': 'place-title' }, h('h2', { id: 'place-title' }, 'Place an AP'),
      h('p', { class: 'mut' }, 'Choose an AP, then click where it hangs on the plan (or type its position in the plan\'s unit from the top left corner).'), form, msg);
    // The mark of the point chosen, drawn on the plan until the next refresh.
    const show = (px, py, L, W) => {
      if (mark) mark.remove();
      const r = Math.max(L, W) / 60;
      mark = s('g', { class: 'place-mark' }, s('circle', { cx: px, cy: py, r, fill: 'none', stroke: '#1f5fbf', 'stroke-width': r / 3 }),
        s('path', { d: `M${px - 2 * r} ${py}h${4 * r}M${px} ${py - 2 * r}v${4 * r}`, stroke: '#1f5fbf', 'stroke-width': r / 4 }));
      svg.append(mark);
    };
    card.bind = (plan, list, L, W) => {
      card.hidden = false;
      svg = plan;
      mark = null;
      aps = list;
      const was = pick.value;
      pick.replaceChildren(...list.map((a) => h('option', { value: a.boxId, selected: String(a.boxId) === was },
        `${a.name}${a.position ? '' : ' (not placed)'}`)));
      msg.textContent = list.length ? msg.textContent : 'No AP on this floor yet: register one in Network, then place it here.';
      svg.classList.add('placing');
      svg.addEventListener('click', (e) => {
        const pt = svg.createSVGPoint();
        pt.x = e.clientX;
        pt.y = e.clientY;
        const p = pt.matrixTransform(svg.getScreenCTM().inverse());
        const px = Math.min(L, Math.max(0, p.x)), py = Math.min(W, Math.max(0, p.y));
        x.value = fmtNum(px, 2);
        y.value = fmtNum(py, 2);
        show(px, py, L, W);
      });
    };
    return { card, bind: card.bind };
  }

  // planForm sets a floor's size and uploads its image: the size is saved
  // into the floor's layout (its obstacles kept), then the image, if one
  // is chosen, replaces the floor's (GIF, JPEG or PNG).
  function planForm(floor, layout, done) {
    const msg = h('p', { role: 'status', class: 'mut' });
    const num = (id, label, value) => h('label', {}, label, h('input', { id, type: 'number', min: 1, max: 1000000, step: 1, required: true, value }));
    const unit = h('select', { id: 'plan-unit' }, ['METER', 'FEET'].map((u) => h('option', { value: u, selected: layout && layout.unit === u }, u.toLowerCase())));
    const file = h('input', { id: 'plan-image', type: 'file', accept: 'image/png,image/jpeg,image/gif' });
    const form = h('form', {
      class: 'row', onsubmit: async (e) => {
        e.preventDefault();
        try {
          // The layout as it is now, its obstacles kept (404: none yet).
          const current = await api('/layouts?' + q({ locationid: floor })).catch((err) => {
            if (err.status === 404) return null;
            throw err;
          });
          const body = Object.assign({}, current || {}, {
            length: Number($('#plan-length', form).value), width: Number($('#plan-width', form).value), unit: unit.value,
          });
          await api('/layouts?' + q({ locationid: floor }), { method: 'POST', body });
          if (file.files.length) {
            const fd = new FormData();
            fd.append('uploadedFile', file.files[0]);
            const r = await fetch(API + '/layouts/image?' + q({ locationid: floor }), { method: 'POST', credentials: 'same-origin', body: fd });
            if (!r.ok) {
              const d = await r.json().catch(() => null);
              throw new ApiError(r.status, '', (d && d.errors && d.errors[0] && d.errors[0].message) || r.statusText);
            }
          }
          msg.textContent = `Saved the plan of ${locPath(floor)}${file.files.length ? ' and its image' : ''}.`;
          file.value = '';
          await done();
        } catch (err) {
          msg.textContent = `Not saved: ${err.message}`;
        }
      },
    }, num('plan-length', 'Length', layout ? layout.length : 50), num('plan-width', 'Width', layout ? layout.width : 30),
    h('label', {}, 'Unit', unit), h('label', {}, 'Floor image', file), h('button', { type: 'submit', class: 'primary edit' }, 'Save plan'));
    return h('section', { class: 'card', 'aria-labelledby': 'plan-title' }, h('h2', { id: 'plan-title' }, 'Size and image of this floor'), form, msg);
  }

  // ---- audit log -----------------------------------------------------------
  // auditView pages the audit log (SUPERUSER, ADMINISTRATOR): who changed
  // what, when, from where, and each field before and after as the API
  // shows it (secrets masked there).
  async function auditView(main, _arg, v) {
    main.append(h('h1', {}, 'Audit log'));
    if (!canAdminister()) {
      main.append(h('p', { class: 'mut' }, `The audit log is read by an ADMINISTRATOR or SUPERUSER; your role is ${S.user.role}.`));
      return;
    }
    const st = { offset: 0, limit: 50, type: '', login: '' };
    const type = h('select', { id: 'audit-type', onchange: () => { st.type = type.value; st.offset = 0; load().catch((e) => note(v, e)); } },
      h('option', { value: '' }, 'Any resource'),
      ['users', 'apikeys', 'locations', 'templates', 'policies', 'layouts', 'webhooks', 'datasources', 'incidents', 'servicelevels']
        .map((t) => h('option', { value: t }, t)));
    const login = h('input', { id: 'audit-login', type: 'search', placeholder: 'Login ID', onchange: () => { st.login = login.value.trim(); st.offset = 0; load().catch((e) => note(v, e)); } });
    const out = h('div', { class: 'scroll' });
    main.append(h('div', { class: 'row' }, h('label', {}, 'Resource', type), h('label', {}, 'Who', login)), out);
    const shown = (raw) => (raw === null || raw === undefined ? '—' : JSON.stringify(raw));
    async function load() {
      const r = await api('/auditlog?' + q({ offset: st.offset, limit: st.limit, resourcetype: st.type, loginid: st.login }));
      if (!v.live()) return;
      out.replaceChildren(table([
        { title: 'When', get: (a) => fmtTime(a.timestamp) },
        { title: 'Who', get: (a) => [a.actor.loginId || a.actor.keyId || '—', h('div', { class: 'mut' }, `${a.actor.role || ''} ${a.sourceAddress || ''}`.trim())] },
        { title: 'What', get: (a) => [h('b', {}, `${a.method} ${a.resourceType}`), ' ', a.resourceName || a.resourceId || '',
          a.status >= 400 ? h('span', { class: 'bad' }, ` (refused, ${a.status})`) : ''] },
        { title: 'Changes', get: (a) => {
          const cs = a.changes || [];
          if (!cs.length) return h('span', { class: 'mut' }, (a.changedFields || []).join(', ') || '—');
          const line = (c) => h('li', {}, h('code', {}, c.field), `: ${shown(c.before)} → ${shown(c.after)}`);
          // A creation lists every field: the first few, the rest a click away.
          const first = cs.length > 6 ? cs.slice(0, 5) : cs, rest = cs.length > 6 ? cs.slice(5) : [];
          const more = a.changesOmitted ? h('li', { class: 'mut' }, `and ${a.changesOmitted} more not recorded`) : null;
          return [h('ul', { class: 'lines' }, first.map(line), rest.length ? null : more),
            rest.length ? h('details', {}, h('summary', {}, `${rest.length} more fields`), h('ul', { class: 'lines' }, rest.map(line), more)) : null];
        } },
      ], r.auditRecords, { label: 'Audit records', empty: 'No records.' }), pager(st.offset, st.limit, r.totalCount, (o) => { st.offset = o; load().catch((e) => note(v, e)); }));
    }
    v.refresh = load;
    await load();
  }

  // webhooksCard lists the customer's webhooks with a form to add one and
  // a button to remove each (SUPERUSER, ADMINISTRATOR).
  function webhooksCard(v) {
    const card = h('section', { class: 'card', 'aria-labelledby': 'webhooks-title' });
    const msg = h('p', { role: 'status', class: 'mut' });
    const url = h('input', { id: 'new-hook-url', type: 'url', required: true, placeholder: 'https://hooks.example.net/wnms', autocomplete: 'off' });
    const secret = h('input', { id: 'new-hook-secret', type: 'password', required: true, minlength: 16, maxlength: 256, autocomplete: 'new-password' });
    const kinds = h('input', { id: 'new-hook-kinds', placeholder: 'all kinds, or e.g. apDown, incidentOpened', autocomplete: 'off' });
    const form = h('form', {
      class: 'row', onsubmit: async (e) => {
        e.preventDefault();
        const body = { url: url.value.trim(), secret: secret.value, kinds: kinds.value.split(/[\s,]+/).filter(Boolean), enabled: true,
          locationId: { type: 'locallocationid', id: home() } };
        try {
          await api('/webhooks', { method: 'PUT', body });
          msg.textContent = `Added the webhook to ${body.url}.`;
          form.reset();
          await v.refresh();
        } catch (err) {
          msg.textContent = `Not added: ${err.message}`;
        }
      },
    }, h('label', {}, 'URL', url), h('label', {}, 'Secret (16 or more characters)', secret), h('label', {}, 'Event kinds', kinds),
    h('button', { type: 'submit', class: 'primary edit' }, 'Add webhook'));
    const list = h('div', { class: 'scroll' });
    card.append(h('h2', { id: 'webhooks-title' }, 'Webhooks'), list, form, msg);
    card.load = async () => {
      const hooks = await api('/webhooks');
      if (changed(list, hooks)) list.replaceChildren(table([
        { title: 'URL', get: (w) => w.url },
        { title: 'Events', get: (w) => ((w.kinds || []).length ? w.kinds.join(', ') : 'all') },
        { title: 'Location', get: (w) => locPath(w.locationId.id) },
        { title: 'State', get: (w) => (w.enabled ? 'Enabled' : h('span', { class: 'mut' }, 'Disabled')) },
        { title: '', get: (w) => confirmButton('Delete', async () => { await api(`/webhooks/${w.id}`, { method: 'DELETE' }); await v.refresh(); }) },
      ], hooks, { label: 'Webhooks', empty: 'No webhooks.' }));
    };
    return card;
  }

  // ---- network: sites, floors and APs ----------------------------------------
  // networkView lists the caller's locations and, for the roles the API
  // lets, adds sites and floors (ADMINISTRATOR, SUPERUSER) and registers
  // APs (also OPERATOR) through the same calls as any client.
  async function networkView(main, _arg, v) {
    main.append(h('h1', {}, 'Network'));
    const admin = canAdminister(), op = canOperate();
    if (!op) main.append(h('p', { class: 'mut' }, `Your role (${S.user.role}) reads the sites and floors; it does not change them.`));
    else if (!admin) main.append(h('p', { class: 'mut' }, `Your role (${S.user.role}) registers APs; an ADMINISTRATOR adds sites and floors.`));
    const msg = h('p', { role: 'status', id: 'network-msg', class: 'mut' });
    const locsCard = h('section', { class: 'card', 'aria-labelledby': 'network-locs' });
    const forms = h('div', { class: 'grid' });
    main.append(locsCard, msg, forms);
    // The zones a site may take, as "(UTC+01:00) Europe/Berlin".
    const zones = admin ? await api('/system/timezoneids').catch(() => []) : [];
    const said = (text) => { msg.textContent = text; };
    // The forms are made once: the view refreshes on events (another
    // administrator's change), and what the caller is typing must stay.
    // A refresh fills their location lists again, keeping each choice.
    const lists = [];
    const pick = (id, which) => {
      const sel = h('select', { id });
      lists.push([sel, which]);
      return sel;
    };
    const parents = () => visibleLocations().filter((l) => !l.floor);
    const parts = [];
    if (admin) {
      const siteName = h('input', { id: 'new-site-name', required: true, maxlength: 128, autocomplete: 'off' });
      const sitePar = pick('new-site-parent', parents);
      const here = Intl.DateTimeFormat().resolvedOptions().timeZone;
      const zone = h('select', { id: 'new-site-zone' }, h('option', { value: '' }, 'Its parent\'s'),
        (Array.isArray(zones) ? zones : []).map((z) => h('option', { value: z.id, selected: z.id === here }, z.displayString || z.id)));
      parts.push(formCard('new-site', 'Add a site', [['Name', siteName], ['Inside', sitePar], ['Time zone', zone]], 'Add site', async () => {
        const loc = { type: 'folderlocation', name: siteName.value.trim() };
        if (zone.value) loc.timezoneId = zone.value;
        await api('/locations', { method: 'PUT', body: { parentLocation: { type: 'locallocationid', id: Number(sitePar.value) }, location: loc } });
        siteName.value = '';
        said(`Added the site ${loc.name}.`);
      }));
      const floorName = h('input', { id: 'new-floor-name', required: true, maxlength: 128, autocomplete: 'off' });
      const floorPar = pick('new-floor-parent', () => parents().filter((l) => l.id !== 0));
      parts.push(formCard('new-floor', 'Add a floor', [['Name', floorName], ['Site', floorPar]], 'Add floor', async () => {
        const loc = { type: 'floorlocation', name: floorName.value.trim() };
        await api('/locations', { method: 'PUT', body: { parentLocation: { type: 'locallocationid', id: Number(floorPar.value) }, location: loc } });
        floorName.value = '';
        said(`Added the floor ${loc.name} to ${locPath(Number(floorPar.value))}.`);
      }));
    }
    if (op) {
      const mac = h('input', { id: 'new-ap-mac', required: true, placeholder: '02:00:00:00:00:01', autocomplete: 'off' });
      const name = h('input', { id: 'new-ap-name', maxlength: 128, autocomplete: 'off' });
      const floor = pick('new-ap-floor', floors);
      const bssid = h('input', { id: 'new-ap-bssid', placeholder: 'the AP\'s MAC', autocomplete: 'off' });
      const channel = h('input', { id: 'new-ap-channel', type: 'number', min: 1, max: 233, value: 36, required: true });
      const ssid = h('input', { id: 'new-ap-ssid', maxlength: 32, autocomplete: 'off' });
      parts.push(formCard('new-ap', 'Register an AP', [['MAC address', mac], ['Name', name], ['Floor', floor], ['Radio BSSID', bssid], ['Channel', channel], ['SSID', ssid]], 'Register AP', async () => {
        const ap = { macaddress: mac.value.trim(), locationId: { type: 'locallocationid', id: Number(floor.value) },
          radios: [{ macaddress: bssid.value.trim() || mac.value.trim(), channel: Number(channel.value), ssid: ssid.value }] };
        if (name.value.trim()) ap.name = name.value.trim();
        const r = await api('/ingest/aps', { method: 'POST', body: [ap] });
        const bad = r && r.rejected && r.rejected[0];
        if (bad) throw new ApiError(400, bad.errorCode, bad.message);
        said(`Registered ${ap.name || ap.macaddress} on ${locPath(ap.locationId.id)}.`);
      }));
    }
    forms.append(...parts);
    v.refresh = async () => {
      await loadLocations();
      if (!v.live()) return;
      const locs = visibleLocations();
      const kind = (l) => (l.floor ? 'Floor' : l.id === 0 ? 'Root' : 'Site or folder');
      if (changed(locsCard)) locsCard.replaceChildren(h('h2', { id: 'network-locs' }, 'Sites and floors'), h('div', { class: 'scroll' }, table([
        { title: 'Location', get: (l) => (l.floor ? h('a', { href: `#/floor/${l.id}` }, locPath(l.id)) : locPath(l.id)) },
        { title: 'Kind', get: kind },
        { title: 'Time zone', get: (l) => l.tz || h('span', { class: 'mut' }, 'its parent\'s') },
        { title: '', get: (l) => (admin && l.id !== 0 && !l.children.length ? confirmButton('Delete', async () => {
          await api(`/locations/${l.id}`, { method: 'DELETE' });
          said(`Deleted ${l.name}.`);
          await v.refresh();
        }) : '') },
      ], locs, { label: 'Sites and floors', empty: 'No locations.' })));
      for (const [sel, which] of lists) {
        const was = sel.value;
        sel.replaceChildren(...which().map((l) => h('option', { value: l.id, selected: String(l.id) === was }, locPath(l.id))));
      }
    };
    // formCard is a form of labelled fields that runs act on submit and
    // refreshes the view after; what goes wrong is said in the view's status.
    function formCard(id, title, fields, button, act) {
      const form = h('form', {
        id, class: 'row', onsubmit: async (e) => {
          e.preventDefault();
          try {
            await act();
            await v.refresh();
          } catch (err) {
            said(`${title}: not done: ${err.message}`);
          }
        },
      }, fields.map(([label, el]) => h('label', {}, label, el)), h('button', { type: 'submit', class: 'primary edit' }, button));
      return h('section', { class: 'card', 'aria-labelledby': id + '-title' }, h('h2', { id: id + '-title' }, title), form);
    }
    await v.refresh();
  }

  // ---- incidents -------------------------------------------------------------
  const STAGE_WORDS = { association: 'association', authentication: 'authentication', dhcp: 'DHCP', dns: 'DNS', performance: 'performance' };
  const EVIDENCE_WORDS = { reason: 'Reasons', ap: 'APs', ssid: 'SSIDs', band: 'Bands', radiusServer: 'RADIUS servers', floor: 'Floors' };
  const pct = (share) => `${fmtNum(share * 100, 0)} %`;
  // incidentCard shows one incident: its size as a bar against the
  // largest listed, its sentence, cause, scope, peak, evidence and state,
  // and Acknowledge for the roles that may.
  function incidentCard(i, largest, v) {
    const tz = tzOf(i.siteLocationId), affected = incidentAffected(i);
    const msg = h('span', { role: 'status', class: 'mut ack-msg' });
    const stateChip = () => h('span', { class: `chip ${incidentOpen(i) ? 'bad' : ''}` },
      (incidentOpen(i) ? 'Open' : `Ended ${whenIn(i.to, tz)}`) + (i.acknowledged ? ', acknowledged' : ''));
    const chip = stateChip();
    const evidence = Object.keys(EVIDENCE_WORDS).map((type) => {
      const items = i.evidence.filter((e) => e.type === type);
      if (!items.length) return null;
      const name = (e) => (type === 'floor' ? link(`#/baselines/${e.id}`, e.name) : type === 'band' ? BANDS[e.id] || e.name : e.name);
      return h('li', {}, h('span', { class: 'mut' }, `${EVIDENCE_WORDS[type]}: `),
        items.map((e, k) => [k ? ', ' : '', name(e), ' ', h('b', {}, String(e.clients))]));
    });
    // The bar's width is set through the style object: the page's policy
    // refuses style attributes.
    const fill = h('span', {});
    fill.style.width = `${Math.max(2, (100 * affected) / Math.max(1, largest))}%`;
    const bar = h('div', { class: 'size', title: `${affected} clients affected` }, fill);
    const card = h('article', { class: `card incident ${incidentOpen(i) ? 'open' : 'ended'}`, 'data-incident': i.id, id: `incident-${i.id}` },
      bar,
      h('div', { class: 'site-head' }, chip, h('h2', {}, incidentTitle(i)), h('span', { class: 'mut' }, link(`#/servicelevels/${i.siteLocationId}`, locPath(i.siteLocationId)))),
      h('p', {}, incidentLine(i), h('span', { class: 'mut' }, ` (${tz})`)),
      h('ul', { class: 'lines facts' },
        h('li', {}, h('span', { class: 'mut' }, 'Cause: '), i.cause
          ? [`${i.cause.reason.text}, failing at ${STAGE_WORDS[i.cause.stage] || i.cause.stage}`, i.cause.stage === 'performance' ? '' : ` (code ${i.cause.reason.failureCode}/${i.cause.reason.subFailureCode})`, `, ${pct(i.cause.share)} of the affected clients`]
          : 'no affected client seen'),
        h('li', {}, h('span', { class: 'mut' }, 'Scope: '), `${scopeWords(i.scope)}, ${pct(i.scope.share)} of the affected clients`),
        h('li', {}, h('span', { class: 'mut' }, 'Peak: '), `${i.peak.affectedClients} of ${i.peak.attemptingClients} clients of one floor (${fmtNum(i.peak.observation)} %) in the slot at ${whenIn(i.peak.timestamp, tz)}; `,
          'see the baselines of ', i.floors.map((f, k) => [k ? ', ' : '', link(`#/baselines/${f}`, S.locs.has(f) ? S.locs.get(f).name : `floor ${f}`)])),
        h('li', {}, h('span', { class: 'mut' }, 'Kind: '), KIND_WORDS[i.kind] || i.kind)),
      h('h3', {}, 'Evidence (affected clients)'), h('ul', { class: 'lines evidence' }, evidence));
    if (canOperate() && !i.acknowledged) {
      const b = h('button', { type: 'button', class: 'ack' }, 'Acknowledge');
      b.addEventListener('click', async () => {
        b.disabled = true;
        msg.textContent = 'Acknowledging…';
        try {
          const r = await api(`/incidents/${i.id}/acknowledge`, { method: 'POST' });
          Object.assign(i, r);
          chip.replaceWith(stateChip());
          b.remove();
          msg.textContent = r.acknowledged ? 'Acknowledged.' : 'The server did not record it.';
        } catch (e) {
          b.disabled = false;
          msg.textContent = `Not acknowledged: ${e.message}`;
        }
      });
      card.append(h('div', { class: 'row' }, b, msg));
    } else {
      card.append(msg);
    }
    return card;
  }

  // Incidents: one row per incident (its anomalous slots of a site grouped),
  // sized by its affected clients, newest first. #/incidents/<id> shows
  // the list with that incident brought into view; #/incidents/site/<id>
  // a site's.
  async function incidentsView(main, arg, v) {
    const [what, which] = arg.split('/');
    const st = { offset: 0, limit: 50, focus: what !== 'site' && arg !== '' ? Number(what) : null };
    const span = h('select', { id: 'incident-window', onchange: () => { st.offset = 0; load(); } },
      h('option', { value: 24 }, 'Last 24 hours'), h('option', { value: 168, selected: true }, 'Last 7 days'), h('option', { value: 744 }, 'Last 31 days'));
    const state = h('select', { id: 'incident-state', onchange: () => { st.offset = 0; load(); } },
      h('option', { value: 'all' }, 'Open and ended'), h('option', { value: 'open' }, 'Open'), h('option', { value: 'closed' }, 'Ended'));
    const site = h('select', { id: 'incident-site', onchange: () => { st.offset = 0; load(); } },
      h('option', { value: '' }, 'All sites'), sites().map((l) => h('option', { value: l.id, selected: what === 'site' && String(l.id) === which }, l.name)));
    const out = h('div', {});
    main.append(h('h1', {}, 'Incidents'),
      h('p', { class: 'mut' }, 'Anomalous 15-minute slots of a site that follow each other, grouped into one incident; the bar is its size in affected clients.'),
      h('div', { class: 'row' }, h('label', {}, 'Window', span), h('label', {}, 'State', state), h('label', {}, 'Site', site)), out);
    async function load() {
      const now = Date.now();
      const r = await api('/incidents?' + q({ fromtime: now - Number(span.value) * 3600 * 1000, totime: now, state: state.value, locationid: site.value, offset: st.offset, limit: st.limit }));
      let list = r.incidents;
      // An incident linked to from elsewhere is shown even when older than the window.
      if (st.focus !== null && !list.some((i) => i.id === st.focus)) {
        try {
          list = [await api(`/incidents/${st.focus}`), ...list];
        } catch (e) {
          if (e.status !== 404) throw e;
        }
      }
      if (!v.live()) return;
      const largest = Math.max(1, ...list.map(incidentAffected));
      out.replaceChildren(...(list.length ? list.map((i) => incidentCard(i, largest, v)) : [h('p', { class: 'mut none' }, 'No incidents in this window.')]),
        pager(st.offset, st.limit, r.totalCount, (o) => { st.offset = o; st.focus = null; load(); }));
      if (st.focus !== null) {
        const el = document.getElementById(`incident-${st.focus}`);
        if (el) { el.classList.add('focus'); el.scrollIntoView({ block: 'nearest' }); }
      }
      v.status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    }
    // A refresh keeps what is being acknowledged: it redraws only when no
    // button is waiting on the server.
    v.refresh = async () => { if (!out.querySelector('button.ack[disabled]')) await load(); };
    await load();
  }

  // ---- settings ----------------------------------------------------------
  // The locations the caller sees, by path, for the pickers of new things.
  const visibleLocations = () => [...S.locs.values()].filter((l) => l.accessible && !l.unknown).sort((a, b) => locPath(a.id).localeCompare(locPath(b.id)));

  // ---- documents as forms --------------------------------------------------
  // docForm shows a JSON document of the API (the SNMP and hotspot
  // policies, a test profile, the data sources) as labelled fields, so
  // that nobody edits JSON: a boolean is a check box, a field of a fixed
  // set of values a list to choose from, a secret a password field (the
  // mask "********" sent back keeps the stored secret), a list of names
  // one name a line, a list of objects entries to add and remove, a
  // location the caller's locations. Fields it does not show (the
  // document's type, ids) are sent back as they came. The server checks
  // every field again; its error names the field.
  const SNMP_AUTH = ['NONE', 'MD5', 'SHA', 'SHA224', 'SHA256', 'SHA384', 'SHA512'];
  const SNMP_PRIV = ['NONE', 'DES', 'AES', 'AES192', 'AES256'];
  const FIELDS = {
    snmpIntegrationEnabled: { label: 'Send SNMP traps' }, trapEnabled: { label: 'Traps allowed' }, getEnabled: { label: 'Queries (GET) allowed' },
    versionOneTwoSettings: { label: 'SNMP v1 and v2c' }, versionThreeSettings: { label: 'SNMPv3 (USM)' }, enableGets: { label: 'Answer queries' },
    authenticationProtocol: { options: SNMP_AUTH }, authenticationType: { label: 'Authentication protocol', options: SNMP_AUTH },
    privacyProtocol: { options: SNMP_PRIV }, protocolVersion: { label: 'SNMP version', options: ['V1', 'V2C', 'V3'] },
    engineId: { label: 'Engine ID (hex)' }, snmpMib: { label: 'MIBs the agent answers' }, snmpMibII: { label: 'MIB-II system group' },
    vendorEnabled: { label: 'Traps to external receivers' }, mibIIEnabled: { label: 'MIB-II' }, hostResourcesMibEnabled: { label: 'Host resources MIB' },
    interfaceMibEnabled: { label: 'Interfaces MIB' }, snmpServerlist: { label: 'Trap receivers', item: 'Receiver' },
    destIpAddress: { label: 'Receiver address' }, enableTraps: { label: 'Send traps to it' },
    ssids: { label: 'Hotspot SSIDs, one a line' },
    templateName: { label: 'Name' }, ssid: { label: 'SSID' },
    frequencyBand: { label: 'Band', options: [['BAND_2_4_GHZ', '2.4 GHz'], ['BAND_5_GHZ', '5 GHz'], ['ANY', 'any']] },
    securityMode: { label: 'Security', options: [[0, 'open'], [1, 'WEP'], [3, 'WPA2'], [4, 'WPA/WPA2'], [5, 'OSEN']] },
    securityType: { label: 'Authentication', options: [[0, 'PSK (passphrase)'], [1, 'EAP (user name and password)']] },
    pingDestinationServers: { label: 'Ping destinations, one a line' }, wanTestUrl: { label: 'WAN test URL' },
    sources: { label: 'Sources (APs, controllers, DHCP servers)', item: 'Source' }, cidr: { label: 'Address or prefix' },
    radiusSecret: { label: 'RADIUS secret (empty: no RADIUS)' }, syslog: { label: 'Take its syslog' },
    radius: { label: 'RADIUS servers' }, upstreams: { label: 'Upstreams', item: 'Upstream' },
    accountingUpstreams: { label: 'Accounting upstreams', item: 'Upstream' }, timeoutMs: { label: 'Timeout (ms, 0: 3000)' },
    pollers: { label: 'AP pollers', item: 'Poller' }, kind: { options: [['ubus', 'OpenWrt (ubus)'], ['prometheus', 'Prometheus exporter']] },
    url: { label: 'URL' }, tlsFingerprint: { label: 'TLS certificate SHA-256 (self-signed)' }, intervalSeconds: { label: 'Every (s)' },
    locationId: { label: 'Location' },
  };
  const HIDDEN = new Set(['policyType', 'policyCreatedAtLocId', 'type', 'templateId', 'templateType', 'createdAtLocationId', 'mncTemplateId', 'mnctemplate']);
  const SECRET = /password|passphrase|secret|communitystring/i;
  const WORDS = { snmp: 'SNMP', ip: 'IP', ssid: 'SSID', mib: 'MIB', ii: 'II', url: 'URL', id: 'ID', tls: 'TLS', radius: 'RADIUS' };
  const fieldWords = (key) => {
    const w = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').toLowerCase().split(/\s+/).map((x) => WORDS[x] || x).join(' ');
    return w.charAt(0).toUpperCase() + w.slice(1);
  };
  // items are the new entries of the lists of objects, by key: a
  // function that makes one.
  function docForm(prefix, doc, { readOnly = false, items = {} } = {}) {
    const ro = readOnly;
    const fid = (path) => `${prefix}-${path.join('-')}`;
    function field(key, val, path) {
      const f = FIELDS[key] || {}, label = f.label || fieldWords(key), id = fid(path);
      if (HIDDEN.has(key)) return { el: null, get: () => val };
      if (key === 'locationId' && val && typeof val === 'object') {
        const sel = h('select', { id, disabled: ro }, visibleLocations().map((l) => h('option', { value: l.id, selected: l.id === val.id }, locPath(l.id))));
        return { el: h('label', {}, label, sel), get: () => ({ ...val, id: Number(sel.value) }) };
      }
      if (f.options) {
        const opts = f.options.map((o) => (Array.isArray(o) ? o : [o, o]));
        const sel = h('select', { id, disabled: ro }, opts.map(([v, text]) => h('option', { value: v, selected: v === val }, text)));
        return { el: h('label', {}, label, sel), get: () => (typeof opts[0][0] === 'number' ? Number(sel.value) : sel.value) };
      }
      if (typeof val === 'boolean') {
        const box = h('input', { id, type: 'checkbox', checked: val, disabled: ro });
        return { el: h('label', { class: 'check' }, box, label), get: () => box.checked };
      }
      if (typeof val === 'number') {
        const inp = h('input', { id, type: 'number', value: val, readonly: ro, step: 'any' });
        return { el: h('label', {}, label, inp), get: () => (inp.value === '' ? 0 : Number(inp.value)) };
      }
      if (items[key] && (Array.isArray(val) || val === null)) return list(key, val || [], path, label);
      if (Array.isArray(val)) {
        const area = h('textarea', { id, rows: Math.min(8, val.length + 2), readonly: ro, spellcheck: 'false', class: 'names' });
        area.value = val.join('\n');
        return { el: h('label', {}, label, area), get: () => area.value.split('\n').map((x) => x.trim()).filter(Boolean) };
      }
      if (val && typeof val === 'object') {
        const g = group(val, path);
        return { el: h('fieldset', { id }, h('legend', {}, label), g.els), get: g.get };
      }
      const secret = SECRET.test(key);
      const inp = h('input', { id, type: secret ? 'password' : 'text', readonly: ro, autocomplete: secret ? 'new-password' : 'off' });
      inp.value = val ?? '';
      return { el: h('label', {}, label, inp), get: () => (val === null && inp.value === '' ? null : inp.value) };
    }
    function group(obj, path) {
      const parts = Object.entries(obj).map(([k, v]) => [k, field(k, v, path.concat(k))]);
      return { els: parts.map(([, p]) => p.el), get: () => Object.fromEntries(parts.map(([k, p]) => [k, p.get()])) };
    }
    function list(key, val, path, label) {
      const box = h('div', { class: 'items' }), rows = [];
      let n = 0;
      const add = (item) => {
        const g = group(item, path.concat(String(n++)));
        const row = { g, fs: h('fieldset', { class: 'item' }, h('legend', {}, (FIELDS[key] && FIELDS[key].item) || 'Entry'), g.els) };
        if (!ro) row.fs.append(h('button', { type: 'button', class: 'danger edit', onclick: () => { rows.splice(rows.indexOf(row), 1); row.fs.remove(); } }, 'Remove'));
        rows.push(row);
        box.append(row.fs);
      };
      val.forEach(add);
      const more = ro ? null : h('button', { type: 'button', class: 'edit', id: fid(path) + '-add', onclick: () => add(items[key]()) },
        `Add ${((FIELDS[key] && FIELDS[key].item) || 'entry').toLowerCase()}`);
      return { el: h('fieldset', { id: fid(path) }, h('legend', {}, label), box, more), get: () => rows.map((r) => r.g.get()) };
    }
    const root = group(doc, []);
    return { el: h('div', { class: 'doc' }, root.els), get: root.get };
  }
  // The new entries of the lists of the documents above.
  const firstLocation = () => ({ type: 'locallocationid', id: (visibleLocations()[0] || { id: 0 }).id });
  const NEW_ITEMS = {
    snmpServerlist: () => ({ enableTraps: true, trapPort: 162, protocolVersion: 'V2C', userName: '', authenticationPassword: '', privacyPassword: '',
      authenticationType: 'NONE', privacyProtocol: 'NONE', destIpAddress: '' }),
    sources: () => ({ name: '', cidr: '', radiusSecret: '', requireMessageAuthenticator: true, locationId: firstLocation(), syslog: true }),
    upstreams: () => ({ address: '', secret: '', timeoutMs: 3000 }),
    accountingUpstreams: () => ({ address: '', secret: '', timeoutMs: 3000 }),
    pollers: () => ({ name: '', kind: 'ubus', url: '', username: '', password: '', tlsFingerprint: '', locationId: firstLocation(), intervalSeconds: 30 }),
  };

  // docEditor is a document of path as a form, saved with PUT where the
  // role allows (the same rule the server applies). A refresh (anyone's
  // change, through the event stream) shows the stored document again,
  // unless the form has changes not saved yet.
  function docEditor(id, title, path, canEdit, help) {
    const msg = h('p', { role: 'status', class: 'mut', id: id + '-msg' });
    const body = h('div', { id });
    let form = null, shown = '';
    const show = (doc) => {
      form = docForm(id, doc, { readOnly: !canEdit, items: NEW_ITEMS });
      body.replaceChildren(form.el);
      shown = JSON.stringify(form.get());
    };
    // The form holds changes not saved while what it would send differs
    // from what it showed.
    const dirty = () => form && JSON.stringify(form.get()) !== shown;
    const section = h('section', { class: 'card', 'aria-labelledby': id + '-title' }, h('h2', { id: id + '-title' }, title),
      help ? h('p', { class: 'mut' }, help) : null, body, msg);
    if (canEdit) {
      section.append(h('button', {
        type: 'button', class: 'primary edit', id: id + '-save', onclick: async () => {
          try {
            const saved = await api(path, { method: 'PUT', body: form.get() });
            if (saved && typeof saved === 'object') show(saved);
            else shown = JSON.stringify(form.get());
            msg.textContent = 'Saved.';
          } catch (e) {
            msg.textContent = `Not saved: ${e.message}`;
          }
        },
      }, 'Save'));
    }
    const load = async () => {
      if (dirty()) return; // never overwrite what is being typed
      const doc = await api(path);
      if (changed(body, doc) || !form) show(doc);
    };
    return { section, load };
  }
  // confirmButton asks once more before it acts.
  function confirmButton(label, act) {
    const b = h('button', { type: 'button', class: 'danger edit' }, label);
    b.addEventListener('click', async () => {
      if (b.dataset.armed !== '1') {
        b.dataset.armed = '1';
        b.textContent = `Confirm: ${label.toLowerCase()}`;
        return;
      }
      b.disabled = true;
      try {
        await act();
      } catch (e) {
        b.disabled = false;
        b.textContent = `${label} failed: ${e.message}`;
      }
    });
    return b;
  }

  // newUserForm adds a user of a role up to the caller's own, at one of
  // the locations the caller sees (the server checks both again).
  function newUserForm(done) {
    const msg = h('p', { role: 'status', class: 'mut' });
    const roles = Object.keys(ROLES).filter((r) => ROLES[r] <= role());
    const locs = visibleLocations();
    const field = (label, el) => h('label', {}, label, el);
    const login = h('input', { id: 'new-user-login', required: true, autocomplete: 'off' });
    const roleIn = h('select', { id: 'new-user-role' }, roles.map((r) => h('option', { value: r, selected: r === 'VIEWER' }, r)));
    const type = h('select', { id: 'new-user-type' }, h('option', { value: 'LOCAL' }, 'LOCAL (password)'), h('option', { value: 'API' }, 'API (keys)'));
    const pw = h('input', { id: 'new-user-password', type: 'password', autocomplete: 'new-password' });
    const loc = h('select', { id: 'new-user-location' }, locs.map((l) => h('option', { value: l.id }, locPath(l.id))));
    const form = h('form', {
      class: 'row', onsubmit: async (e) => {
        e.preventDefault();
        const user = { loginId: login.value.trim(), role: roleIn.value, userType: type.value, allowedLocations: [{ type: 'locallocationid', id: Number(loc.value) }] };
        try {
          await api('/users', { method: 'PUT', body: { user, password: type.value === 'LOCAL' ? pw.value : undefined } });
          msg.textContent = `Added ${user.loginId}.`;
          form.reset();
          await done();
        } catch (err) {
          msg.textContent = `Not added: ${err.message}`;
        }
      },
    }, field('Login ID', login), field('Role', roleIn), field('Type', type), field('Password (LOCAL)', pw), field('Location', loc),
    h('button', { type: 'submit', class: 'primary edit' }, 'Add user'));
    return h('section', { class: 'card', 'aria-labelledby': 'new-user-title' }, h('h2', { id: 'new-user-title' }, 'Add a user'), form, msg);
  }

  // dataSourcesCard is the data sources' live status (sources, RADIUS
  // upstreams, pollers, as GET /datasources/status says) and a form that
  // adds an AP poller or removes one (the configuration's other parts
  // stay as they are: GET, change the pollers, PUT; masked secrets sent
  // back keep the stored ones).
  function dataSourcesCard() {
    const card = h('section', { class: 'card', 'aria-labelledby': 'ds-title' });
    const status = h('div', {}), msg = h('p', { role: 'status', class: 'mut' });
    const field = (label, el) => h('label', {}, label, el);
    const name = h('input', { id: 'poller-name', required: true, autocomplete: 'off', placeholder: 'lobby AP' });
    const kind = h('select', { id: 'poller-kind' }, h('option', { value: 'ubus' }, 'OpenWrt (ubus)'), h('option', { value: 'prometheus' }, 'Prometheus exporter'));
    const url = h('input', { id: 'poller-url', required: true, type: 'url', placeholder: 'http://10.1.0.21/ubus', size: 32 });
    const user = h('input', { id: 'poller-username', autocomplete: 'off', placeholder: 'wnms' });
    const pw = h('input', { id: 'poller-password', type: 'password', autocomplete: 'new-password' });
    const loc = h('select', { id: 'poller-location' }, visibleLocations().map((l) => h('option', { value: l.id }, locPath(l.id))));
    const change = async (edit, said) => {
      const d = await api('/datasources');
      edit(d);
      await api('/datasources', { method: 'PUT', body: d });
      msg.textContent = said;
      await card.load();
    };
    const form = h('form', {
      class: 'row', onsubmit: async (e) => {
        e.preventDefault();
        const p = { name: name.value.trim(), kind: kind.value, url: url.value.trim(), username: user.value.trim(), password: pw.value,
          locationId: { type: 'locallocationid', id: Number(loc.value) } };
        try {
          await change((d) => { d.pollers = (d.pollers || []).concat([p]); }, `Added ${p.name}: it is polled within seconds.`);
          form.reset();
        } catch (err) {
          msg.textContent = `Not added: ${err.message}`;
        }
      },
    }, field('Name', name), field('Kind', kind), field('URL', url), field('User', user), field('Password', pw), field('Location', loc),
    h('button', { type: 'submit', class: 'primary edit' }, 'Add poller'));
    const state = (x) => h('span', { class: x === 'up' ? 'chip okc' : x === 'down' ? 'chip bad' : 'chip' }, x);
    card.load = async () => {
      const st = await api('/datasources/status');
      if (!changed(status, st)) return; // a Remove being confirmed stays armed
      status.replaceChildren(
        h('h3', {}, 'Pollers'), h('div', { class: 'scroll' }, table([
          { title: 'Name', get: (p) => p.name },
          { title: 'Kind', get: (p) => p.kind },
          { title: 'State', get: (p) => state(p.state) },
          { title: 'Last poll', get: (p) => (p.lastPoll ? fmtTime(p.lastPoll) : '—') },
          { title: 'Radios', get: (p) => String(p.radios) },
          { title: 'Clients', get: (p) => String(p.clients) },
          { title: 'Why not up', get: (p) => p.lastError || '' },
          { title: '', get: (p) => confirmButton('Remove', () => change((d) => { d.pollers = d.pollers.filter((x) => x.name !== p.name); }, `Removed ${p.name}.`)) },
        ], st.pollers || [], { label: 'Pollers', empty: 'No poller: add an OpenWrt AP or a Prometheus exporter below.' })),
        h('h3', {}, 'RADIUS and syslog sources'), h('div', { class: 'scroll' }, table([
          { title: 'Name', get: (x) => x.name },
          { title: 'State', get: (x) => state(x.state) },
          { title: 'Last packet', get: (x) => (x.lastPacket ? fmtTime(x.lastPacket) : '—') },
          { title: 'Accepted', get: (x) => String(x.counts.accepted ?? 0) },
          { title: 'Rejected', get: (x) => String(x.counts.rejected ?? 0) },
          { title: 'No AP matched', get: (x) => String(x.unmatched.length) },
        ], st.sources, { label: 'Sources', empty: 'No source.' })),
        h('h3', {}, 'RADIUS upstreams'), h('div', { class: 'scroll' }, table([
          { title: 'Address', get: (x) => x.address },
          { title: 'Kind', get: (x) => x.kind },
          { title: 'State', get: (x) => state(x.state) },
        ], st.upstreams, { label: 'Upstreams', empty: 'No upstream (or not yours to see).' })));
    };
    card.append(h('h2', { id: 'ds-title' }, 'Data sources: live status'), status, h('h3', {}, 'Add an AP poller'),
      h('p', { class: 'mut' }, 'OpenWrt: its rpcd JSON-RPC URL and a read-only login (docs/datasources.md, "ubus"); a Prometheus exporter: its /metrics URL.'), form, msg);
    return card;
  }

  // userEditor changes a user's role and locations, and (ADMINISTRATOR
  // and up) locks or unlocks it: POST /users with only what changes.
  // open(u) shows it for user u; it stays open across refreshes.
  function userEditor(done) {
    const card = h('section', { class: 'card', 'aria-labelledby': 'edit-user-title', hidden: true });
    const msg = h('p', { role: 'status', class: 'mut' });
    card.open = (u) => {
      card.userId = u.userId;
      const roles = Object.keys(ROLES).filter((r) => ROLES[r] <= role());
      const roleIn = h('select', { id: 'edit-user-role' }, roles.map((r) => h('option', { value: r, selected: r === u.role }, r)));
      const mine = new Set((u.allowedLocations || []).map((l) => l.id));
      const locs = h('select', { id: 'edit-user-locations', multiple: true, size: 6 },
        visibleLocations().map((l) => h('option', { value: l.id, selected: mine.has(l.id) }, locPath(l.id))));
      const change = async (user, said) => {
        try {
          await api('/users', { method: 'POST', body: { user: { userId: u.userId, ...user } } });
          await done();
          const fresh = (await api('/users')).find((x) => x.userId === u.userId);
          if (fresh) card.open(fresh); // as it is now: its role, locations and lock
          msg.textContent = said;
        } catch (err) {
          msg.textContent = `Not changed: ${err.message}`;
        }
      };
      const form = h('form', {
        class: 'row', onsubmit: (e) => {
          e.preventDefault();
          const chosen = [...locs.selectedOptions].map((o) => ({ type: 'locallocationid', id: Number(o.value) }));
          if (!chosen.length) {
            msg.textContent = 'Choose at least one location.';
            return;
          }
          change({ role: roleIn.value, allowedLocations: chosen }, `Changed ${u.loginId}.`);
        },
      }, h('label', {}, 'Role', roleIn), h('label', {}, 'Locations (one or more)', locs), h('button', { type: 'submit', class: 'primary edit' }, 'Save'));
      const locked = u.userLockedState === 'USER_LOCKED';
      const lock = canAdminister() ? h('button', {
        type: 'button', class: 'edit', id: 'edit-user-lock',
        onclick: () => change({ userLockedState: locked ? 'NOT_LOCKED' : 'USER_LOCKED' }, locked ? `Unlocked ${u.loginId}.` : `Locked ${u.loginId}: its sessions are ended.`),
      }, locked ? 'Unlock' : 'Lock') : null;
      msg.textContent = '';
      card.replaceChildren(h('h2', { id: 'edit-user-title' }, `Change ${u.loginId}`), form,
        h('div', { class: 'row' }, lock, h('button', { type: 'button', onclick: () => { card.hidden = true; } }, 'Close')), msg);
      card.hidden = false;
      roleIn.focus();
    };
    return card;
  }

  // profileCard creates a client connection test profile (docs/api.md
  // §10) at a location the caller sees, or changes one (open(id)): the
  // profile as a form; its passphrase and passwords masked.
  function profileCard(done) {
    const msg = h('p', { role: 'status', class: 'mut', id: 'profile-msg' });
    const title = h('h2', { id: 'profile-title' });
    const where = h('div', { class: 'row' }), body = h('div', {}), buttons = h('div', { class: 'row' });
    const card = h('section', { class: 'card', 'aria-labelledby': 'profile-title' }, title, where, body, buttons, msg);
    // Optional fields left empty are not sent: the server asks for each
    // where the security chosen needs it.
    const trim = (p) => {
      for (const k of ['passphrase', 'username', 'password', 'wanTestUrl', 'description']) if (p[k] === '' || p[k] === null) delete p[k];
      return p;
    };
    const blank = () => ({ type: 'clientconntestprofile', templateName: '', description: '', ssid: '', frequencyBand: 'BAND_5_GHZ',
      securityMode: 3, securityType: 0, passphrase: '', username: '', password: '', pingTestEnabled: true, pingDestinationServers: [], wanTestUrl: '' });
    const show = (doc, editing) => {
      const form = docForm('profile', doc, {});
      body.replaceChildren(form.el);
      title.textContent = editing ? `Change ${doc.templateName}` : 'New client connection test profile';
      const loc = h('select', { id: 'profile-location' }, visibleLocations().map((l) => h('option', { value: l.id }, locPath(l.id))));
      where.replaceChildren(editing ? h('p', { class: 'mut' }, `At ${locPath(doc.createdAtLocationId ? doc.createdAtLocationId.id : 0)}.`) : h('label', {}, 'Location', loc));
      const save = h('button', {
        type: 'button', class: 'primary edit', id: 'profile-save', onclick: async () => {
          const p = trim(form.get());
          try {
            if (editing) await api('/templates', { method: 'POST', body: p });
            else await api('/templates?' + q({ locationid: loc.value }), { method: 'PUT', body: p });
            msg.textContent = editing ? `Changed ${p.templateName}.` : `Created ${p.templateName}.`;
            show(blank(), false);
            await done();
          } catch (e) {
            msg.textContent = `Not saved: ${e.message}`;
          }
        },
      }, editing ? 'Save profile' : 'Create profile');
      buttons.replaceChildren(save);
      if (editing) buttons.append(h('button', { type: 'button', onclick: () => { show(blank(), false); msg.textContent = ''; } }, 'Cancel'));
    };
    card.open = async (id) => {
      show(await api(`/templates/${id}/CL_CONN_TEST_PROFILE`), true);
      card.scrollIntoView({ block: 'nearest' });
    };
    show(blank(), false);
    return card;
  }

  async function settingsView(main, _arg, v) {
    main.append(h('h1', {}, 'Settings'));
    if (isViewer()) main.append(h('p', { class: 'mut' }, 'Your role (VIEWER) reads the settings; it does not change them.'));
    const parts = [
      docEditor('snmp', 'SNMP', '/configuration/global/snmp', canAdminister(), 'Trap receivers, and the versions and credentials the SNMP agent answers.'),
      docEditor('hotspot', 'Hotspot SSIDs', '/configuration/global/hotspotssid', !isViewer(),
        'Kept for the tools that read it: wnms configures no AP, so nothing here changes what the APs broadcast.'),
    ];
    let ds = null;
    if (canAdminister()) {
      ds = dataSourcesCard();
      main.append(ds);
      parts.push(docEditor('datasources', 'Data sources: the whole configuration', '/datasources', true,
        'RADIUS servers, the sources whose RADIUS and syslog wnms takes, and the AP pollers. Secrets are shown masked; a masked secret left as it is keeps the stored one.'));
    }
    for (const p of parts) main.append(p.section);
    const users = h('section', { class: 'card', 'aria-label': 'Users' });
    const userForm = canOperate() ? newUserForm(() => v.refresh()) : null;
    const shown = h('div', { role: 'status' }); // a new key's value, shown once
    const editor = canOperate() ? userEditor(() => v.refresh()) : null;
    const profiles = h('section', { class: 'card', 'aria-label': 'Client connection test profiles' });
    const profileForm = canOperate() ? profileCard(() => v.refresh()) : null;
    const keys = h('section', { class: 'card', 'aria-label': 'API keys' });
    if (userForm) main.append(userForm);
    main.append(shown, users);
    if (editor) main.append(editor);
    main.append(profiles);
    if (profileForm) main.append(profileForm);
    if (canAdminister()) main.append(keys);
    const hooks = canAdminister() ? webhooksCard(v) : null;
    if (hooks) main.append(hooks, h('p', {}, link('#/audit', 'The audit log: who changed what, and when')));
    const myRole = role();
    v.refresh = async () => {
      await Promise.all(parts.map((p) => p.load()).concat(hooks ? [hooks.load()] : [], ds ? [ds.load()] : []));
      const [us, ps, ks] = await Promise.all([
        api('/users'), api('/templates/CL_CONN_TEST_PROFILE?' + q({ minimalinforequired: true, fetchSubTreeTemplates: true, locationid: home() })), canAdminister() ? api('/apikeys') : null,
      ]);
      if (!v.live()) return;
      if (editor && !editor.hidden && !us.some((u) => u.userId === editor.userId)) editor.hidden = true; // deleted meanwhile
      if (changed(users, us)) users.replaceChildren(h('h2', {}, 'Users'), h('div', { class: 'scroll' }, table([
        { title: 'Login', get: (u) => u.loginId },
        { title: 'Name', get: (u) => [u.firstName, u.lastName].filter(Boolean).join(' ') || '—' },
        { title: 'Role', get: (u) => u.role },
        { title: 'Type', get: (u) => u.userType },
        { title: 'Locations', get: (u) => (u.allowedLocations || []).map((l) => locPath(l.id)).join(', ') },
        { title: 'State', get: (u) => (u.userLockedState === 'USER_LOCKED' ? h('span', { class: 'bad' }, 'Locked') : 'Active') },
        { title: '', get: (u) => [
          canAdminister() && u.userType === 'API' && (ROLES[u.role] || 9) <= myRole ? h('button', {
            type: 'button', class: 'edit', onclick: async () => {
              try {
                const k = await api('/apikeys', { method: 'PUT', body: { userId: u.userId } });
                shown.replaceChildren(h('p', { class: 'card' }, `New key of ${u.loginId}, shown once: key ID `, h('code', {}, k.keyId),
                  ', key value ', h('code', { id: 'new-key-value' }, k.keyValue)));
                await v.refresh();
              } catch (e) {
                shown.replaceChildren(h('p', { class: 'error' }, `No key made: ${e.message}`));
              }
            },
          }, 'New API key') : null,
          canOperate() && u.userId !== S.user.userId && (ROLES[u.role] || 9) <= myRole
            ? h('button', { type: 'button', class: 'edit', onclick: () => editor.open(u) }, 'Change') : null,
          canOperate() && u.userId !== S.user.userId && (ROLES[u.role] || 9) <= myRole
            ? confirmButton('Delete', async () => { await api(`/users/${u.userId}`, { method: 'DELETE' }); await v.refresh(); }) : null] },
      ], us, { label: 'Users' })));
      const list = Array.isArray(ps) ? ps : (ps && ps.templates) || [];
      if (changed(profiles, list)) profiles.replaceChildren(h('h2', {}, 'Client connection test profiles'),
        h('p', { class: 'mut' }, 'Kept for the tools that read them: wnms runs no connection tests itself.'), h('div', { class: 'scroll' }, table([
        { title: 'Name', get: (p) => p.templateName || p.templateId },
        { title: 'Location', get: (p) => (p.createdAtLocationId ? locPath(p.createdAtLocationId.id) : '—') },
        { title: 'Description', get: (p) => p.description || '—' },
        { title: '', get: (p) => (canOperate() ? [h('button', { type: 'button', class: 'edit', onclick: () => profileForm.open(p.templateId) }, 'Change'),
          confirmButton('Delete', async () => { await api(`/templates/${p.templateId}/CL_CONN_TEST_PROFILE`, { method: 'DELETE' }); await v.refresh(); })] : '') },
      ], list, { label: 'Client connection test profiles', empty: 'No profiles.' })));
      if (ks && changed(keys, ks)) {
        keys.replaceChildren(h('h2', {}, 'API keys'), h('div', { class: 'scroll' }, table([
          { title: 'Key ID', get: (k) => k.keyId },
          { title: 'User', get: (k) => k.loginId },
          { title: 'Created', get: (k) => fmtTime(k.createdAt) },
          { title: 'Last used', get: (k) => fmtTime(k.lastUsedAt) },
          { title: '', get: (k) => (k.keyId !== S.user.keyId ? confirmButton('Revoke', async () => { await api(`/apikeys/${encodeURIComponent(k.keyId)}`, { method: 'DELETE' }); await v.refresh(); }) : h('span', { class: 'mut' }, 'this session')) },
        ], ks, { label: 'API keys' })));
      }
    };
    await v.refresh();
  }

  // ---- start -------------------------------------------------------------
  async function start() {
    $('#signout').addEventListener('click', () => { signOut(); });
    window.addEventListener('hashchange', route);
    // A browser gives a server six connections over HTTP/1.1, and the
    // event stream holds one: a hidden tab or a page left behind gives
    // its stream back, and a shown one opens it again and catches up.
    const closeStream = () => {
      if (S.es) S.es.close();
      S.es = null;
      $('#live').classList.remove('on');
    };
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') return closeStream();
      if (S.user && !S.es) openStream();
      refresh();
    });
    window.addEventListener('pagehide', closeStream);
    window.addEventListener('pageshow', (e) => {
      if (e.persisted && S.user && !S.es) {
        openStream();
        refresh();
      }
    });
    // The session cookie is HttpOnly: the page cannot see it. A marker
    // says a sign-in happened here, so a fresh browser goes straight to
    // the sign-in form without a refused request.
    if (localStorage.getItem('wnms.session') === '1') {
      try {
        const u = await api('/users/current', { login: true });
        await signedIn(u);
        return;
      } catch (e) {
        localStorage.removeItem('wnms.session');
      }
    }
    showLogin();
  }
  start();
})();
