/**
 * The disruption sections of the report (lib/report/disruptions.ts): the lines of what each client
 * lived through, the downtime table, the timeline (one lane per target × mode, failures by class,
 * events as markers), summary.md's rows, and compare across runs — on hand-made step records.
 */
import type { ScatterSeriesOption } from 'echarts';
import { renderSvg } from '../../lib/report/charts';
import type { LoadedRun } from '../../lib/report/load';
import { buildModel } from '../../lib/report/shape';
import { fallbackDescriptor } from '../../lib/suite/targets';
import {
  compareDowntime,
  compareDowntimeMarkdown,
  disruptionMarkdown,
  disruptionScenarios,
  disruptionSectionsHtml,
  timelineOption,
} from '../../lib/report/disruptions';
import type { ProbeErrorCount } from '../../lib/suite/disruption';
import type { StepRecord } from '../../lib/suite/types';
import { disruptionResult, type DisruptionResultInput } from '../helpers/disruption-result';
import { manifestWith, stepRecordWith } from '../helpers/run-files';

const STOPPED: ProbeErrorCount = {
  class: 'server-stopped',
  sqlstate: '57P01',
  code: null,
  count: 3,
  sample: 's',
};

function record(
  target: string,
  rep: number,
  input: DisruptionResultInput = {},
  held: boolean | null = null,
): StepRecord & { probe: ReturnType<typeof disruptionResult> } {
  const mode = input.mode ?? 'persistent';
  const probe = disruptionResult(input);
  return {
    schemaVersion: 1,
    runId: 'r',
    stepId: `restart/${target}/c2/extended/${mode}/r${rep}`,
    scenario: 'restart',
    target: { kind: target === 'direct' ? 'direct' : 'pgbouncer-transaction', name: target },
    params: {
      clients: 2,
      jobs: 1,
      protocol: 'extended',
      connect: mode,
      script: 'disruption(postgres-restart fast)',
      durationSec: 7,
      transactionsPerClient: null,
      rate: null,
      scale: 1,
      poolPercent: null,
      repetition: rep,
    },
    startedAt: '2026-11-21T10:00:00Z',
    endedAt: '2026-11-21T10:00:07Z',
    status: 'completed',
    result: null,
    probe: {
      ...probe,
      events: [
        { atMs: 0, name: 'stop-issued', source: 'local', detail: 'fast shutdown' },
        { atMs: 640, name: 'server-up', source: 'local', detail: null },
      ],
      attempts: [
        [-500, 1.2, 'ok', '127.0.0.1'],
        [20, 3.5, input.errors ? 'server-stopped' : 'ok', null],
        [120, null, input.errors ? 'timeout' : 'ok', null],
        [700, 2.1, 'ok', '127.0.0.1'],
      ],
    },
    verdict: { expected: 'errors', observed: 'seen', held },
    loadGeneratorSaturated: false,
    saturationReason: null,
    command: [],
    files: { stdout: 'a', stderr: 'b', log: null },
  };
}

const RUN = [
  record('direct', 1, { errors: [STOPPED], figures: { errorWindowMs: 700 } }, true),
  record('pgbouncer-transaction', 1, { figures: { stallWindowMs: 500 } }),
  record('direct', 2, { errors: [STOPPED], figures: { errorWindowMs: 900 } }, true),
  record('pgbouncer-transaction', 2, {}),
];

describe('the report: disruptions', () => {
  test('a section per disruption scenario: lived-through lines, the downtime table, a timeline, the floor', () => {
    // GIVEN two repetitions on direct and a pool WHEN rendered
    const warned: string[] = [];
    const page = disruptionSectionsHtml(
      RUN,
      () => ({ title: 'PostgreSQL restart', finding: 'errors direct' }),
      (w) => warned.push(w),
    ).value;
    // THEN
    expect(disruptionScenarios(RUN)).toEqual(['restart']);
    expect(page).toContain('<h2>restart — PostgreSQL restart</h2>');
    expect(page).toMatch(
      /<li>direct \(persistent, reconnecting\), a PostgreSQL restart: errors in 2 of 2 for 0\.80 s \(0\.70–0\.90\)/,
    );
    expect(page).toMatch(
      /<li>pgbouncer-transaction \(persistent, reconnecting\), a PostgreSQL restart: no errors; stalls up to 0\.50 s/,
    );
    expect(page).toContain('data-chart="timeline"');
    expect(page).toMatch(/0\.00 s stop-issued \(fast shutdown\); 0\.64 s server-up/);
    expect(page).toContain("the probe's own floor and interval jitter");
    expect(warned).toEqual([]);
  });

  test('a timeline that may be incomplete says so under its chart; one that is not says nothing', () => {
    // GIVEN the same run, its first repetition's events with a note from the runner
    const note = 'timeline may be incomplete: RDS events still arriving after 4 reads 30 s apart';
    const noted = RUN.map((r) =>
      r.params.repetition === 1 ? { ...r, probe: { ...r.probe, timelineNote: note } } : r,
    );
    // WHEN rendered
    const render = (steps: typeof RUN) =>
      disruptionSectionsHtml(
        steps,
        () => ({ title: null, finding: null }),
        () => undefined,
      ).value;
    // THEN the caption names the events, then the note
    expect(render(noted)).toMatch(
      /0\.64 s server-up \(timeline may be incomplete: RDS events still arriving after 4 reads 30 s apart\)<\/figcaption>/,
    );
    expect(render(RUN)).not.toContain('timeline may be incomplete');
  });

  test('the timeline: one lane per target × mode, failures by class, the events as vertical markers', () => {
    // GIVEN repetition 1 WHEN its option is built
    const option = timelineOption(
      RUN.filter((r) => r.params.repetition === 1),
      't',
    );
    const series = option.series as ScatterSeriesOption[];
    // THEN two lanes (grids), each with its successes and the classes the run saw
    expect(Array.isArray(option.grid) && option.grid.length).toBe(2);
    expect(series.map((s) => [s.name, s.xAxisIndex])).toEqual([
      ['successful write (latency)', 0],
      ['server-stopped', 0],
      ['timeout', 0],
      ['successful write (latency)', 1],
      ['server-stopped', 1],
      ['timeout', 1],
    ]);
    // x in seconds from T0; a failure without an answer at the top of the lane
    expect(series[0]?.data).toEqual([
      [-0.5, 1.2],
      [0.7, 2.1],
    ]);
    expect(series[2]?.data).toEqual([[0.12, 10]]);
    expect((series[0]?.markLine as { data: unknown[] }).data).toEqual([
      { name: 'stop-issued', xAxis: 0 },
      { name: 'server-up', xAxis: 0.64 },
    ]);
    // and it draws
    expect(renderSvg(option, { width: 900, height: 300 })).toMatch(/^<svg/);
  });

  test('summary.md: the lines and the table; compare: A beside B per target × mode', () => {
    // GIVEN / WHEN
    const md = disruptionMarkdown(RUN, () => 'PostgreSQL restart').join('\n');
    const other = [record('direct', 1, { errors: [STOPPED], figures: { errorWindowMs: 2000 } })];
    const cmp = compareDowntimeMarkdown(compareDowntime(RUN, other)).join('\n');
    // THEN
    expect(md).toMatch(/^## restart — PostgreSQL restart$/m);
    expect(md).toMatch(/^\| direct \| persistent \| 2 \| 2\/2 \| .* \| 0\.80 s \(0\.70–0\.90\) \|/m);
    expect(cmp).toMatch(
      /\| restart · direct · persistent \| 0\.80 s \(0\.70–0\.90\) \| 2\.00 s \| none \| none \| 0 \| 0 \| 0 \| 0 \|/,
    );
    expect(cmp).toMatch(/\| restart · pgbouncer-transaction · persistent \| – \| not in this run \|/);
  });

  test('client timeouts apart from the errors, and a window that did not close, in the table and the lines', () => {
    // GIVEN a pool whose clients gave up twice at their 2 s timeout in one repetition, still waiting at the end in the other
    const gaveUp: ProbeErrorCount = {
      class: 'client-timeout',
      sqlstate: null,
      code: 'timeout',
      count: 2,
      sample: 'x',
    };
    const t = { connectTimeoutMs: 2000, statementTimeoutMs: 2000 };
    const steps = [
      record('pgbouncer-transaction', 1, { errors: [gaveUp], clientTimeouts: t }),
      record('pgbouncer-transaction', 2, {
        clientTimeouts: t,
        figures: { windowClosed: false, openAtEnd: 1 },
      }),
    ];
    // WHEN
    const md = disruptionMarkdown(steps, () => null).join('\n');
    // THEN not an error, the setting and the count in their own columns, and "not over"
    expect(md).toMatch(/\| client timeouts \| client gave up \| over in the window \|/);
    expect(md).toMatch(
      /^\| pgbouncer-transaction \| persistent \| 2 \| 0\/2 \| – \| – \| none \| connect 2 s, statement 2 s \| 2 \| not in 1 of 2 \|/m,
    );
    expect(md).toContain(
      'no errors; no stall; the clients gave up 2 time(s) at their own timeout (connect 2 s, statement 2 s); not over in the window in 1 of 2',
    );
  });

  test('the decision table leaves a disruption out (it measures downtime, not tps) and keeps the pgbench scenarios', () => {
    // GIVEN a run with a disruption scenario and a pgbench step
    const pgbench = stepRecordWith({ scenario: 'quick-e1' });
    const steps = [...RUN, pgbench];
    const run: LoadedRun = {
      dir: '/nonexistent',
      manifest: manifestWith({ stepIds: steps.map((r) => r.stepId), stepsCompleted: steps.length }),
      steps,
      metrics: [],
      missingStepIds: [],
      unmeasured: [],
      problems: [],
      warnings: [],
      plan: null,
      lab: null,
      descriptorOf: (st) => fallbackDescriptor(st.target),
    };
    // WHEN the model is built
    const model = buildModel(run, () => null);
    // THEN the disruption has cells but no decision table of unknowns
    expect(model.cells.some((c) => c.key.scenario === 'restart')).toBe(true);
    expect(model.decisions.map((t) => t.scenario)).toEqual(['quick-e1']);
  });
});
