// agent-surface embed: one <script type="module" src=".../web/agent-surface.js"> runs the page's
// Python under Pyodide, fully offline (everything comes from web/dist, built by
// scripts/build_web.py).
//
//   <script type="text/x-agent-surface">  ...Python...  </script>
//   <script type="text/x-agent-surface" src="app.py"></script>
//   <script type="module" src="web/agent-surface.js" data-packages="jsonschema"></script>
//
// Loads Pyodide and, while it boots, `agent-surface` by name from our pyodide-lock.json (which
// pulls pydantic and everything else it needs, integrity-checked) plus any `data-packages`; then
// runs every text/x-agent-surface script in document order, top-level `await` allowed, in one
// shared namespace. Exposes window.agentSurface = { ready, pyodide, timings } and dispatches
// `agent-surface:ready` (detail: { pyodide, timings }) or `agent-surface:error` (detail: { message,
// error }) on document.

const PYODIDE_URL = new URL("./dist/pyodide/", import.meta.url);
const ownScript = [...document.querySelectorAll("script[src]")].find(
  (script) => script.src === import.meta.url,
);
const extraPackages = (ownScript?.dataset.packages ?? "").split(/[\s,]+/).filter(Boolean);

const timings = {};
const since = (start) => Math.round(performance.now() - start);

async function pythonSource(script) {
  if (!script.src) return script.textContent;
  const response = await fetch(script.src);
  if (!response.ok) throw new Error(`${script.src}: HTTP ${response.status}`);
  return response.text();
}

const canonical = (name) => name.replace(/[-_.]+/g, "-").toLowerCase();

// Our packages are resolved by name (with their dependencies) through our pyodide-lock.json and
// passed to loadPyodide, which downloads them while the runtime compiles and boots instead of
// after it. A wheel that fails (e.g. an integrity mismatch) does not reject the boot: Pyodide
// logs why (console.error), so check that every requested package really got loaded.
function checkLoaded(pyodide, names) {
  const loaded = new Set(Object.keys(pyodide.loadedPackages).map(canonical));
  const missing = names.filter((name) => !loaded.has(canonical(name)));
  if (missing.length) {
    throw new Error(`could not load ${missing.join(", ")} (the console says why)`);
  }
}

async function boot() {
  let start = performance.now();
  const packages = ["agent-surface", ...extraPackages];
  const { loadPyodide } = await import(new URL("pyodide.mjs", PYODIDE_URL).href);
  const pyodide = await loadPyodide({ indexURL: PYODIDE_URL.href, packages });
  checkLoaded(pyodide, packages);
  window.agentSurface.pyodide = pyodide;
  timings.bootMs = since(start); // the runtime and our packages, loaded side by side

  start = performance.now();
  const scripts = document.querySelectorAll('script[type="text/x-agent-surface"]');
  for (const [index, script] of scripts.entries()) {
    const source = await pythonSource(script);
    const filename = script.src || `<${location.pathname} script ${index + 1}>`;
    await pyodide.runPythonAsync(source, { filename });
  }
  timings.scriptsMs = since(start);
  timings.readyMs = Math.round(performance.now()); // since navigation start
  return pyodide;
}

const ready = boot();
window.agentSurface = { ready, pyodide: null, timings };

ready.then(
  (pyodide) => {
    document.dispatchEvent(new CustomEvent("agent-surface:ready", { detail: { pyodide, timings } }));
  },
  (error) => {
    const message = error?.message ?? String(error);
    console.error("agent-surface failed to start:", error);
    document.dispatchEvent(new CustomEvent("agent-surface:error", { detail: { message, error } }));
  },
);
