// Renders the API reference from this server's /openapi.json with the
// vendored Scalar bundle, configured so that nothing is fetched from
// another origin: no web fonts, no telemetry, no request proxy.
(function () {
  var app = document.getElementById('app');
  Scalar.createApiReference(app, {
    url: app.dataset.specUrl,
    withDefaultFonts: false,
    telemetry: false,
    proxyUrl: '',
    hideClientButton: false,
    showDeveloperTools: 'never',
    agent: { disabled: true },
    mcp: { disabled: true },
    documentDownloadType: 'json',
    metaData: { title: 'quire API reference' }
  });
})();
