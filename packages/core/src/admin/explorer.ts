/**
 * The explorer page served at `GET /` to browsers: one self-contained HTML document
 * (inline style and script, nothing from other hosts) that reads the service's OpenAPI
 * document and runs URIs. The API key the user enters stays in the page's memory.
 */

const STYLE = `
*{box-sizing:border-box}[hidden]{display:none!important}body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1d2330;background:#f6f7f9}
header{display:flex;gap:12px;align-items:center;padding:10px 16px;background:#1d2330;color:#fff}
header h1{font-size:16px;margin:0;flex:1}header input{width:220px}
main{display:grid;grid-template-columns:300px 1fr;gap:16px;padding:16px}
aside{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:8px;max-height:85vh;overflow:auto}
.res{border-bottom:1px solid #eef0f3;padding:6px 4px}.res:last-child{border:0}
.res button.name{font-weight:600;background:none;border:0;padding:0;color:#1b5fc1;cursor:pointer;font-size:14px}
.desc{color:#5b6472;font-size:12px}.methods span{display:inline-block;font-size:10px;background:#e8edf5;border-radius:3px;padding:0 4px;margin:2px 2px 0 0}
.props{font-size:12px;color:#39414f;margin:4px 0 0 0;padding-left:16px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px;min-width:0}
form{display:flex;gap:8px}#uri,#selector{flex:1;font:13px ui-monospace,monospace;padding:6px}
input,select,button{font:inherit;padding:4px 8px}.bar{display:flex;gap:8px;align-items:center;margin:10px 0}
#status{color:#5b6472;flex:1}#embed label{white-space:nowrap}#error{color:#a31515;margin:8px 0}#error:empty{display:none}
.table{overflow:auto;max-height:65vh}table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #e3e6eb;padding:3px 6px;text-align:left;vertical-align:top;white-space:nowrap;max-width:320px;overflow:hidden;text-overflow:ellipsis}
th{background:#f0f2f5;position:sticky;top:0}
h2{font-size:14px;margin:16px 0 8px}#live-status{color:#5b6472;margin:6px 0}
#events td.data{white-space:normal;max-width:none;font:12px ui-monospace,monospace}
`;

const SCRIPT = `
(function () {
  var base = BASE;
  var key = '';
  var state = { uri: '/', offset: 0, size: 25 };
  // Binary resources by lower-case name: they take no paging and answer bytes (docs/binary-resources.md).
  var binary = {};
  // The relations embed can use, by lower-case resource name: x-resources' embed, which lists
  // only relations to resources this key may GET (docs/openapi.md#relations).
  var relations = {};
  // Chromium sends '|' in a path as %7C, which the service reads as a literal '|' inside a
  // value; the URI as typed goes along in X-Resourcery-Uri, so an OR typed here is run as OR
  // (docs/explorer.md#or-conditions).
  var pipeEncoded = new URL('/a|b', location.href).pathname.indexOf('|') < 0;
  var $ = function (id) { return document.getElementById(id); };

  function headers(accept) {
    var h = { Accept: accept, 'X-Requested-With': 'XMLHttpRequest' };
    if (key) h.Authorization = 'apikey ' + key;
    return h;
  }
  // Requests go to this page's own origin only: a URI typed as //host/... or @host would
  // otherwise send the API key to another host (docs/explorer.md).
  // more: { lastEventId, signal } for a stream.
  function request(uri, accept, more) {
    var url = new URL(base + uri, location.href);
    if (url.origin !== location.origin) {
      var refused = new Error('the explorer sends requests only to its own origin, ' + location.origin + ', not to ' + url.origin);
      refused.final = true;
      return Promise.reject(refused);
    }
    var h = headers(accept);
    var typed = typedUri(uri, url);
    if (typed) h['X-Resourcery-Uri'] = typed;
    if (more && more.lastEventId !== undefined) h['Last-Event-ID'] = more.lastEventId;
    return fetch(url.href, { headers: h, redirect: 'error', signal: more && more.signal });
  }
  // The URI as sent (below the base) with each '|' typed put back where the browser wrote
  // %7C; a '%7C' typed as such stays. Undefined when the browser sends '|' as it is.
  function typedUri(uri, url) {
    if (!pipeEncoded || uri.indexOf('|') < 0) return undefined;
    var mark = 'PIPE';
    while (uri.indexOf(mark) >= 0) mark += 'X';
    var marked = new URL(base + uri.split('|').join(mark), location.href);
    return marked.pathname.slice(base.length).split(mark).join('|') + url.search;
  }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function cell(v) {
    if (v === null || v === undefined) return '';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
  function parts(uri) {
    var p = uri.replace(/^\\//, '').split('/');
    return { resource: p[0] || '', conditions: p[1] || '_', meta: p[2] && p[2] !== '_' ? p[2] : '' };
  }
  function metaItems(meta) { return meta ? meta.split('&') : []; }
  function isEmbed(item) { return /^embed=/i.test(item); }
  // The relation names of the URI's embed (lower case), and the URI with embed set to names.
  function embedded(uri) {
    var item = metaItems(parts(uri).meta).filter(isEmbed).pop();
    return item ? item.slice(6).split(',').map(function (n) { return n.toLowerCase(); }) : [];
  }
  function withEmbed(uri, names) {
    var p = parts(uri);
    var meta = metaItems(p.meta).filter(function (m) { return !isEmbed(m); });
    if (names.length) meta.push('embed=' + names.join(','));
    if (!meta.length && p.conditions === '_') return '/' + p.resource;
    return '/' + p.resource + '/' + p.conditions + '/' + (meta.length ? meta.join('&') : '_');
  }
  // The relations of the resource (or view: Person-Adults) a URI names.
  function relationsOf(uri) {
    var name = parts(uri).resource.toLowerCase();
    return relations[name] || relations[name.replace(/-[^-]*$/, '')] || [];
  }
  // One checkbox per relation of the resource shown; checking one runs the URI with it in embed.
  function showEmbed() {
    var box = $('embed');
    box.textContent = '';
    var names = relationsOf(state.uri);
    box.hidden = names.length === 0;
    if (!names.length) return;
    box.appendChild(el('span', 'Embed:'));
    var on = embedded(state.uri);
    names.forEach(function (n) {
      var label = el('label');
      var check = el('input');
      check.type = 'checkbox';
      check.value = n;
      check.checked = on.indexOf(n.toLowerCase()) >= 0;
      check.onchange = function () {
        var chosen = [].slice.call(box.querySelectorAll('input:checked')).map(function (i) { return i.value; });
        go(withEmbed(state.uri, chosen));
      };
      label.appendChild(check);
      label.appendChild(document.createTextNode(' ' + n));
      box.appendChild(label);
    });
  }

  function pagedUri() {
    var p = parts(state.uri);
    if (p.resource === '' || binary[p.resource.toLowerCase()] || /(^|&)(limit|offset)=/i.test(p.meta)) return { uri: state.uri, paged: false };
    var meta = (p.meta ? p.meta + '&' : '') + 'offset=' + state.offset + '&limit=' + (state.size + 1);
    return { uri: '/' + p.resource + '/' + p.conditions + '/' + meta, paged: true };
  }

  function showError(body, status) {
    var box = $('error');
    box.textContent = '';
    box.appendChild(el('strong', (body && body.ErrorCode) || ('HTTP ' + status)));
    box.appendChild(document.createTextNode(': ' + ((body && body.Message) || '')));
    if (body && body.MoreInfoAt) {
      var a = el('a', 'Error record');
      a.href = '#';
      a.id = 'error-record';
      var uri = body.MoreInfoAt.slice(base.length);
      a.onclick = function (e) { e.preventDefault(); go(uri); };
      box.appendChild(document.createTextNode(' '));
      box.appendChild(a);
    }
  }

  function render(rows, paged) {
    var table = $('rows');
    table.textContent = '';
    var shown = paged ? rows.slice(0, state.size) : rows;
    var cols = [];
    shown.forEach(function (r) { Object.keys(r).forEach(function (k) { if (cols.indexOf(k) < 0) cols.push(k); }); });
    var head = el('tr');
    cols.forEach(function (c) { head.appendChild(el('th', c)); });
    table.appendChild(head);
    shown.forEach(function (r) {
      var tr = el('tr');
      cols.forEach(function (c) { var td = el('td', cell(r[c])); td.title = cell(r[c]); tr.appendChild(td); });
      table.appendChild(tr);
    });
    var first = shown.length ? state.offset + 1 : 0;
    $('status').textContent = shown.length ? 'Rows ' + first + '-' + (state.offset + shown.length) : 'No entities';
    $('prev').disabled = !paged || state.offset === 0;
    $('next').disabled = !paged || rows.length <= state.size;
  }

  function run() {
    $('error').textContent = '';
    $('status').textContent = 'Loading...';
    var q = pagedUri();
    return request(q.uri, 'application/json').then(function (res) {
      if (res.status === 204) return render([], q.paged);
      var type = res.headers.get('content-type') || '';
      if (res.ok && !/json/i.test(type)) return res.blob().then(function (blob) { render([], false); showBytes(blob, type, q.uri); });
      return res.json().then(function (body) {
        if (!res.ok) { $('status').textContent = ''; render([], false); $('status').textContent = 'Failed'; return showError(body, res.status); }
        var rows = Array.isArray(body.Data) ? body.Data : [body];
        render(rows.map(function (r) { return r && typeof r === 'object' ? r : { Value: r }; }), q.paged);
      });
    }).catch(function (e) { $('status').textContent = 'Failed: ' + e.message; });
  }

  /** A binary resource's answer: a link to save it, and the picture itself when it is one. */
  function showBytes(blob, type, uri) {
    var status = $('status');
    status.textContent = '';
    var a = el('a', 'Save ' + type + ' (' + blob.size + ' bytes)');
    a.href = URL.createObjectURL(blob);
    a.download = parts(uri).resource || 'download';
    status.appendChild(a);
    if (/^image[/]/i.test(type)) {
      var img = el('img');
      img.src = a.href;
      img.alt = uri;
      var row = el('tr');
      var td = el('td');
      td.appendChild(img);
      row.appendChild(td);
      $('rows').appendChild(row);
    }
  }

  function go(uri) {
    state.uri = uri || '/';
    state.offset = 0;
    $('uri').value = state.uri;
    showEmbed();
    return run();
  }

  function download(accept) {
    $('error').textContent = '';
    return request(state.uri, accept).then(function (res) {
      if (!res.ok) return res.json().then(function (b) { showError(b, res.status); });
      var disposition = res.headers.get('content-disposition') || '';
      var m = /filename="([^"]+)"/.exec(disposition);
      var name = m ? m[1] : 'result';
      return res.blob().then(function (blob) {
        var a = el('a');
        a.href = URL.createObjectURL(blob);
        a.download = name;
        document.body.appendChild(a);
        a.click();
        a.remove();
        $('status').textContent = 'Downloaded ' + name + ' (' + blob.size + ' bytes)';
      });
    }).catch(function (e) { $('status').textContent = 'Failed: ' + e.message; });
  }

  function typeOf(s) {
    if (!s) return 'any';
    if (s.type) return Array.isArray(s.type) ? s.type.join('|') : s.type;
    return s.$ref ? s.$ref.split('/').pop() : 'any';
  }

  function loadResources() {
    var list = $('resources');
    return request('/', 'application/vnd.oai.openapi+json').then(function (res) {
      return res.json().then(function (doc) {
        list.textContent = '';
        if (!res.ok) { showError(doc, res.status); list.appendChild(el('p', 'Enter an API key to list the resources.', 'desc')); return; }
        relations = {};
        // The application's resources first, the built-in Service.* ones after them.
        var builtIn = function (r) { return r.name.indexOf('Service.') === 0 ? 1 : 0; };
        doc['x-resources'].slice().sort(function (a, b) { return builtIn(a) - builtIn(b); }).forEach(function (r) {
          if (r.kind === 'BinaryResource') binary[r.name.toLowerCase()] = true;
          if (r.embed && r.embed.length) relations[r.name.toLowerCase()] = r.embed;
          var box = el('div', undefined, 'res');
          var name = el('button', r.name, 'name');
          name.type = 'button';
          name.onclick = function () { if (r.kind === 'EventResource') watch('/' + r.name); else go('/' + r.name); };
          box.appendChild(name);
          if (r.description) box.appendChild(el('div', r.description, 'desc'));
          if (r.contentType) box.appendChild(el('div', r.contentType, 'desc'));
          var methods = el('div', undefined, 'methods');
          (r.kind === 'EventResource' ? ['event'] : r.methods).forEach(function (m) { methods.appendChild(el('span', m)); });
          box.appendChild(methods);
          r.views.forEach(function (v) {
            var b = el('button', '-' + v.name, 'name');
            b.type = 'button';
            b.title = v.description;
            b.onclick = function () { go('/' + r.name + '-' + v.name); };
            box.appendChild(b);
          });
          var schema = r.schema && doc.components.schemas[r.schema.split('/').pop()];
          if (schema && schema.properties) {
            var ul = el('ul', undefined, 'props');
            Object.keys(schema.properties).forEach(function (p) { ul.appendChild(el('li', p + ': ' + typeOf(schema.properties[p]))); });
            box.appendChild(ul);
          }
          list.appendChild(box);
        });
        showEmbed();
      });
    });
  }

  // The live view: a selector's events over fetch (so the key header goes along, which an
  // EventSource cannot send), parsed as Server-Sent Events; the service filters them by the
  // caller's rights and rows as it does every stream. After a stream ends it reconnects
  // with Last-Event-ID, so nothing within the service's retention is missed.
  var live = { controller: null, timer: null };
  var MAX_EVENTS = 200;

  function stopWatching(text) {
    if (live.controller) live.controller.abort();
    clearTimeout(live.timer);
    live.controller = null;
    $('stop').disabled = true;
    if (text !== undefined) $('live-status').textContent = text;
  }

  function addEvent(message) {
    var data = message.data;
    try { data = JSON.stringify(JSON.parse(message.data)); } catch (e) { /* shown as sent */ }
    var tr = el('tr');
    tr.appendChild(el('td', new Date().toLocaleTimeString()));
    tr.appendChild(el('td', message.event || ''));
    tr.appendChild(el('td', message.id || ''));
    tr.appendChild(el('td', data === undefined ? '' : data, 'data'));
    var table = $('events');
    table.insertBefore(tr, table.firstChild);
    while (table.children.length > MAX_EVENTS) table.removeChild(table.lastChild);
    $('live-count').textContent = String(Number($('live-count').textContent) + 1);
  }

  function connect(selector, lastId) {
    var controller = new AbortController();
    live.controller = controller;
    var retry = function (why) {
      if (controller.signal.aborted) return;
      $('live-status').textContent = why + '; reconnecting...';
      live.timer = setTimeout(function () { connect(selector, lastId); }, 1000);
    };
    return request(selector, 'text/event-stream', { lastEventId: lastId, signal: controller.signal }).then(function (res) {
      if (!res.ok) {
        return res.json().then(function (b) { showError(b, res.status); }, function () { showError(null, res.status); }).then(function () {
          if (res.status === 429 || res.status >= 500) return retry('HTTP ' + res.status);
          stopWatching('Refused (HTTP ' + res.status + ')');
        });
      }
      $('live-status').textContent = 'Watching ' + selector;
      var reader = res.body.getReader();
      var decoder = new TextDecoder();
      var buffer = '';
      var message = {};
      var pump = function () {
        return reader.read().then(function (r) {
          if (r.done) return retry('The stream ended');
          buffer += decoder.decode(r.value, { stream: true });
          var m;
          while ((m = /\\r\\n|\\r|\\n/.exec(buffer)) !== null) {
            var line = buffer.slice(0, m.index);
            buffer = buffer.slice(m.index + m[0].length);
            if (line === '') {
              if (message.id !== undefined) lastId = message.id;
              if (message.event === 'reset') addEvent({ event: 'reset', id: message.id, data: 'Events after the last one seen are no longer kept' });
              else if (message.data !== undefined) addEvent(message);
              message = {};
              continue;
            }
            if (line.charAt(0) === ':') continue;
            var colon = line.indexOf(':');
            var field = colon < 0 ? line : line.slice(0, colon);
            var value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'data') message.data = message.data === undefined ? value : message.data + '\\n' + value;
            else if (field === 'id' || field === 'event') message[field] = value;
          }
          return pump();
        });
      };
      return pump();
    }).catch(function (e) {
      if (e.final) stopWatching('Failed: ' + e.message);
      else retry('Failed: ' + e.message);
    });
  }

  function watch(selector) {
    stopWatching();
    selector = selector.trim();
    if (selector.charAt(0) !== '/') selector = '/' + selector;
    $('selector').value = selector;
    $('error').textContent = '';
    $('events').textContent = '';
    $('live-count').textContent = '0';
    $('live-status').textContent = 'Connecting...';
    $('stop').disabled = false;
    return connect(selector, undefined);
  }

  $('query').onsubmit = function (e) { e.preventDefault(); go($('uri').value.trim()); };
  $('prev').onclick = function () { state.offset = Math.max(0, state.offset - state.size); run(); };
  $('next').onclick = function () { state.offset += state.size; run(); };
  $('size').onchange = function () { state.size = Number($('size').value); state.offset = 0; run(); };
  $('excel').onclick = function () { download('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'); };
  $('jsonl').onclick = function () { download('application/jsonlines'); };
  $('keyform').onsubmit = function (e) { e.preventDefault(); key = $('key').value; stopWatching(''); loadResources(); run(); };
  $('liveform').onsubmit = function (e) { e.preventDefault(); watch($('selector').value); };
  $('stop').onclick = function () { stopWatching('Stopped'); };
  loadResources();
  go('/');
})();
`;

/** The page for a service mounted at `basePath` ('' at the root). */
export function explorerPage(basePath: string): string {
  // JSON.stringify quotes the path; `<` is escaped so no value can close the script element.
  const base = JSON.stringify(basePath).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Resourcery explorer</title><style>${STYLE}</style></head>
<body>
<header><h1>Resourcery explorer</h1>
<form id="keyform"><input id="key" type="password" placeholder="API key (kept in this page only)" autocomplete="off"><button>Use key</button></form></header>
<main>
<aside id="resources" aria-label="Resources"></aside>
<section>
<form id="query"><input id="uri" aria-label="URI" spellcheck="false" value="/"><button id="run">Run</button></form>
<div class="bar"><button id="prev" type="button">Previous</button><button id="next" type="button">Next</button>
<select id="size" aria-label="Page size"><option>10</option><option selected>25</option><option>100</option></select>
<span id="status"></span><button id="excel" type="button">Excel</button><button id="jsonl" type="button">JSON Lines</button></div>
<div id="embed" class="bar" hidden></div>
<div id="error" role="alert"></div>
<div class="table"><table id="rows"></table></div>
<h2>Live events (<span id="live-count">0</span>)</h2>
<form id="liveform"><input id="selector" aria-label="Event selector" spellcheck="false" placeholder="/Person.Inserted/Age>=18"><button id="watch">Watch</button><button id="stop" type="button" disabled>Stop</button></form>
<div id="live-status"></div>
<div class="table"><table id="events"></table></div>
</section></main>
<script>${SCRIPT.replace('BASE', () => base)}</script>
</body></html>`;
}
