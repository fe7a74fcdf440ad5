// Import cycles between the modules of a package's src, type-only imports included (which
// eslint's import-x/no-cycle skips): a module that names another's type still depends on
// its shape. Prints each cycle (strongly connected set) and exits 1 when there is one.
// Then the layers of packages/core/src: each folder may import only folders below it in
// LAYERS (an import that runs up a layer is printed, and fails the check).
// Usage: node scripts/cycles.mjs [dir...]   (default: every packages/*/src)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ignored = /[\\/]grammar[\\/]uri-parser\./;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return files(full);
    return full.endsWith('.ts') && !ignored.test(full) ? [full] : [];
  });
}

function check(root) {
  const graph = new Map();
  for (const file of files(root)) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    const deps = new Set();
    for (const node of source.statements) {
      const spec = (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier;
      if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), spec.text.replace(/\.js$/, '.ts'));
      if (!ignored.test(target)) deps.add(target);
    }
    graph.set(file, deps);
  }

  // Tarjan's strongly connected components: every component of more than one module is a cycle.
  let index = 0;
  const stack = [];
  const state = new Map();
  const cycles = [];
  function visit(v) {
    state.set(v, { index, low: index, onStack: true });
    index++;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!state.has(w)) {
        visit(w);
        state.get(v).low = Math.min(state.get(v).low, state.get(w).low);
      } else if (state.get(w).onStack) state.get(v).low = Math.min(state.get(v).low, state.get(w).index);
    }
    if (state.get(v).low === state.get(v).index) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        state.get(w).onStack = false;
        component.push(path.relative(root, w));
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  }
  for (const v of graph.keys()) if (!state.has(v)) visit(v);

  for (const c of cycles) console.log(`cycle (${c.length} modules): ${c.join(', ')}`);
  console.log(`cycles: ${cycles.length} in ${path.relative(process.cwd(), root) || '.'} (${graph.size} modules, type imports included)`);
  return cycles.length + (path.relative(process.cwd(), root) === CORE ? layers(root, graph) : 0);
}

// The request's path through packages/core/src, bottom to top (docs/architecture.md). A
// module may import its own folder and any folder listed before its own; the loose files
// at the root are the face: errors.ts below everything, index.ts and service.ts above.
const CORE = path.join('packages', 'core', 'src');
const LAYERS = [
  'errors.ts',
  'util',
  'http',
  'grammar',
  'query',
  'storage',
  'model',
  'operations',
  'content-types',
  'outgoing',
  'webhooks',
  'streams',
  'admin',
  'request',
  'service.ts',
  'index.ts',
  'internal',
];

function layerOf(root, file) {
  const first = path.relative(root, file).split(path.sep)[0];
  const rank = LAYERS.indexOf(first);
  if (rank < 0) throw new Error(`${path.relative(root, file)}: its folder is not in scripts/cycles.mjs LAYERS`);
  return { name: first, rank };
}

function layers(root, graph) {
  let upward = 0;
  for (const [file, deps] of graph) {
    const from = layerOf(root, file);
    for (const dep of deps) {
      if (!graph.has(dep)) continue;
      const to = layerOf(root, dep);
      if (to.rank <= from.rank) continue;
      upward++;
      console.log(`upward import: ${path.relative(root, file)} -> ${path.relative(root, dep)} (${from.name} may not import ${to.name})`);
    }
  }
  console.log(`layers: ${upward} imports run up a layer in ${CORE} (${LAYERS.join(' < ')})`);
  return upward;
}

const roots = process.argv.length > 2 ? process.argv.slice(2) : readdirSync('packages').map((p) => path.join('packages', p, 'src'));
let found = 0;
for (const dir of roots) if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) found += check(path.resolve(dir));
process.exit(found > 0 ? 1 : 0);
