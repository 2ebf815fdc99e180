// The words (PASS/FAIL `rule`, UNKNOWN/NOT_APPLICABLE `reason`) each check's code can return, found
// by reading the code rather than by running it, so that a word no fixture exercises still counts.
//
// From a check's `collect` and `evaluate`, every function and constant of checks/ they reach (through
// calls and references, imports followed) is visited. In that code a word site is
//   - an argument passed to a parameter typed `Reason` (unknown(), notApplicable(), containersModeVerdict()),
//   - the value of a `rule:` or `reason:` property in an object literal,
//   - a value returned by a function declared to return `Reason`,
// and its words are what the expression can be: literals, through `?:`, `??`, `||`, calls into
// checks/ code (their returned values), constants, and literal union types. A property read whose
// type is a plain string (`facts.stack.reason`) takes the literals assigned to that property name in
// the same reachable code. The engine's own words (timeout, check_error) belong to every check.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { CHECK_KEYS, type CheckKey, type Platform } from '../../src/protocol/schemas';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHECKS_DIR = path.join(ROOT, 'checks') + path.sep;
const PLATFORM_DIRS: Record<Platform, string> = { LINUX: 'linux', DARWIN: 'darwin', WINDOWS: 'windows', FREEBSD: 'freebsd' };
const WORD_PROPERTIES = new Set(['rule', 'reason']);

export interface CheckWords {
  platform: Platform;
  checkKey: CheckKey;
  words: Set<string>;
}

type FunctionLike = ts.FunctionDeclaration | ts.ArrowFunction | ts.FunctionExpression | ts.MethodDeclaration;

export function extractOutcomeWords(): CheckWords[] {
  const configPath = path.join(ROOT, 'tsconfig.json');
  const config = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, (file) => ts.sys.readFile(file)).config, ts.sys, ROOT);
  const roots = [...Object.values(PLATFORM_DIRS).map((d) => path.join(CHECKS_DIR, d, 'index.ts')), path.join(CHECKS_DIR, 'engine.ts')];
  const program = ts.createProgram(roots, config.options);
  const checker = program.getTypeChecker();
  const inChecks = (node: ts.Node) => path.resolve(node.getSourceFile().fileName).startsWith(CHECKS_DIR);

  function declarationOf(node: ts.Node): ts.Declaration | undefined {
    let symbol = checker.getSymbolAtLocation(node);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const decl = symbol?.valueDeclaration ?? symbol?.declarations?.[0];
    return decl && inChecks(decl) ? decl : undefined;
  }

  /** The code a declaration stands for: a function's body, or a constant's initializer. */
  function codeOf(decl: ts.Declaration): ts.Node | undefined {
    if (ts.isFunctionDeclaration(decl) || ts.isMethodDeclaration(decl)) return decl.body ? decl : undefined;
    if (ts.isVariableDeclaration(decl) && decl.initializer) return decl.initializer;
    if (ts.isPropertyAssignment(decl)) return decl.initializer;
    return undefined;
  }

  function isReasonType(node: ts.TypeNode | undefined): boolean {
    return !!node && ts.isTypeReferenceNode(node) && node.typeName.getText() === 'Reason';
  }

  /** Walks everything reachable from `start`, returning the word sites and the literals assigned per property name. */
  function reach(start: ts.Node[]): { sites: ts.Expression[]; assigned: Map<string, ts.Expression[]>; visited: Set<ts.Node> } {
    const visited = new Set<ts.Node>();
    const sites: ts.Expression[] = [];
    const assigned = new Map<string, ts.Expression[]>();
    const queue = [...start];
    while (queue.length > 0) {
      const code = queue.pop()!;
      if (visited.has(code)) continue;
      visited.add(code);
      const visit = (node: ts.Node): void => {
        if (ts.isPropertyAssignment(node) && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) {
          const name = node.name.text;
          if (WORD_PROPERTIES.has(name)) sites.push(node.initializer);
          assigned.set(name, [...(assigned.get(name) ?? []), node.initializer]);
        }
        if (ts.isShorthandPropertyAssignment(node) && WORD_PROPERTIES.has(node.name.text)) {
          const value = checker.getShorthandAssignmentValueSymbol(node)?.valueDeclaration;
          sites.push(value && ts.isVariableDeclaration(value) && value.initializer ? value.initializer : node.name);
        }
        if (ts.isCallExpression(node)) {
          const decl = declarationOf(node.expression);
          const fn = decl && functionOf(decl);
          fn?.parameters.forEach((p, i) => {
            if (isReasonType(p.type) && node.arguments[i]) sites.push(node.arguments[i]);
          });
        }
        if (ts.isReturnStatement(node) && node.expression) {
          const fn = enclosingFunction(node);
          if (fn && isReasonType(fn.type)) sites.push(node.expression);
        }
        if (ts.isArrowFunction(node) && isReasonType(node.type) && !ts.isBlock(node.body)) sites.push(node.body);
        if (ts.isIdentifier(node) || ts.isShorthandPropertyAssignment(node)) {
          const decl = ts.isShorthandPropertyAssignment(node)
            ? checker.getShorthandAssignmentValueSymbol(node)?.valueDeclaration
            : declarationOf(node);
          const target = decl && codeOf(decl);
          if (target && !visited.has(target)) queue.push(target);
        }
        ts.forEachChild(node, visit);
      };
      visit(code);
    }
    return { sites, assigned, visited };
  }

  function functionOf(decl: ts.Declaration): FunctionLike | undefined {
    if (ts.isFunctionDeclaration(decl) || ts.isMethodDeclaration(decl)) return decl;
    if (
      ts.isVariableDeclaration(decl) &&
      decl.initializer &&
      (ts.isArrowFunction(decl.initializer) || ts.isFunctionExpression(decl.initializer))
    ) {
      return decl.initializer;
    }
    return undefined;
  }

  function enclosingFunction(node: ts.Node): FunctionLike | undefined {
    for (let n = node.parent; n; n = n.parent) {
      if (ts.isFunctionDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isMethodDeclaration(n)) return n;
    }
    return undefined;
  }

  function literalsOfType(type: ts.Type): string[] | undefined {
    const parts = type.isUnion() ? type.types : [type];
    const out: string[] = [];
    for (const t of parts) {
      if (t.isStringLiteral()) out.push(t.value);
      else if (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null)) continue;
      else return undefined;
    }
    return out;
  }

  /** The words an expression can be, within the reachable code `scope`. */
  function wordsOf(expr: ts.Expression, scope: ReturnType<typeof reach>, seen: Set<ts.Node>): Set<string> {
    const out = new Set<string>();
    if (seen.has(expr)) return out;
    seen.add(expr);
    const add = (e: ts.Expression) => wordsOf(e, scope, seen).forEach((w) => out.add(w));
    if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) out.add(expr.text);
    else if (
      ts.isParenthesizedExpression(expr) ||
      ts.isAsExpression(expr) ||
      ts.isSatisfiesExpression(expr) ||
      ts.isNonNullExpression(expr)
    )
      add(expr.expression);
    else if (ts.isConditionalExpression(expr)) [expr.whenTrue, expr.whenFalse].forEach(add);
    else if (
      ts.isBinaryExpression(expr) &&
      [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(expr.operatorToken.kind)
    ) {
      [expr.left, expr.right].forEach(add);
    } else if (ts.isCallExpression(expr) && declarationOf(expr.expression) && functionOf(declarationOf(expr.expression)!)) {
      const fn = functionOf(declarationOf(expr.expression)!)!;
      if (fn.body && !ts.isBlock(fn.body)) add(fn.body);
      else {
        const returns = (node: ts.Node): void => {
          if (ts.isReturnStatement(node) && node.expression) add(node.expression);
          if (node !== fn && ts.isFunctionLike(node)) return;
          ts.forEachChild(node, returns);
        };
        if (fn.body) ts.forEachChild(fn.body, returns);
      }
    } else {
      const literals = literalsOfType(checker.getTypeAtLocation(expr));
      if (literals) literals.forEach((w) => out.add(w));
      else if (ts.isIdentifier(expr)) {
        const decl = declarationOf(expr);
        if (decl && ts.isVariableDeclaration(decl) && decl.initializer) add(decl.initializer);
      } else if (ts.isPropertyAccessExpression(expr) || ts.isElementAccessExpression(expr)) {
        const name = ts.isPropertyAccessExpression(expr) ? expr.name.text : undefined;
        for (const value of (name !== undefined ? scope.assigned.get(name) : undefined) ?? []) add(value);
      }
    }
    return out;
  }

  const engine = program.getSourceFile(path.join(CHECKS_DIR, 'engine.ts'))!;
  const engineWords = wordsOfScope(reach([engine]));

  function wordsOfScope(scope: ReturnType<typeof reach>): Set<string> {
    const words = new Set<string>();
    for (const site of scope.sites) wordsOf(site, scope, new Set()).forEach((w) => words.add(w));
    return words;
  }

  /** `defineCheck({...})`, or a call to a checks/ helper that itself calls defineCheck (Windows' defineProbeCheck). */
  function definesCheck(call: ts.CallExpression): ts.Node | undefined {
    if (call.expression.getText() === 'defineCheck') return call;
    const decl = declarationOf(call.expression);
    const fn = decl && functionOf(decl);
    let calls = false;
    const find = (n: ts.Node): void => {
      if (ts.isCallExpression(n) && n.expression.getText() === 'defineCheck') calls = true;
      else ts.forEachChild(n, find);
    };
    if (fn) find(fn);
    return calls ? fn : undefined;
  }

  const result: CheckWords[] = [];
  for (const [platform, dir] of Object.entries(PLATFORM_DIRS) as Array<[Platform, string]>) {
    for (const file of program.getSourceFiles().filter((f) => path.dirname(path.resolve(f.fileName)) === path.join(CHECKS_DIR, dir))) {
      ts.forEachChild(file, (node) => {
        if (!ts.isVariableStatement(node)) return;
        for (const decl of node.declarationList.declarations) {
          const call = decl.initializer;
          const definer = call && ts.isCallExpression(call) ? definesCheck(call) : undefined;
          if (!call || !definer) continue;
          const keys = new Set<string>();
          const findKey = (n: ts.Node): void => {
            if (ts.isStringLiteral(n) && (CHECK_KEYS as readonly string[]).includes(n.text)) keys.add(n.text);
            ts.forEachChild(n, findKey);
          };
          findKey(call);
          if (keys.size !== 1) throw new Error(`cannot tell which check ${decl.name.getText()} in ${file.fileName} defines`);
          const words = wordsOfScope(reach(definer === call ? [call] : [call, definer]));
          engineWords.forEach((w) => words.add(w));
          result.push({ platform, checkKey: [...keys][0] as CheckKey, words });
        }
      });
    }
  }
  return result;
}
