// Runs before the Scalar bundle, to keep the page's policy free of eval
// and of inline styles without its nonce.
(function () {
  'use strict';
  // Its schema library (zod 4) probes once whether it may compile
  // validators with Function(""), which the policy refuses and the
  // browser reports. zod reads its global configuration from
  // globalThis.__zod_globalConfig (kept if already set); jitless tells it
  // to validate without compiling, so it never probes.
  globalThis.__zod_globalConfig = { jitless: true };

  // Scalar gives its own <style> element the nonce of the csp-nonce meta
  // element; the libraries it bundles (CodeMirror's style-mod, a CSS
  // injector) create theirs without one, so each new style element gets it.
  var nonce = document.querySelector('meta[property="csp-nonce"]').content;
  var create = Document.prototype.createElement;
  Document.prototype.createElement = function (tag) {
    var el = create.apply(this, arguments);
    if (String(tag).toLowerCase() === 'style') el.nonce = nonce;
    return el;
  };
})();
