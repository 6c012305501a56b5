/**
 * A lab's own scenarios (lab file `scenarios[]`): the rules between their fields, their script
 * files, their defaults, and the suite they form — `lab` — built from the same scenario model as
 * the catalog (lib/suite/scenario.ts) and expanded by the same `expandSuite`: there is no second
 * engine. The published experiments stay built-in suites; `resolveSuite` gives either.
 *
 * Script files are read by the caller (lib/config/load.ts, through lib/core/read.ts: relative to
 * the lab file's folder, no symbolic link below it followed, regular files only, 64 KiB at most,
 * UTF-8 checked) and handed in as a `ScriptReader`, so validation itself stays free of I/O. Their
 * text travels with the lab: in the run request to the runners, and in plan.json with every step.
 * A script that runs shell commands (`\shell`, `\setshell`: lib/suite/pgbench-script.ts) is refused
 * here, naming the line, so `validate` and every command that loads the lab refuse it before any work.
 */
import { createHash } from 'node:crypto';
import { UsageError } from '../core/errors';
import { getSuite, LAB_SUITE_NAME, SUITE_NAMES } from '../suite/catalog';
import {
  OWN_WORKLOAD_EXPECTATIONS,
  TARGET_SELECTORS,
  TARGET_SELECTOR_NAMES,
  type TargetSelectorName,
} from '../suite/experiments/common';
import { shellScriptProblem } from '../suite/pgbench-script';
import { resolveLoad, type BackgroundLoad } from '../suite/disruption-load';
import { BUILTIN_SCRIPTS } from '../suite/script-spec';
import type { Scenario, ScriptPart, Suite } from '../suite/scenario';
import type { TargetMatch } from '../suite/targets';
import { DEFAULTS } from './defaults';
import type { LabFileInput } from './schema';
import type { LabConfig, LabProblem, LabScenario, LabWorkloadPart } from './types';

/** Reads a script file named by a lab (a path relative to the lab file's folder): its text or why not. */
export type ScriptReader = (path: string) => { readonly text: string } | { readonly problem: string };

/** Script texts read during validation, by the path the lab gives. */
export type ScriptTexts = Map<string, string>;

function record(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

const show = (v: unknown): string => JSON.stringify(v) ?? String(v);

/** SQL text with `--` comments and blank lines removed: empty means pgbench has nothing to run. */
function hasStatements(sql: string): boolean {
  return sql.split('\n').some((line) => line.replace(/--.*$/, '').trim() !== '');
}

/**
 * Problems of the lab's `scenarios` that relate fields (or need a script file), each at its path;
 * the texts of the script files read go into `texts`. Runs on the raw input, so it reports even
 * when other fields are broken (the schema reports each field's own range).
 */
export function scenarioProblems(
  scenarios: unknown,
  read: ScriptReader | null,
  texts: ScriptTexts,
): LabProblem[] {
  const out: LabProblem[] = [];
  if (!Array.isArray(scenarios)) return out;
  const seen = new Map<string, number>();
  scenarios.forEach((raw: unknown, i: number) => {
    const s = record(raw);
    if (!s) return;
    const at = (key: string): string => `scenarios[${i}].${key}`;
    if (typeof s.name === 'string') {
      const first = seen.get(s.name);
      if (first !== undefined)
        out.push({
          path: at('name'),
          value: s.name,
          message: `must be unique among the lab's scenarios: scenarios[${first}] is already named ${show(s.name)}`,
        });
      else seen.set(s.name, i);
    }
    if (s.durationSec !== undefined && s.transactionsPerClient !== undefined)
      out.push({
        path: at('transactionsPerClient'),
        value: s.transactionsPerClient,
        message: `must not be given together with durationSec (${show(s.durationSec)}): a step runs for a time (-T) or a number of transactions per client (-t), not both`,
      });
    if (Array.isArray(s.targets) && s.targets.includes('all') && s.targets.length > 1)
      out.push({
        path: at('targets'),
        value: s.targets,
        message: `must be ["all"] alone or a list of selectors without "all" (${TARGET_SELECTOR_NAMES.join(', ')}): "all" already selects every target, got ${show(s.targets)}`,
      });
    if (Array.isArray(s.workload)) out.push(...workloadProblems(s.workload, at('workload'), read, texts));
  });
  return out;
}

function workloadProblems(
  parts: readonly unknown[],
  at: string,
  read: ScriptReader | null,
  texts: ScriptTexts,
): LabProblem[] {
  const out: LabProblem[] = [];
  const names = new Map<string, string>();
  parts.forEach((raw: unknown, j: number) => {
    const part = record(raw);
    if (!part) return;
    const here = `${at}[${j}]`;
    const hasBuiltin = part.builtin !== undefined;
    const file = part.file;
    if (hasBuiltin === (file !== undefined)) {
      out.push({
        path: here,
        value: raw,
        message: hasBuiltin
          ? `must give "builtin" or "file", not both, got ${show(raw)}`
          : `must give "builtin" (a pgbench built-in script) or "file" (your own script), got ${show(raw)}`,
      });
      return;
    }
    if (typeof file !== 'string') return; // a builtin, or a file the schema reports
    const base = file.split('/').pop() ?? file;
    const other = names.get(base);
    if (other !== undefined && other !== file)
      out.push({
        path: `${here}.file`,
        value: file,
        message: `must not share its file name with ${show(other)} in one workload (pgbench is given both as ${show(base)} in the step's folder)`,
      });
    names.set(base, file);
    if (texts.has(file)) return;
    if (read === null) {
      out.push({
        path: `${here}.file`,
        value: file,
        message:
          "cannot be read here: script files are read relative to the lab file's folder (validate the lab file: proxylab validate FILE)",
      });
      return;
    }
    const got = read(file);
    if ('problem' in got) {
      out.push({ path: `${here}.file`, value: file, message: `cannot be used: ${got.problem}` });
      return;
    }
    if (got.text.includes('\u0000')) {
      out.push({ path: `${here}.file`, value: file, message: 'must be a text file (it holds a NUL byte)' });
      return;
    }
    if (!hasStatements(got.text)) {
      out.push({
        path: `${here}.file`,
        value: file,
        message: 'must hold at least one statement or meta-command (the file is empty or only comments)',
      });
      return;
    }
    // \shell / \setshell would run a program on every transaction, here and on the runners.
    const shell = shellScriptProblem(file, got.text);
    if (shell !== null) {
      out.push({ path: `${here}.file`, value: file, message: shell });
      return;
    }
    texts.set(file, got.text);
  });
  return out;
}

type ScenarioInput = NonNullable<LabFileInput['scenarios']>[number];

/** A validated scenario with every default applied; `texts` holds each script file read. */
function scenarioWithDefaults(s: ScenarioInput, texts: ScriptTexts): LabScenario {
  const d = DEFAULTS.scenario;
  const workload = s.workload.map((p): LabWorkloadPart => {
    const weight = p.weight ?? 1;
    if (p.builtin !== undefined) return { builtin: p.builtin, weight };
    const path = p.file ?? '';
    const sql = texts.get(path);
    // validateLab reports a file that could not be read before it applies defaults
    if (sql === undefined) throw new Error(`script ${path} was not read during validation`);
    return {
      file: {
        path,
        name: path.split('/').pop() ?? path,
        sql,
        sha256: createHash('sha256').update(sql, 'utf8').digest('hex'),
      },
      weight,
    };
  });
  const transactionsPerClient = s.transactionsPerClient ?? null;
  return {
    name: s.name,
    description: s.description ?? '',
    workload,
    scale: s.scale ?? d.scale,
    clients: s.clients,
    durationSec: transactionsPerClient === null ? (s.durationSec ?? d.durationSec) : null,
    transactionsPerClient,
    protocols: s.protocols ?? d.protocols,
    connects: s.connects ?? d.connects,
    repetitions: s.repetitions ?? d.repetitions,
    rateTps: s.rateTps ?? null,
    jobs: s.jobs ?? d.jobs,
    targets: s.targets ?? d.targets,
  };
}

/** The lab file's scenarios, validated, with defaults (empty when it has none). */
export function labScenariosWithDefaults(
  scenarios: LabFileInput['scenarios'],
  texts: ScriptTexts,
): LabScenario[] {
  return (scenarios ?? []).map((s) => scenarioWithDefaults(s, texts));
}

/** The capability matches a scenario's `targets` stand for, in the order they select. */
export function targetMatches(targets: LabScenario['targets']): TargetMatch[] {
  const names: TargetSelectorName[] = targets.includes('all')
    ? TARGET_SELECTOR_NAMES
    : targets.filter((t): t is TargetSelectorName => t !== 'all');
  return names.map((n) => TARGET_SELECTORS[n]);
}

/** The workload as a label for the report: `orders.sql`, `mixed(orders.sql@8,select-only@2)`. */
function workloadText(s: LabScenario): string {
  const names = s.workload.map((p) => ('builtin' in p ? p.builtin : p.file.path));
  return names.length === 1 ? (names[0] ?? '') : `a mix of ${names.join(', ')}`;
}

/** A lab scenario in the scenario model the catalog uses. */
export function toScenario(s: LabScenario): Scenario {
  const mixed = s.workload.length > 1;
  const parts: ScriptPart[] = s.workload.map((p) => {
    const weight = mixed ? { weight: p.weight } : {};
    return 'builtin' in p
      ? { builtin: p.builtin, ...weight }
      : { file: { name: p.file.name, sql: p.file.sql }, ...weight };
  });
  return {
    name: s.name,
    experiment: null,
    title: s.description !== '' ? s.description : `${s.name}: the lab's own scenario`,
    finding:
      `The lab's own workload (${workloadText(s)}), not a published finding: what each target does with it. ` +
      "Judged only on what each target's capabilities predict (direct above max_connections refused, a pool queues clients).",
    script: { parts },
    protocols: s.protocols,
    connects: s.connects,
    clients: s.clients,
    jobs: s.jobs,
    ...(s.durationSec !== null ? { durationSec: s.durationSec } : {}),
    ...(s.transactionsPerClient !== null ? { transactionsPerClient: s.transactionsPerClient } : {}),
    ...(s.rateTps !== null ? { rate: s.rateTps } : {}),
    scale: s.scale,
    initFlags: [],
    repetitions: s.repetitions,
    targets: targetMatches(s.targets),
    expectations: OWN_WORKLOAD_EXPECTATIONS,
  };
}

/**
 * The suite `lab`: a lab's own scenarios — from its validated file (operator, `proxylab local`) or
 * as the run request carries them (the runners): the same scenarios give the same steps.
 */
export function labSuite(lab: Pick<LabConfig, 'scenarios'>): Suite {
  return {
    name: LAB_SUITE_NAME,
    description: `The lab's own scenarios: ${lab.scenarios.map((s) => s.name).join(', ')}.`,
    scenarios: lab.scenarios.map(toScenario),
  };
}

/** The suites a lab can run: the catalog's, and `lab` when it has scenarios. */
export function suiteNamesFor(lab: Pick<LabConfig, 'scenarios'>): string[] {
  return [...SUITE_NAMES, ...(lab.scenarios.length > 0 ? [LAB_SUITE_NAME] : [])];
}

/**
 * The problem with the lab's `disruptionLoad.scenario` (raw input), or none: it must be a pgbench
 * built-in script or one of the lab's own scenarios by name. The schema checks the other fields.
 */
export function disruptionLoadProblems(load: unknown, scenarios: unknown): LabProblem[] {
  const l = record(load);
  if (!l || typeof l.scenario !== 'string' || l.scenario === '') return [];
  const own = Array.isArray(scenarios)
    ? scenarios.flatMap((s: unknown) => {
        const name = record(s)?.name;
        return typeof name === 'string' ? [name] : [];
      })
    : [];
  if ((BUILTIN_SCRIPTS as readonly string[]).includes(l.scenario) || own.includes(l.scenario)) return [];
  return [
    {
      path: 'disruptionLoad.scenario',
      value: l.scenario,
      message: `must be a pgbench built-in script or one of the lab's own scenarios (${[...BUILTIN_SCRIPTS, ...own].join(', ')}), got ${show(l.scenario)}`,
    },
  ];
}

/** The lab's `disruptionLoad`, resolved against its scenarios (validated: a problem here is a bug). */
export function labDisruptionLoad(
  input: LabFileInput['disruptionLoad'],
  scenarios: readonly LabScenario[],
): BackgroundLoad | null {
  if (input === undefined) return null;
  const loadable = scenarios.map((s) => {
    const sc = toScenario(s);
    return { name: sc.name, script: sc.script, scale: sc.scale };
  });
  const got = resolveLoad('disruptionLoad', input, loadable);
  if ('problems' in got) throw new Error(`validated lab: ${got.problems.join('; ')}`);
  return got.load;
}

/**
 * `suite` with the lab's background load on each disruption scenario that names none of its own
 * (the same suite when the lab has none).
 */
export function withDisruptionLoad(suite: Suite, load: BackgroundLoad | null): Suite {
  if (load === null) return suite;
  return {
    ...suite,
    scenarios: suite.scenarios.map((s) =>
      s.probe?.kind === 'disruption' && s.probe.load === undefined
        ? { ...s, probe: { ...s.probe, load } }
        : s,
    ),
  };
}

/**
 * `resolveSuite` for a name given on the command line: an unknown name is the usual flag error
 * (`--suite must be one of …; got "x"`, the lab's choices); `lab` on a lab without scenarios says so.
 */
export function resolveSuiteFlag(
  name: string,
  lab: Pick<LabConfig, 'name' | 'scenarios'>,
  flag = '--suite',
): Suite {
  if (name !== LAB_SUITE_NAME && !SUITE_NAMES.includes(name))
    throw new UsageError(`${flag} must be one of ${suiteNamesFor(lab).join(', ')}; got "${name}"`);
  return resolveSuite(name, lab);
}

/**
 * A suite by name for a lab: `lab` is its own scenarios, anything else the catalog's. A UsageError
 * names the choices (and says when `lab` is asked of a lab without scenarios).
 */
export function resolveSuite(
  name: string,
  lab: Pick<LabConfig, 'name' | 'scenarios'> & Partial<Pick<LabConfig, 'disruptionLoad'>>,
): Suite {
  return withDisruptionLoad(resolveSuiteOnly(name, lab), lab.disruptionLoad ?? null);
}

function resolveSuiteOnly(name: string, lab: Pick<LabConfig, 'name' | 'scenarios'>): Suite {
  if (name === LAB_SUITE_NAME) {
    if (lab.scenarios.length === 0)
      throw new UsageError(
        `suite "${LAB_SUITE_NAME}" runs the lab file's own scenarios, and lab ${lab.name} has none (add "scenarios"; docs/lab-file.md); valid suites: ${SUITE_NAMES.join(', ')}`,
      );
    return labSuite(lab);
  }
  if (!SUITE_NAMES.includes(name))
    throw new UsageError(`unknown suite "${name}"; valid suites: ${suiteNamesFor(lab).join(', ')}`);
  return getSuite(name);
}
