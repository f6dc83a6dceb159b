// Renders the API reference from this server's /openapi.json with the
// vendored Scalar bundle, configured so that nothing is fetched from
// another origin: no web fonts, no telemetry, no AI agent or MCP links,
// no developer toolbar (its Share and Deploy menus lead to scalar.com).
(function () {
  var app = document.getElementById('app');
  Scalar.createApiReference(app, {
    url: app.dataset.openapi,
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never'
  });
})();
