// agentsurface embed: one <script type="module" src="agentsurface.js"> runs the page's
// Python under Pyodide, fully offline (everything comes from ./dist beside this script: built
// into web/ by scripts/build_web.py, and copied beside your pages by `agentsurface bundle`).
//
//   <script type="text/x-agentsurface">  ...Python...  </script>
//   <script type="text/x-agentsurface" src="app.py"></script>
//   <script type="module" src="agentsurface.js" data-packages="my-app"></script>
//   <script type="module" src="agentsurface.js" data-files="app/__init__.py app/view.py"></script>
//   <script type="module" src="agentsurface.js" data-memory-snapshot></script>
//
// Loads Pyodide (with the stdlib zip the runtime build compiled, when it has one) and, while it
// boots, the `agentsurface` wheel from our pyodide-lock.json plus any
// `data-packages` (integrity-checked, with their dependencies) and the page's `data-files`
// (paths relative to the page, written at the same relative path into Python's working directory,
// which is on sys.path: a package of the app served as plain files); then runs every
// text/x-agentsurface script in document order, top-level `await` allowed, in one shared
// namespace. agentsurface's own dependencies (pydantic, jsonschema) are not on that path unless
// the page's scripts import them: they load in the background once the scripts have run, or on
// their first import before that (agentsurface.browser.packages); and when agentsurface is all
// a page loads at start, it is imported from a zip in place, without Pyodide's package loader
// (pure-Python data-packages, py3-none-any wheels such as annotated-types, are unpacked without it).
// With data-memory-snapshot, Pyodide starts from the runtime build's memory snapshot, taken with
// agentsurface already imported (agentsurface/_runtime_build/memory_snapshot.py; about 6.5 MB
// more to download, gzipped), instead of booting the interpreter and importing the library; used only when
// it was made from this runtime's zip and stdlib and the page loads nothing with Pyodide's package
// loader at start (else a console warning says why, and the page boots as without it).
// Exposes window.agentSurface = { ready, complete, pyodide, loadedFrom, inPlace, memorySnapshot,
// timings, error } (loadedFrom: "zip" or "wheel"; inPlace: the data-packages installed without the
// package loader; memorySnapshot: whether the boot started from the snapshot) and
// dispatches `agentsurface:ready` (detail: { pyodide, timings }) or `agentsurface:error`
// (detail: { message, error }) on document; `complete` resolves once the background loads are
// done too. A failed start (a script that raised, a package that did not load) rejects `ready`,
// leaves its text in `window.agentSurface.error` (where test clients read it at once) and is
// shown by the page's surface inspectors, if a script installed one before it failed.

const PYODIDE_URL = new URL("./dist/pyodide/", import.meta.url);
const ownScript = [...document.querySelectorAll("script[src]")].find(
  (script) => script.src === import.meta.url,
);
const extraPackages = (ownScript?.dataset.packages ?? "").split(/[\s,]+/).filter(Boolean);
const pageFiles = (ownScript?.dataset.files ?? "").split(/\s+/).filter(Boolean);
const wantsMemorySnapshot = ownScript?.dataset.memorySnapshot !== undefined;
// `data-compiled`: every .py of data-files has its bytecode beside it, written by `agentsurface
// precompile PAGE` for this runtime's Python (the tag is precompile.CACHE_TAG's).
const PYC_TAG = "cpython-314";
const compiledFiles = ownScript?.dataset.compiled === undefined ? [] : pageFiles
  .filter((path) => path.endsWith(".py"))
  .map((path) => {
    const slash = path.lastIndexOf("/") + 1;
    return `${path.slice(0, slash)}__pycache__/${path.slice(slash, -3)}.${PYC_TAG}.pyc`;
  });

const timings = {};
const since = (start) => Math.round(performance.now() - start);

async function pythonSource(script) {
  if (!script.src) return script.textContent;
  const response = await fetch(script.src);
  if (!response.ok) throw new Error(`${script.src}: HTTP ${response.status}`);
  return response.text();
}

const canonical = (name) => name.replace(/[-_.]+/g, "-").toLowerCase();
const OWN_PACKAGE = "agentsurface";

// A data-files entry: fetched beside the runtime, relative to the page; kept inside the working
// directory (no absolute path, no "..").
async function fetchPageFile(path) {
  if (path.startsWith("/") || path.split("/").some((part) => part === ".." || part === "")) {
    throw new Error(`data-files: ${JSON.stringify(path)} must be a relative path inside the page's folder`);
  }
  const response = await fetch(new URL(path, document.baseURI));
  if (!response.ok) throw new Error(`data-files: ${path}: HTTP ${response.status}`);
  return [path, new Uint8Array(await response.arrayBuffer())];
}

function writePageFiles(pyodide, files) {
  const cwd = pyodide.FS.cwd();
  for (const [path, bytes] of files) {
    const target = `${cwd}/${path}`;
    pyodide.FS.mkdirTree(target.slice(0, target.lastIndexOf("/")));
    pyodide.FS.writeFile(target, bytes);
  }
}

async function fetchLock() {
  const response = await fetch(new URL("pyodide-lock.json", PYODIDE_URL));
  if (!response.ok) throw new Error(`pyodide-lock.json: HTTP ${response.status}`);
  return response.json();
}

// One of the runtime build's info files beside Pyodide, with its file's URL resolved (``url``),
// or null when the runtime was built without it.
async function fetchBuildInfo(name) {
  const url = new URL(name, PYODIDE_URL);
  const response = await fetch(url);
  if (!response.ok) return null;
  const info = await response.json();
  return { ...info, url: new URL(info.file, url).href };
}

// Our wheel as a zip to import from in place (built beside it by the runtime build), and the
// stdlib zip with bytecode to boot with (agentsurface/_runtime_build/stdlib_zip.py), or null (a
// runtime built without it: the wheel is installed instead).
async function fetchZipInfo() {
  const info = await fetchBuildInfo("agentsurface-zip.json");
  return info && { ...info, stdlibUrl: info.stdlib ? new URL(info.stdlib, PYODIDE_URL).href : null };
}

// Why the page cannot boot from the snapshot, or null when it can.
function snapshotRefusal(snapshotInfo, zipInfo, zipped, packages) {
  if (!snapshotInfo) return "this runtime has none (build it with the memory snapshot)";
  if (!zipped) {
    // e.g. a script that imports pydantic, or a data-package that depends on it
    return "the page loads agentsurface's wheel or its dependencies with Pyodide's package loader at start";
  }
  if (packages.length) return `the page loads ${packages.join(", ")} with Pyodide's package loader at start`;
  if (snapshotInfo.zip_sha256 !== zipInfo.sha256 || snapshotInfo.stdlib !== zipInfo.stdlib) {
    return "it was made from another build of the runtime (rebuild it)";
  }
  return null;
}

const sri = (hex) => "sha256-" + btoa(String.fromCharCode(...hex.match(/../g).map((h) => parseInt(h, 16))));

// ``read(response)`` of the file at ``url``, integrity-checked against the build's sha256 (hex);
// a failure names ``what`` could not be loaded, and why.
async function fetchVerified(url, sha256, what, read = (response) => response.arrayBuffer()) {
  try {
    const response = await fetch(url, { integrity: sri(sha256) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return await read(response);
  } catch (error) {
    // e.g. the browser's integrity check refused bytes other than the ones the build wrote
    throw new Error(`could not load ${what} from ${url}: ${error?.message ?? error}`);
  }
}

// The snapshot's memory, inflated (it is served gzipped, whatever the server).
const fetchSnapshot = (info) =>
  fetchVerified(info.url, info.sha256, "the memory snapshot", (response) =>
    new Response(response.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer(),
  );

const fetchZip = async (url, sha256) => new Uint8Array(await fetchVerified(url, sha256, "agentsurface"));

// The top-level modules a script imports (`import a.b, c` / `from a import b`; relative imports
// skipped). A plain scan of the text: it may see an import inside a string, which at worst loads
// a package the page did not need, at start.
function importedModules(source) {
  const names = new Set();
  for (const match of source.matchAll(/^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([^#\n;]+))/gm)) {
    const modules = match[1] ? [match[1]] : match[2].split(",").map((part) => part.trim().split(/\s+/)[0]);
    for (const module of modules) {
      const top = module.split(".")[0];
      if (top) names.add(top);
    }
  }
  return names;
}

// The lock's package names by canonical name, made once per lock (it lists every package of the
// runtime: a scan per lookup was about 10 ms of a cold start).
const lockNames = new WeakMap();
function lockName(lock, name) {
  let names = lockNames.get(lock);
  if (!names) {
    names = new Map(Object.keys(lock.packages).map((n) => [canonical(n), n]));
    lockNames.set(lock, names);
  }
  return names.get(canonical(name));
}

// agentsurface's dependency closure, from the lock: these are the packages kept off the boot.
function closure(lock, roots) {
  const seen = new Set();
  const visit = (name) => {
    const found = lockName(lock, name);
    if (found === undefined || seen.has(found)) return;
    seen.add(found);
    for (const dependency of lock.packages[found].depends) visit(dependency);
  };
  roots.forEach(visit);
  return seen;
}

// The boot plan: the lock as Pyodide gets it (agentsurface without its dependencies), the
// packages loaded with the runtime (ours, data-packages, and agentsurface dependencies the
// scripts import), the ones deferred to the background, and {import name: package} for the
// dependencies not loaded yet (the first-import finder's map).
function bootPlan(lock, sources) {
  const own = lock.packages[OWN_PACKAGE];
  if (!own) throw new Error(`pyodide-lock.json has no ${OWN_PACKAGE} (rebuild web/dist)`);
  const deferredRoots = own.depends;
  const deferred = closure(lock, deferredRoots);
  const imported = new Set(sources.flatMap((source) => [...importedModules(source)]));
  // Class-based components with simple type hints (str, int, list[str]...) need no pydantic on
  // the way to their first tool (agentsurface/_core/schemas/simple_hints.py): it loads with
  // the rest in the background, or on first import where a script needs it sooner.
  const atBoot = [OWN_PACKAGE, ...extraPackages];
  const onImport = {};
  for (const name of deferred) {
    const imports = lock.packages[name].imports ?? [];
    if (imports.some((module) => imported.has(module))) atBoot.push(name);
    for (const module of imports) onImport[module] = name;
  }
  const leanLock = { ...lock, packages: { ...lock.packages, [OWN_PACKAGE]: { ...own, depends: [] } } };
  return { leanLock, atBoot, deferredRoots, onImport };
}

// Pure-Python wheels (py3-none-any, no shared library) need nothing of Pyodide's package loader:
// the loader unpacks them itself (agentsurface.browser.packages.unpack_wheels). These are the
// entries, or null when one of them needs the package loader.
function pureWheels(lock, names) {
  const entries = [...names].map((name) => [name, lock.packages[name]]);
  const pure = ([, entry]) =>
    entry?.package_type === "package" && !entry.shared_library && /-none-any\.whl$/.test(entry.file_name);
  return entries.every(pure) ? entries : null;
}

// The wheel's bytes, integrity-checked against the lock (Pyodide's loader checks the same sha256).
async function fetchWheel(name, entry) {
  const url = new URL(entry.file_name, PYODIDE_URL).href;
  return [`/tmp/${url.split("/").pop()}`, new Uint8Array(await fetchVerified(url, entry.sha256, name))];
}

// Packages are passed to loadPyodide, which downloads them while the runtime compiles and boots
// instead of after it. A wheel that fails (e.g. an integrity mismatch) does not reject the boot:
// Pyodide logs why (console.error), so check that every requested package really got loaded.
function checkLoaded(pyodide, names) {
  const loaded = new Set(Object.keys(pyodide.loadedPackages).map(canonical));
  const missing = names.filter((name) => !loaded.has(canonical(name)));
  if (missing.length) {
    throw new Error(`could not load ${missing.join(", ")} (the console says why)`);
  }
}

// module.attribute(...args) in Python, releasing the proxies it took to get there.
function callPython(pyodide, module, attribute, ...args) {
  const proxies = [pyodide.pyimport(module)];
  for (const name of attribute.split(".")) proxies.push(proxies.at(-1)[name]);
  try {
    return proxies.at(-1)(...args);
  } finally {
    proxies.forEach((proxy) => proxy.destroy());
  }
}

let deferredRoots = [];

async function boot() {
  let start = performance.now();
  const scripts = [...document.querySelectorAll('script[type="text/x-agentsurface"]')];
  // The runtime module, the lock and the scripts' sources are fetched side by side: the boot plan
  // needs them. The page's data-files are not waited for here (see below).
  const [{ loadPyodide }, lock, zipInfo, sources, snapshotInfo] = await Promise.all([
    import(new URL("pyodide.mjs", PYODIDE_URL).href),
    fetchLock(),
    fetchZipInfo(),
    Promise.all(scripts.map(pythonSource)),
    wantsMemorySnapshot ? fetchBuildInfo("agentsurface-memory.json") : null,
  ]);
  timings.fetchMs = since(start); // the runtime module, the lock and the page's sources
  const plan = bootPlan(lock, sources);
  deferredRoots = plan.deferredRoots;
  // agentsurface is imported from its zip in place, so the boot never installs its wheel
  // (see agentsurface/_runtime_build/page_zip.py): when it is all the page loads at start, the
  // boot never runs Pyodide's package loader at all. With pydantic or jsonschema at start, the
  // loader runs anyway and installing the wheel costs about what the zip saves (pydantic scans
  // sys.path for plugins: through a zip that is zipfile's import and directory read); an app's
  // wheel that depends on agentsurface installs it anyway. Small packages that need none of these
  // (data-packages="annotated-types typing-extensions") keep the zip and load beside the runtime.
  const extras = plan.atBoot.filter((name) => name !== OWN_PACKAGE);
  const wheelNeeded = new Set([OWN_PACKAGE, ...plan.deferredRoots].map(canonical));
  const zipFits = ![...closure(lock, extras)].some((name) => wheelNeeded.has(canonical(name)));
  const zipped =
    zipFits && zipInfo?.wheel_sha256 === lock.packages[OWN_PACKAGE].sha256
      ? fetchZip(zipInfo.url, zipInfo.sha256)
      : null;
  zipped?.catch(() => {}); // awaited (and so reported) after the boot; not unhandled before it
  // With agentsurface from its zip, pure-Python data-packages (and their dependencies) are
  // unpacked by us: then the boot never runs Pyodide's package loader, whose imports (tarfile,
  // importlib.metadata...) the page would compile from source (Pyodide ships its stdlib so) first.
  const inPlace = zipped ? pureWheels(lock, closure(lock, extras)) : null;
  const wheels = inPlace ? Promise.all(inPlace.map(([name, entry]) => fetchWheel(name, entry))) : null;
  wheels?.catch(() => {}); // as zipped
  if (inPlace) {
    // Installed by us: a deferred package that depends on one does not install it again.
    const placed = new Set(inPlace.map(([name]) => name));
    for (const [name, entry] of Object.entries(plan.leanLock.packages)) {
      if (entry.depends.some((dependency) => placed.has(dependency))) {
        plan.leanLock.packages[name] = { ...entry, depends: entry.depends.filter((d) => !placed.has(d)) };
      }
    }
  }
  const packages = inPlace ? [] : zipped ? extras : plan.atBoot;
  let snapshot = null;
  if (wantsMemorySnapshot) {
    const refusal = snapshotRefusal(snapshotInfo, zipInfo, zipped, packages);
    if (refusal) console.warn(`agentsurface: data-memory-snapshot not used: ${refusal}`);
    else snapshot = fetchSnapshot(snapshotInfo);
  }
  snapshot?.catch(() => {}); // Pyodide awaits it, so a failure rejects the boot (reported there)
  window.agentSurface.memorySnapshot = snapshot !== null;
  const booting = loadPyodide({
    indexURL: PYODIDE_URL.href,
    packageBaseUrl: PYODIDE_URL.href,
    lockFileContents: plan.leanLock,
    packages,
    // Python's stdlib with the modules a page imports already compiled: npm's holds only
    // sources, and compiling them was more than half of the boot.
    ...(zipInfo?.stdlibUrl ? { stdLibURL: zipInfo.stdlibUrl } : {}),
    // Pyodide's option for it (314.0; underscored, so checked on every upgrade by e2e/test_memory_snapshot.py).
    ...(snapshot ? { _loadSnapshot: snapshot } : {}),
  });
  // The data-files download while the runtime does (asked for after its own files, which are the
  // longer wait), instead of holding its start back by a round of requests.
  const fetchingFiles = Promise.all([
    ...pageFiles.map(fetchPageFile),
    ...compiledFiles.map((path) => fetchPageFile(path).catch((error) => {
      throw new Error(`data-compiled: ${error.message} (run \`agentsurface precompile\` on this page)`);
    })),
  ]);
  fetchingFiles.catch(() => {}); // awaited (and so reported) after the boot, as zipped
  const pyodide = await booting;
  checkLoaded(pyodide, packages);
  for (const [path, bytes] of zipped ? [[`/lib/${zipInfo.url.split("/").pop()}`, await zipped]] : []) {
    // From the snapshot, the zip is on sys.path already: its file is what the modules not
    // imported yet are read from.
    pyodide.FS.writeFile(path, bytes);
    if (!snapshot) callPython(pyodide, "sys", "path.append", path);
  }
  if (snapshot) callPython(pyodide, "agentsurface.browser.memory_snapshot", "restored");
  const unpacked = [];
  for (const [path, bytes] of wheels ? await wheels : []) {
    pyodide.FS.writeFile(path, bytes);
    unpacked.push(path);
  }
  if (unpacked.length) {
    callPython(pyodide, "agentsurface.browser.packages", "unpack_wheels", JSON.stringify(unpacked));
  }
  writePageFiles(pyodide, await fetchingFiles);
  window.agentSurface.loadedFrom = zipped ? "zip" : "wheel";
  window.agentSurface.inPlace = inPlace ? inPlace.map(([name]) => name) : [];
  timings.runtimeMs = since(start); // fetches, then the runtime and our packages side by side
  callPython(pyodide, "agentsurface.browser.packages", "load_on_import", JSON.stringify(plan.onImport));
  window.agentSurface.pyodide = pyodide;
  timings.bootMs = since(start); // all of the above, and agentsurface imported

  start = performance.now();
  for (const [index, script] of scripts.entries()) {
    const filename = script.src || `<${location.pathname} script ${index + 1}>`;
    await pyodide.runPythonAsync(sources[index], { filename });
  }
  timings.scriptsMs = since(start);
  timings.readyMs = Math.round(performance.now()); // since navigation start
  return pyodide;
}

// After the first tools: agentsurface's dependencies the page has not loaded yet.
async function completeLoading(pyodide) {
  const start = performance.now();
  try {
    await pyodide.loadPackage(deferredRoots);
  } finally {
    callPython(pyodide, "agentsurface.browser.packages", "dependencies_loaded");
  }
  checkLoaded(pyodide, deferredRoots);
  timings.completeMs = since(start);
  return pyodide;
}

const ready = boot();
const complete = ready.then(completeLoading);
window.agentSurface = {
  ready, complete, pyodide: null, loadedFrom: null, inPlace: [], memorySnapshot: false, timings, error: null,
};

// The start-up error where the page's own tools can see it: window.agentSurface.error, and the
// surface inspectors a script installed before it failed (when the page module is loaded).
function reportFailure(message) {
  window.agentSurface.error ??= message;
  const pyodide = window.agentSurface.pyodide;
  if (!pyodide) return;
  try {
    const inspector = pyodide.runPython("__import__('sys').modules.get('agentsurface.page.inspector')");
    if (inspector) {
      try {
        inspector.startup_failed(message);
      } finally {
        inspector.destroy();
      }
    }
  } catch (error) {
    console.error("agentsurface could not show its start-up error in the inspector:", error);
  }
}

ready.then(
  (pyodide) => {
    document.dispatchEvent(new CustomEvent("agentsurface:ready", { detail: { pyodide, timings } }));
  },
  (error) => {
    const message = error?.message ?? String(error);
    reportFailure(message);
    console.error("agentsurface failed to start:", error);
    document.dispatchEvent(new CustomEvent("agentsurface:error", { detail: { message, error } }));
  },
);
complete.catch((error) => {
  // A failed start is reported above; this is a background load that failed after it.
  ready.then(
    () => {
      reportFailure(`could not load agentsurface's dependencies: ${error?.message ?? error}`);
      console.error("agentsurface could not load its dependencies:", error);
    },
    () => {},
  );
});
