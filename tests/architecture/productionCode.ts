// Reads a set of source files with oxc's parser: each file's length, each function's length
// (declaration to closing brace) and each file's imports of other files of the set, the workspace
// packages' `exports` maps resolved. Two sets are read: the code a reader copies (apps/*/src and
// packages/*/src) and the lab around it (tools/*/src, bench, scripts); tests are in neither.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { parseSync, Visitor } from 'oxc-parser';

export const repoRoot = join(import.meta.dirname, '..', '..');

export type SourceFile = {
  /** Repository-relative path, e.g. `apps/relay/src/relay.ts`. */
  path: string;
  lines: number;
  functions: { name: string; line: number; lines: number }[];
  /** Files this one imports (type-only imports included: they are the same coupling), of any set. */
  imports: string[];
};

/** The code a reader copies: the product's processes and the packages they share. */
export const PRODUCTION_GLOBS = ['apps/*/src/**', 'packages/*/src/**'];

/** The lab around it: the dev stack, load generator and chaos suite, the benches, the scripts. */
export const LAB_GLOBS = ['tools/*/src/**', 'bench/**', 'scripts/**'];

/**
 * Everything else: the tests' support code, the migrations' seeds, the Grafana generators, the
 * AsyncAPI generator, the root configs (with PRODUCTION_GLOBS and LAB_GLOBS, the whole tree).
 */
export const REST_OF_TREE = { globs: ['.'], except: [...PRODUCTION_GLOBS, ...LAB_GLOBS] };

/** Tracked TypeScript sources under the globs, not tests, not generated code. */
export function sourcePaths(globs: string[]): string[] {
  const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', ...globs], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return tracked
    .split('\n')
    .filter((path) => /\.tsx?$/.test(path) && !/\.test\.tsx?$/.test(path) && !path.endsWith('.d.ts'));
}

/** The files of `globs` but those of `except`, read and parsed. */
export function readSourceFiles(globs: string[], except: string[] = []): SourceFile[] {
  const packages = workspacePackages();
  const excluded = new Set(except.length > 0 ? sourcePaths(except) : []);
  const paths = sourcePaths(globs).filter((path) => !excluded.has(path));
  return paths.map((path) => {
    const source = readFileSync(join(repoRoot, path), 'utf8');
    const parsed = parseSync(path, source, { lang: 'ts', sourceType: 'module' });
    if (parsed.errors.length > 0) throw new Error(`${path} does not parse: ${parsed.errors[0]?.message}`);
    const requests = [
      ...parsed.module.staticImports.map((entry) => entry.moduleRequest.value),
      ...parsed.module.staticExports.flatMap((entry) =>
        entry.entries.flatMap((exported) => (exported.moduleRequest ? [exported.moduleRequest.value] : [])),
      ),
    ];
    return {
      path,
      lines: source.split('\n').length - (source.endsWith('\n') ? 1 : 0),
      functions: functionsOf(parsed.program, source),
      imports: [...new Set(requests.flatMap((request) => resolve(path, request, packages)))],
    };
  });
}

type Node = { type: string; start: number; end: number };
type FunctionNode = Node & { id?: { name: string } | null };
type Declarator = { id: Node & { name?: string }; init?: Node | null };

const isFunction = (node: Node | null | undefined): node is FunctionNode =>
  node?.type === 'ArrowFunctionExpression' || node?.type === 'FunctionExpression';

function functionsOf(program: ReturnType<typeof parseSync>['program'], source: string) {
  const lineAt = (offset: number) => source.slice(0, offset).split('\n').length;
  // The span a reader scrolls: from the declaration (`export const name = (…) =>`, `export function`)
  // to the closing brace. A parent is visited before its children, so the declaration comes first.
  const declaredAt = new Map<number, { name: string; start: number }>();
  const declare = (declarators: Declarator[], start: number) => {
    for (const { id, init } of declarators) {
      if (isFunction(init) && !declaredAt.has(init.start))
        declaredAt.set(init.start, { name: id.name ?? '?', start });
    }
  };
  const functions: SourceFile['functions'] = [];
  const add = (node: FunctionNode) => {
    const declared = declaredAt.get(node.start);
    const start = declared?.start ?? node.start;
    const name = node.id?.name || declared?.name || '(anonymous)';
    functions.push({ name, line: lineAt(start), lines: lineAt(node.end) - lineAt(start) + 1 });
  };
  new Visitor({
    ExportNamedDeclaration: (node) => {
      const declaration = node.declaration as (Node & { declarations?: Declarator[] }) | null;
      if (declaration?.type === 'FunctionDeclaration')
        declaredAt.set(declaration.start, { name: '', start: node.start });
      if (declaration?.declarations) declare(declaration.declarations, node.start);
    },
    VariableDeclaration: (node) => declare(node.declarations as Declarator[], node.start),
    FunctionDeclaration: (node) => add(node as FunctionNode),
    FunctionExpression: (node) => add(node as FunctionNode),
    ArrowFunctionExpression: (node) => add(node as FunctionNode),
  }).visit(program);
  return functions;
}

type Packages = Map<string, { dir: string; exports: Record<string, string> }>;

function workspacePackages(): Packages {
  const packages: Packages = new Map();
  for (const dir of execFileSync(
    'git',
    ['ls-files', 'apps/*/package.json', 'packages/*/package.json', 'tools/*/package.json'],
    {
      cwd: repoRoot,
      encoding: 'utf8',
    },
  )
    .split('\n')
    .filter(Boolean)
    .map(dirname)) {
    const manifest = JSON.parse(readFileSync(join(repoRoot, dir, 'package.json'), 'utf8'));
    const exports =
      typeof manifest.exports === 'string' ? { '.': manifest.exports } : (manifest.exports ?? {});
    packages.set(manifest.name, { dir, exports });
  }
  return packages;
}

function resolve(from: string, request: string, packages: Packages): string[] {
  if (request.startsWith('.')) {
    const target = normalize(join(dirname(from), request));
    return existsSync(join(repoRoot, target)) ? [target] : [];
  }
  const [scope, name, ...rest] = request.split('/');
  const owner = packages.get(`${scope}/${name}`);
  if (!owner) return []; // a library from npm
  const entry = owner.exports[rest.length ? `./${rest.join('/')}` : '.'];
  const target = typeof entry === 'string' ? entry : undefined;
  return target ? [relative(repoRoot, join(repoRoot, owner.dir, target))] : [];
}

/** Every import cycle among the files, each as the list of files around it (Tarjan's components). */
export function importCycles(files: SourceFile[]): string[][] {
  const graph = new Map(files.map((file) => [file.path, file.imports]));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member) component.push(member);
    } while (member && member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}
