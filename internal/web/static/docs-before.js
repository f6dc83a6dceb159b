// Runs before the Scalar bundle. Its schema library (zod 4) probes once
// whether it may compile validators with Function(""), which the page's
// policy refuses and the browser reports as a violation. zod reads its
// global configuration from globalThis.__zod_globalConfig (kept if already
// set); jitless tells it to validate without compiling, so it never probes.
globalThis.__zod_globalConfig = { jitless: true };
