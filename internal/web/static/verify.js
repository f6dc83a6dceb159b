// Verifies the chosen or dropped PDF with POST /v1/verify and shows the
// answer in place; the form still works without this script.
(function () {
  'use strict';
  var form = document.getElementById('verify-form');
  var input = document.getElementById('file');
  var drop = document.getElementById('drop');
  var out = document.getElementById('result');

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // stamp shows a time in UTC to the minute, or to the second.
  function stamp(s, seconds) {
    if (!s) return 'not stated';
    var d = new Date(s);
    return isNaN(d) ? s : d.toISOString().slice(0, seconds ? 19 : 16).replace('T', ' ') + ' UTC';
  }

  // brief is an event's data as JSON, cut as the server-rendered page cuts it.
  function brief(data) {
    var s = JSON.stringify(data);
    var chars = Array.from(s);
    return chars.length > BRIEF_CHARS ? chars.slice(0, BRIEF_CHARS).join('') + '…' : s;
  }
  var BRIEF_CHARS = 160;

  // audit lists the events the server recorded with the signing.
  function audit(events) {
    var ol = el('ol', 'audit');
    events.forEach(function (e) {
      var li = el('li');
      li.appendChild(el('span', 'audit-type', e.type));
      li.appendChild(document.createTextNode(' '));
      li.appendChild(el('span', 'audit-time', stamp(e.timestamp, true)));
      if (e.data) {
        li.appendChild(document.createTextNode(' '));
        li.appendChild(el('code', '', brief(e.data)));
      }
      ol.appendChild(li);
    });
    return ol;
  }

  function row(dl, term, value, cls) {
    dl.appendChild(el('dt', '', term));
    dl.appendChild(el('dd', cls || '', value));
  }

  function show(res) {
    out.replaceChildren();
    var v = el('div', 'verdict ' + (res.valid ? 'valid' : 'invalid'));
    v.appendChild(el('h2', 'verdict-title', res.valid ? 'Valid: the document is unchanged since it was signed' : 'Not valid'));
    if (res.reason) v.appendChild(el('p', 'reason', res.reason));
    out.appendChild(v);
    (res.signers || []).forEach(function (s, i) {
      var a = el('article', 'card signature');
      a.appendChild(el('h3', '', 'Signature ' + (i + 1) + (s.name ? ': ' + s.name : '')));
      var dl = el('dl');
      row(dl, 'Status', (s.valid ? 'valid' : 'not valid') + (s.reason ? ': ' + s.reason : ''), s.valid ? 'ok' : 'bad');
      row(dl, 'Signer', (s.name || s.commonName || 'unknown') + (s.email ? ' <' + s.email + '>' : ''), 'signer');
      row(dl, 'Signed at', stamp(s.signingTime) + (s.timestampTime ? ' (time-stamped ' + stamp(s.timestampTime) + ')' : ''));
      row(dl, 'Covers the whole document', s.coversWholeDocument ? 'yes' : 'no: content was added after this signature');
      var ours = s.trusted ? 'yes' : !(s.digestValid && s.signatureValid) ? 'not checked: the signature itself does not hold' : 'no';
      row(dl, "This server's certificate", ours + (s.commonName ? ' (' + s.commonName + ')' : ''));
      if (s.eventId) row(dl, 'Signing event', s.eventId, 'event');
      if (s.signerEmail) row(dl, 'Recorded signer', s.signerEmail);
      if (s.recordedAt) row(dl, 'Recorded at', stamp(s.recordedAt));
      if (s.auditTrail && s.auditTrail.length) {
        dl.appendChild(el('dt', '', 'Audit trail'));
        dl.appendChild(el('dd')).appendChild(audit(s.auditTrail));
      }
      a.appendChild(dl);
      out.appendChild(a);
    });
  }

  function fail(text) {
    out.replaceChildren();
    var v = el('div', 'verdict invalid');
    v.setAttribute('role', 'alert');
    v.appendChild(el('h2', '', 'Cannot verify'));
    v.appendChild(el('p', 'reason', text));
    out.appendChild(v);
  }

  function verify() {
    if (!input.files.length) return;
    var body = new FormData();
    body.append('file', input.files[0]);
    out.replaceChildren(el('p', 'busy', 'Checking ' + input.files[0].name + '…'));
    fetch('/v1/verify', { method: 'POST', body: body, credentials: 'omit' })
      .then(function (r) {
        return r.json().then(function (j) { return { ok: r.ok, body: j }; });
      })
      .then(function (r) {
        if (r.ok) show(r.body);
        else fail(r.body.message || 'The server refused the file.');
      })
      .catch(function () { fail('The server could not be reached.'); });
  }

  form.addEventListener('submit', function (e) { e.preventDefault(); verify(); });
  input.addEventListener('change', verify);
  ['dragenter', 'dragover'].forEach(function (t) {
    drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.add('over'); });
  });
  ['dragleave', 'drop'].forEach(function (t) {
    drop.addEventListener(t, function () { drop.classList.remove('over'); });
  });
  drop.addEventListener('drop', function (e) {
    e.preventDefault();
    if (e.dataTransfer.files.length) {
      input.files = e.dataTransfer.files;
      verify();
    }
  });
})();
