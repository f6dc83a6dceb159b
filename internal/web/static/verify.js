// Verifies the chosen or dropped PDF with POST /v1/verify and shows the
// answer in place; the form still works without this script.
(function () {
  'use strict';
  var form = document.getElementById('verify-form');
  var input = document.getElementById('file');
  var drop = document.getElementById('drop');
  var out = document.getElementById('result');
  // The examiner's terms in plain words, as the server renders them.
  var WORDS = JSON.parse(document.getElementById('examiner-words').textContent);
  function words(term) { return WORDS[term] || term; }

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
    var unchanged = res.signer && res.signer.coversWholeDocument;
    v.appendChild(el('h2', 'verdict-title', !res.valid ? 'Not valid' :
      unchanged ? 'Valid: the document is unchanged since it was signed' : 'Valid: every change since the signatures is permitted'));
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
      examination(dl, s);
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

  // examination shows the examiner's verdict on a signature: indication,
  // format, revocation data, and the changes made after it.
  function examination(dl, s) {
    var sub = s.subIndication ? ': ' + words(s.subIndication) : '';
    var terms = ' (' + s.indication + (s.subIndication ? ', ' + s.subIndication : '') + ')';
    row(dl, 'Examination', words(s.indication) + sub + terms, 'indication ' + (s.indication === 'TOTAL_PASSED' ? 'ok' : 'bad'));
    row(dl, 'Format', s.level || (s.subFilter === 'ETSI.RFC3161' ? 'document time-stamp' : 'no standard level'), 'level');
    var r = s.revocation || { where: 'none' };
    row(dl, 'Revocation data', r.where === 'none' ? 'none in the document' :
      r.crl + ' CRL, ' + r.ocsp + ' OCSP, in the ' + (r.where === 'dss' ? "document's security store" : 'signature'));
    if (s.changedAfterSigning && s.changedAfterSigning.length) {
      row(dl, 'Changed after signing', s.changedAfterSigning.join(', ') + ' (the values shown are the signed ones)', 'bad');
    }
    var changes = (s.modifications && s.modifications.changes) || [];
    if (!changes.length) {
      row(dl, 'Changes after it', 'none');
      return;
    }
    var ul = el('ul', 'changes');
    changes.forEach(function (c) {
      ul.appendChild(el('li', c.permitted ? 'ok' : 'bad', (c.page ? 'page ' + c.page + ': ' : '') + c.what +
        ' (' + words(c['class']) + '; ' + (c.permitted ? 'permitted' : 'not permitted') + ')'));
    });
    dl.appendChild(el('dt', '', 'Changes after it'));
    dl.appendChild(el('dd')).appendChild(ul);
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
